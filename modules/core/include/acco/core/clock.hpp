// The wall clock: the instants acco stamps on samples, events, recordings and documents. One
// implementation, so every timestamp in a recording, a log line and a report is the same Unix
// time. Intervals are measured with std::chrono::steady_clock, never with these.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace acco::core {

// Now, in nanoseconds since the Unix epoch (std::chrono::system_clock): the time_unix_nanos of a
// sample or an event. Not monotonic: the administrator or NTP may step it. Thread-safe.
[[nodiscard]] std::int64_t now_unix_nanos();

// `time` in UTC to the second, as a document's "created" field: "2025-03-01T12:00:00Z" (text
// order is time order).
[[nodiscard]] std::string utc_timestamp(std::chrono::system_clock::time_point time);

}  // namespace acco::core
