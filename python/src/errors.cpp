#include "errors.hpp"

#include <array>
#include <string>

namespace py = pybind11;

namespace acco::python {
namespace {

struct ErrorClass {
  Errc code;
  const char* name;
  PyObject* builtin;  // a second base where one fits (ValueError for bad input), else null
  const char* doc;
};

// One class per Errc, in its order. A second base lets callers that know only Python's builtins
// catch what fits them: `except ValueError` catches a malformed input.
const std::array<ErrorClass, 8>& error_classes() {
  static const std::array<ErrorClass, 8> classes = {{
      {Errc::kInvalidArgument, "InvalidArgumentError", PyExc_ValueError,
       "The input is malformed: fix the value, file or argument."},
      {Errc::kNotFound, "NotFoundError", PyExc_LookupError, "The input does not exist."},
      {Errc::kUnavailable, "UnavailableError", nullptr,
       "A library, driver or device is absent here; try elsewhere."},
      {Errc::kUnsupported, "UnsupportedError", PyExc_NotImplementedError,
       "Present, but cannot do what was asked."},
      {Errc::kDeviceError, "DeviceError", nullptr, "The hardware or driver reported a failure."},
      {Errc::kInternal, "InternalError", nullptr, "An unexpected failure inside acco."},
      {Errc::kUsage, "UsageError", PyExc_ValueError, "The call is wrong: fix the argument."},
      {Errc::kCannotWrite, "CannotWriteError", nullptr,
       "An output file or directory cannot be created or written."},
  }};
  return classes;
}

// The classes live as long as the interpreter: the module holds them, and the translator reads
// these borrowed handles, indexed by Errc.
std::array<PyObject*, 8>& class_of_code() {
  static std::array<PyObject*, 8> classes{};
  return classes;
}

}  // namespace

void bind_errors(py::module_& m) {
  const std::string module = py::str(m.attr("__name__"));
  // The package re-exports everything as acco.X: the classes say so in their repr.
  const std::string prefix = module.substr(0, module.rfind('.')) + ".";
  PyObject* base = PyErr_NewExceptionWithDoc(
      (prefix + "Error").c_str(),
      "Every error acco raises. `code` names the kind (the CLI's exit code follows it); str() is "
      "the one-line message the CLI prints after 'acco: '.",
      PyExc_Exception, nullptr);
  if (base == nullptr) {
    throw py::error_already_set();
  }
  m.add_object("Error", py::reinterpret_steal<py::object>(base));
  for (const ErrorClass& c : error_classes()) {
    py::tuple bases = c.builtin != nullptr ? py::make_tuple(py::handle(base), py::handle(c.builtin))
                                           : py::make_tuple(py::handle(base));
    PyObject* cls =
        PyErr_NewExceptionWithDoc((prefix + c.name).c_str(), c.doc, bases.ptr(), nullptr);
    if (cls == nullptr) {
      throw py::error_already_set();
    }
    py::object owned = py::reinterpret_steal<py::object>(cls);
    owned.attr("code") = py::str(std::string(to_string(c.code)));
    m.add_object(c.name, owned);
    class_of_code()[static_cast<std::size_t>(c.code)] = cls;
  }
  // pybind11 takes a plain function pointer of this signature: the pointer is passed by value.
  // NOLINTNEXTLINE(performance-unnecessary-value-param)
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) {
        std::rethrow_exception(p);
      }
    } catch (const ErrorException& e) {
      PyErr_SetString(class_of_code()[static_cast<std::size_t>(e.error().code)],
                      e.error().message.c_str());
    }
  });
}

}  // namespace acco::python
