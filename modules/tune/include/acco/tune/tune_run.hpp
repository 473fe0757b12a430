// One `acco tune` run end to end: opens the backend (CUDA when a GPU is usable, else the host
// backend with an emulated link, as acco bench does), searches every device and path within the
// budget, then (given a file) the storage reader on that file, and returns the profile, unsaved.
#pragma once

#include <optional>
#include <string>

#include "acco/bench/run_setup.hpp"
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

// A run as `acco tune`'s flags ask for it, in their units and with their defaults.
struct TuneRequest {
  std::string backend = "auto";           // auto, host, cuda
  int devices = 1;                        // host backend: emulated devices (1-64)
  std::string link{bench::kDefaultLink};  // host backend: emulated link (device::parse_link)
  std::string budget = "60s";             // the whole run: 1s-24h
  std::string bytes = "64MiB";            // the search's copy size: 1MiB-4GiB
  std::string file;  // also the storage reader on this file (regular, 4 KiB or more)
};

// The options `request` asks for, every value checked; errors name the flag ("--budget: '0s' is
// not a duration from 1s to 24h", kInvalidArgument). The fit sizes are the copy size and up to
// three quarters below it, down to 1 MiB.
[[nodiscard]] Result<TuneOptions> tune_options(const TuneRequest& request);

struct TuneResult {
  TuneProfile profile;
  bool interrupted = false;  // stop() said so: the profile is incomplete, do not save it
};

// `machine` (may be null) gives the fingerprint; without it the fingerprint is "unknown".
// Errors: open_backend's, search's, search_reader's; kInvalidArgument when reader_file is not a
// readable file of at least 4 KiB.
[[nodiscard]] Result<TuneResult> run_tune(const TuneOptions& options, const topo::Machine* machine,
                                          const StopRequested& stop, const Progress& progress);

// A run saved: its result, and why the profile could not be written (kCannotWrite) when it could
// not; the profile is still in `result`.
struct TuneSaved {
  TuneResult result;
  std::optional<Error> save_failure;
  // Lines for stderr: the run interrupted and the file left as it was; or the file written (or
  // why not), and the budget spent before the search finished.
  std::string notes;
};

// run_tune, then, unless interrupted, its profile saved at `path` with `previous`'s fusion
// entries kept (what a collective bench saved there: acco tune does not measure it). Nothing is
// written when the run is interrupted. Errors: run_tune's.
[[nodiscard]] Result<TuneSaved> tune_and_save(const TuneOptions& options, const std::string& path,
                                              const std::optional<TuneProfile>& previous,
                                              const topo::Machine* machine,
                                              const StopRequested& stop, const Progress& progress);

}  // namespace acco::tune
