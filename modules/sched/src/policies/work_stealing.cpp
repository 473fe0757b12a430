// ws: a released task stays on the device that produced its input unless that is clearly worse
// (the owner rule), otherwise placed like dmda; idle devices steal what pays (steal_pays, applied
// by the device threads).
#include <algorithm>

#include <fmt/format.h>

#include "policies.hpp"

namespace acco::sched::detail {

namespace {

class WorkStealingPolicy final : public Policy {
 public:
  WorkStealingPolicy() : Policy(PolicyKind::kWorkStealing, {.steals = true}) {}

  int place(SystemView& view, const PolicyKnobs& knobs, int released_by,
            std::string* why) override {
    const Decision decision = select_dmda(view, knobs, /*explain=*/false);
    if (released_by < 0 || !view.devices[static_cast<std::size_t>(released_by)].eligible ||
        decision.device == released_by) {
      return decision.device;
    }
    // Locality first: the device that produced the input keeps the task unless it would end
    // more than 20 % later than the best one (PaRSEC's owner rule, reference b6).
    const DeviceView& own = view.devices[static_cast<std::size_t>(released_by)];
    const double own_end = std::max(own.available_at, view.now + own.transfer) +
                           (own.predicted ? *own.predicted / own.weight : 0);
    if (!own.predicted || own_end - view.now <= kOwnerSlack * (decision.expected_end - view.now)) {
      if (why != nullptr) {
        *why = fmt::format("ws: dev{} produced its input and ends within 20 % of the best",
                           released_by);
      }
      return released_by;
    }
    return decision.device;
  }

 private:
  // How much later than the best device the producer may end and still keep the task.
  static constexpr double kOwnerSlack = 1.2;
};

}  // namespace

std::unique_ptr<Policy> make_work_stealing_policy() {
  return std::make_unique<WorkStealingPolicy>();
}

}  // namespace acco::sched::detail
