// `acco bench --collective OPS`: the collective benchmark, run by every rank of an MPI job
// (mpirun or srun start acco on each rank; rank 0 prints), or by one process alone.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "acco/cli/app.hpp"
#include "acco/core/result.hpp"

namespace acco::cli {

struct CollectiveFlags {
  std::string ops;  // --collective: empty = the transfer or storage suite
  // nccl-tests' flags and short names (-b -e -f -n -w). Unset (empty, -1): the defaults below,
  // or with bench's --quick (copied in by bench_command) a short sweep.
  std::string min_bytes = "8";
  std::string max_bytes;  // 32MiB; --quick: 1MiB
  int factor = 2;
  int iters = -1;   // 20; --quick: 5
  int warmup = -1;  // 5; --quick: 1
  bool quick = false;
  bool no_check = false;
  bool save_fusion = false;  // --save-fusion: the allreduce fit's threshold into the tune profile
  // bench's --history / --no-history, copied in by bench_command: where rank 0 appends the run.
  std::string history;
  bool no_history = false;
  bool compare = false;  // bench's --compare: with the last run of the same collectives
  std::string nccl_library = "libnccl.so.2";  // --nccl-library (env ACCO_NCCL_LIBRARY)
  std::string buffers = "host";               // --buffers host|device
  std::string via = "auto";                   // --via auto|nccl|mpi (device buffers)
  std::string nccl_timeout = "300s";          // --nccl-timeout: the watchdog of NCCL's waits
  // bench's --backend / --link, copied in by bench_command: the device of --buffers device.
  std::string backend = "auto";
  std::string link = "pcie4x16";
};

// Declares --collective and the flags that need it; returns --collective, which the suites' own
// flags exclude.
CLI::Option* add_collective_flags(CLI::App& sub, CollectiveFlags& flags);

// The command for `flags`; kUsage naming the flag when one is wrong.
[[nodiscard]] Result<std::unique_ptr<Command>> collective_command(const CollectiveFlags& flags);

}  // namespace acco::cli
