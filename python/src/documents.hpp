// acco.probe, acco.bench (and acco.doctor): the CLI's --json documents as Python dicts.
#pragma once

#include <pybind11/pybind11.h>

namespace acco::python {

void bind_documents(pybind11::module_& m);

}  // namespace acco::python
