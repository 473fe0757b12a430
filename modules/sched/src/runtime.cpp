#include "acco/sched/runtime.hpp"

#include <thread>

#include <fmt/format.h>

#include "runtime_core.hpp"

namespace acco::sched {

namespace detail {

namespace {

std::string device_instance(const device::DeviceInfo& info) {
  if (!info.pci.empty()) {
    return fmt::format("{}:{}", info.backend, info.pci);
  }
  return fmt::format("{}:{}", info.backend, info.index);
}

}  // namespace

RuntimeCore::RuntimeCore(std::vector<DeviceSpec> specs, RuntimeOptions options, PerfModels models)
    : options_(std::move(options)),
      start_(std::chrono::steady_clock::now()),
      knobs_(options_.knobs),
      models_(std::move(models)) {
  for (PolicyKind kind : all_policies()) {
    policies_.push_back(make_policy(kind));
  }
  // NOLINTNEXTLINE(cppcoreguidelines-prefer-member-initializer): policies_ is filled above
  policy_ = policy_of(options_.policy);
  for (DeviceSpec& spec : specs) {
    auto d = std::make_unique<DeviceState>();
    const device::DeviceInfo& info = spec.device->info();
    d->kind = spec.kind.empty() ? info.backend : spec.kind;
    d->instance = device_instance(info);
    d->name = fmt::format("dev{} {} ({})", devices_.size(), d->instance, d->kind);
    d->memory.budget = spec.memory_budget_bytes != 0 ? spec.memory_budget_bytes : info.memory_bytes;
    d->copy_cost = CopyCostModel(info.link_bytes_per_second,
                                 std::chrono::duration<double>(info.link_latency).count());
    d->relative_speed = info.speed_factor > 0 ? info.speed_factor : 1;
    d->async.launch.device = spec.device;
    d->async.launch.origin = start_;
    d->spec = std::move(spec);
    devices_.push_back(std::move(d));
  }
}

Status RuntimeCore::start() {
  for (auto& d : devices_) {
    ACCO_ASSIGN_OR_RETURN(
        d->transfers.engine,
        transfer::Engine::create(*d->spec.device,
                                 d->spec.transfer_profile.value_or(options_.transfer_profile)),
        fmt::format("device {}", d->name));
  }
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    devices_[i]->worker.thread = std::thread([this, i] { worker(static_cast<int>(i)); });
  }
  return {};
}

RuntimeCore::~RuntimeCore() {
  Lock lock = acquire();
  // Tasks parked because every device able to run them is drained would wait forever: once
  // nothing else can make progress, they (and so their dependants) fail instead.
  const auto idle = [&] {
    if (!shared_queue_.empty()) {
      return false;
    }
    for (const auto& d : devices_) {
      if (!d->queue.empty() || d->running_end_s != 0) {
        return false;
      }
    }
    return true;
  };
  for (;;) {
    all_done_.wait(lock, [&] { return unfinished_ == 0 || (!parked_.empty() && idle()); });
    if (unfinished_ == 0) {
      break;
    }
    std::vector<TaskId> parked = std::move(parked_);
    parked_.clear();
    for (TaskId id : parked) {
      finish(id, "the runtime was destroyed while every device able to run it was drained", -1);
    }
  }
  stop_ = true;
  work_epoch_.fetch_add(1, std::memory_order_release);
  for (auto& d : devices_) {
    d->worker.cv.notify_all();
  }
  lock.unlock();
  for (auto& d : devices_) {
    if (d->worker.thread.joinable()) {
      d->worker.thread.join();
    }
  }
  // Replicas before engines and devices' queues: buffers keep what they use alive.
  handles_.clear();
}

std::chrono::nanoseconds RuntimeCore::now() const {
  const auto t = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now() - start_);
  clock_ns_.store(t.count(), std::memory_order_relaxed);
  return t;
}

double RuntimeCore::now_s() const {
  return std::chrono::duration<double>(now()).count();
}

Policy* RuntimeCore::policy_of(PolicyKind kind) const {
  for (const auto& p : policies_) {
    if (p->kind() == kind) {
      return p.get();
    }
  }
  ACCO_CHECK(false);
  return nullptr;
}

void RuntimeCore::set_policy(PolicyKind kind) {
  Lock lock = acquire();
  policy_ = policy_of(kind);
  if (!policy_->shared_queue()) {
    std::deque<TaskId> shared = std::move(shared_queue_);
    shared_queue_.clear();
    for (TaskId id : shared) {
      place(id, -1);
    }
  }
}

PolicyKind RuntimeCore::policy() const {
  Lock lock = acquire();
  return policy_->kind();
}

void RuntimeCore::set_knobs(const PolicyKnobs& knobs) {
  Lock lock = acquire();
  knobs_ = knobs;
}

Status RuntimeCore::set_weight(int device, double weight) {
  if (device < 0 || device >= devices()) {
    return fail(Errc::kInvalidArgument,
                fmt::format("set_weight: device {}: expected 0..{}", device, devices() - 1));
  }
  if (!(weight > 0 && weight <= 1)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("set_weight: weight {}: expected a value in (0, 1]", weight));
  }
  Lock lock = acquire();
  devices_[static_cast<std::size_t>(device)]->weight = weight;
  return {};
}

