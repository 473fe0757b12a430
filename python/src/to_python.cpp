#include "to_python.hpp"

#include <string>

namespace py = pybind11;

namespace acco::python {

// Recursive over the document's nesting: acco's own documents, a handful of levels deep.
py::object to_python(const nlohmann::ordered_json& j) {  // NOLINT(misc-no-recursion)
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
    case nlohmann::ordered_json::value_t::discarded:
      return py::none();
    case nlohmann::ordered_json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return py::int_(j.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned:
      return py::int_(j.get<std::uint64_t>());
    case nlohmann::ordered_json::value_t::number_float:
      return py::float_(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return py::str(j.get_ref<const std::string&>());
    case nlohmann::ordered_json::value_t::binary:
      return py::bytes(reinterpret_cast<const char*>(j.get_binary().data()), j.get_binary().size());
    case nlohmann::ordered_json::value_t::array: {
      py::list list(j.size());
      std::size_t i = 0;
      for (const auto& item : j) {
        list[i++] = to_python(item);
      }
      return list;
    }
    case nlohmann::ordered_json::value_t::object: {
      py::dict dict;
      for (const auto& [key, value] : j.items()) {
        dict[py::str(key)] = to_python(value);
      }
      return dict;
    }
  }
  return py::none();
}

}  // namespace acco::python
