// The coordinator of the distributed runtime (rank 0, Horovod's controller pattern), as pure
// logic: which worker runs which task of a workload next, and where each input comes from. It
// holds the workload's DAG (the sched inference rule) and, per datum, the version every worker
// holds; workers ask for work by having free slots (dynamic self-scheduling), and a task goes
// where its inputs are unless moving them and running it elsewhere ends sooner. Measured run
// times against the workload's costs give each worker a slowdown: placement divides by it, and
// a worker much slower than the others is a straggler. A worker that stops answering is lost:
// its tasks run elsewhere and data only it held is computed again from its producers. The
// message loop around it is in distributed.hpp; everything here is testable without MPI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/sched/workload.hpp"

namespace acco::cluster {

enum class DispatchPolicy {
  kLocality,    // priorities (upward rank), inputs' location, measured speed
  kRoundRobin,  // eager baseline: ready tasks in the order they became ready, workers in turn
};
[[nodiscard]] const char* to_string(DispatchPolicy policy);  // "locality", "round-robin"
[[nodiscard]] std::optional<DispatchPolicy> parse_dispatch_policy(std::string_view name);
// "locality,round-robin": each once, in order. kInvalidArgument "'NAME' is not locality or
// round-robin, comma-separated", or "'NAME' named twice".
[[nodiscard]] Result<std::vector<DispatchPolicy>> parse_dispatch_policies(std::string_view list);

struct WorkerInfo {
  int rank = 0;
  std::vector<std::size_t> devices;  // the workload's device indices this worker owns
};

struct DispatchOptions {
  DispatchPolicy policy = DispatchPolicy::kLocality;
  int window_per_device = 2;            // tasks in flight per device of a worker
  double link_bytes_per_second = 1e9;   // between workers, for the cost of moving inputs
  double straggler_factor = 1.5;        // slower than the median worker by more than this
  std::size_t straggler_min_tasks = 8;  // measured tasks before a worker can be one
  std::size_t lookahead = 32;           // ready tasks a decision looks at, by priority
};

// Where one input of an assigned task comes from: `from` is the rank that sends it, or -1 when
// it is the datum's initial value, which every rank can make itself.
struct Fetch {
  std::size_t datum = 0;
  std::uint32_t version = 0;  // writers of the datum before the task, in submission order
  int from = -1;
  bool operator==(const Fetch&) const = default;
};

struct Assignment {
  std::size_t task = 0;
  int rank = 0;
  std::vector<Fetch> fetches;  // inputs the worker does not hold at the version the task reads
  bool operator==(const Assignment&) const = default;
};

struct WorkerStats {
  int rank = 0;
  std::size_t tasks = 0;  // finished there (re-runs included)
  double measured_seconds = 0;
  double expected_seconds = 0;  // the workload's costs of those tasks on the devices they ran on
  double slowdown = 1;          // measured / expected, 1 until it has finished a task
  bool straggler = false;
  bool lost = false;
  std::uint64_t bytes_in = 0;  // inputs sent to it by other workers
  bool operator==(const WorkerStats&) const = default;
};

class Coordinator {
 public:
  // kInvalidArgument naming the problem for no workers, a rank twice, a worker without devices,
  // a device index beyond the workload's costs, or an option out of range (window < 1, link
  // rate <= 0, straggler factor <= 1); the workload's DAG errors otherwise.
  [[nodiscard]] static Result<Coordinator> make(const sched::Workload& workload,
                                                const std::vector<WorkerInfo>& workers,
                                                DispatchOptions options = {});

  // The assignments that can start now: every live worker up to its window. Call after every
  // event (done, lost); each assignment is the coordinator's promise that the worker will get
  // its inputs (Fetch::from sends them when asked).
  [[nodiscard]] std::vector<Assignment> dispatch();
  // Inputs that a lost worker was sending to a task given to another worker: sent again by a
  // live holder (the receiving worker keeps the first copy of a version). Call after dispatch;
  // each is for Assignment::rank = the task's rank. Where no live worker holds the input, the
  // task is to be cancelled instead (cancels()): it waits there for its inputs, and the
  // producer that makes the input again may need that worker's copy of the datum.
  [[nodiscard]] std::vector<Assignment> resend();
  // (rank, task) pairs to cancel, each once; the worker answers cancelled() when the task was
  // still waiting for inputs, or done() when it had started.
  [[nodiscard]] std::vector<std::pair<int, std::size_t>> cancels();
  // The worker dropped the task before it started: it goes back to the ready ones.
  // kInvalidArgument when the task is not running there.
  [[nodiscard]] Status cancelled(int rank, std::size_t task);

