#include "acco/sched/policy.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include <fmt/format.h>

namespace acco::sched {

namespace {

struct Named {
  PolicyKind kind;
  std::string_view name;
};
constexpr Named kNames[] = {
    {PolicyKind::kEager, "eager"},
    {PolicyKind::kRoundRobin, "round-robin"},
    {PolicyKind::kLeastLoaded, "least-loaded"},
    {PolicyKind::kDmda, "dmda"},
    {PolicyKind::kWorkStealing, "ws"},
    {PolicyKind::kHeft, "heft"},
};

std::string ms(double seconds) {
  return fmt::format("{:.3g}ms", seconds * 1e3);
}

Decision least_loaded(const SystemView& view, std::string_view label, bool explain) {
  Decision best;
  double best_load = std::numeric_limits<double>::infinity();
  for (std::size_t d = 0; d < view.devices.size(); ++d) {
    const DeviceView& dv = view.devices[d];
    if (!dv.eligible) {
      continue;
    }
    const double load = static_cast<double>(dv.queued) / (dv.weight * dv.relative_speed);
    if (load < best_load) {
      best_load = load;
      best.device = static_cast<int>(d);
    }
  }
  if (best.device >= 0 && explain) {
    best.reason = fmt::format("{}: dev{} has the lightest queue ({:.3g} tasks per unit speed)",
                              label, best.device, best_load);
  }
  return best;
}

Decision round_robin(const SystemView& view, bool explain) {
  Decision out;
  const std::size_t n = view.devices.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t d = (view.round_robin_next + i) % n;
    if (view.devices[d].eligible) {
      out.device = static_cast<int>(d);
      if (explain) {
        out.reason = fmt::format("round-robin: dev{} is next in turn", d);
      }
      return out;
    }
  }
  return out;
}

Decision dmda(const SystemView& view, const PolicyKnobs& knobs, bool explain) {
  // Recomputed per pass rather than stored: no allocation on the per-task path.
  struct Eft {
    double start = 0;
    double end = std::numeric_limits<double>::infinity();
    double len = 0;
  };
  const auto eft = [&](std::size_t d) {
    const DeviceView& dv = view.devices[d];
    Eft e;
    if (!dv.eligible || !dv.predicted) {
      return e;
    }
    e.len = *dv.predicted / dv.weight;
    const double free_at = dv.available_at > view.now ? dv.available_at : view.now;
    e.start = free_at > view.now + dv.transfer ? free_at : view.now + dv.transfer;
    e.end = e.start + e.len;
    return e;
  };
  // One pass (this runs for every task over every device): fitness is alpha * (end - best_end)
  // + beta * transfer, and best_end is the same for every device, so the device with the least
  // alpha * end + beta * transfer is the fittest, and fitness differences are key differences.
  constexpr double kNone = std::numeric_limits<double>::infinity();
  const std::size_t n = view.devices.size();
  bool any_unknown = false;
  Decision out;
  double best_key = kNone;
  int runner_up = -1;
  double runner_key = kNone;
  for (std::size_t d = 0; d < n; ++d) {
    const DeviceView& dv = view.devices[d];
    if (!dv.eligible) {
      continue;
    }
    if (!dv.predicted) {
      any_unknown = true;
      continue;
    }
    const double key = knobs.alpha * eft(d).end + knobs.beta * dv.transfer;
    if (key < best_key) {
      runner_up = out.device;
      runner_key = best_key;
      best_key = key;
      out.device = static_cast<int>(d);
    } else if (key < runner_key) {
      runner_up = static_cast<int>(d);
      runner_key = key;
    }
  }
  if (any_unknown) {
    // A device that has never run this kind of task gets it, so its model calibrates (StarPU
    // does the same, b1); among several, the lightest queue. Calibration runs pay for this once:
    // models are persisted.
    SystemView unknown = view;
    for (DeviceView& dv : unknown.devices) {
      dv.eligible = dv.eligible && !dv.predicted;
    }
    return least_loaded(unknown, "dmda (calibrating: no model there yet)", explain);
  }
  if (out.device < 0) {
    return {};
  }
  const auto d = static_cast<std::size_t>(out.device);
  const Eft chosen = eft(d);
  out.expected_start = chosen.start;
  out.expected_end = chosen.end;
  out.predicted = chosen.len;
  out.transfer = view.devices[d].transfer;
  const double now = view.now;
  if (!explain) {
    return out;
  }
  out.reason = fmt::format("dmda: dev{} ends at +{} (starts +{}, runs {}{}, transfer {})",
                           out.device, ms(chosen.end - now), ms(chosen.start - now), ms(chosen.len),
                           view.devices[d].calibrated ? "" : " from the prior",
                           ms(view.devices[d].transfer));
  if (runner_up >= 0) {
    const auto r = static_cast<std::size_t>(runner_up);
    out.reason += fmt::format("; next best dev{} ends at +{} (fitness +{})", runner_up,
                              ms(eft(r).end - now), ms(runner_key - best_key));
  }
  return out;
}

}  // namespace

std::string_view to_string(PolicyKind kind) {
  for (const Named& n : kNames) {
    if (n.kind == kind) {
      return n.name;
    }
  }
  return "?";
}

Result<PolicyKind> policy_from_string(std::string_view name) {
  for (const Named& n : kNames) {
    if (n.name == name) {
      return n.kind;
    }
  }
  return fail(Errc::kInvalidArgument,
              fmt::format("policy '{}': expected eager, round-robin, least-loaded, dmda, ws or "
                          "heft",
                          name));
}

const std::vector<PolicyKind>& all_policies() {
  static const std::vector<PolicyKind> kAll = {PolicyKind::kEager,        PolicyKind::kRoundRobin,
                                               PolicyKind::kLeastLoaded,  PolicyKind::kDmda,
                                               PolicyKind::kWorkStealing, PolicyKind::kHeft};
  return kAll;
}

Decision select_device(PolicyKind kind, const SystemView& view, const PolicyKnobs& knobs,
                       bool explain) {
  switch (kind) {
    case PolicyKind::kEager: {
      Decision out;
      if (explain) {
        out.reason = "eager: shared queue, first idle device that can run it";
      }
      return out;
    }
    case PolicyKind::kRoundRobin:
      return round_robin(view, explain);
    case PolicyKind::kLeastLoaded:
      return least_loaded(view, "least-loaded", explain);
    case PolicyKind::kWorkStealing:
      return dmda(view, knobs, explain);
    case PolicyKind::kDmda:
    case PolicyKind::kHeft:
      return dmda(view, knobs, explain);
  }
  return {};
}

bool steal_pays(const DeviceView& victim, const DeviceView& thief, double now) {
  if (!thief.eligible) {
    return false;
  }
  if (!thief.predicted || !victim.predicted) {
    return victim.queued >= 2;
  }
  const double thief_end = now + thief.transfer + *thief.predicted / thief.weight;
  return victim.available_at - thief_end > 0;
}

}  // namespace acco::sched
