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
  kUsage,            // the command line is wrong: fix the flag or argument (raised by the CLI only)
  kCannotWrite,      // an output file or directory cannot be created or written: pick another
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

namespace acco::detail {

[[nodiscard]] inline tl::unexpected<Error> propagate(Error&& error) {
  return tl::unexpected<Error>(std::move(error));
}
[[nodiscard]] inline tl::unexpected<Error> propagate(Error&& error, std::string_view where) {
  return tl::unexpected<Error>(std::move(error).with_context(where));
}

}  // namespace acco::detail

#define ACCO_DETAIL_CONCAT_INNER(a, b) a##b
#define ACCO_DETAIL_CONCAT(a, b) ACCO_DETAIL_CONCAT_INNER(a, b)

// Returns the error of `expr` (a Result or Status) from the current function, prefixed with
// `where` when one is given: ACCO_RETURN_IF_ERROR(load(path), "--config").
#define ACCO_RETURN_IF_ERROR(expr, ...) \
  do { \
    if (auto acco_result_ = (expr); !acco_result_.has_value()) { \
      return ::acco::detail::propagate( \
          std::move(acco_result_).error() __VA_OPT__(, ) __VA_ARGS__); \
    } \
  } while (false)

// Evaluates `expr` (a Result<T>); on a value, moves it into `lhs` (a declaration such as `auto x`
// or an existing variable), else returns the error, prefixed with `where` when one is given:
//   ACCO_ASSIGN_OR_RETURN(auto machine, source.discover());
#define ACCO_ASSIGN_OR_RETURN(lhs, expr, ...) \
  ACCO_DETAIL_ASSIGN_OR_RETURN(ACCO_DETAIL_CONCAT(acco_result_, __LINE__), lhs, \
                               expr __VA_OPT__(, ) __VA_ARGS__)
#define ACCO_DETAIL_ASSIGN_OR_RETURN(tmp, lhs, expr, ...) \
  auto tmp = (expr); \
  if (!tmp.has_value()) { \
    return ::acco::detail::propagate(std::move(tmp).error() __VA_OPT__(, ) __VA_ARGS__); \
  } \
  lhs = std::move(*tmp)

// A broken invariant is a bug: abort with file and line.
#define ACCO_CHECK(cond) \
  do { \
    if (!(cond)) { \
      ::acco::check_failed(#cond, __FILE__, __LINE__); \
    } \
  } while (false)
