// The wall clock the daemon's flows stamp events with (Unix nanoseconds).
#pragma once

#include <chrono>
#include <cstdint>

namespace acco::monitor::detail {

[[nodiscard]] inline std::int64_t wall_unix_nanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace acco::monitor::detail
