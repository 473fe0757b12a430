// Runs the selected cases on every device of a backend and collects one BenchRun: the backend is
// the CUDA one when a GPU is usable (or asked for), else the host backend with an emulated link.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acco/bench/case.hpp"
#include "acco/bench/result.hpp"
#include "acco/core/result.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/topo/machine.hpp"

namespace acco::bench {

enum class BackendChoice {
  kAuto,  // CUDA when a GPU is usable, else the host backend
  kHost,  // the host backend with an emulated link
  kCuda,  // CUDA; kUnavailable without a usable GPU
};

struct RunOptions {
  BackendChoice backend = BackendChoice::kAuto;
  // A backend the caller has opened already (it then decides `backend`); null = open one.
  std::shared_ptr<device::Backend> opened;
  device::HostBackendOptions host;    // devices and emulated link of the host backend
  std::vector<std::string> patterns;  // case filter; empty = all
  std::string suite = "transfer";     // only cases of this suite (Case::suite)
  CaseContext defaults;               // sizes, repetitions, profile (device fields ignored)
  // Asked before each case on each device: true ends the run there, with the results so far
  // (Ctrl-C). None: the run goes to the end.
  std::function<bool()> stop;
};

using Progress = std::function<void(std::string_view line)>;

struct OpenedBackend {
  std::shared_ptr<device::Backend> backend;
  bool fell_back = false;  // kAuto found no usable GPU and opened the host backend
  // Why CUDA was not used when it fell back: the CUDA backend's error, or none when it loaded
  // and found no device.
  std::optional<Error> cuda_error;
};

// The one place the CUDA-or-host choice is made. kUnavailable for kCuda without a usable GPU.
[[nodiscard]] Result<OpenedBackend> open_backend(BackendChoice choice,
                                                 const device::HostBackendOptions& host);

// kInvalidArgument for a filter that selects no case; kUnavailable when kCuda is asked for and no
// GPU is usable. `machine` may be null (peaks then come from the
// backend only). Cases that do not apply are waived, failures are error results: neither stops
// the run.
[[nodiscard]] Result<BenchRun> run_benchmarks(const RunOptions& options,
                                              const topo::Machine* machine,
                                              const Progress& progress);

}  // namespace acco::bench
