#include "acco/sched/workload_run.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <sys/prctl.h>

namespace acco::sched {

namespace {

// Holds the device for `seconds` without burning a core: the emulated devices share the host's
// few CPUs with the runtime and the copy threads.
void hold(double seconds) {
  // A sleep overruns by the timer slack (50 us by default, set to 1 us here) plus the wake-up
  // latency of a busy VM (tens of us): on millisecond tasks that alone would cost several
  // percent. So sleep until shortly before the end, then yield until it. The margin follows
  // what this thread's sleeps actually overrun (three times a smoothed overrun, 20..150 us):
  // every microsecond spent yielding is taken from the runtime and the copy threads.
  thread_local const bool tight = [] {
    ::prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);  // NOLINT(cppcoreguidelines-pro-type-vararg)
    return true;
  }();
  (void)tight;
  thread_local double overrun_us = 50;
  constexpr double kMinMarginUs = 20;
  constexpr double kMaxMarginUs = 150;
  const double margin_us = std::clamp(3 * overrun_us, kMinMarginUs, kMaxMarginUs);
  const auto now = std::chrono::steady_clock::now();
  const auto end = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(seconds));
  const auto wake = end - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double, std::micro>(margin_us));
  if (wake > now) {
    std::this_thread::sleep_until(wake);
    const double overran =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - wake).count();
    // A sleep that lost the CPU for a whole time slice moves the estimate only so far.
    overrun_us = 0.9 * overrun_us + 0.1 * std::min(overran, 4 * overrun_us + 10);
  }
  while (std::chrono::steady_clock::now() < end) {
    std::this_thread::yield();
  }
}

// Touches one byte per page of each buffer, writing those it writes and reading the others, so
// a wrong replica shows up as a fault under the sanitizers, and the runtime's data movement is
// exercised for real; a buffer only read may be copied from meanwhile (to another device, back
// to the host), so it is never written. Only where the host can address device memory (the host
// backend); a GPU's memory is left alone.
struct Span {
  void* data = nullptr;
  std::size_t bytes = 0;
  bool writes = false;
};
using Spans = std::vector<Span>;
Spans host_addressable(const TaskContext& ctx, const std::vector<Access>& modes) {
  Spans spans;
  if (ctx.dev().info().backend == "host") {
    for (std::size_t i = 0; i < ctx.accesses(); ++i) {
      spans.push_back({ctx.data(i), ctx.bytes(i), i < modes.size() && writes(modes[i])});
    }
  }
  return spans;
}
void touch(const Spans& spans) {
  unsigned sum = 0;
  for (const Span& s : spans) {
    auto* p = static_cast<volatile unsigned char*>(s.data);
    for (std::size_t b = 0; b < s.bytes; b += 4096) {
      if (s.writes) {
        p[b] = static_cast<unsigned char>(p[b] + 1);
      } else {
        sum += p[b];
      }
    }
  }
  static_cast<void>(sum);
}

// A kernel of `seconds` on the task's device, run by the device thread; with `async` (and not
// on a CPU worker) on the device's queue instead, as a GPU runs a kernel, so the device thread
// prepares and launches the next task meanwhile (TaskContext::queue).
// `kernel` (WorkloadRunOptions::kernel) replaces the hold when set.
void run_kernel(TaskContext& ctx, const std::vector<Access>& modes, double seconds, bool async,
                const KernelHook& kernel) {
  const int device = ctx.device();
  const auto compute = [&kernel, device, seconds] {
    if (kernel) {
      kernel(device, seconds);
    } else {
      hold(seconds);
    }
  };
  if (!async || ctx.kind() == "cpu") {
    touch(host_addressable(ctx, modes));
    compute();
    return;
  }
  Status launched = ctx.queue().host_task([spans = host_addressable(ctx, modes), compute] {
    touch(spans);
    compute();
  });
  if (!launched) {
    throw DeviceFailure(launched.error().message);
  }
}

}  // namespace

