#include "acco/power/governor_loop.hpp"

#include <chrono>
#include <functional>
#include <utility>

#include <fmt/format.h>

#include "acco/core/clock.hpp"
#include "acco/power/controller.hpp"
#include "acco/power/json.hpp"
#include "acco/power/rapl.hpp"
#include "acco/power/routed_actuator.hpp"
#include "acco/power/thermal_rig.hpp"

namespace acco::power {
struct GovernorLoop::Impl {
  std::unique_ptr<RoutedActuator> actuator;  // outlives run
  std::unique_ptr<GovernorRun> run;
  bool uses_state_file = false;
  GovernorOptions options;
  Log log;
  std::vector<Action>* collecting = nullptr;  // run()'s actions while it runs
};

GovernorLoop::GovernorLoop(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GovernorLoop::~GovernorLoop() = default;
GovernorLoop::GovernorLoop(GovernorLoop&& other) noexcept = default;
GovernorLoop& GovernorLoop::operator=(GovernorLoop&& other) noexcept = default;

Result<GovernorLoop> GovernorLoop::create(const GovernorSettings& settings,
                                          const std::vector<SensorSource*>& sources, Log log) {
  auto impl = std::make_unique<Impl>();
  impl->actuator = std::make_unique<RoutedActuator>();
  impl->log = std::move(log);
  for (SensorSource* source : sources) {
    if (auto* simulated = dynamic_cast<SimulatedSource*>(source)) {
      impl->actuator->add("simulated",
                          make_simulated_actuator(
                              [simulated](int i, const std::function<void(SimulatedDevice&)>& fn) {
                                return simulated->with_device(i, fn);
                              },
                              simulated->size()));
    } else if (auto* rig = dynamic_cast<ThermalRig*>(source)) {
      impl->actuator->add("simulated", rig->actuator());
    } else if (source->name() == "rapl") {
      impl->actuator->add("rapl", make_rapl_actuator(settings.sysroot));
      impl->uses_state_file = settings.allow_control;
    } else if (source->name() == "nvml" && settings.allow_control) {
      auto nvml = make_nvml_actuator(settings.nvml_library);
      if (!nvml) {
        return fail(Errc::kUnavailable, "allow_control: " + nvml.error().message);
      }
      impl->actuator->add("nvml", std::move(*nvml));
      impl->uses_state_file = true;
    }
  }
  ControllerOptions controller;
  controller.allow_control = settings.allow_control;
  impl->options = settings.options;
  if (impl->uses_state_file) {
    controller.state_file = settings.state_file;
  }
  // The log sees every action; run() also keeps the ones of its own run. Impl does not move, so
  // the pointer stays valid when the loop does.
  Impl* state = impl.get();
  impl->run = std::make_unique<GovernorRun>(Governor(settings.options),
                                            Controller(impl->actuator.get(), controller),
                                            [state](const Action& a) {
                                              if (state->collecting != nullptr) {
                                                state->collecting->push_back(a);
                                              }
                                              if (state->log) {
                                                state->log(a);
                                              }
                                            });
  return GovernorLoop(std::move(impl));
}

bool GovernorLoop::uses_state_file() const {
  return impl_->uses_state_file;
}

Result<std::vector<Action>> GovernorLoop::start(const std::vector<DeviceSample>& samples,
                                                double now_seconds) {
  ACCO_RETURN_IF_ERROR(check_cap(impl_->options, samples), "mode");
  impl_->actuator->learn(samples);
  return impl_->run->start(samples, now_seconds);
}

std::vector<Action> GovernorLoop::tick(const std::vector<DeviceSample>& samples,
                                       double now_seconds) {
  impl_->actuator->learn(samples);
  return impl_->run->tick(samples, now_seconds);
}

std::vector<Action> GovernorLoop::finish(const std::vector<DeviceSample>& samples,
                                         double now_seconds) {
  impl_->actuator->learn(samples);
  return impl_->run->finish(samples, now_seconds);
}

GovernorStatus GovernorLoop::status() const {
  return impl_->run->status();
}

Result<GovernorReport> GovernorLoop::run(const std::vector<std::unique_ptr<SensorSource>>& sources,
                                         const GovernorLoopOptions& options,
                                         const core::StopFlag& stop) {
  GovernorReport report;
  report.simulated_time = options.simulated_clock != nullptr;
  report.stopped_by = core::kStoppedByDuration;
  impl_->collecting = &report.actions;

  SimulatedClock* simulated = options.simulated_clock;
  const auto clock_ns = [simulated]() -> std::int64_t {
    if (simulated != nullptr) {
      return simulated->now();
    }
    return core::now_unix_nanos();
  };
  const std::int64_t start_ns = clock_ns();
  const auto seconds_since_start = [&] { return static_cast<double>(clock_ns() - start_ns) / 1e9; };
  const double duration = options.duration.count();

  auto samples = read_all(sources, report.read_errors);
  if (samples.empty()) {  // nothing to govern: say so rather than report an empty run
    impl_->collecting = nullptr;
    return fail(Errc::kUnavailable,
                std::string(kNoDeviceToGovern) + ": " +
                    (report.read_errors.empty() ? std::string("the sources read none")
                                                : report.read_errors.front()));
  }
  if (auto cap = check_cap(impl_->options, samples); !cap) {  // before `started`: no banner
    impl_->collecting = nullptr;
    return tl::unexpected(std::move(cap).error().with_context("mode"));
  }
  if (options.started) {
    options.started();
  }
  if (auto started = start(samples, 0); !started) {
    impl_->collecting = nullptr;
    return tl::unexpected(std::move(started).error());
  }
  report.rounds = 1;
  for (;;) {
    if (simulated != nullptr) {
      simulated->advance(options.interval);
    } else if (stop.wait_for(options.interval)) {
      report.stopped_by = stop.reason().value_or("");
      break;
    }
    if (duration > 0 && seconds_since_start() >= duration) {
      break;
    }
    samples = read_all(sources, report.read_errors);
    (void)tick(samples, seconds_since_start());
    ++report.rounds;
  }
  samples = read_all(sources, report.read_errors);  // what the devices have now
  (void)finish(samples, seconds_since_start());
  impl_->collecting = nullptr;
  report.status = status();
  report.duration_seconds = seconds_since_start();
  return report;
}

nlohmann::ordered_json to_json(const GovernorReport& report) {
  nlohmann::ordered_json actions = nlohmann::ordered_json::array();
  for (const auto& a : report.actions) {
    actions.push_back(to_json(a));
  }
  return {{"schema", kPowerRunSchema},
          {"mode", report.status.mode},
          {"allow_control", report.status.allow_control},
          {"simulated_time", report.simulated_time},
          {"duration_seconds", report.duration_seconds},
          {"rounds", report.rounds},
          {"stopped_by", report.stopped_by},
          {"status", to_json(report.status)},
          {"actions", actions}};
}

}  // namespace acco::power
