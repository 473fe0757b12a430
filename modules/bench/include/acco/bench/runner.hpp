// Runs the selected cases on every device of a backend and collects one BenchRun: the backend is
// the CUDA one when a GPU is usable (or asked for), else the host backend with an emulated link.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "acco/bench/case.hpp"
#include "acco/bench/result.hpp"
#include "acco/core/result.hpp"
#include "acco/dev/host_backend.hpp"
#include "acco/topo/machine.hpp"

namespace acco::bench {

struct RunOptions {
  std::string backend = "auto";  // "auto", "host", "cuda"
  // A backend the caller has opened already (it then decides `backend`); null = open one.
  std::shared_ptr<dev::Backend> opened;
  dev::HostBackendOptions host;       // devices and emulated link of the host backend
  std::vector<std::string> patterns;  // case filter; empty = all
  CaseContext defaults;               // sizes, repetitions, profile (device fields ignored)
};

using Progress = std::function<void(std::string_view line)>;

// kInvalidArgument for an unknown backend or a filter that selects no case; kUnavailable when
// "cuda" is asked for and no GPU is usable. `machine` may be null (peaks then come from the
// backend only). Cases that do not apply are waived, failures are error results: neither stops
// the run.
[[nodiscard]] Result<BenchRun> run_benchmarks(const RunOptions& options,
                                              const topo::Machine* machine,
                                              const Progress& progress);

}  // namespace acco::bench
