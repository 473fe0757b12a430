// The governor's values as JSON, for `acco power run --json` (acco.power-run/1), the daemon's
// API and the logs: {"time_seconds", "device", "uuid", "kind", "value", "state", "reason",
// "numbers": {...}, "applied", "error"?} per action and {"mode", "allow_control", "devices":
// [...], "actions_total": {...}, "hands_off": {...}} for the status (docs/power.md). A number
// that is not finite is left out of "numbers".
#pragma once

#include <nlohmann/json.hpp>

#include "acco/power/governor.hpp"

namespace acco::power {

[[nodiscard]] nlohmann::ordered_json to_json(const Action& a);
[[nodiscard]] nlohmann::ordered_json to_json(const GovernorStatus& g);

}  // namespace acco::power
