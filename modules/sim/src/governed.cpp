#include "governed.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/power/controller.hpp"
#include "acco/power/governor.hpp"
#include "acco/power/thermal_rig.hpp"

namespace acco::sim {

Governed::Governed(std::vector<power::SimulatedDevice>& devices, std::vector<std::string> names)
    : devices_(devices),
      names_(std::move(names)),
      weight_(devices.size(), 1.0),
      open_(devices.size(), 1),
      accepting_(devices.size(), 1),
      drained_(devices.size(), 0) {}

Governed::~Governed() = default;

Result<std::unique_ptr<Governed>> Governed::create(const std::string& mode,
                                                   std::vector<power::SimulatedDevice>& devices,
                                                   std::vector<std::string> names) {
  power::GovernorOptions options;
  ACCO_RETURN_IF_ERROR(power::parse_governor_mode(mode, options), "governor");
  std::unique_ptr<Governed> g(new Governed(devices, std::move(names)));
  g->period_ = options.period_seconds;
  Governed* self = g.get();
  g->actuator_ = power::make_simulated_actuator(
      [self](int index, const std::function<void(power::SimulatedDevice&)>& fn) -> Status {
        fn(self->devices_[static_cast<std::size_t>(index)]);
        return {};
      },
      static_cast<int>(devices.size()));
  power::ControllerOptions controller;
  controller.allow_control = true;  // simulated devices: nothing real to protect
  controller.scheduler = [self](const power::Action& a) { return self->on_scheduler(a); };
  g->run_ = std::make_unique<power::GovernorRun>(
      power::Governor(options), power::Controller(g->actuator_.get(), controller),
      [self](const power::Action& a) {
        if (a.kind == power::ActionKind::kLog && a.device.empty()) {
          return;
        }
        const auto index = units::parse_int(a.device);
        const bool known =
            index && *index >= 0 && *index < static_cast<std::int64_t>(self->names_.size());
        self->actions_.push_back(
            {a.time_seconds, known ? self->names_[static_cast<std::size_t>(*index)] : a.device,
             power::to_string(a.kind), a.value, power::to_string(a.state), a.reason});
      });
  return g;
}

Status Governed::on_scheduler(const power::Action& a) {
  const auto index = units::parse_int(a.device);
  if (!index || *index < 0 || *index >= static_cast<std::int64_t>(devices_.size())) {
    return fail(Errc::kInvalidArgument,
                fmt::format("governor action for device '{}': expected a device index", a.device));
  }
  const auto d = static_cast<std::size_t>(*index);
  switch (a.kind) {
    case power::ActionKind::kSetWeight:
      if (!(a.value > 0 && a.value <= 1)) {
        return fail(Errc::kInvalidArgument,
                    fmt::format("weight {}: expected a value in (0, 1]", a.value));
      }
      weight_[d] = a.value;
      break;
    case power::ActionKind::kNoNewWork:
      accepting_[d] = a.value == 0 ? 1 : 0;
      break;
    case power::ActionKind::kDrain:
      if (a.value != 0 && drained_[d] == 0) {
        closed_now_.push_back(static_cast<int>(d));
      }
      drained_[d] = a.value != 0 ? 1 : 0;
      break;
    default:
      break;
  }
  open_[d] = accepting_[d] != 0 && drained_[d] == 0 ? 1 : 0;
  return {};
}

std::vector<int> Governed::tick(const std::vector<double>& utilization, double now) {
  samples_.clear();
  const auto stamp = std::llround(now * 1e9);
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    auto s = devices_[d].sample(stamp);  // its index, and so its action's device, is d
    if (d < utilization.size()) {
      s.utilization_ratio = utilization[d];
    }
    samples_.push_back(std::move(s));
  }
  closed_now_.clear();
  (void)run_->tick(samples_, now);
  return closed_now_;
}

}  // namespace acco::sim
