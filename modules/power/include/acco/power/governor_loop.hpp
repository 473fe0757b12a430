// The governor as a loop over devices: an actuator for each kind of source given (NVML GPUs,
// simulated devices, RAPL packages) behind one RoutedActuator, the controller's state file, and
// the GovernorRun. A caller that samples the devices itself (the daemon's sampler) ticks it with
// each round; run() reads the devices every interval in the foreground until a stop or the
// duration (`acco power run`), restores what it changed, and answers a GovernorReport.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "acco/core/result.hpp"
#include "acco/core/stop.hpp"
#include "acco/power/governor.hpp"
#include "acco/power/governor_run.hpp"
#include "acco/power/sample.hpp"
#include "acco/power/sensor_source.hpp"
#include "acco/power/simulated_device.hpp"

namespace acco::power {

inline constexpr const char* kDefaultStateFile = "/var/lib/acco/governor-state.json";

// What the governor does and with what it acts.
struct GovernorSettings {
  GovernorOptions options;     // mode and thresholds
  bool allow_control = false;  // apply device actions; false: a dry run that logs them
  // Where original limits are kept while acco has changed them; used when control is allowed on
  // a real device (NVML, RAPL).
  std::string state_file = kDefaultStateFile;
  std::string nvml_library = "libnvidia-ml.so.1";  // NVML's actuator, with control allowed
  std::string sysroot = "/";                       // RAPL's actuator writes under it
};

// How run() paces its rounds.
struct GovernorLoopOptions {
  std::chrono::milliseconds interval{1000};   // one round per interval
  std::chrono::duration<double> duration{0};  // then stop; 0: only when the stop flag says
  // Simulated time: rounds back to back, each moving this clock on by the interval (the sources
  // are simulated devices reading it). Null: the system clock, waiting out each interval.
  SimulatedClock* simulated_clock = nullptr;
  // Called once the devices were read and the settings accepted, before the first round's
  // actions: where a caller says what the run is doing.
  std::function<void()> started;
};

// What a run() did (acco.power-run/1).
struct GovernorReport {
  GovernorStatus status;        // at the end, after the limits were restored
  std::vector<Action> actions;  // every action of the run, in order, applied or not
  bool simulated_time = false;
  double duration_seconds = 0;           // from the first round to the last
  std::uint64_t rounds = 0;              // the first round included
  std::string stopped_by;                // the stop's reason, or core::kStoppedByDuration
  std::vector<std::string> read_errors;  // "<source>: <message>" per failed read, in order
};

// How run()'s error starts when the sources read no device (kUnavailable), so a caller can add
// where it looked and how to get devices.
inline constexpr std::string_view kNoDeviceToGovern = "no device to govern";

inline constexpr const char* kPowerRunSchema = "acco.power-run/1";
// {"schema": "acco.power-run/1", "mode", "allow_control", "simulated_time", "duration_seconds",
// "rounds", "stopped_by", "status", "actions"} (docs/schemas/power-run.schema.json).
[[nodiscard]] nlohmann::ordered_json to_json(const GovernorReport& report);

class GovernorLoop {
 public:
  using Log = GovernorRun::Log;

  // Actuators for `sources` (simulated ones, SimulatedSource and ThermalRig, are recognised by
  // type, the others by name), NVML's only with control allowed. `log` gets every action as it
  // is taken. kUnavailable ("allow_control: <NVML's message>") when control is allowed and NVML
  // cannot be opened for it. The sources must outlive the loop.
  [[nodiscard]] static Result<GovernorLoop> create(const GovernorSettings& settings,
                                                   const std::vector<SensorSource*>& sources,
                                                   Log log = {});
  ~GovernorLoop();
  GovernorLoop(GovernorLoop&& other) noexcept;
  GovernorLoop& operator=(GovernorLoop&& other) noexcept;
  GovernorLoop(const GovernorLoop&) = delete;
  GovernorLoop& operator=(const GovernorLoop&) = delete;

  // Whether the controller keeps a state file (control allowed on NVML or RAPL devices); a
  // caller that ticks may check it with read_state_file before the first round.
  [[nodiscard]] bool uses_state_file() const;

  // GovernorRun's start, tick and finish, after learning which source each device belongs to.
  // One caller at a time; status() may be read from any thread. start refuses a fixed cap no
  // device can take (check_cap's kInvalidArgument, prefixed "mode: " as the setting it names).
  [[nodiscard]] Result<std::vector<Action>> start(const std::vector<DeviceSample>& samples,
                                                  double now_seconds);
  std::vector<Action> tick(const std::vector<DeviceSample>& samples, double now_seconds);
  std::vector<Action> finish(const std::vector<DeviceSample>& samples, double now_seconds);
  [[nodiscard]] GovernorStatus status() const;

  // The loop in the foreground: reads `sources` (the ones given to create), starts, ticks once
  // per interval until `stop` is requested (real time only) or the duration has passed, then
  // reads once more and finishes, restoring what was changed. A source that fails a read is a
  // line of read_errors and the round goes on. Errors: start's (a state file that is not one,
  // kInvalidArgument), before anything was changed; kUnavailable when the first round reads no
  // device (an empty run would report nothing to a caller who asked to govern).
  [[nodiscard]] Result<GovernorReport> run(
      const std::vector<std::unique_ptr<SensorSource>>& sources, const GovernorLoopOptions& options,
      const core::StopFlag& stop);

 private:
  struct Impl;
  explicit GovernorLoop(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace acco::power
