// Error values for everything that can fail for reasons outside the program: a missing file, an
// unloadable library, a malformed snapshot. Bugs are not errors: they abort through ACCO_CHECK.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <tl/expected.hpp>

namespace acco {

// Chosen by what the caller should do, not by where the failure happened.
enum class Errc {
  kInvalidArgument,  // the input is malformed: fix the flag, file or value
  kNotFound,         // the input does not exist
  kUnavailable,      // a library, driver or device is absent here; try elsewhere
  kUnsupported,      // present but cannot do what was asked
  kDeviceError,      // the hardware or driver reported a failure
  kInternal,         // an unexpected failure inside acco
};

[[nodiscard]] std::string_view to_string(Errc code);

struct Error {
  Errc code = Errc::kInternal;
  std::string message;

  // Prefixes "where: " so messages read outermost first: "probe: snapshot.json: line 3: ...".
  Error&& with_context(std::string_view where) && {
    message.insert(0, std::string(where) + ": ");
    return std::move(*this);
  }
  bool operator==(const Error&) const = default;
};

template <typename T>
using Result = tl::expected<T, Error>;
using Status = Result<void>;

[[nodiscard]] inline tl::unexpected<Error> fail(Errc code, std::string message) {
  return tl::unexpected<Error>(Error{code, std::move(message)});
}

[[noreturn]] void check_failed(const char* condition, const char* file, int line);

}  // namespace acco

// Returns the error of `expr` (a Result) from the current function, prefixed with `where`.
#define ACCO_RETURN_IF_ERROR(expr, where) \
  do { \
    if (auto acco_result_ = (expr); !acco_result_.has_value()) { \
      return tl::unexpected(std::move(acco_result_.error()).with_context(where)); \
    } \
  } while (false)

// A broken invariant is a bug: abort with file and line.
#define ACCO_CHECK(cond) \
  do { \
    if (!(cond)) { \
      ::acco::check_failed(#cond, __FILE__, __LINE__); \
    } \
  } while (false)
