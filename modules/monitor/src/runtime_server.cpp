#include "acco/monitor/runtime_server.hpp"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/monitor/client.hpp"
#include "acco/transfer/strategy.hpp"

namespace acco::monitor {
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

analyze::RuntimeDeviceActivity activity(const sched::RuntimeDeviceCounters& c) {
  analyze::RuntimeDeviceActivity a;
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

analyze::ProcessCounters process_counters(const std::vector<sched::RuntimeDeviceCounters>& retired,
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
  analyze::ProcessCounters out;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    devices[i].device = static_cast<int>(i);
    out.devices.push_back(activity(devices[i]));
  }
  return out;
}

Result<std::unique_ptr<RuntimeServer>> RuntimeServer::start(const RuntimeServerOptions& options) {
  std::unique_ptr<RuntimeServer> s(new RuntimeServer());
  ACCO_ASSIGN_OR_RETURN(auto sources, make_sources("/", {}));
  s->sources_ = std::move(sources);
  s->nvml_note_ = s->sources_->nvml_note;
  SamplerOptions sampler_options;
  sampler_options.interval = options.interval;
  sampler_options.metrics = options.metrics;
  RuntimeServer* self = s.get();
  sampler_options.process_counters = [self] { return self->counters(); };
  s->sampler_ = std::make_unique<Sampler>(std::move(s->sources_->devices),
                                          std::move(s->sources_->host), sampler_options);
  s->server_ = std::make_unique<Server>(*s->sampler_, options.server);
  s->server_->set_sources(sources_info({}, "/", s->nvml_note_));
  s->sampler_->start();
  ACCO_ASSIGN_OR_RETURN(s->port_, s->server_->start());
  return s;
}

RuntimeServer::~RuntimeServer() {
  if (server_) {
    server_->stop();
  }
  if (sampler_) {
    sampler_->stop();
  }
}

void RuntimeServer::observe(const sched::Runtime* runtime) {
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

analyze::ProcessCounters RuntimeServer::counters() const {
  const std::lock_guard lock(mutex_);
  if (runtime_ == nullptr) {
    return process_counters(retired_, nullptr);
  }
  const sched::RuntimeCounters live = runtime_->counters();
  return process_counters(retired_, &live);
}

std::string serving_line(const RuntimeServerOptions& options, int port,
                         std::string_view nvml_note) {
  return fmt::format(
      "acco schedule: serving on {}/ (metrics at /metrics), sampling every {}, NVML {}",
      ServerUrl{options.server.host, port}.text(),
      units::format_seconds(std::chrono::duration<double>(options.interval).count()), nvml_note);
}

}  // namespace acco::monitor