EmulatedTasks::EmulatedTasks(const Workload& workload, const std::vector<std::string>& kinds,
                             bool async, const KernelHook& kernel)
    : workload_(&workload) {
  // One codelet per (type, costs, modes), as an application has one per kernel: the runtime
  // caches its decisions per codelet (a tiled Cholesky has four; a random DAG one per task).
  using Key = std::tuple<std::string, std::vector<double>, std::vector<Access>>;
  std::map<Key, std::shared_ptr<const Codelet>> codelets;
  codelet_of_.reserve(workload.tasks.size());
  for (const WorkTask& w : workload.tasks) {
    std::vector<Access> modes;
    for (const auto& access : w.accesses) {
      modes.push_back(access.second);
    }
    std::shared_ptr<const Codelet>& shared = codelets[Key{w.type, w.seconds, modes}];
    if (!shared) {
      auto codelet = std::make_shared<Codelet>();
      codelet->type = w.type;
      const std::vector<double> seconds = w.seconds;
      for (const std::string& kind : kinds) {
        codelet->implementations.emplace_back(kind, [seconds, modes, async,
                                                     kernel](TaskContext& ctx) {
          run_kernel(ctx, modes, seconds.at(static_cast<std::size_t>(ctx.device())), async, kernel);
        });
      }
      shared = std::move(codelet);
    }
    codelet_of_.push_back(shared);
  }
}

Task EmulatedTasks::make(std::size_t index, const std::vector<DataHandle>& handles) const {
  const WorkTask& w = workload_->tasks.at(index);
  Task t;
  t.codelet = codelet_of_.at(index);
  t.name = w.name;
  t.cost.flops = w.flops;
  for (const auto& [data, mode] : w.accesses) {
    t.accesses.emplace_back(handles.at(data), mode);
  }
  return t;
}

Dag workload_dag(const Workload& workload, double link_bytes_per_second) {
  Dag dag;
  for (const WorkTask& t : workload.tasks) {
    dag.cost.push_back(t.seconds);
  }
  for (const Edge& e : infer_edges(workload)) {
    const double comm =
        link_bytes_per_second > 0 ? static_cast<double>(e.bytes) / link_bytes_per_second : 0;
    dag.edges.push_back({e.from, e.to, comm});
  }
  return dag;
}

namespace {

// Shows the runtime to WorkloadRunOptions::observe for as long as it lives.
class Observation {
 public:
  Observation(const std::function<void(Runtime*)>& observe, Runtime& runtime) : observe_(observe) {
    if (observe_) {
      observe_(&runtime);
    }
  }
  ~Observation() {
    if (observe_) {
      observe_(nullptr);
    }
  }
  Observation(const Observation&) = delete;
  Observation& operator=(const Observation&) = delete;
  Observation(Observation&&) = delete;
  Observation& operator=(Observation&&) = delete;

 private:
  const std::function<void(Runtime*)>& observe_;
};

// kInvalidArgument for no device, a null one, or costs for another number of devices.
Status check_devices(const Workload& workload, const std::vector<DeviceSpec>& devices) {
  if (devices.empty() || std::any_of(devices.begin(), devices.end(),
                                     [](const DeviceSpec& d) { return d.device == nullptr; })) {
    return fail(
        Errc::kInvalidArgument,
        fmt::format("workload {}: expected at least one device and no null device", workload.name));
  }
  for (std::size_t i = 0; i < workload.tasks.size(); ++i) {
    if (workload.tasks[i].seconds.size() != devices.size()) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("workload {}: task {} has costs for {} devices, {} given",
                              workload.name, i, workload.tasks[i].seconds.size(), devices.size()));
    }
  }
  return {};
}

// What the measured run did, from its record.
WorkloadOutcome outcome_of(std::string policy, const Bounds& workload_bounds, RunRecord record,
                           PerfModels models) {
  WorkloadOutcome out;
  out.policy = std::move(policy);
  out.bounds = workload_bounds;
  out.makespan_seconds = std::chrono::duration<double>(record.elapsed).count();
  out.efficiency = out.makespan_seconds > 0 ? out.bounds.best() / out.makespan_seconds : 0;
  out.tasks = record.tasks.size();
  out.failed = static_cast<std::size_t>(
      std::count_if(record.tasks.begin(), record.tasks.end(),
                    [](const TaskRecord& t) { return t.status == TaskStatus::kFailed; }));
  for (const LinkRecord& l : record.links) {
    out.bytes_transferred += l.bytes;
  }
  for (const DeviceRecord& d : record.devices) {
    const double busy = std::chrono::duration<double>(d.busy).count();
    out.devices.push_back({d.device, d.name, d.kind,
                           out.makespan_seconds > 0 ? busy / out.makespan_seconds : 0, d.tasks});
  }
  out.record = std::move(record);
  out.models = std::move(models);
  return out;
}

}  // namespace

