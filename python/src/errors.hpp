// acco's errors as Python exceptions: acco.Error and one subclass per core error code, raised with
// the message the CLI prints after "acco: ".
#pragma once

#include <exception>

#include <pybind11/pybind11.h>

#include "acco/core/result.hpp"

namespace acco::python {

// Carries an acco::Error out of a binding; the translator registered by bind_errors turns it into
// the Python class of its code. Thrown with or without the GIL held (no Python object in it).
class ErrorException : public std::exception {
 public:
  explicit ErrorException(Error error) : error_(std::move(error)) {}
  [[nodiscard]] const char* what() const noexcept override { return error_.message.c_str(); }
  [[nodiscard]] const Error& error() const { return error_; }

 private:
  Error error_;
};

// The value of `result`, or throws its error as an ErrorException.
template <typename T>
T unwrap(Result<T>&& result) {
  if (!result.has_value()) {
    throw ErrorException(std::move(result).error());
  }
  if constexpr (!std::is_void_v<T>) {
    return std::move(*result);
  }
}

// Defines acco.Error and its subclasses in `m` and registers the translator.
void bind_errors(pybind11::module_& m);

}  // namespace acco::python
