// acco.Runtime: the task runtime (sched::Runtime) with Python callables as implementations.
#pragma once

#include <pybind11/pybind11.h>

namespace acco::python {

void bind_runtime(pybind11::module_& m);

}  // namespace acco::python
