// acco.Communicator, acco.FusedAllReduce and the launcher's rank, size and local rank: the
// cluster module's collectives from Python, for acco.torch's DDP hook and optimizer.
#pragma once

#include <pybind11/pybind11.h>

namespace acco::python {

void bind_cluster(pybind11::module_& m);

}  // namespace acco::python
