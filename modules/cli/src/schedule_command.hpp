// `acco schedule`: runs a named workload (tiled Cholesky or LU, independent tasks, a chain, a
// random layered DAG) on emulated host devices or on the GPUs, under one or more policies, and
// reports makespan against the lower bounds, bytes moved and how busy each device was.
#pragma once

#include "acco/cli/app.hpp"

namespace acco::cli {

// Exit codes: 64 for a value that does not fit the devices found (list lengths with cuda, a
// memory budget smaller than a task's data), 65 for a malformed --models file, 69 when the
// devices are unavailable, 73 when --trace or --models cannot be written, 1 when a task of a
// measured run failed.
[[nodiscard]] Outcome run_schedule(const Options& options);

}  // namespace acco::cli
