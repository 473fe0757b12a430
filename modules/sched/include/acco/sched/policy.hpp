// Placement policies as pure functions: given what the runtime knows about every device for one
// ready task (can it run it, how loaded it is, when it will be free, the task's predicted run
// time there and the time to bring its missing inputs), pick a device and say why. The runtime
// calls them under its lock; tests call them with hand-made views. Formulas follow StarPU's dmda
// (../shared/reference/scheduler.md b1) with per-instance models and governor weights.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acco/core/result.hpp"

namespace acco::sched {

enum class PolicyKind {
  kEager,         // one shared queue, idle devices take the next task they can run
  kRoundRobin,    // devices in turn
  kLeastLoaded,   // fewest queued tasks per unit of weight (resource-based)
  kDmda,          // earliest expected completion including transfers (task-based, data-aware)
  kWorkStealing,  // push to where the data was produced, idle devices steal when it pays
  kHeft,          // graphs known up front: HEFT plan from the models, then follow it
};
[[nodiscard]] std::string_view to_string(PolicyKind kind);
// "eager", "round-robin", "least-loaded", "dmda", "ws", "heft"; kInvalidArgument listing them.
[[nodiscard]] Result<PolicyKind> policy_from_string(std::string_view name);
[[nodiscard]] const std::vector<PolicyKind>& all_policies();

// One device as a policy sees it, for one task. Times in seconds on the runtime's clock.
struct DeviceView {
  bool eligible = false;    // has an implementation, not drained, not failed
  double weight = 1;        // from the governor, (0, 1]: predicted run times are divided by it
  std::size_t queued = 0;   // tasks waiting in its queue
  double available_at = 0;  // when its queue is expected to drain
  std::optional<double> predicted;  // run time of this task there at full weight (unknown: none)
  bool calibrated = false;          // `predicted` comes from measurements
  double transfer = 0;              // time to bring the task's missing inputs there
  double relative_speed = 1;        // fallback ranking when there is no prediction
};

struct SystemView {
  double now = 0;
  std::vector<DeviceView> devices;
  std::size_t round_robin_next = 0;  // first device round-robin tries
};

// dmda fitness = alpha * (end - best_end) + beta * transfer (StarPU defaults 1 and 1).
struct PolicyKnobs {
  double alpha = 1;
  double beta = 1;
  // StarPU's dmdasd "sorted decision": a device is free for a task once the queued tasks of
  // higher or equal priority have run, rather than its whole queue (StarPU's dmda). Off by
  // default: on tiled Cholesky it keeps low-priority work off the CPU-like device (see
  // docs/scheduler.md).
  bool sorted_decision = false;
  bool operator==(const PolicyKnobs&) const = default;
};

struct Decision {
  int device = -1;  // -1: the shared queue (eager) or no eligible device
  double expected_start = 0;
  double expected_end = 0;
  double predicted = 0;  // run time used, weight applied (0 if unknown)
  double transfer = 0;
  std::string
      reason;  // "dmda: end 1.2ms (free 0.9ms + run 0.3ms), transfer 0.1ms; next best dev2 1.5ms"
};

// Pure. kEager answers device -1 (shared queue); kWorkStealing places like kDmda (the runtime
// then keeps a released task on the device that produced its input when that ends within 20 %
// of the best); kHeft places like kDmda (the
// runtime follows a plan instead when the task came in a graph). device -1 when no device is
// eligible.
// `explain` false leaves Decision::reason empty (it costs more than the decision).
[[nodiscard]] Decision select_device(PolicyKind kind, const SystemView& view,
                                     const PolicyKnobs& knobs, bool explain = true);

// Work stealing: may `thief` take a task queued on `victim`? Only when it is expected to finish
// sooner there, transfers included: victim.available_at - (now + thief.transfer +
// thief.predicted / thief.weight) > 0. Without predictions: when the victim has >= 2 tasks queued.
[[nodiscard]] bool steal_pays(const DeviceView& victim, const DeviceView& thief, double now);

}  // namespace acco::sched
