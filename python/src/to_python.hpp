// JSON documents (acco.probe/1, acco.bench/1, ...) as plain Python values: dict (keys in the
// document's order), list, str, int, float, bool, None.
#pragma once

#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

namespace acco::python {

// Needs the GIL.
[[nodiscard]] pybind11::object to_python(const nlohmann::ordered_json& j);

}  // namespace acco::python
