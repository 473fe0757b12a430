// Samples and snapshots as JSON for the API, the recorder and the logs. A reading the device did
// not give is absent from the object, never null or a sentinel.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "acco/analyze/snapshot.hpp"
#include "acco/core/result.hpp"
#include "acco/power/sample.hpp"

namespace acco::analyze {

[[nodiscard]] nlohmann::ordered_json to_json(const power::DeviceSample& s);
[[nodiscard]] nlohmann::ordered_json to_json(const power::HostSample& h);
// {"time": RFC 3339, "time_unix_nanos", "devices": [...], "host": {...}, "sampler": {...}}
[[nodiscard]] nlohmann::ordered_json to_json(const Snapshot& s);
// Reads what to_json wrote (to_json then this gives an equal value, except the sampler's
// last_error map and host fields to_json leaves out). kInvalidArgument naming the field:
// "devices[1].power_watts: expected a number, got \"hot\"".
[[nodiscard]] Result<power::DeviceSample> device_sample_from_json(const nlohmann::json& j,
                                                                  const std::string& path = "");
[[nodiscard]] Result<power::HostSample> host_sample_from_json(const nlohmann::json& j,
                                                              const std::string& path = "host");
[[nodiscard]] Result<Snapshot> snapshot_from_json(const nlohmann::json& j);

// "2026-12-01T16:25:24.123Z": RFC 3339 in UTC with milliseconds.
[[nodiscard]] std::string rfc3339(std::int64_t time_unix_nanos);

}  // namespace acco::analyze
