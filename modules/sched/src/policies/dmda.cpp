// dmda: the earliest expected completion, transfers included (task-based, data-aware).
#include <limits>
#include <string>

#include <fmt/format.h>

#include "policies.hpp"

namespace acco::sched::detail {

namespace {

std::string ms(double seconds) {
  return fmt::format("{:.3g}ms", seconds * 1e3);
}

}  // namespace

Decision select_dmda(const SystemView& view, const PolicyKnobs& knobs, bool explain) {
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
    return select_least_loaded(unknown, "dmda (calibrating: no model there yet)", explain);
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

namespace {

class DmdaPolicy final : public Policy {
 public:
  DmdaPolicy() : Policy(PolicyKind::kDmda, {}) {}
  int place(SystemView& view, const PolicyKnobs& knobs, int /*released_by*/,
            std::string* /*why*/) override {
    return select_dmda(view, knobs, /*explain=*/false).device;
  }
};

}  // namespace

std::unique_ptr<Policy> make_dmda_policy() {
  return std::make_unique<DmdaPolicy>();
}

}  // namespace acco::sched::detail