  // Worker `rank` finished `task` on the workload's device `device` in `seconds`.
  // kInvalidArgument when the task is not running there (a lost worker's late answer).
  [[nodiscard]] Status done(int rank, std::size_t task, std::size_t device, double seconds);
  // Worker `rank` stopped answering: its running tasks go back to the ready ones, what only it
  // held is produced again when a task needs it. kInvalidArgument for an unknown rank.
  [[nodiscard]] Status lost(int rank);

  [[nodiscard]] bool finished() const { return remaining_ == 0; }
  // No task can ever start again (every worker lost with tasks left).
  [[nodiscard]] bool stuck() const;
  [[nodiscard]] std::size_t in_flight(int rank) const;
  [[nodiscard]] std::vector<WorkerStats> stats() const;
  [[nodiscard]] std::size_t reruns() const { return reruns_; }  // tasks run a second time
  [[nodiscard]] std::uint64_t bytes_moved() const { return bytes_moved_; }
  [[nodiscard]] std::vector<int> ranks() const;  // the workers', in the order given

 private:
  struct Use {
    std::size_t datum = 0;
    std::uint32_t version_in = 0;  // the version it reads (or overwrites)
    bool reads = false;
    bool writes = false;
  };
  enum class Phase {
    kWaiting,
    kReady,
    kRunning,
    kDone
  };
  struct TaskState {
    std::vector<Use> uses;
    std::vector<std::size_t> successors;
    std::size_t pending = 0;  // predecessors not done yet (first run only)
    Phase phase = Phase::kWaiting;
    int rank = -1;        // where it runs or ran last
    double priority = 0;  // upward rank
    std::uint64_t ready_seq = 0;
    bool ran = false;
    bool cancel = false;         // to be cancelled (cancels() has not said so yet)
    bool cancelling = false;     // cancel sent, no answer yet
    std::vector<Fetch> fetches;  // of its current run
  };
  struct Busy {
    std::size_t readers = 0;
    std::size_t writers = 0;
    std::uint32_t version = 0;  // what the readers read
  };
  struct Worker {
    WorkerInfo info;
    std::size_t window = 0;
    std::size_t running = 0;
    double backlog_seconds = 0;  // estimated cost of its running tasks
    bool lost = false;
    WorkerStats stats;
    std::vector<Busy> busy;           // per datum
    std::vector<std::int64_t> holds;  // per datum: the version held, -1 none
  };

  Coordinator() = default;
  [[nodiscard]] std::size_t worker_index(int rank) const;  // workers_storage_.size() when unknown
  [[nodiscard]] double cost_on(std::size_t task, const Worker& w) const;
  [[nodiscard]] int holder(std::size_t datum, std::uint32_t version, int except) const;
  [[nodiscard]] bool available(std::size_t datum, std::uint32_t version) const;
  [[nodiscard]] bool fits(std::size_t task, const Worker& w) const;
  [[nodiscard]] std::uint64_t missing_bytes(std::size_t task, const Worker& w) const;
  [[nodiscard]] double estimate(std::size_t task, const Worker& w) const;
  // Re-runs the producers of inputs nobody holds; false while some input is unavailable.
  bool inputs_ready(std::size_t task);
  void make_ready(std::size_t task);
  Assignment assign(std::size_t task, Worker& w);
  std::vector<Assignment> dispatch_round_robin();
  std::vector<Assignment> dispatch_locality();
  // Ready tasks whose inputs some live worker holds, by priority, at most `lookahead`.
  std::vector<std::size_t> candidates();
  // No other worker would end `task` sooner than `w`, `ahead` higher-priority tasks counted.
  [[nodiscard]] bool ends_soonest(std::size_t task, std::size_t ahead, const Worker& w) const;
  void release(std::size_t task, Worker& w);  // running -> not running on w
  void update_stragglers();

  std::vector<std::size_t> data_bytes_;
  std::vector<std::vector<double>> cost_;           // [task][device]
  std::vector<std::vector<std::size_t>> producer_;  // [datum][version - 1] -> task
  std::vector<TaskState> tasks_;
  std::vector<Worker> workers_storage_;
  std::vector<std::size_t> ready_;  // task ids, unordered
  DispatchOptions options_;
  std::size_t remaining_ = 0;
  std::size_t reruns_ = 0;
  std::uint64_t bytes_moved_ = 0;
  // resend() has work only after a loss, cancels() only after resend() marked a task: both skip
  // the scan of every task otherwise (they are asked at every decision).
  bool lost_since_resend_ = false;
  bool marked_to_cancel_ = false;
  std::uint64_t ready_counter_ = 0;
  std::size_t turn_ = 0;  // round-robin: the worker whose turn it is
};

}  // namespace acco::cluster
