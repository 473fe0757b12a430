// eager: one shared queue; an idle device takes the first task it can run.
#include "policies.hpp"

namespace acco::sched::detail {

Decision select_eager(bool explain) {
  Decision out;
  if (explain) {
    out.reason = "eager: shared queue, first idle device that can run it";
  }
  return out;
}

namespace {

class EagerPolicy final : public Policy {
 public:
  EagerPolicy() : Policy(PolicyKind::kEager, {.shared_queue = true}) {}
  int place(SystemView& /*view*/, const PolicyKnobs& /*knobs*/, int /*released_by*/,
            std::string* /*why*/) override {
    return -1;
  }
};

}  // namespace

std::unique_ptr<Policy> make_eager_policy() {
  return std::make_unique<EagerPolicy>();
}

}  // namespace acco::sched::detail
