// Built without MPI (ACCO_WITH_MPI off or Open MPI not found): one rank only.
#include <fmt/format.h>

#include "acco/cluster/communicator.hpp"

namespace acco::cluster {

Result<std::unique_ptr<Communicator>> open_communicator(const LaunchInfo& launch) {
  if (launch.launcher != Launcher::kNone) {
    return fail(Errc::kUnavailable,
                fmt::format("started by {} ({}), but this acco was built without MPI "
                            "(install libopenmpi-dev and rebuild with ACCO_WITH_MPI=ON)",
                            to_string(launch.launcher), launch.evidence));
  }
  return self_communicator();
}

void defer_mpi_finalize() {}
void finish_mpi() {}

}  // namespace acco::cluster
