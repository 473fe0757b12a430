#include "acco/power/json.hpp"

#include <cmath>
#include <utility>

namespace acco::power {

nlohmann::ordered_json to_json(const Action& a) {
  nlohmann::ordered_json j = {{"time_seconds", a.time_seconds},
                              {"device", a.device},
                              {"uuid", a.uuid},
                              {"kind", to_string(a.kind)},
                              {"value", a.value},
                              {"state", to_string(a.state)},
                              {"reason", a.reason}};
  nlohmann::ordered_json numbers = nlohmann::ordered_json::object();
  for (const auto& [name, value] : a.numbers) {
    if (std::isfinite(value)) {
      numbers[name] = value;
    }
  }
  j["numbers"] = numbers;
  j["applied"] = a.applied;
  if (!a.error.empty()) {
    j["error"] = a.error;
  }
  return j;
}

nlohmann::ordered_json to_json(const GovernorStatus& g) {
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const GovernorDevice& d : g.devices) {
    nlohmann::ordered_json j = {
        {"device", d.device}, {"uuid", d.uuid}, {"state", to_string(d.state)}};
    if (d.limit_watts) {
      j["limit_watts"] = *d.limit_watts;
    }
    j["weight"] = d.weight;
    j["no_new_work"] = d.no_new_work;
    j["drained"] = d.drained;
    j["clocks_locked"] = d.clocks_locked;
    j["lost"] = d.lost;
    if (d.energy_cap_watts) {
      j["energy_cap_watts"] = *d.energy_cap_watts;
    }
    devices.push_back(std::move(j));
  }
  nlohmann::ordered_json actions = nlohmann::ordered_json::object();
  for (const auto& [kind, n] : g.actions_total) {
    actions[kind] = n;
  }
  nlohmann::ordered_json hands_off = nlohmann::ordered_json::object();
  for (const auto& [uuid, why] : g.hands_off) {
    hands_off[uuid] = why;
  }
  return {{"mode", g.mode},
          {"allow_control", g.allow_control},
          {"devices", devices},
          {"actions_total", actions},
          {"hands_off", hands_off}};
}

}  // namespace acco::power
