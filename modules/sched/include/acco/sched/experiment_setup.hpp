// The devices of a scheduling experiment as a caller describes them (emulated host devices or
// every GPU, a kind and a speed per device, a memory budget), the text forms a command line or a
// Python caller gives them in ("host:4", "cpu,gpu", "1,0.5", "512MiB"), opening them as
// ExperimentDevices with the engine profiles acco tune saved, and what a run checks before it
// starts. Errors are kInvalidArgument and never name a flag: the caller puts its own in front.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"
#include "acco/device/fault_injection.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/sched/experiment.hpp"
#include "acco/sched/workload.hpp"
#include "acco/transfer/profile.hpp"

namespace acco::sched {

inline constexpr int kMaxHostDevices = 64;
inline constexpr double kMinSpeedFactor = 1e-3;
inline constexpr double kMaxSpeedFactor = 1e3;

struct DeviceSetup {
  bool cuda = false;     // every GPU; otherwise emulated host devices
  int host_devices = 4;  // host: how many
  // Per device, or one entry for every device; empty: "gpu" and speed 1 for every device.
  std::vector<std::string> kinds;
  std::vector<double> speeds;
  device::EmulatedLink link;       // host: the emulated link of every device
  std::uint64_t memory_bytes = 0;  // per-device budget; 0: the device's memory
  // Devices wrapped in injected faults (device::with_faults), by index; counted over every
  // run the devices serve (all policies of one command).
  std::vector<std::pair<int, device::FaultPlan>> faults;
};

// "host:N" (N from 1 to kMaxHostDevices), "host" (4 devices) or "cuda", into `setup`'s cuda and
// host_devices. kInvalidArgument "'TEXT' is not host:N (N from 1 to 64) or cuda" otherwise.
[[nodiscard]] Status parse_device_spec(std::string_view text, DeviceSetup& setup);
// "DEVICE:PLAN" ("0:copy-fails:3", "1:lost-after:10,stall:5ms/2"): a device index and its
// device::parse_fault_plan plan. kInvalidArgument naming the text otherwise.
[[nodiscard]] Result<std::pair<int, device::FaultPlan>> parse_injected_fault(std::string_view text);
// "cpu,gpu,gpu": the timing column of each device, blanks around a name ignored.
// kInvalidArgument "'NAME' is not cpu or gpu".
[[nodiscard]] Result<std::vector<std::string>> parse_device_kinds(std::string_view list);
// "1,2,0.5": speed factors from kMinSpeedFactor to kMaxSpeedFactor. kInvalidArgument "'ITEM' is
// not a number from 0.001 to 1000".
[[nodiscard]] Result<std::vector<double>> parse_speed_factors(std::string_view list);
// A task's data ("64KiB", "4MiB"): 1 B to 1 TiB. kInvalidArgument "'TEXT' is not a size from 1 B
// to 1 TiB, such as 64KiB or 4MiB".
[[nodiscard]] Result<std::uint64_t> parse_data_bytes(std::string_view text);
// A per-device memory budget ("512MiB"), above 0. kInvalidArgument "'TEXT' is not a size such as
// 512MiB or 2GiB".
[[nodiscard]] Result<std::uint64_t> parse_memory_budget(std::string_view text);

// A per-device list of `entries` values is one for every device or one per device:
// kInvalidArgument "E values for D devices (give one per device, or one for all)" otherwise.
[[nodiscard]] Status check_per_device(std::size_t entries, std::size_t devices);
// `given` for `devices` devices: `fallback` for each when empty, its one value for each, or
// itself when it has one per device (check_per_device's error otherwise).
template <typename T>
[[nodiscard]] Result<std::vector<T>> expand_per_device(const std::vector<T>& given, T fallback,
                                                       std::size_t devices) {
  if (given.empty()) {
    return std::vector<T>(devices, fallback);
  }
  ACCO_RETURN_IF_ERROR(check_per_device(given.size(), devices));
  return given.size() == 1 ? std::vector<T>(devices, given.front()) : given;
}

// The backend of `setup`: every GPU (make_cuda_backend's errors, and kUnavailable "the CUDA
// backend found no GPU"), or setup.host_devices emulated devices on setup.link with its speeds
// and memory budget (what make_host_backend refuses, or a speed list of the wrong length, as
// kInvalidArgument with "host devices: " in front).
[[nodiscard]] Result<std::unique_ptr<device::Backend>> open_experiment_backend(
    const DeviceSetup& setup);
// `backend`'s devices, each with its kind and speed (`kinds` and `speeds` hold one per device:
// expand_per_device), `setup`'s memory budget and, for host devices, its link's name. No engine
// profiles (apply_transfer_profiles). `setup.faults` wrap their devices (device::with_faults):
// kInvalidArgument "there is no device 5 (4 devices)" for an index past the last.
[[nodiscard]] Result<ExperimentDevices> experiment_devices(std::unique_ptr<device::Backend> backend,
                                                           const DeviceSetup& setup,
                                                           const std::vector<std::string>& kinds,
                                                           const std::vector<double>& speeds);

// For each device, the engine settings acco tune saved for its host-to-device copies from pinned
// buffers (the "<PCI address or name>/h2d_pinned" entry of `engines`, keyed as
// tune::engine_profiles keys them), as the runtime moves its host data from pinned buffers;
// unset where there is none.
void apply_transfer_profiles(const std::map<std::string, transfer::Profile>& engines,
                             ExperimentDevices& devices);

// A per-device budget (0: none) that cannot hold the data of `workload`'s largest task leaves
// that task nowhere to run: kInvalidArgument "512 MiB cannot hold the 1 GiB a gemm task touches".
[[nodiscard]] Status check_memory_budget(std::uint64_t budget_bytes, const Workload& workload);

}  // namespace acco::sched
