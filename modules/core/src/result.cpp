#include "acco/core/result.hpp"

#include <cstdio>
#include <cstdlib>

namespace acco {

std::string_view to_string(Errc code) {
  switch (code) {
    case Errc::kInvalidArgument:
      return "invalid argument";
    case Errc::kNotFound:
      return "not found";
    case Errc::kUnavailable:
      return "unavailable";
    case Errc::kUnsupported:
      return "unsupported";
    case Errc::kDeviceError:
      return "device error";
    case Errc::kInternal:
      return "internal error";
    case Errc::kUsage:
      return "usage error";
    case Errc::kCannotWrite:
      return "cannot write";
  }
  return "internal error";
}

void check_failed(const char* condition, const char* file, int line) {
  // fputs keeps this usable from any context, including before main and in signal-free aborts.
  std::fprintf(stderr, "acco: internal check failed: %s at %s:%d\n", condition, file, line);
  std::abort();
}

}  // namespace acco
