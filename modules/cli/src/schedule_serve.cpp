#include "schedule_serve.hpp"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/transfer/strategy.hpp"

#include "process.hpp"

namespace acco::cli {
namespace {

// The totals of `from` added to `to` (the gauges are left as they are).
void add_totals(sched::RuntimeDeviceCounters& to, const sched::RuntimeDeviceCounters& from) {
  to.started += from.started;
  to.finished += from.finished;
  to.failed += from.failed;
  to.task_seconds += from.task_seconds;
  to.queue_wait_seconds += from.queue_wait_seconds;
  to.transfers += from.transfers;
}

monitor::RuntimeDeviceActivity activity(const sched::RuntimeDeviceCounters& c) {
  monitor::RuntimeDeviceActivity a;
  a.device = std::to_string(c.device);
  a.queued = c.queued;
  a.running = c.running;
  a.started = c.started;
  a.finished = c.finished;
  a.failed = c.failed;
  a.task_seconds = c.task_seconds;
  a.queue_wait_seconds = c.queue_wait_seconds;
  for (const transfer::Direction d :
       {transfer::Direction::kHostToDevice, transfer::Direction::kDeviceToHost,
        transfer::Direction::kDeviceToDevice, transfer::Direction::kHostToHost}) {
    const transfer::DirectionCounters& t = c.transfers.of(d);
    a.transfers.push_back({std::string(transfer::to_string(d)), t.bytes, t.copies});
  }
  return a;
}

}  // namespace

monitor::ProcessCounters process_counters(const std::vector<sched::RuntimeDeviceCounters>& retired,
                                          const sched::RuntimeCounters* current) {
  std::vector<sched::RuntimeDeviceCounters> devices = retired;
  if (current != nullptr) {
    if (devices.size() < current->devices.size()) {
      devices.resize(current->devices.size());
    }
    for (std::size_t i = 0; i < current->devices.size(); ++i) {
      const sched::RuntimeDeviceCounters& live = current->devices[i];
      devices[i].queued = live.queued;
      devices[i].running = live.running;
      add_totals(devices[i], live);
    }
  }
  monitor::ProcessCounters out;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    devices[i].device = static_cast<int>(i);
    out.devices.push_back(activity(devices[i]));
  }
  return out;
}

Result<std::unique_ptr<ScheduleServer>> ScheduleServer::start(const ScheduleServeOptions& options,
                                                              const Progress& progress) {
  std::unique_ptr<ScheduleServer> s(new ScheduleServer());
  ACCO_ASSIGN_OR_RETURN(auto sources, monitor::make_sources("/", {}), "--serve");
  s->sources_ = std::move(sources);
  monitor::SamplerOptions sampler_options;
  sampler_options.interval = options.interval;
  sampler_options.metrics = {.version = ACCO_VERSION, .hostname = hostname()};
  ScheduleServer* self = s.get();
  sampler_options.process_counters = [self] { return self->counters(); };
  const std::string nvml_note = s->sources_->nvml_note;
  s->sampler_ = std::make_unique<monitor::Sampler>(std::move(s->sources_->devices),
                                                   std::move(s->sources_->host), sampler_options);
  s->server_ = std::make_unique<monitor::Server>(*s->sampler_, options.server);
  s->sampler_->start();
  ACCO_ASSIGN_OR_RETURN(const int port, s->server_->start(), "--serve");
  if (progress) {
    const std::string& host = options.server.host;
    progress(fmt::format(
        "acco schedule: serving on http://{}:{}/ (metrics at /metrics), sampling every {}, NVML {}",
        host.find(':') != std::string::npos ? "[" + host + "]" : host, port,
        units::format_seconds(std::chrono::duration<double>(options.interval).count()), nvml_note));
  }
  return s;
}

ScheduleServer::~ScheduleServer() {
  if (server_) {
    server_->stop();
  }
  if (sampler_) {
    sampler_->stop();
  }
}

void ScheduleServer::observe(const sched::Runtime* runtime) {
  const std::lock_guard lock(mutex_);
  if (runtime_ != nullptr) {
    const sched::RuntimeCounters last = runtime_->counters();
    if (retired_.size() < last.devices.size()) {
      retired_.resize(last.devices.size());
    }
    for (std::size_t i = 0; i < last.devices.size(); ++i) {
      add_totals(retired_[i], last.devices[i]);
    }
  }
  runtime_ = runtime;
}

monitor::ProcessCounters ScheduleServer::counters() const {
  const std::lock_guard lock(mutex_);
  if (runtime_ == nullptr) {
    return process_counters(retired_, nullptr);
  }
  const sched::RuntimeCounters live = runtime_->counters();
  return process_counters(retired_, &live);
}

}  // namespace acco::cli
