#include "acco/monitor/sampler.hpp"

#include <chrono>
#include <ctime>
#include <exception>
#include <utility>

#include "acco/core/clock.hpp"

namespace acco::monitor {
namespace {

double thread_cpu_seconds() {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) {
    return 0;
  }
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

Sampler::Sampler(std::vector<std::unique_ptr<power::SensorSource>> sources,
                 std::unique_ptr<power::HostSource> host, SamplerOptions options)
    : sources_(std::move(sources)), host_(std::move(host)), options_(std::move(options)) {
  stats_.interval_seconds = std::chrono::duration<double>(options_.interval).count();
}

Sampler::~Sampler() {
  stop();
}

void Sampler::add_observer(Observer observer) {
  observers_.push_back(std::move(observer));
}

void Sampler::round() {
  const std::lock_guard round_lock(round_mutex_);
  const double cpu_start = thread_cpu_seconds();
  const auto wall_start = std::chrono::steady_clock::now();
  auto published = std::make_shared<Published>();
  analyze::Snapshot& s = published->snapshot;
  s.time_unix_nanos = options_.clock ? options_.clock() : core::now_unix_nanos();
  for (const auto& source : sources_) {
    auto samples = source->read();
    if (!samples) {
      ++stats_.read_errors[source->name()];
      stats_.last_error[source->name()] = samples.error().message;
      continue;
    }
    for (auto& d : *samples) {
      stats_.dropped_readings += static_cast<std::uint64_t>(std::max(0, d.dropped_readings));
      s.devices.push_back(std::move(d));
    }
  }
  if (host_) {
    auto host = host_->read();
    if (host) {
      s.host = std::move(*host);
    } else {
      ++stats_.read_errors["host"];
      stats_.last_error["host"] = host.error().message;
    }
  }
  if (options_.process_counters) {
    try {
      s.process = options_.process_counters();
    } catch (const std::exception& e) {
      ++stats_.read_errors["process"];
      stats_.last_error["process"] = e.what();
    }
  }
  if (options_.governor) {
    try {
      s.governor = options_.governor(s.devices, s.time_unix_nanos);
    } catch (const std::exception& e) {
      ++stats_.read_errors["governor"];
      stats_.last_error["governor"] = e.what();
    }
  }
  ++stats_.rounds;
  stats_.last_round_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  stats_.cpu_seconds += thread_cpu_seconds() - cpu_start;
  s.stats = stats_;
  published->metrics = render_metrics(s, options_.metrics);
  // The history keeps the snapshot alone: the Prometheus text is about six in seven of a round's
  // bytes (72 KB of 83 KB with 8 devices), and only the latest round is scraped.
  auto kept = std::make_shared<Published>();
  kept->snapshot = s;
  {
    const std::lock_guard lock(mutex_);
    latest_ = published;
    history_.push_back(std::move(kept));
    while (history_.size() > options_.history_rounds) {
      history_.pop_front();
    }
  }
  for (const auto& observer : observers_) {
    observer(*published);
  }
}

void Sampler::start() {
  round();
  thread_ = std::thread([this] { loop(); });
}

void Sampler::loop() {
  auto next = std::chrono::steady_clock::now() + options_.interval;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      if (wake_.wait_until(lock, next, [this] { return stopping_; })) {
        return;
      }
    }
    round();
    // Fixed rate: a slow round does not shift the ones after it, and a round that overran
    // a whole period is not caught up twice.
    next += options_.interval;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) {
      next = now + options_.interval;
    }
  }
}

void Sampler::stop() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
}

std::shared_ptr<const Published> Sampler::latest() const {
  const std::lock_guard lock(mutex_);
  return latest_;
}

std::vector<std::shared_ptr<const Published>> Sampler::since(std::int64_t since_unix_nanos) const {
  const std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<const Published>> out;
  for (const auto& p : history_) {
    if (p->snapshot.time_unix_nanos >= since_unix_nanos) {
      out.push_back(p);
    }
  }
  return out;
}

}  // namespace acco::monitor
