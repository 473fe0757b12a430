// Placement policies: pure functions that, given what the runtime knows about every device for
// one ready task (can it run it, how loaded it is, when it will be free, the task's predicted run
// time there and the time to bring its missing inputs), pick a device and say why; and the
// `Policy` objects the runtime asks, which add each policy's own rules (a shared queue, stealing,
// the owner rule, a plan). Tests call them with hand-made views. Formulas follow StarPU's dmda
// (../shared/reference/scheduler.md b1) with per-instance models and governor weights.
#pragma once

#include <cstddef>
#include <memory>
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
// A list of policy names ("dmda,heft", blanks around a name ignored) or "all" (all_policies()).
// kInvalidArgument "'NAME' is not one of eager, round-robin, least-loaded, dmda, ws, heft, or
// all", or "'NAME' named twice".
[[nodiscard]] Result<std::vector<PolicyKind>> parse_policies(std::string_view list);

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

// A policy as the runtime uses it: where a ready task goes, and how idle devices find work. The
// runtime keeps one object per PolicyKind (make_policy) and calls it under its lock, so a policy
// keeps its own state (round-robin's turn) without a lock of its own. Placing a task is one
// virtual call; the traits are plain flags, read on the device threads' paths.
class Policy {
 public:
  virtual ~Policy() = default;
  Policy(const Policy&) = delete;
  Policy& operator=(const Policy&) = delete;

  [[nodiscard]] PolicyKind kind() const { return kind_; }
  // Ready tasks wait in one shared queue, and an idle device takes the first it can run;
  // place() answers -1.
  [[nodiscard]] bool shared_queue() const { return traits_.shared_queue; }
  // An idle device takes a task queued on another when steal_pays: a push wakes idle devices.
  [[nodiscard]] bool steals() const { return traits_.steals; }
  // submit_graph plans a graph up front (HEFT) and its tasks follow the plan; otherwise it only
  // gives the graph's tasks priorities (upward ranks) and place() decides each task.
  [[nodiscard]] bool plans_graphs() const { return traits_.plans_graphs; }

  // The device for a ready task, -1 for the shared queue. `view` is what the runtime sees now;
  // the policy may complete it with its own state (round-robin's turn), and the runtime keeps it
  // as the policy leaves it, so that select_device(kind(), view, knobs) formats the reason on
  // request. `released_by`: the device whose completed task released this one, -1 otherwise.
  // `why`: null when no reasons are kept; otherwise empty, and where a rule of the policy
  // overrides select_device's choice, the rule's reason goes there. Never allocates unless `why`
  // is written.
  virtual int place(SystemView& view, const PolicyKnobs& knobs, int released_by,
                    std::string* why) = 0;

 protected:
  struct Traits {
    bool shared_queue = false;
    bool steals = false;
    bool plans_graphs = false;
  };
  Policy(PolicyKind kind, Traits traits) : kind_(kind), traits_(traits) {}

 private:
  PolicyKind kind_;
  Traits traits_;
};

// A fresh policy object of that kind (round-robin starts at device 0).
[[nodiscard]] std::unique_ptr<Policy> make_policy(PolicyKind kind);

}  // namespace acco::sched
