// acco.Monitor (the sensors `acco serve` samples, as dicts) and acco.analyze (a recording's
// verdicts, the document `acco analyze --json` prints).
#pragma once

#include <pybind11/pybind11.h>

namespace acco::python {

void bind_monitor(pybind11::module_& m);

}  // namespace acco::python
