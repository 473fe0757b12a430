// What `acco power status` reports: every device's temperature, power, limits, clock-event
// (throttle) reasons and the state the governor's thresholds alone put it in, and the limits a
// governor that did not restore them left in its state file.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "acco/core/result.hpp"
#include "acco/power/controller.hpp"
#include "acco/power/sample.hpp"
#include "acco/power/sensor_source.hpp"

namespace acco::power {

struct PowerStatus {
  std::string nvml;  // what NVML was for the sources: "on", "off", "unavailable (<why>)"
  std::vector<DeviceSample> samples;
  std::vector<std::string> read_errors;  // "<source>: <message>" per source that failed
  // The state file's devices; its error (kInvalidArgument naming it) when it is not one, which
  // leaves what a previous governor changed unknown.
  Result<std::vector<SavedDevice>> unrestored;
};

// Reads `sources` twice: the second read gives what only a difference or a step tells (RAPL's
// power is an energy difference, so with RAPL zones the reads are 200 ms apart; simulated
// devices report clock events once their model has stepped). `nvml` is copied into the result.
[[nodiscard]] PowerStatus read_power_status(
    const std::vector<std::unique_ptr<SensorSource>>& sources,
    const std::filesystem::path& state_file, std::string nvml);

// "lost", "suspended", the thermal state ("normal", "warm", "hot", "draining"), or "-" without
// a temperature or a max operating threshold.
[[nodiscard]] std::string status_state(const DeviceSample& sample);
// The names of the clock-event reasons set in the sample, in bit order ("sw_power_cap").
[[nodiscard]] std::vector<std::string> clock_event_reasons(const DeviceSample& sample);

inline constexpr const char* kPowerStatusSchema = "acco.power-status/1";
// {"schema": "acco.power-status/1", "nvml", "devices": [...], "unrestored": [...]}, with
// "unrestored": null and "state_file_error" when the state file could not be read
// (docs/schemas/power-status.schema.json).
[[nodiscard]] nlohmann::ordered_json to_json(const PowerStatus& status);

}  // namespace acco::power
