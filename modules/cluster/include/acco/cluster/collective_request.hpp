// The collective benchmark as `acco bench --collective`'s flags ask for it (nccl-tests' flags and
// their short names), checked into CollectiveBenchOptions; and what rank 0 does with a run
// besides printing it: the bench history and the comparison with the last run like it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "acco/bench/compare.hpp"
#include "acco/bench/run_setup.hpp"
#include "acco/cluster/collective_bench.hpp"
#include "acco/cluster/nccl.hpp"
#include "acco/core/result.hpp"
#include "acco/topo/machine.hpp"

namespace acco::cluster {

struct CollectiveRequest {
  std::string ops;  // parse_ops: a list, or all
  // Unset (empty, -1): 32MiB, 20 and 5, or with `quick` a short sweep (1MiB, 5 and 1).
  std::string min_bytes = "8";
  std::string max_bytes;
  int factor = 2;
  int iters = -1;
  int warmup = -1;
  bool quick = false;
  bool no_check = false;
  std::string nccl_library = kNcclLibrary;
  std::string buffers = "host";       // host or device
  std::string via = "auto";           // device buffers: auto, nccl or mpi
  std::string nccl_timeout = "300s";  // the watchdog of NCCL's waits
  std::string backend = "auto";       // the device of device buffers
  std::string link{bench::kDefaultLink};
};

// `request` checked; errors name the flag ("--iters: '0' is not a number from 1 to 100000",
// kInvalidArgument).
[[nodiscard]] Result<CollectiveBenchOptions> collective_bench_options(
    const CollectiveRequest& request);

struct CollectiveHistory {
  std::vector<bench::Comparison> comparisons;  // with `compare`
  // Why there is nothing to compare with ("No previous run of these collectives on this machine
  // to compare with."); empty when there is.
  std::string note;
  std::string warnings;  // the history's own (bench::record_run's)
};

// Rank 0's run appended to the history file `history` on `machine`'s fingerprint and, with
// `compare`, compared with the last run like it. Without a machine nothing is recorded (the note
// says so). Errors: bench::record_run's.
[[nodiscard]] Result<CollectiveHistory> record_collective_run(
    const CollectiveRun& run, const std::optional<topo::Machine>& machine,
    const std::string& history, bool compare);

}  // namespace acco::cluster
