// One device as the runtime keeps it, in parts by concern: what it is, its queue and load (what
// placement reads), the runtime's own cost measured on it, its thread, its memory and buffer
// cache, its copy-cost model, the copies in flight into it, and its asynchronous pipeline.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "acco/sched/runtime.hpp"
#include "acco/transfer/engine.hpp"

#include "async_launch.hpp"
#include "buffer_cache.hpp"
#include "copy_cost.hpp"

namespace acco::sched::detail {

// One copy into a device replica: pointers captured under the lock, moved without it.
struct InflightCopy {
  std::size_t handle = 0;
  int source = -1;  // device whose replica is read, -1 for host
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
  transfer::Transfer transfer;
  bool issued = false;
  std::chrono::nanoseconds start{0};
};

// The runtime's own cost, measured on one device (EWMA), so that expected completion times
// include it: `overhead_s` is the gap between one task's end and the start of the next when the
// next was already waiting (bookkeeping, lock hand-offs, context switches; transfers excluded);
// the start latencies the delay between a push to an idle device thread (polling, or asleep)
// and the moment it takes the task. Where threads are scarce (more devices than CPUs) both are
// large and dmda keeps short tasks on devices already awake.
struct DispatchCosts {
  double overhead_s = 1e-6;
  double poll_latency_s = 5e-6;   // start latency while its thread polls
  double wake_latency_s = 20e-6;  // ... and once it sleeps (a futex wake and a context switch)
  std::chrono::nanoseconds idle_push{-1};     // first push since it went idle
  bool idle_push_woke = false;                // that push found the thread asleep
  std::chrono::nanoseconds previous_end{-1};  // last task's end, when the next one was waiting
};

// The device's thread and how it is woken.
struct WorkerThread {
  bool active = true;  // it will look at its queue again without being woken
  bool sleeping = false;
  std::atomic<std::uint64_t> epoch{0};  // bumped when work is pushed to this device
  std::condition_variable cv;
  // The contexts handed to implementations: reused by this thread, one per task of a batch (at
  // least one).
  std::vector<TaskContext> contexts = std::vector<TaskContext>(1);
  std::thread thread;
};

// Copies into or out of the device are issued through its engine by any thread: its own (inputs
// of the task it starts, evictions) and whichever thread pushed a task to it (prefetch at push
// time). `engine_mu` serialises them; `engine` is null once the device's thread has stopped.
// Transfers are waited on without it.
struct DeviceTransfers {
  std::mutex engine_mu;
  std::unique_ptr<transfer::Engine> engine;
  transfer::EngineCounters retired;    // what `engine` had moved when its thread stopped
  std::vector<InflightCopy> inflight;  // prefetches in flight into this device (under mu_)
  bool prefetch_wanted = false;        // a task was pushed since its last prefetch pass
};

// What the device did, for records (reset by reset_records).
struct DeviceCounters {
  std::chrono::nanoseconds busy{0};
  std::size_t tasks_run = 0;
  std::size_t tasks_batched = 0;
};

// What the device has done since the runtime started, for Runtime::counters (under mu_; never
// reset).
struct DeviceTotals {
  std::size_t running = 0;
  std::uint64_t started = 0;
  std::uint64_t finished = 0;
  std::uint64_t failed = 0;
  std::chrono::nanoseconds run{0};
  std::chrono::nanoseconds wait{0};
};

struct DeviceState {
  DeviceSpec spec;
  std::string kind;
  std::string instance;  // model key: "host:0", "cuda:0000:18:00.0"
  std::string name;
  double relative_speed = 1;

  std::deque<TaskId> queue;  // priority order, FIFO among equals
  double queued_s = 0;       // predicted run time of the queue, dispatch overhead included
  double running_end_s = 0;  // expected end of the running task
  double weight = 1;
  double headroom = 1;    // placement preference, not learnt (set_headroom)
  bool accepting = true;  // false: no new tasks, the queue stays (set_accepting)
  bool drained = false;
  bool failed = false;
  std::string failure;                     // why it failed, the first time
  std::chrono::nanoseconds failed_at{-1};  // when, since the runtime started
  std::size_t moved_away = 0;              // tasks placed elsewhere because it failed

  DispatchCosts costs;
  WorkerThread worker;
  DeviceMemory memory;
  CopyCostModel copy_cost;
  DeviceTransfers transfers;
  AsyncPipeline async;
  DeviceCounters counters;
  DeviceTotals totals;
};

}  // namespace acco::sched::detail