Status RuntimeCore::set_drained(int device, bool drained) {
  if (device < 0 || device >= devices()) {
    return fail(Errc::kInvalidArgument,
                fmt::format("set_drained: device {}: expected 0..{}", device, devices() - 1));
  }
  Lock lock = acquire();
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  d.drained = drained;
  if (drained) {
    requeue_from(device);
  } else {
    place_parked(d);
  }
  return {};
}

Status RuntimeCore::set_headroom(int device, double headroom) {
  if (device < 0 || device >= devices()) {
    return fail(Errc::kInvalidArgument,
                fmt::format("set_headroom: device {}: expected 0..{}", device, devices() - 1));
  }
  if (!(headroom > 0 && headroom <= 1)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("set_headroom: headroom {}: expected a value in (0, 1]", headroom));
  }
  Lock lock = acquire();
  devices_[static_cast<std::size_t>(device)]->headroom = headroom;
  return {};
}

Status RuntimeCore::set_accepting(int device, bool accepting) {
  if (device < 0 || device >= devices()) {
    return fail(Errc::kInvalidArgument,
                fmt::format("set_accepting: device {}: expected 0..{}", device, devices() - 1));
  }
  Lock lock = acquire();
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  const bool was = d.accepting;
  d.accepting = accepting;
  if (accepting && !was) {
    place_parked(d);
  }
  return {};
}

void RuntimeCore::place_parked(DeviceState& back) {
  std::vector<TaskId> parked = std::move(parked_);
  parked_.clear();
  for (TaskId id : parked) {
    place(id, -1);
  }
  work_epoch_.fetch_add(1, std::memory_order_release);
  back.worker.cv.notify_one();
}

}  // namespace detail

Result<std::unique_ptr<Runtime>> Runtime::create(std::vector<DeviceSpec> devices,
                                                 RuntimeOptions options) {
  if (devices.empty()) {
    return fail(Errc::kInvalidArgument, "runtime: expected at least one device");
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].device == nullptr) {
      return fail(Errc::kInvalidArgument, fmt::format("runtime: device {} is null", i));
    }
  }
  if (options.prefetch_depth < 0) {
    return fail(Errc::kInvalidArgument,
                fmt::format("runtime: prefetch_depth {}: expected >= 0", options.prefetch_depth));
  }
  if (!(options.knobs.alpha >= 0) || !(options.knobs.beta >= 0)) {
    return fail(Errc::kInvalidArgument, "runtime: dmda alpha and beta must be >= 0");
  }
  PerfModels models(options.models);
  if (options.model_file) {
    ACCO_ASSIGN_OR_RETURN(models, PerfModels::load(*options.model_file, options.models), "runtime");
  }
  auto core = std::make_unique<detail::RuntimeCore>(std::move(devices), std::move(options),
                                                    std::move(models));
  ACCO_RETURN_IF_ERROR(core->start(), "runtime");
  return std::unique_ptr<Runtime>(new Runtime(std::move(core)));
}

Runtime::Runtime(std::unique_ptr<detail::RuntimeCore> core) : core_(std::move(core)) {}
Runtime::~Runtime() = default;

Result<DataHandle> Runtime::register_data(void* host_ptr, std::size_t bytes) {
  return core_->register_data(host_ptr, bytes);
}

Status Runtime::write_back(DataHandle handle) {
  return core_->write_back(handle, false);
}

Status Runtime::unregister(DataHandle handle) {
  return core_->write_back(handle, true);
}

Result<TaskId> Runtime::submit(Task task) {
  return core_->submit(std::move(task));
}

Result<std::vector<TaskId>> Runtime::submit_graph(std::vector<Task> tasks) {
  return core_->submit_graph(std::move(tasks));
}

Status Runtime::wait_all() {
  return core_->wait_all();
}

std::vector<TaskFailure> Runtime::failures() const {
  return core_->failures();
}

void Runtime::set_policy(PolicyKind kind) {
  core_->set_policy(kind);
}

PolicyKind Runtime::policy() const {
  return core_->policy();
}

void Runtime::set_knobs(const PolicyKnobs& knobs) {
  core_->set_knobs(knobs);
}

Status Runtime::set_weight(int device, double weight) {
  return core_->set_weight(device, weight);
}

Status Runtime::set_drained(int device, bool drained) {
  return core_->set_drained(device, drained);
}

Status Runtime::set_headroom(int device, double headroom) {
  return core_->set_headroom(device, headroom);
}

Status Runtime::set_accepting(int device, bool accepting) {
  return core_->set_accepting(device, accepting);
}

int Runtime::devices() const {
  return core_->devices();
}

RuntimeCounters Runtime::counters() const {
  return core_->counters();
}

RunRecord Runtime::records() const {
  return core_->records();
}

void Runtime::reset_records() {
  core_->reset_records();
}

Result<std::string> Runtime::explain(TaskId task) const {
  return core_->explain(task);
}

PerfModels Runtime::models() const {
  return core_->models();
}

Status Runtime::save_models(const std::optional<std::filesystem::path>& path) const {
  return core_->save_models(path);
}

}  // namespace acco::sched
