// `acco bench --collective OPS`: the collective benchmark, run by every rank of an MPI job
// (mpirun or srun start acco on each rank; rank 0 prints), or by one process alone.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "acco/cli/app.hpp"
#include "acco/cluster/collective_request.hpp"
#include "acco/core/result.hpp"

namespace acco::cli {

struct CollectiveFlags {
  // --collective (empty: the transfer or storage suite) and the flags that need it; bench's
  // --quick, --backend and --link copied in by bench_command.
  cluster::CollectiveRequest request;
  bool save_fusion = false;  // --save-fusion: the allreduce fit's threshold into the tune profile
  // bench's --history / --no-history / --compare, copied in by bench_command: where rank 0
  // appends the run, and whether it compares with the last run of the same collectives.
  std::string history;
  bool no_history = false;
  bool compare = false;
};

// Declares --collective and the flags that need it; returns --collective, which the suites' own
// flags exclude.
CLI::Option* add_collective_flags(CLI::App& sub, CollectiveFlags& flags);

// The command for `flags`; kUsage naming the flag when one is wrong.
[[nodiscard]] Result<std::unique_ptr<Command>> collective_command(const CollectiveFlags& flags);

}  // namespace acco::cli
