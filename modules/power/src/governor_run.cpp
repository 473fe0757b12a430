// GovernorRun: governor + controller + log, one round at a time.
#include "acco/power/governor_run.hpp"

#include <utility>

namespace acco::power {

GovernorRun::GovernorRun(Governor governor, Controller controller, Log log)
    : governor_(std::move(governor)), controller_(std::move(controller)), log_(std::move(log)) {}

void GovernorRun::log_all(const std::vector<Action>& actions) {
  if (log_) {
    for (const Action& a : actions) {
      log_(a);
    }
  }
}

Result<std::vector<Action>> GovernorRun::start(const std::vector<DeviceSample>& samples,
                                               double now) {
  std::vector<Action> out;
  {
    const std::lock_guard lock(mutex_);
    if (started_) {
      return out;
    }
    auto recovered = controller_.recover(samples, now);
    if (!recovered) {
      return tl::unexpected(recovered.error());
    }
    started_ = true;
    out = std::move(*recovered);
    log_all(out);
  }
  auto first = tick(samples, now);
  out.insert(out.end(), first.begin(), first.end());
  return out;
}

std::vector<Action> GovernorRun::tick(const std::vector<DeviceSample>& samples, double now) {
  const std::lock_guard lock(mutex_);
  if (!started_) {
    started_ = true;
    auto recovered = controller_.recover(samples, now);
    if (recovered) {
      log_all(*recovered);
    } else {
      // The limits a previous run left are unknown: changing anything now could lose them.
      finished_ = true;
      Action stop;
      stop.time_seconds = now;
      stop.reason = "governor stopped: " + recovered.error().message;
      log_all({stop});
      return {stop};
    }
  }
  if (finished_) {
    return {};
  }
  std::vector<Action> actions = governor_.step(samples, now);
  controller_.apply(actions, samples);
  log_all(actions);
  return actions;
}

std::vector<Action> GovernorRun::finish(const std::vector<DeviceSample>& samples, double now) {
  const std::lock_guard lock(mutex_);
  if (finished_) {
    return {};
  }
  finished_ = true;
  std::vector<Action> actions = governor_.finish(now);
  controller_.apply(actions, samples);
  std::vector<Action> rest = controller_.restore_all(now);
  actions.insert(actions.end(), rest.begin(), rest.end());
  log_all(actions);
  return actions;
}

GovernorStatus GovernorRun::status() const {
  const std::lock_guard lock(mutex_);
  GovernorStatus s;
  s.mode = mode_string(governor_.options());
  s.allow_control = controller_.allow_control();
  s.devices = governor_.devices();
  for (const ActionKind kind : all_action_kinds()) {
    const auto it = controller_.counts().find(kind);
    s.actions_total[to_string(kind)] = it == controller_.counts().end() ? 0 : it->second;
  }
  s.hands_off = controller_.hands_off();
  return s;
}

}  // namespace acco::power
