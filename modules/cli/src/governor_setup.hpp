// The governor as the commands that run it (power run, serve --governor) wire it: its flags,
// an actuator per kind of device (NVML GPUs, simulated devices, RAPL packages) routed by the
// source each device's samples come from, the controller's state file, and the GovernorRun.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "acco/core/result.hpp"
#include "acco/power/actuator.hpp"
#include "acco/power/governor_run.hpp"
#include "acco/power/sensor_source.hpp"

namespace acco::cli {

inline constexpr const char* kDefaultStateFile = "/var/lib/acco/governor-state.json";

struct GovernorFlags {
  std::string mode = "thermal";
  bool allow_control = false;
  std::string state_file = kDefaultStateFile;
};

// Declares --mode, --allow-control and --state-file; where the governor is itself a flag
// (`serve --governor`), each of them needs it.
void add_governor_flags(CLI::App& sub, GovernorFlags& flags, CLI::Option* governor = nullptr);

struct GovernorSettings {
  power::GovernorOptions options;
  bool allow_control = false;
  std::string state_file;
};
// kUsage naming --mode or --state-file.
[[nodiscard]] Result<GovernorSettings> governor_settings(const GovernorFlags& flags);

// Routes each change to the actuator of the source the device's samples come from.
class RoutedActuator final : public power::Actuator {
 public:
  void add(const std::string& source, std::unique_ptr<power::Actuator> actuator);
  // Learns which source each uuid belongs to (call with every round's samples).
  void learn(const std::vector<power::DeviceSample>& samples);
  [[nodiscard]] std::string name() const override { return "routed"; }
  [[nodiscard]] Status set_power_limit(const std::string& uuid, double watts) override;
  [[nodiscard]] Status lock_sm_clocks(const std::string& uuid, double min_hertz,
                                      double max_hertz) override;
  [[nodiscard]] Status unlock_sm_clocks(const std::string& uuid) override;

 private:
  Result<power::Actuator*> route(const std::string& uuid) const;
  std::map<std::string, std::unique_ptr<power::Actuator>> by_source_;
  std::map<std::string, std::string> source_of_;
};

struct Governing {
  std::unique_ptr<RoutedActuator> actuator;  // outlives run
  std::unique_ptr<power::GovernorRun> run;
  bool uses_state_file = false;
  // One round: learn the devices, tick.
  std::vector<power::Action> tick(const std::vector<power::DeviceSample>& samples,
                                  double now) const;
};

// Actuators for the sources given (simulated ones are recognised by type); NVML's only with
// control allowed. The state file is used when control is allowed on a real device (NVML,
// RAPL). kUnavailable when control is allowed and NVML cannot be opened for it.
[[nodiscard]] Result<Governing> make_governing(const GovernorSettings& settings,
                                               const std::vector<power::SensorSource*>& sources,
                                               const std::string& nvml_library,
                                               const std::string& sysroot,
                                               power::GovernorRun::Log log);

}  // namespace acco::cli
