#include "acco/sched/access.hpp"

#include <string>

namespace acco::sched {

std::string_view to_string(Access access) {
  switch (access) {
    case Access::kRead:
      return "R";
    case Access::kWrite:
      return "W";
    case Access::kReadWrite:
      return "RW";
  }
  return "?";
}

Result<Access> access_from_string(std::string_view text) {
  if (text == "R" || text == "read") {
    return Access::kRead;
  }
  if (text == "W" || text == "write") {
    return Access::kWrite;
  }
  if (text == "RW" || text == "readwrite") {
    return Access::kReadWrite;
  }
  return fail(Errc::kInvalidArgument,
              "access mode '" + std::string(text) + "': expected R, W or RW");
}

}  // namespace acco::sched
