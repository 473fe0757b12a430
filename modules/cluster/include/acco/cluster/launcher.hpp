// Which launcher started this process and where it sits among its peers, from the environment
// the launcher sets: Open MPI's mpirun (OMPI_COMM_WORLD_*), a PMIx server (PMIX_RANK), Slurm's
// srun (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID), or none (one rank). The node-local rank is
// what the launcher says; the communicator code confirms it with MPI_Comm_split_type, never with
// host names (emulated nodes share one, ../shared/reference/multinode.md d9).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "acco/core/result.hpp"

namespace acco::cluster {

enum class Launcher {
  kNone,
  kOpenMpi,
  kPmix,
  kSlurm
};
[[nodiscard]] const char* to_string(Launcher launcher);

struct LaunchInfo {
  Launcher launcher = Launcher::kNone;
  int rank = 0;
  int size = 1;                   // 0: the launcher does not say (PMIx); MPI_Comm_size tells
  std::optional<int> local_rank;  // absent when the launcher does not say
  std::optional<int> local_size;
  std::string evidence;  // the variables read: "OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=4"
  bool operator==(const LaunchInfo&) const = default;
};

// The value of an environment variable, or nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;
[[nodiscard]] EnvLookup process_environment();

// Open MPI first (mpirun under Slurm sets both; its variables describe the MPI job), then PMIx,
// then Slurm, else none. kInvalidArgument naming the variable for a value that is not a number
// or a rank outside 0..size-1.
[[nodiscard]] Result<LaunchInfo> detect_launcher(const EnvLookup& env);

}  // namespace acco::cluster
