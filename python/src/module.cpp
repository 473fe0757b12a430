// acco._core: the compiled half of the Python package `acco` (python/acco/__init__.py re-exports
// it). Bindings of the modules' public functions only; no logic of its own.
#include <pybind11/pybind11.h>

#include "cluster.hpp"
#include "documents.hpp"
#include "errors.hpp"
#include "monitor.hpp"
#include "runtime.hpp"
#include "transfers.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "acco's compiled bindings; use the package `acco`.";
  acco::python::bind_errors(m);
  acco::python::bind_documents(m);
  acco::python::bind_transfers(m);
  acco::python::bind_runtime(m);
  acco::python::bind_monitor(m);
  acco::python::bind_cluster(m);
}
