// least-loaded: the fewest queued tasks per unit of weight and speed (resource-based).
#include <limits>

#include <fmt/format.h>

#include "policies.hpp"

namespace acco::sched::detail {

Decision select_least_loaded(const SystemView& view, std::string_view label, bool explain) {
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

namespace {

class LeastLoadedPolicy final : public Policy {
 public:
  LeastLoadedPolicy() : Policy(PolicyKind::kLeastLoaded, {}) {}
  int place(SystemView& view, const PolicyKnobs& /*knobs*/, int /*released_by*/,
            std::string* /*why*/) override {
    return select_least_loaded(view, "least-loaded", /*explain=*/false).device;
  }
};

}  // namespace

std::unique_ptr<Policy> make_least_loaded_policy() {
  return std::make_unique<LeastLoadedPolicy>();
}

}  // namespace acco::sched::detail
