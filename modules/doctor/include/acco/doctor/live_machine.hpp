// What `acco probe` and `acco doctor` read of the live machine beyond the probe: the CUDA driver
// that is loaded here, and what O_DIRECT and io_uring do in a data directory of this host.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "acco/core/result.hpp"
#include "acco/report/document.hpp"
#include "acco/topo/probe.hpp"

namespace acco::doctor {

// The CUDA driver this process can load (device::cuda_driver_info on device::cuda_library).
struct CudaDriver {
  std::string library;  // as named to the loader
  bool usable = false;  // the driver answered
  std::string error;    // why none is usable, when not
  // cuDriverGetVersion (12080 is CUDA 12.8), as "12.8", and the GPUs it sees, when usable.
  int version = 0;
  std::string cuda_version;
  int device_count = 0;
};
[[nodiscard]] CudaDriver read_cuda_driver();

// As probe and doctor report it (docs/cli.md): {"library", "version": 12080|null,
// "cuda_version": "12.8"|null, "device_count"|null, "error": null|why no driver could be used}.
[[nodiscard]] nlohmann::ordered_json to_json(const CudaDriver& driver);
// One line: "CUDA driver: 12080 (supports CUDA 12.8), 2 devices, libcuda.so.1\n", or
// "CUDA driver: none usable (why)\n".
[[nodiscard]] std::string cuda_driver_text(const CudaDriver& driver);

// `acco probe`'s answer: the probe, and on the live machine the CUDA driver it does not read.
struct ProbeReport {
  topo::ProbeResult probe;
  std::optional<CudaDriver> cuda;  // is_live(request) only
};
// topo::probe(request), then read_cuda_driver on the live machine. topo::probe's errors.
[[nodiscard]] Result<ProbeReport> probe_with_driver(const topo::ProbeRequest& request);
// acco.probe/1 (topo::probe_json), with "cuda_driver" on the live machine.
[[nodiscard]] nlohmann::ordered_json to_json(const ProbeReport& report);
// topo::probe_report, the driver's line after the header's NVML line.
[[nodiscard]] report::Document probe_report(const ProbeReport& report);

// True when `request` reads this machine live (sysroot "/", no snapshot, no hwloc XML).
[[nodiscard]] bool is_live(const topo::ProbeRequest& request);

// On the live machine with a data directory, tries O_DIRECT and io_uring there (writes and
// removes a small scratch file) and sets request.direct_io, or why it could not in
// request.direct_io_untried. Does nothing for a sysroot, snapshot or hwloc XML (whose data
// directory is not on this host), without a data directory, or when it was already tried.
void try_direct_io(topo::ProbeRequest& request);

}  // namespace acco::doctor
