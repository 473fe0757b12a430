// heft: submit_graph plans a graph up front from the models (schedule_math's heft) and its
// tasks follow the plan; tasks without a plan (submit, or a planned device that cannot run them
// now) are placed like dmda.
#include "policies.hpp"

namespace acco::sched::detail {

namespace {

class HeftPolicy final : public Policy {
 public:
  HeftPolicy() : Policy(PolicyKind::kHeft, {.plans_graphs = true}) {}
  int place(SystemView& view, const PolicyKnobs& knobs, int /*released_by*/,
            std::string* /*why*/) override {
    return select_dmda(view, knobs, /*explain=*/false).device;
  }
};

}  // namespace

std::unique_ptr<Policy> make_heft_policy() {
  return std::make_unique<HeftPolicy>();
}

}  // namespace acco::sched::detail
