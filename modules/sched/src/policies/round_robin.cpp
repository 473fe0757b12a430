// round-robin: devices in turn, skipping those that cannot run the task.
#include <fmt/format.h>

#include "policies.hpp"

namespace acco::sched::detail {

Decision select_round_robin(const SystemView& view, bool explain) {
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

namespace {

class RoundRobinPolicy final : public Policy {
 public:
  RoundRobinPolicy() : Policy(PolicyKind::kRoundRobin, {}) {}
  int place(SystemView& view, const PolicyKnobs& /*knobs*/, int /*released_by*/,
            std::string* /*why*/) override {
    view.round_robin_next = next_;
    const int device = select_round_robin(view, /*explain=*/false).device;
    next_ = static_cast<std::size_t>(device + 1) % view.devices.size();
    return device;
  }

 private:
  std::size_t next_ = 0;  // the device whose turn it is
};

}  // namespace

std::unique_ptr<Policy> make_round_robin_policy() {
  return std::make_unique<RoundRobinPolicy>();
}

}  // namespace acco::sched::detail
