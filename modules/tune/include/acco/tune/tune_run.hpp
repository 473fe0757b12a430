// One `acco tune` run end to end: opens the backend (CUDA when a GPU is usable, else the host
// backend with an emulated link, as acco bench does), searches every device and path within the
// budget and returns the profile, unsaved.
#pragma once

#include <optional>

#include "acco/bench/runner.hpp"
#include "acco/topo/machine.hpp"
#include "acco/tune/search.hpp"
#include "acco/tune/tune_profile.hpp"

namespace acco::tune {

struct TuneOptions {
  bench::BackendChoice backend = bench::BackendChoice::kAuto;
  dev::HostBackendOptions host;  // devices and emulated link of the host backend
  SearchOptions search;          // host_copy_threads is replaced by 1..min(CPUs, 8)
  int copies = 5;                // timed copies per measurement (their median counts)
};

struct TuneResult {
  TuneProfile profile;
  bool interrupted = false;  // stop() said so: the profile is incomplete, do not save it
};

// `machine` (may be null) gives the fingerprint; without it the fingerprint is "unknown".
// Errors: open_backend's, search's.
[[nodiscard]] Result<TuneResult> run_tune(const TuneOptions& options, const topo::Machine* machine,
                                          const StopRequested& stop, const Progress& progress);

}  // namespace acco::tune
