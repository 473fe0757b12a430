// run_thermal_workload: the rig's ticks drive the governor; its scheduler actions reach the
// runtime the workload runs on.
#include "acco/monitor/thermal_run.hpp"

#include <chrono>
#include <limits>
#include <mutex>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/power/controller.hpp"
#include "acco/power/governor_run.hpp"

namespace acco::monitor {

Result<ThermalOutcome> run_thermal_workload(const sched::Workload& workload,
                                            std::vector<sched::DeviceSpec> devices,
                                            sched::RuntimeOptions options,
                                            sched::WorkloadRunOptions run,
                                            const ThermalRunOptions& thermal) {
  power::ThermalRigOptions rig_options = thermal.rig;
  rig_options.devices = static_cast<int>(devices.size());
  ACCO_ASSIGN_OR_RETURN(auto rig, power::ThermalRig::create(rig_options));
  auto actuator = rig->actuator();

  // The runtime, while it lives: the governor's scheduler actions go there.
  std::mutex runtime_mutex;
  sched::Runtime* runtime = nullptr;
  auto scheduler = [&](const power::Action& a) -> Status {
    const std::lock_guard lock(runtime_mutex);
    if (runtime == nullptr) {
      return fail(Errc::kUnavailable, "no runtime running");
    }
    sched::Runtime* r = runtime;
    const auto parsed = units::parse_int(a.device);
    if (!parsed || *parsed < 0 || *parsed > std::numeric_limits<int>::max()) {
      return fail(
          Errc::kInvalidArgument,
          fmt::format("governor action for device '{}': expected a device index", a.device));
    }
    const int device = static_cast<int>(*parsed);
    switch (a.kind) {
      case power::ActionKind::kSetWeight:
        return r->set_headroom(device, a.value);
      case power::ActionKind::kNoNewWork:
        return r->set_accepting(device, a.value == 0);
      case power::ActionKind::kDrain:
        return r->set_drained(device, a.value != 0);
      default:
        return {};
    }
  };
  std::optional<power::GovernorRun> governing;
  std::vector<power::Action> actions;
  std::mutex actions_mutex;
  if (thermal.governor) {
    power::ControllerOptions controller;
    controller.allow_control = true;  // simulated devices: nothing real to protect
    controller.scheduler = scheduler;
    governing.emplace(power::Governor(*thermal.governor),
                      power::Controller(actuator.get(), controller), [&](const power::Action& a) {
                        const std::lock_guard lock(actions_mutex);
                        actions.push_back(a);
                      });
  }
  std::vector<power::DeviceSample> last;
  std::mutex last_mutex;
  rig->start_ticks(thermal.period_seconds,
                   [&](const std::vector<power::DeviceSample>& samples, double now) {
                     if (governing) {
                       (void)governing->tick(samples, now);
                     }
                     const std::lock_guard lock(last_mutex);
                     last = samples;
                   });

  const auto observe = run.observe;
  run.observe = [&](sched::Runtime* r) {
    {
      const std::lock_guard lock(runtime_mutex);
      runtime = r;
    }
    if (observe) {
      observe(r);
    }
  };
  run.kernel = [&rig](int device, double seconds) {
    if (!rig->run_kernel(device, seconds)) {
      throw sched::DeviceFailure(
          fmt::format("simulated device {} is lost (thermal shutdown)", device));
    }
  };
  const auto begin = std::chrono::steady_clock::now();
  auto outcome = sched::run_workload(workload, std::move(devices), std::move(options), run);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  rig->stop_ticks();
  if (!outcome) {
    return tl::unexpected(outcome.error());
  }
  ThermalOutcome out;
  if (governing) {
    std::vector<power::DeviceSample> samples;
    {
      const std::lock_guard lock(last_mutex);
      samples = last;
    }
    (void)governing->finish(samples, rig->simulated_seconds());
    out.governor = governing->status();
  }
  out.outcome = std::move(*outcome);
  out.devices = rig->totals();
  out.simulated_seconds = rig->simulated_seconds();
  out.wall_seconds = wall;
  out.tasks_run = workload.tasks.size() * static_cast<std::size_t>(run.calibration_runs + 1);
  out.actions = std::move(actions);
  return out;
}

}  // namespace acco::monitor
