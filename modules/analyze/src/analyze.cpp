#include "acco/analyze/analyze.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include "acco/analyze/json.hpp"
#include "acco/analyze/pcie_peak.hpp"
#include "acco/core/units.hpp"
#include "acco/report/document.hpp"
#include "acco/report/table.hpp"

namespace acco::analyze {
namespace {

using Json = nlohmann::ordered_json;

// The thresholds of the verdict rules (reference monitoring-power.md, b.6).
constexpr double kIdleUtilization = 0.05;
constexpr double kThermalThrottledRatio = 0.01;
constexpr double kThermalClockRatio = 0.9;
constexpr double kReasonShare = 0.5;  // of the busy samples: the reasons held the clocks
constexpr double kPowerCapOfLimit = 0.95;
constexpr double kLinkBound = 0.7;
constexpr double kPcieBoundUtilization = 0.5;
constexpr double kNvlinkBoundUtilization = 0.6;
constexpr double kNvlinkUnused = 0.05;
constexpr double kPcieBusyForUnderuse = 0.5;
constexpr double kHostStarvedUtilization = 0.3;
constexpr double kHostBusy = 0.9;
constexpr double kHostPressure = 0.2;
constexpr double kMemoryBound = 0.6;
constexpr double kComputeUtilization = 0.9;
constexpr double kComputeLinkIdle = 0.5;

struct Point {
  const Snapshot* round;
  const power::DeviceSample* sample;
};

double seconds_between(std::int64_t a, std::int64_t b) {
  return static_cast<double>(b - a) / 1e9;
}

std::optional<double> mean(const std::vector<double>& v) {
  if (v.empty()) {
    return std::nullopt;
  }
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double throttle(const power::DeviceSample& s, bool thermal) {
  const auto get = [&](const char* k) {
    const auto it = s.throttle_seconds.find(k);
    return it == s.throttle_seconds.end() ? std::optional<double>() : it->second;
  };
  if (!thermal) {
    return get("power").value_or(0);
  }
  if (const auto t = get("thermal")) {
    return *t;
  }
  return get("sw_thermal").value_or(0) + get("hw_thermal").value_or(0);
}

bool has_throttle(const power::DeviceSample& s, bool thermal) {
  return thermal ? (s.throttle_seconds.contains("thermal") ||
                    s.throttle_seconds.contains("sw_thermal") ||
                    s.throttle_seconds.contains("hw_thermal"))
                 : s.throttle_seconds.contains("power");
}

std::optional<double> host_busy(const Snapshot& a, const Snapshot& b) {
  if (!a.host || !b.host) {
    return std::nullopt;
  }
  const auto total = [](const power::CpuTimes& c) {
    double sum = 0;
    for (const auto& [mode, s] : c.seconds) {
      sum += s;
    }
    return sum;
  };
  const auto idle = [](const power::CpuTimes& c) {
    double sum = 0;
    for (const char* mode : {"idle", "iowait"}) {
      if (const auto it = c.seconds.find(mode); it != c.seconds.end()) {
        sum += it->second;
      }
    }
    return sum;
  };
  const double dt = total(b.host->cpu) - total(a.host->cpu);
  if (dt <= 0) {
    return std::nullopt;
  }
  const double di = idle(b.host->cpu) - idle(a.host->cpu);
  return std::clamp(1.0 - di / dt, 0.0, 1.0);
}

constexpr std::uint64_t kPowerCapBits = power::clock_event::kSwPowerCap |
                                        power::clock_event::kHwSlowdown |
                                        power::clock_event::kHwPowerBrakeSlowdown;
constexpr std::uint64_t kThermalBits =
    power::clock_event::kSwThermalSlowdown | power::clock_event::kHwThermalSlowdown;

// Means and shares over a window's samples, one sample at a time.
struct Accumulator {
  std::vector<double> util, mem, power, limit, clock, clock_ratio, rx, tx, pressure;
  std::optional<double> util_max;
  int reasons_known = 0;  // busy samples with their clock-event reasons
  int capped = 0;
  int thermal = 0;
  double highest_sm_clock = 0;  // the device's, over the whole recording; 0: none

  void add(const Point& p, WindowNumbers& n) {
    const auto& s = *p.sample;
    ++n.samples;
    if (s.utilization_ratio) {
      util.push_back(*s.utilization_ratio);
      util_max = std::max(util_max.value_or(0), *s.utilization_ratio);
    }
    push(mem, s.memory_utilization_ratio);
    push(power, s.power_watts);
    // DCGM and nvidia-smi's power.limit give the management limit; the enforced one wins.
    push(limit, s.power_limit_enforced_watts ? s.power_limit_enforced_watts
                                             : s.power_limit_requested_watts);
    if (s.sm_clock_hertz) {
      clock.push_back(*s.sm_clock_hertz);
      if (s.sm_clock_max_hertz && *s.sm_clock_max_hertz > 0) {
        clock_ratio.push_back(*s.sm_clock_hertz / *s.sm_clock_max_hertz);
      }
    }
    if (s.temperature_gpu_celsius) {
      n.temperature_max_celsius =
          std::max(n.temperature_max_celsius.value_or(-1e9), *s.temperature_gpu_celsius);
    }
    if (const double peak = pcie_peak_bytes_per_second(s); peak > 0) {
      push(rx, s.pcie_rx_bytes_per_second, peak);
      push(tx, s.pcie_tx_bytes_per_second, peak);
    }
    // An idle device's clocks drop for gpu_idle; a cap matters while it works.
    const bool busy = !s.utilization_ratio || *s.utilization_ratio >= kIdleUtilization;
    if (s.clock_event_reasons && busy) {
      ++reasons_known;
      capped += (*s.clock_event_reasons & kPowerCapBits) != 0 ? 1 : 0;
      thermal += (*s.clock_event_reasons & kThermalBits) != 0 ? 1 : 0;
    }
    if (p.round->host) {
      for (const auto& psi : p.round->host->pressure) {
        if (psi.resource == "cpu" && psi.kind == "some") {
          pressure.push_back(psi.avg10_ratio);
        }
      }
    }
  }

  void finish(WindowNumbers& n) const {
    n.utilization = mean(util);
    n.utilization_max = util_max;
    n.memory_utilization = mean(mem);
    n.power_watts = mean(power);
    n.power_limit_watts = mean(limit);
    n.sm_clock_hertz = mean(clock);
    // A ratio from the reported maximum only when every clock reading had one.
    if (!clock_ratio.empty() && clock_ratio.size() == clock.size()) {
      n.sm_clock_ratio = mean(clock_ratio);
      n.sm_clock_reference = "max";
    } else if (n.sm_clock_hertz && highest_sm_clock > 0) {
      n.sm_clock_ratio = *n.sm_clock_hertz / highest_sm_clock;
      n.sm_clock_reference = "highest_seen";
    }
    n.pcie_rx_utilization = mean(rx);
    n.pcie_tx_utilization = mean(tx);
    n.host_cpu_pressure = mean(pressure);
    if (reasons_known > 0) {
      n.power_cap_share = static_cast<double>(capped) / reasons_known;
      n.thermal_share = static_cast<double>(thermal) / reasons_known;
    }
  }

  static void push(std::vector<double>& v, const std::optional<double>& x, double scale = 1) {
    if (x) {
      v.push_back(*x / scale);
    }
  }
};

// NVLink bytes over the window against the active links' speed; counts the links up.
void nvlink_rate(const power::DeviceSample& a, const power::DeviceSample& b, double dt,
                 WindowNumbers& n) {
  double bytes = 0;
  double speed = 0;
  for (const auto& lb : b.nvlinks) {
    if (!lb.up) {
      continue;
    }
    ++n.nvlinks_up;
    const auto la = std::find_if(a.nvlinks.begin(), a.nvlinks.end(),
                                 [&](const auto& l) { return l.link == lb.link; });
    if (la == a.nvlinks.end() || !lb.speed_bytes_per_second || !lb.tx_bytes || !la->tx_bytes ||
        !lb.rx_bytes || !la->rx_bytes) {
      continue;
    }
    bytes += static_cast<double>(std::max(*lb.tx_bytes - std::min(*lb.tx_bytes, *la->tx_bytes),
                                          *lb.rx_bytes - std::min(*lb.rx_bytes, *la->rx_bytes)));
    speed += *lb.speed_bytes_per_second;
  }
  if (speed > 0) {
    n.nvlink_utilization = bytes / dt / speed;
  }
}

// Counters between the window's first and last readable sample: energy for the mean power,
// violation time for throttling, NVLink bytes for its rate, host CPU time for its load.
void window_counters(const Point& first, const Point& last, WindowNumbers& n) {
  const auto& a = *first.sample;
  const auto& b = *last.sample;
  const double dt = seconds_between(first.round->time_unix_nanos, last.round->time_unix_nanos);
  if (dt <= 0) {
    return;
  }
  if (a.energy_joules && b.energy_joules && *b.energy_joules >= *a.energy_joules) {
    n.power_watts = (*b.energy_joules - *a.energy_joules) / dt;
  }
  if (has_throttle(a, true) && has_throttle(b, true)) {
    n.thermal_throttled_ratio = std::clamp((throttle(b, true) - throttle(a, true)) / dt, 0.0, 1.0);
  }
  nvlink_rate(a, b, dt, n);
  n.host_cpu_busy = host_busy(*first.round, *last.round);
}

WindowNumbers numbers_of(const std::vector<Point>& points, double highest_sm_clock) {
  WindowNumbers n;
  Accumulator acc;
  acc.highest_sm_clock = highest_sm_clock;
  const Point* first = nullptr;
  const Point* last = nullptr;
  for (const auto& p : points) {
    if (p.sample->lost || p.sample->suspended) {
      continue;
    }
    acc.add(p, n);
    first = first == nullptr ? &p : first;
    last = &p;
  }
  acc.finish(n);
  if (first != nullptr && last != first) {
    window_counters(*first, *last, n);
  }
  return n;
}

std::string pct(double ratio) {
  return units::format_percent(ratio);
}

// " at 692 W = 99% of the 700 W limit", led by `lead`.
std::string power_text(const WindowNumbers& n, const char* lead = " at ") {
  if (!n.power_watts) {
    return "";
  }
  if (!n.power_limit_watts || *n.power_limit_watts <= 0) {
    return fmt::format("{}{:.0f} W (no power limit recorded)", lead, *n.power_watts);
  }
  return fmt::format("{}{:.0f} W = {} of the {:.0f} W limit", lead, *n.power_watts,
                     pct(*n.power_watts / *n.power_limit_watts), *n.power_limit_watts);
}

std::string clock_text(const WindowNumbers& n) {
  if (!n.sm_clock_ratio || !n.sm_clock_hertz) {
    return "";
  }
  return fmt::format("; SM clock {:.0f} MHz, {} of {}", *n.sm_clock_hertz / 1e6,
                     pct(*n.sm_clock_ratio),
                     n.sm_clock_reference == "max" ? "its maximum" : "the highest recorded");
}

// What the clock-event reasons said of the busy samples, for the compute and mixed verdicts.
std::string throttle_text(const WindowNumbers& n) {
  if (!n.power_cap_share || !n.thermal_share) {
    return n.thermal_throttled_ratio ? "" : "; clock-event reasons not recorded";
  }
  if (*n.power_cap_share == 0 && *n.thermal_share == 0) {
    return " with no throttling";
  }
  return fmt::format("; power cap in {} and thermal slowdown in {} of the busy samples",
                     pct(*n.power_cap_share), pct(*n.thermal_share));
}

std::string pcie_text(const std::optional<double>& pcie) {
  return pcie ? fmt::format("PCIe at {} of its peak", pct(*pcie)) : "PCIe not recorded";
}

std::pair<Verdict, std::string> judge(const WindowNumbers& n) {
  using V = Verdict;
  if (n.samples == 0) {
    return {V::kUnknown, "no readings in this window (device lost or suspended)"};
  }
  const auto& util = n.utilization;
  if (util && *util < kIdleUtilization) {
    return {V::kIdle, fmt::format("utilization averaged {}, below {} (peak {})", pct(*util),
                                  pct(kIdleUtilization), pct(n.utilization_max.value_or(0)))};
  }
  // The clock-event reasons are direct evidence: set in most busy samples, they are the limit.
  const double thermal_share = n.thermal_share.value_or(0);
  const bool throttled_thermally =
      n.thermal_throttled_ratio.value_or(0) > kThermalThrottledRatio || thermal_share > 0;
  if (thermal_share >= kReasonShare ||
      (throttled_thermally && n.sm_clock_ratio && *n.sm_clock_ratio < kThermalClockRatio)) {
    return {V::kThermal,
            fmt::format("thermal slowdown held the clocks in {} of the {}{}{}{}",
                        pct(std::max(thermal_share, n.thermal_throttled_ratio.value_or(0))),
                        n.thermal_share ? "busy samples" : "window",
                        n.temperature_max_celsius
                            ? fmt::format(", up to {:.0f} C", *n.temperature_max_celsius)
                            : std::string(),
                        clock_text(n), power_text(n, "; "))};
  }
  if (n.power_cap_share.value_or(0) >= kReasonShare) {
    return {V::kPowerCap, fmt::format("the power-cap reasons held the clocks in {} of the busy "
                                      "samples{}{}",
                                      pct(*n.power_cap_share), power_text(n), clock_text(n))};
  }
  if (!util) {
    return {V::kUnknown, fmt::format("no utilization readings in this window: the load cannot be "
                                     "judged{}{}",
                                     power_text(n), clock_text(n))};
  }
  const std::optional<double> pcie =
      n.pcie_rx_utilization || n.pcie_tx_utilization
          ? std::optional<double>(
                std::max(n.pcie_rx_utilization.value_or(0), n.pcie_tx_utilization.value_or(0)))
          : std::nullopt;
  if (pcie && *pcie >= kLinkBound && *util < kPcieBoundUtilization) {
    return {V::kPcie, fmt::format("PCIe carried {} (rx) / {} (tx) of the link's peak while the "
                                  "device computed only {} of the time: transfer-bound",
                                  pct(n.pcie_rx_utilization.value_or(0)),
                                  pct(n.pcie_tx_utilization.value_or(0)), pct(*util))};
  }
  if (n.nvlink_utilization && *n.nvlink_utilization >= kLinkBound &&
      *util < kNvlinkBoundUtilization) {
    return {V::kNvlink, fmt::format("NVLink carried {} of its {} active links' speed while the "
                                    "device computed {} of the time",
                                    pct(*n.nvlink_utilization), n.nvlinks_up, pct(*util))};
  }
  if (n.nvlinks_up > 0 && n.nvlink_utilization && *n.nvlink_utilization < kNvlinkUnused && pcie &&
      *pcie >= kPcieBusyForUnderuse) {
    return {V::kLinkUnderuse,
            fmt::format("{} NVLinks are up but carried {} while PCIe carried {} of its peak: "
                        "peer traffic goes over PCIe (check NCCL_P2P_LEVEL and the topology)",
                        n.nvlinks_up, pct(*n.nvlink_utilization), pct(*pcie))};
  }
  if (*util < kHostStarvedUtilization && (n.host_cpu_busy.value_or(0) >= kHostBusy ||
                                          n.host_cpu_pressure.value_or(0) >= kHostPressure)) {
    return {V::kHost, fmt::format("the device computed only {} of the time while the host CPUs "
                                  "were {} busy{}: the host does not feed it",
                                  pct(*util), pct(n.host_cpu_busy.value_or(0)),
                                  n.host_cpu_pressure
                                      ? fmt::format(" (CPU pressure {})", pct(*n.host_cpu_pressure))
                                      : std::string())};
  }
  if (n.memory_utilization && *n.memory_utilization >= kMemoryBound &&
      *util >= kPcieBoundUtilization) {
    return {V::kMemory, fmt::format("device memory was busy {} of the time with the device at {}",
                                    pct(*n.memory_utilization), pct(*util))};
  }
  if (*util >= kComputeUtilization && (!pcie || *pcie < kComputeLinkIdle)) {
    return {V::kCompute, fmt::format("a kernel ran {} of the time{}, {}: compute-bound (the "
                                     "device is the limit)",
                                     pct(*util), throttle_text(n), pcie_text(pcie))};
  }
  return {V::kMixed, fmt::format("busy {} of the time{}, {}; no single limit holds", pct(*util),
                                 throttle_text(n), pcie_text(pcie))};
}

// "+42 s" under two minutes, else "+m:ss" ("+4:00", never "+3:60"), "+h:mm:ss" from an hour.
std::string offset(std::int64_t from, std::int64_t t) {
  const auto s = static_cast<long long>(std::llround(seconds_between(from, t)));
  if (s < 120) {
    return fmt::format("+{} s", s);
  }
  if (s < 3600) {
    return fmt::format("+{}:{:02}", s / 60, s % 60);
  }
  return fmt::format("+{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

int level_rank(const std::string& level) {
  return level == "error" ? 0 : level == "warning" ? 1 : 2;
}

DeviceAnalysis analyze_device(const std::string& id, const std::vector<Point>& points,
                              std::int64_t start_unix_nanos, std::int64_t window_ns,
                              double interval, double window_seconds) {
  DeviceAnalysis da;
  da.device = id;
  double highest_sm_clock = 0;
  for (const auto& p : points) {
    if (!p.sample->lost && !p.sample->suspended && p.sample->sm_clock_hertz) {
      highest_sm_clock = std::max(highest_sm_clock, *p.sample->sm_clock_hertz);
    }
    if (!p.sample->model.empty()) {
      da.model = p.sample->model;
    }
    if (!p.sample->pci_bus_id.empty()) {
      da.pci_bus_id = p.sample->pci_bus_id;
    }
    da.lost = da.lost || p.sample->lost;
  }
  std::size_t i = 0;
  for (std::int64_t start = start_unix_nanos; i < points.size(); start += window_ns) {
    const std::int64_t end = start + window_ns;
    std::vector<Point> in;
    while (i < points.size() && points[i].round->time_unix_nanos < end) {
      in.push_back(points[i++]);
    }
    if (in.empty()) {
      continue;
    }
    WindowVerdict w;
    w.start_unix_nanos = start;
    w.end_unix_nanos = std::min(end, std::max(in.back().round->time_unix_nanos, start));
    w.numbers = numbers_of(in, highest_sm_clock);
    std::tie(w.verdict, w.why) = judge(w.numbers);
    const double covered =
        seconds_between(in.front().round->time_unix_nanos, in.back().round->time_unix_nanos) +
        interval;
    da.seconds[w.verdict] += std::min(covered, window_seconds);
    da.windows.push_back(std::move(w));
  }
  double best = -1;
  for (const auto& [v, secs] : da.seconds) {
    if (secs > best) {
      best = secs;
      da.dominant = v;
    }
  }
  return da;
}

// Warning and error events grouped by kind and device (the first of each with its count), errors
// first, then warnings, then the most frequent; `total` counts them all.
std::vector<Event> grouped_events(const std::vector<const Snapshot*>& rounds,
                                  const AnalyzeOptions& options, std::size_t& total) {
  struct Group {
    Event first;
    std::size_t count = 0;
  };
  std::vector<Group> groups;
  const Snapshot* previous = nullptr;
  for (const auto* r : rounds) {
    for (auto& e : detect_events(previous, *r)) {
      if (e.level == "info" || (!options.device.empty() && e.device != options.device)) {
        continue;
      }
      ++total;
      auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
        return g.first.event == e.event && g.first.device == e.device &&
               g.first.numbers.count("reason_bit") == e.numbers.count("reason_bit") &&
               (!e.numbers.contains("reason_bit") ||
                g.first.numbers.at("reason_bit") == e.numbers.at("reason_bit"));
      });
      if (it == groups.end()) {
        groups.push_back({std::move(e), 1});
      } else {
        ++it->count;
      }
    }
    previous = r;
  }
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    if (level_rank(a.first.level) != level_rank(b.first.level)) {
      return level_rank(a.first.level) < level_rank(b.first.level);
    }
    return a.count > b.count;
  });
  std::vector<Event> out;
  for (std::size_t k = 0; k < groups.size() && k < options.max_events; ++k) {
    Event e = groups[k].first;
    e.numbers["count"] = static_cast<double>(groups[k].count);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::kIdle:
      return "idle";
    case Verdict::kThermal:
      return "thermal";
    case Verdict::kPowerCap:
      return "power_cap";
    case Verdict::kPcie:
      return "pcie";
    case Verdict::kNvlink:
      return "nvlink";
    case Verdict::kLinkUnderuse:
      return "link_underuse";
    case Verdict::kHost:
      return "host";
    case Verdict::kMemory:
      return "memory";
    case Verdict::kCompute:
      return "compute";
    case Verdict::kMixed:
      return "mixed";
    case Verdict::kUnknown:
      return "unknown";
  }
  return "mixed";
}

AnalyzeReport analyze(const std::vector<Snapshot>& recorded, const AnalyzeOptions& options,
                      std::string input) {
  AnalyzeReport report;
  report.input = std::move(input);
  report.window_seconds = options.window_seconds;
  std::vector<const Snapshot*> rounds;
  for (const auto& s : recorded) {
    if ((options.since_unix_nanos && s.time_unix_nanos < *options.since_unix_nanos) ||
        (options.until_unix_nanos && s.time_unix_nanos > *options.until_unix_nanos)) {
      continue;
    }
    rounds.push_back(&s);
  }
  std::stable_sort(rounds.begin(), rounds.end(), [](const Snapshot* a, const Snapshot* b) {
    return a->time_unix_nanos < b->time_unix_nanos;
  });
  report.rounds = rounds.size();
  if (rounds.empty()) {
    report.notes.push_back("no rounds in the selected time range");
    return report;
  }
  report.start_unix_nanos = rounds.front()->time_unix_nanos;
  report.end_unix_nanos = rounds.back()->time_unix_nanos;
  const double interval =
      rounds.front()->stats.interval_seconds > 0 ? rounds.front()->stats.interval_seconds : 1.0;

  // Devices in the order they first appear.
  std::vector<std::pair<std::string, std::vector<Point>>> devices;
  for (const auto* r : rounds) {
    for (const auto& d : r->devices) {
      if (!options.device.empty() && d.device != options.device) {
        continue;
      }
      auto it = std::find_if(devices.begin(), devices.end(),
                             [&](const auto& e) { return e.first == d.device; });
      if (it == devices.end()) {
        devices.emplace_back(d.device, std::vector<Point>{});
        it = devices.end() - 1;
      }
      it->second.push_back({r, &d});
    }
  }
  if (devices.empty()) {
    report.notes.push_back(options.device.empty()
                               ? "the recording holds no device readings"
                               : fmt::format("device {} is not in the recording", options.device));
  }
  const auto window_ns = static_cast<std::int64_t>(std::max(1.0, options.window_seconds) * 1e9);
  for (auto& [id, points] : devices) {
    report.devices.push_back(analyze_device(id, points, report.start_unix_nanos, window_ns,
                                            interval, options.window_seconds));
  }

  report.events = grouped_events(rounds, options, report.events_total);
  bool any_host = false;
  for (const auto* r : rounds) {
    any_host = any_host || r->host.has_value();
  }
  if (!any_host) {
    report.notes.push_back("no host readings: the host rule (a starved device) was not judged");
  }
  return report;
}

namespace {

// A time as the recording gave it: RFC 3339 in UTC, the same without "Z" for local times of an
// unknown zone, and the offset from the start when the file has no times.
std::string time_text(const AnalyzeReport& r, std::int64_t t) {
  switch (r.time_base) {
    case TimeBase::kUtc:
      return rfc3339(t);
    case TimeBase::kLocalUnknownZone: {
      std::string text = rfc3339(t);
      text.pop_back();
      return text;
    }
    case TimeBase::kNone:
      break;
  }
  return offset(r.start_unix_nanos, t);
}

const char* time_base_name(TimeBase base) {
  switch (base) {
    case TimeBase::kUtc:
      return "utc";
    case TimeBase::kLocalUnknownZone:
      return "local";
    case TimeBase::kNone:
      break;
  }
  return "none";
}

void add_device(report::Document& doc, const AnalyzeReport& r, const DeviceAnalysis& d) {
  double total = 0;
  for (const auto& [v, secs] : d.seconds) {
    total += secs;
  }
  std::string shares;
  for (const auto& [v, secs] : d.seconds) {
    shares += fmt::format("{}{} {}", shares.empty() ? "" : ", ", to_string(v),
                          pct(total > 0 ? secs / total : 0));
  }
  doc.add(report::Heading{fmt::format("Device {}{}{}{}", d.device,
                                      d.model.empty() ? "" : ": " + d.model,
                                      d.pci_bus_id.empty() ? "" : " (" + d.pci_bus_id + ")",
                                      d.lost ? " [lost during the recording]" : "")});
  for (const auto& instance : d.instances) {
    doc.add(report::Note{"MIG instance " + instance});
  }
  const double top = d.seconds.contains(d.dominant) ? d.seconds.at(d.dominant) : 0;
  doc.add(report::Note{total > 0 && top / total >= 0.5
                           ? fmt::format("mostly {} ({})", to_string(d.dominant), shares)
                           : fmt::format("no verdict holds most of the time ({})", shares)});
  const auto watts = [](const std::optional<double>& w) {
    return w ? fmt::format("{:.0f} W", *w) : std::string("-");
  };
  std::vector<std::vector<std::string>> rows = {
      {"FROM", "TO", "VERDICT", "UTIL", "POWER / LIMIT", "SM CLOCK", "PCIE RX/TX", "WHY"}};
  for (const auto& w : d.windows) {
    const auto& n = w.numbers;
    const bool pcie = n.pcie_rx_utilization || n.pcie_tx_utilization;
    rows.push_back(
        {offset(r.start_unix_nanos, w.start_unix_nanos),
         offset(r.start_unix_nanos, w.end_unix_nanos), to_string(w.verdict),
         n.utilization ? pct(*n.utilization) : std::string("-"),
         n.power_watts ? watts(n.power_watts) + " / " + watts(n.power_limit_watts)
                       : std::string("-"),
         n.sm_clock_ratio ? pct(*n.sm_clock_ratio) : std::string("-"),
         pcie ? fmt::format("{} / {}", n.pcie_rx_utilization ? pct(*n.pcie_rx_utilization) : "-",
                            n.pcie_tx_utilization ? pct(*n.pcie_tx_utilization) : "-")
              : std::string("-"),
         w.why});
  }
  doc.add(report::plain_table(rows, report::TableStyle::layout(2, 1)));
}

std::string span_text(const AnalyzeReport& r) {
  if (r.rounds == 0) {
    return "0 round(s)";
  }
  if (r.time_base == TimeBase::kNone && (r.rounds == 1 || r.start_unix_nanos == r.end_unix_nanos)) {
    return fmt::format("{} round(s), no dates in the file", r.rounds);
  }
  if (r.time_base == TimeBase::kNone) {
    return fmt::format(
        "{} round(s) over {}, no dates in the file (times are offsets from the "
        "first round)",
        r.rounds, units::format_seconds(seconds_between(r.start_unix_nanos, r.end_unix_nanos)));
  }
  const char* zone = r.time_base == TimeBase::kLocalUnknownZone ? ", local time, zone unknown" : "";
  if (r.rounds == 1 || r.start_unix_nanos == r.end_unix_nanos) {
    return fmt::format("{} round(s) at {}{}", r.rounds, time_text(r, r.start_unix_nanos), zone);
  }
  return fmt::format("{} round(s) over {} ({} to {}{})", r.rounds,
                     units::format_seconds(seconds_between(r.start_unix_nanos, r.end_unix_nanos)),
                     time_text(r, r.start_unix_nanos), time_text(r, r.end_unix_nanos), zone);
}

}  // namespace

AnalyzeReport analyze_recording(const Recording& recording, const AnalyzeOptions& options,
                                std::string input) {
  AnalyzeReport analysis = analyze(recording.rounds, options, std::move(input));
  analysis.time_base = recording.time_base;
  for (auto& device : analysis.devices) {
    if (const auto it = recording.instances.find(device.device); it != recording.instances.end()) {
      device.instances = it->second;
    }
  }
  analysis.notes.insert(analysis.notes.begin(), recording.notes.begin(), recording.notes.end());
  return analysis;
}

report::Document analyze_report(const AnalyzeReport& r) {
  report::Document doc;
  doc.add(report::Preformatted{fmt::format(
      "acco analyze: {}{}, {} device(s), windows of {}", r.input.empty() ? "" : r.input + ": ",
      span_text(r), r.devices.size(), units::format_seconds(r.window_seconds))});
  for (const auto& d : r.devices) {
    add_device(doc, r, d);
  }
  if (r.events_total > 0) {
    doc.add(report::Heading{fmt::format(
        "Events ({} warning/error event(s); the first of each kind, most frequent first)",
        r.events_total)});
    for (const auto& e : r.events) {
      doc.add(report::Note{fmt::format("{} [{}] {} x{}: {}", time_text(r, e.time_unix_nanos),
                                       e.level, e.event,
                                       static_cast<long long>(e.numbers.at("count")), e.message)});
    }
  } else {
    doc.add(report::Heading{"Events: no warning or error"});
  }
  for (const auto& note : r.notes) {
    doc.add(report::Note{.text = "note: " + note, .indent = 0});
  }
  return doc;
}

nlohmann::ordered_json to_json(const AnalyzeReport& r) {
  const auto opt = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
  const auto time = [&](std::int64_t t) {
    return r.time_base == TimeBase::kNone ? Json(nullptr) : Json(time_text(r, t));
  };
  Json devices = Json::array();
  for (const auto& d : r.devices) {
    Json windows = Json::array();
    for (const auto& w : d.windows) {
      const auto& n = w.numbers;
      windows.push_back(
          {{"start", time(w.start_unix_nanos)},
           {"end", time(w.end_unix_nanos)},
           {"start_seconds", seconds_between(r.start_unix_nanos, w.start_unix_nanos)},
           {"end_seconds", seconds_between(r.start_unix_nanos, w.end_unix_nanos)},
           {"verdict", to_string(w.verdict)},
           {"why", w.why},
           {"numbers",
            {{"samples", n.samples},
             {"utilization", opt(n.utilization)},
             {"utilization_max", opt(n.utilization_max)},
             {"memory_utilization", opt(n.memory_utilization)},
             {"power_watts", opt(n.power_watts)},
             {"power_limit_watts", opt(n.power_limit_watts)},
             {"power_cap_share", opt(n.power_cap_share)},
             {"thermal_share", opt(n.thermal_share)},
             {"thermal_throttled_ratio", opt(n.thermal_throttled_ratio)},
             {"sm_clock_hertz", opt(n.sm_clock_hertz)},
             {"sm_clock_ratio", opt(n.sm_clock_ratio)},
             {"sm_clock_reference",
              n.sm_clock_reference.empty() ? Json(nullptr) : Json(n.sm_clock_reference)},
             {"temperature_max_celsius", opt(n.temperature_max_celsius)},
             {"pcie_rx_utilization", opt(n.pcie_rx_utilization)},
             {"pcie_tx_utilization", opt(n.pcie_tx_utilization)},
             {"nvlink_utilization", opt(n.nvlink_utilization)},
             {"nvlinks_up", n.nvlinks_up},
             {"host_cpu_busy", opt(n.host_cpu_busy)},
             {"host_cpu_pressure", opt(n.host_cpu_pressure)}}}});
    }
    Json seconds = Json::object();
    for (const auto& [v, s] : d.seconds) {
      seconds[to_string(v)] = s;
    }
    devices.push_back({{"device", d.device},
                       {"model", d.model},
                       {"pci_bus_id", d.pci_bus_id},
                       {"lost", d.lost},
                       {"instances", d.instances},
                       {"dominant", to_string(d.dominant)},
                       {"seconds", seconds},
                       {"windows", windows}});
  }
  Json events = Json::array();
  for (const auto& e : r.events) {
    auto event = nlohmann::ordered_json::parse(to_json_line(e));
    if (r.time_base != TimeBase::kUtc && event.contains("time")) {
      event["time"] = time_text(r, e.time_unix_nanos);
    }
    events.push_back(std::move(event));
  }
  return {{"schema", "acco.analyze/1"},
          {"input", r.input},
          {"rounds", r.rounds},
          {"time_base", time_base_name(r.time_base)},
          {"start", time(r.start_unix_nanos)},
          {"end", time(r.end_unix_nanos)},
          {"window_seconds", r.window_seconds},
          {"devices", devices},
          {"events_total", r.events_total},
          {"events", events},
          {"notes", r.notes}};
}

}  // namespace acco::analyze
