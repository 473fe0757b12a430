// The NVML device source: one DeviceSample per GPU per read, from a libnvidia-ml session held
// open for the source's lifetime (sampling at 1 Hz must not pay nvmlInit each time).
#pragma once

#include <memory>
#include <string>

#include "acco/core/fs.hpp"
#include "acco/core/result.hpp"
#include "acco/power/sensor_source.hpp"

namespace acco::power {

// Opens `library` ("libnvidia-ml.so.1", or a path) through acco::nvml and learns each GPU's
// identity (index, UUID, PCI address, model) once. `fs` (which must outlive the source) is where
// each read looks up /sys/bus/pci/devices/<bdf>/power/runtime_status: a "suspended" GPU gets a
// sample with `suspended` set and no NVML call, so monitoring never wakes it.
// Each read converts NVML's units to base units (mW -> W, mJ -> J, MHz -> Hz, KB/s -> B/s with
// KB = 1024 bytes, % -> ratio, KiB -> bytes, ns -> s); a reading NVML does not support stays
// nullopt, a reading outside its physical range is dropped and counted in dropped_readings, and a
// GPU answering GPU_IS_LOST gives a sample with `lost` set and nothing else while the read goes
// on with the others.
// Errors: kUnavailable when the library cannot be loaded or initialised, or cannot count its
// GPUs ("nvml sensors: nvmlInit_v2: Driver Not Loaded (9)"); read() fails the same way when the
// library stops answering the device count. Not thread-safe: one reader at a time.
[[nodiscard]] Result<std::unique_ptr<SensorSource>> make_nvml_source(const core::Fs& fs,
                                                                     const std::string& library);

}  // namespace acco::power
