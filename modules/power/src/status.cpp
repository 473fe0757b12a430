#include "acco/power/status.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>
#include <utility>

#include "acco/power/governor.hpp"

namespace acco::power {

PowerStatus read_power_status(const std::vector<std::unique_ptr<SensorSource>>& sources,
                              const std::filesystem::path& state_file, std::string nvml) {
  PowerStatus status;
  status.nvml = std::move(nvml);
  auto samples = read_all(sources, status.read_errors);
  const bool rapl = std::any_of(samples.begin(), samples.end(),
                                [](const DeviceSample& s) { return s.source == "rapl"; });
  if (rapl) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  status.read_errors.clear();
  status.samples = read_all(sources, status.read_errors);
  status.unrestored = read_state_file(state_file);
  return status;
}

std::string status_state(const DeviceSample& sample) {
  const auto state = thermal_state(sample);
  return sample.lost ? "lost" : sample.suspended ? "suspended" : state ? to_string(*state) : "-";
}

std::vector<std::string> clock_event_reasons(const DeviceSample& sample) {
  std::vector<std::string> out;
  for (const auto& [bit, name] : clock_event_names()) {
    if ((sample.clock_event_reasons.value_or(0) & bit) != 0) {
      out.emplace_back(name);
    }
  }
  return out;
}

nlohmann::ordered_json to_json(const PowerStatus& status) {
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const DeviceSample& s : status.samples) {
    nlohmann::ordered_json j = {{"device", s.device},
                                {"uuid", s.uuid},
                                {"model", s.model},
                                {"source", s.source},
                                {"state", status_state(s)}};
    if (s.temperature_gpu_celsius) {
      j["temperature_celsius"] = *s.temperature_gpu_celsius;
    }
    if (s.power_watts) {
      j["power_watts"] = *s.power_watts;
    }
    nlohmann::ordered_json limits = nlohmann::ordered_json::object();
    const auto put = [&limits](const char* key, const std::optional<double>& v) {
      if (v) {
        limits[key] = *v;
      }
    };
    put("enforced", s.power_limit_enforced_watts);
    put("default", s.power_limit_default_watts);
    put("min", s.power_limit_min_watts);
    put("max", s.power_limit_max_watts);
    j["power_limit_watts"] = limits;
    j["throttle_reasons"] = clock_event_reasons(s);
    devices.push_back(std::move(j));
  }
  nlohmann::ordered_json doc = {{"schema", kPowerStatusSchema},
                                {"nvml", status.nvml},
                                {"devices", devices},
                                {"unrestored", nlohmann::ordered_json::array()}};
  if (status.unrestored) {
    for (const SavedDevice& d : *status.unrestored) {
      doc["unrestored"].push_back({{"uuid", d.uuid},
                                   {"original_limit_watts", d.original_limit_watts},
                                   {"set_limit_watts", d.set_limit_watts},
                                   {"clocks_locked", d.clocks_locked}});
    }
  } else {
    doc["unrestored"] = nullptr;
    doc["state_file_error"] = status.unrestored.error().message;
  }
  return doc;
}

}  // namespace acco::power
