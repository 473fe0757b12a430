// How a task touches a piece of data. The runtime infers dependencies from these modes in
// submission order (read after write, write after read, write after write), as StarPU's
// sequential consistency does, and moves data only for modes that read.
#pragma once

#include <string_view>

#include "acco/core/result.hpp"

namespace acco::sched {

enum class Access {
  kRead,       // needs a valid replica; leaves it unchanged
  kWrite,      // overwrites every byte: no copy in, every other replica becomes stale
  kReadWrite,  // needs a valid replica and changes it
};
[[nodiscard]] std::string_view to_string(Access access);  // "R", "W", "RW"
// "R", "W", "RW" (also "read", "write", "readwrite"). kInvalidArgument otherwise.
[[nodiscard]] Result<Access> access_from_string(std::string_view text);
[[nodiscard]] constexpr bool reads(Access a) {
  return a != Access::kWrite;
}
[[nodiscard]] constexpr bool writes(Access a) {
  return a != Access::kRead;
}

}  // namespace acco::sched