std::vector<std::string> implementation_kinds(const std::vector<DeviceSpec>& devices) {
  std::vector<std::string> kinds;
  for (const DeviceSpec& d : devices) {
    const std::string kind = d.kind.empty() ? d.device->info().backend : d.kind;
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
      kinds.push_back(kind);
    }
  }
  return kinds;
}

Result<WorkloadOutcome> run_workload(const Workload& workload, std::vector<DeviceSpec> devices,
                                     RuntimeOptions options, const WorkloadRunOptions& run) {
  ACCO_RETURN_IF_ERROR(check_devices(workload, devices));
  ACCO_ASSIGN_OR_RETURN(const Bounds workload_bounds, bounds(workload_dag(workload)),
                        fmt::format("workload {}", workload.name));
  const EmulatedTasks emulated(workload, implementation_kinds(devices), run.async_kernels,
                               run.kernel);
  const std::string policy(to_string(options.policy));
  device::Device* pin_on = devices.front().device;
  ACCO_ASSIGN_OR_RETURN(const std::unique_ptr<Runtime> owned_runtime,
                        Runtime::create(std::move(devices), std::move(options)));
  Runtime& runtime = *owned_runtime;
  // Declared after the runtime, so the observer lets go of it before it is destroyed.
  const Observation observation(run.observe, runtime);

  // Pinned host memory, as an application that cares about transfers allocates it (StarPU's
  // starpu_malloc does the same): copies to and from devices are then DMA, asynchronous, and
  // need no staging. Pinned memory is portable: every device of the backend recognises it.
  std::vector<std::unique_ptr<device::Buffer>> memory;
  for (std::size_t bytes : workload.data_bytes) {
    ACCO_ASSIGN_OR_RETURN(auto buffer, pin_on->allocate_host(bytes, device::MemoryKind::kPinned),
                          "workload data");
    memory.push_back(std::move(buffer));
  }
  // Every run starts with the data in host memory only, as a fresh application would: the data
  // is registered before and unregistered (written back, device copies freed) after.
  const auto run_once = [&]() -> Status {
    std::vector<DataHandle> handles;
    Status status;
    for (std::size_t i = 0; i < memory.size() && status; ++i) {
      auto h = runtime.register_data(memory[i]->data(), workload.data_bytes[i]);
      if (h) {
        handles.push_back(*h);
      } else {
        status = tl::unexpected(std::move(h.error()));
      }
    }
    if (status) {
      std::vector<Task> tasks;
      tasks.reserve(workload.tasks.size());
      for (std::size_t i = 0; i < workload.tasks.size(); ++i) {
        tasks.push_back(emulated.make(i, handles));
      }
      if (run.as_graph) {
        auto ids = runtime.submit_graph(std::move(tasks));
        if (!ids) {
          status = tl::unexpected(std::move(ids.error()));
        }
      } else {
        for (Task& t : tasks) {
          auto id = runtime.submit(std::move(t));
          if (!id) {
            status = tl::unexpected(std::move(id.error()));
            break;
          }
        }
      }
    }
    (void)runtime.wait_all();  // failed tasks are counted from the records
    for (DataHandle h : handles) {
      (void)runtime.unregister(h);  // the data of a failed writer stays as it was
    }
    return status;
  };

  for (int i = 0; i < run.calibration_runs; ++i) {
    ACCO_RETURN_IF_ERROR(run_once(), fmt::format("calibration run {}", i + 1));
    runtime.reset_records();
  }
  ACCO_RETURN_IF_ERROR(run_once(), "measured run");
  return outcome_of(policy, workload_bounds, runtime.records(), runtime.models());
}

}  // namespace acco::sched
