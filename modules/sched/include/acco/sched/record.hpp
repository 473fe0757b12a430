// What a run did, as plain values: one record per task (where it ran, how long it waited,
// what it moved and why it was placed there) and per-device totals. The runtime fills them; the
// Chrome trace writer, `acco schedule` and the benchmarks read them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "acco/core/result.hpp"

namespace acco::sched {

// Memory nodes: 0 is host memory, device d is node d + 1.
using NodeId = int;
inline constexpr NodeId kHostNode = 0;

// Times are nanoseconds since the runtime started.
struct TransferRecord {
  std::size_t handle = 0;
  NodeId from = kHostNode;
  NodeId to = kHostNode;
  std::uint64_t bytes = 0;
  std::chrono::nanoseconds start{0};
  std::chrono::nanoseconds end{0};
  bool prefetch = false;  // started before the task was next in line
  bool eviction = false;  // a write-back to host forced by the memory budget
  // Why the copy failed (a prefetch is then retried as a demand copy; a demand copy retires its
  // device); empty when it landed.
  std::string error{};
  bool operator==(const TransferRecord&) const = default;
};

enum class TaskStatus {
  kPending,
  kDone,
  kFailed
};

struct TaskRecord {
  std::size_t id = 0;
  std::string type;
  std::string name;
  int device = -1;  // -1 if it never ran
  int priority = 0;
  TaskStatus status = TaskStatus::kPending;
  std::string error;  // why it failed
  std::chrono::nanoseconds submitted{0};
  std::chrono::nanoseconds ready{0};          // every dependency done
  std::chrono::nanoseconds started{0};        // implementation entered
  std::chrono::nanoseconds finished{0};       // implementation returned
  std::chrono::nanoseconds predicted{0};      // the model's run time at placement (0 = unknown)
  std::uint64_t transfer_bytes = 0;           // moved to this device for this task
  std::chrono::nanoseconds transfer_time{0};  // time spent waiting for them before starting
  std::string reason;                         // placement explanation (policy and its terms)
  bool stolen = false;
  bool operator==(const TaskRecord&) const = default;
};

struct DeviceRecord {
  int device = 0;
  std::string name;  // "host:0 (gpu x8)"
  std::string kind;
  std::chrono::nanoseconds busy{0};  // time inside implementations
  std::size_t tasks = 0;
  std::size_t batched = 0;  // of `tasks`, those run in a batch of short tasks (one lock hand-off)
  // The runtime's own measured cost on this device (see docs/scheduler.md, "Overhead"): the gap
  // between back-to-back tasks, and the delay before an idle device thread takes a task while it
  // polls and once it sleeps.
  std::chrono::nanoseconds overhead{0};
  std::chrono::nanoseconds poll_latency{0};
  std::chrono::nanoseconds wake_latency{0};
  bool drained = false;
  bool failed = false;
  // Replica buffers allocated on the device, and taken from its cache of dropped ones instead.
  std::size_t buffers_allocated = 0;
  std::size_t buffers_reused = 0;
  // Why and when (since the run started) it failed; empty and -1 when it did not.
  std::string failure{};
  std::chrono::nanoseconds failed_at{-1};
  // Tasks running or queued on it when it failed, placed on other devices.
  std::size_t moved_away = 0;
  bool operator==(const DeviceRecord&) const = default;
};

struct LinkRecord {
  NodeId from = kHostNode;
  NodeId to = kHostNode;
  std::uint64_t bytes = 0;
  std::size_t transfers = 0;
  bool operator==(const LinkRecord&) const = default;
};

struct RunRecord {
  std::string policy;
  std::chrono::nanoseconds elapsed{0};  // first submit to last completion
  std::vector<TaskRecord> tasks;
  std::vector<DeviceRecord> devices;
  std::vector<TransferRecord> transfers;
  std::vector<LinkRecord> links;  // non-zero pairs, ordered by (from, to)
  // Tasks whose state the runtime still holds: all of them with records kept; without, those
  // submitted since the settled prefix was last dropped (by wait_all).
  std::size_t tasks_held = 0;
};

[[nodiscard]] const char* to_string(TaskStatus status);  // "pending", "done", "failed"

// Chrome trace event format (JSON object form), readable by Perfetto and chrome://tracing:
// process 1 "devices" with one thread per device (task slices, args: id, type, priority,
// queue_wait_us, transfer_bytes, transfer_us, predicted_us, reason, status), process 2
// "transfers" with one thread per destination node (slices named "<from> -> <to>", args bytes,
// handle, prefetch, eviction), thread and process names as metadata events, times in
// microseconds; otherData holds "schema": "acco.trace/1", the policy and elapsed_us. Tasks that
// never started are left out.
[[nodiscard]] nlohmann::json chrome_trace(const RunRecord& run);
// `run`'s chrome_trace written to `path` (core::write_output_file: kCannotWrite), and the line a
// person is told: "acco: trace of <name> written to <path>".
[[nodiscard]] Result<std::string> write_chrome_trace(const RunRecord& run, std::string_view name,
                                                     const std::string& path);

}  // namespace acco::sched
