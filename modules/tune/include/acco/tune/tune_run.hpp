// One `acco tune` run end to end: opens the backend (CUDA when a GPU is usable, else the host
// backend with an emulated link, as acco bench does), searches every device and path within the
// budget, then (given a file) the storage reader on that file, and returns the profile, unsaved.
#pragma once

#include <optional>

#include "acco/bench/runner.hpp"
#include "acco/topo/machine.hpp"
#include "acco/tune/search.hpp"
#include "acco/tune/tune_profile.hpp"

namespace acco::tune {

struct TuneOptions {
  bench::BackendChoice backend = bench::BackendChoice::kAuto;
  device::HostBackendOptions host;  // devices and emulated link of the host backend
  SearchOptions search;             // host_copy_threads is replaced by 1..min(CPUs, 8)
  int copies = 5;  // timed copies (and reads) per measurement (their median counts)
  // The storage reader is tuned on this file when it is not empty: min(file size, search.bytes)
  // read per measurement, through the first device's pinned staging.
  std::string reader_file;
  // The reader's share of the budget; the engine paths get the rest, and the reader also gets
  // whatever of theirs they leave.
  double reader_share = 0.25;
};

struct TuneResult {
  TuneProfile profile;
  bool interrupted = false;  // stop() said so: the profile is incomplete, do not save it
};

// `machine` (may be null) gives the fingerprint; without it the fingerprint is "unknown".
// Errors: open_backend's, search's, search_reader's; kInvalidArgument when reader_file is not a
// readable file of at least 4 KiB.
[[nodiscard]] Result<TuneResult> run_tune(const TuneOptions& options, const topo::Machine* machine,
                                          const StopRequested& stop, const Progress& progress);

}  // namespace acco::tune
