#include "acco/monitor/checks.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/analyze/json.hpp"
#include "acco/core/clock.hpp"
#include "acco/core/json.hpp"
#include "acco/topo/json.hpp"

namespace acco::monitor {
namespace {

std::string finding_key(const topo::Finding& f) {
  std::string key = f.rule;
  for (const auto& d : f.devices) {
    key += " " + d;
  }
  return key;
}

bool has_finding(const std::vector<topo::Finding>& list, const topo::Finding& f) {
  const auto key = finding_key(f);
  return std::any_of(list.begin(), list.end(),
                     [&](const topo::Finding& other) { return finding_key(other) == key; });
}

const char* finding_level(topo::Severity s) {
  return s == topo::Severity::kCritical  ? "error"
         : s == topo::Severity::kWarning ? "warning"
                                         : "info";
}

}  // namespace

std::vector<analyze::Event> finding_events(
    const std::optional<std::vector<topo::Finding>>& previous,
    const std::vector<topo::Finding>& current, std::int64_t time_unix_nanos) {
  std::vector<analyze::Event> out;
  for (const auto& f : current) {
    const bool is_new = previous ? !has_finding(*previous, f) : f.severity != topo::Severity::kInfo;
    if (!is_new) {
      continue;
    }
    analyze::Event e;
    e.time_unix_nanos = time_unix_nanos;
    e.level = finding_level(f.severity);
    e.event = "finding_appeared";
    e.message = fmt::format("[{}] {}: {}", topo::to_string(f.severity), f.rule, f.message);
    out.push_back(std::move(e));
  }
  if (previous) {
    for (const auto& f : *previous) {
      if (!has_finding(current, f)) {
        analyze::Event e;
        e.time_unix_nanos = time_unix_nanos;
        e.level = "info";
        e.event = "finding_cleared";
        e.message = fmt::format("{} no longer holds: {}", f.rule, f.message);
        out.push_back(std::move(e));
      }
    }
  }
  return out;
}

std::vector<analyze::Event> bench_events(const std::vector<BenchRegression>& regressions,
                                         std::int64_t time_unix_nanos) {
  std::vector<analyze::Event> out;
  for (const auto& r : regressions) {
    analyze::Event e;
    e.time_unix_nanos = time_unix_nanos;
    e.level = "warning";
    e.event = "bench_regression";
    e.device = r.device;
    e.message = fmt::format(
        "{} on {} dropped {:.1f}% since the last run on this machine (beyond the {:.1f}% noise "
        "threshold)",
        r.case_key, r.device, -r.relative_change * 100, r.threshold * 100);
    e.numbers = {{"previous", r.previous},
                 {"current", r.current},
                 {"relative_change", r.relative_change},
                 {"threshold", r.threshold}};
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<analyze::Event> bench_check_events(const BenchCheck& check,
                                               std::int64_t time_unix_nanos) {
  std::vector<analyze::Event> out = {
      analyze::Event{time_unix_nanos,
                     "info",
                     "bench_done",
                     "",
                     fmt::format("quick bench: {} ({} result(s), {} regression(s))", check.note,
                                 check.results, check.regressions.size()),
                     {}}};
  for (analyze::Event& e : bench_events(check.regressions, time_unix_nanos)) {
    out.push_back(std::move(e));
  }
  for (const std::string& error : check.errors) {
    out.push_back(analyze::Event{time_unix_nanos, "error", "bench_failed", "", error, {}});
  }
  return out;
}

PeriodicChecks::PeriodicChecks(ChecksOptions options, const Sampler& sampler, EventLog& events)
    : options_(std::move(options)), sampler_(sampler), events_(events) {}

PeriodicChecks::~PeriodicChecks() {
  stop();
}

void PeriodicChecks::start() {
  thread_ = std::thread([this] { loop(); });
}

void PeriodicChecks::stop() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
}

bool PeriodicChecks::devices_idle() const {
  const auto latest = sampler_.latest();
  if (!latest) {
    return false;
  }
  return std::all_of(latest->snapshot.devices.begin(), latest->snapshot.devices.end(),
                     [&](const power::DeviceSample& d) {
                       return d.lost || d.suspended ||
                              d.utilization_ratio.value_or(0) < options_.idle_utilization;
                     });
}

void PeriodicChecks::run_probe() {
  auto result = topo::probe(options_.probe);
  const auto t = core::now_unix_nanos();
  std::vector<analyze::Event> events;
  {
    const std::lock_guard lock(mutex_);
    if (!result) {
      probe_error_ = result.error().message;
      analyze::Event e;
      e.time_unix_nanos = t;
      e.level = "error";
      e.event = "probe_failed";
      e.message = "the periodic probe failed: " + result.error().message;
      events.push_back(std::move(e));
    } else {
      events = finding_events(findings_, result->findings, t);
      findings_ = std::move(result->findings);
      machine_ = std::move(result->machine);
      probed_at_ = t;
      probe_error_.clear();
    }
  }
  events_.add(events);
}

void PeriodicChecks::run_bench() {
  std::optional<topo::Machine> machine;
  {
    const std::lock_guard lock(mutex_);
    machine = machine_;
  }
  if (!machine || !options_.bench) {
    return;
  }
  auto check = options_.bench(*machine);
  const auto t = core::now_unix_nanos();
  if (!check) {
    events_.add({t,
                 "error",
                 "bench_failed",
                 "",
                 "the periodic bench failed: " + check.error().message,
                 {}});
    return;
  }
  events_.add(bench_check_events(*check, t));
}

void PeriodicChecks::loop() {
  using Clock = std::chrono::steady_clock;
  constexpr auto kNever = Clock::time_point::max();
  run_probe();
  auto next_probe = options_.probe_every ? Clock::now() + *options_.probe_every : kNever;
  auto next_bench = options_.bench_every ? Clock::now() + *options_.bench_every : kNever;
  while (true) {
    const auto wake = std::min({next_probe, next_bench, Clock::now() + std::chrono::hours(24)});
    {
      std::unique_lock lock(mutex_);
      if (wake_.wait_until(lock, wake, [this] { return stopping_; })) {
        return;
      }
    }
    const auto now_steady = Clock::now();
    if (now_steady >= next_probe) {
      run_probe();
      next_probe = Clock::now() + options_.probe_every.value_or(std::chrono::hours(24));
    }
    if (now_steady >= next_bench) {
      const auto every = options_.bench_every.value_or(std::chrono::hours(24));
      if (devices_idle()) {
        run_bench();
        next_bench = Clock::now() + every;
      } else {
        // Measuring a busy link says nothing about it; look again shortly.
        next_bench = Clock::now() + std::min<std::chrono::seconds>(every, std::chrono::seconds(10));
      }
    }
  }
}

std::string PeriodicChecks::findings_json() const {
  const std::lock_guard lock(mutex_);
  nlohmann::ordered_json j;
  if (!findings_) {
    j["findings"] = nullptr;
    j["note"] = probe_error_.empty() ? "the first probe has not finished" : probe_error_;
  } else {
    j["time"] = analyze::rfc3339(probed_at_);
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& f : *findings_) {
      list.push_back(topo::to_json(f));
    }
    j["findings"] = list;
  }
  // Evidence read from sysfs need not be UTF-8: replaced, not thrown (the daemon serves this).
  return core::dump_replacing_invalid_utf8(j) + "\n";
}

}  // namespace acco::monitor
