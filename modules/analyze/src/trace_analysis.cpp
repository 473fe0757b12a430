#include "acco/analyze/trace_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "acco/core/json.hpp"
#include "acco/core/units.hpp"
#include "acco/report/document.hpp"
#include "acco/report/table.hpp"

namespace acco::analyze {
namespace {

using Interval = std::pair<double, double>;  // [start, end) in microseconds

std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const auto& i : v) {
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

double length(const std::vector<Interval>& v) {
  double sum = 0;
  for (const auto& [a, b] : v) {
    sum += b - a;
  }
  return sum;
}

// [start, end) minus the (merged) intervals.
std::vector<Interval> complement(const std::vector<Interval>& busy, double start, double end) {
  std::vector<Interval> out;
  double at = start;
  for (const auto& [a, b] : busy) {
    if (a > at) {
      out.emplace_back(at, std::min(a, end));
    }
    at = std::max(at, b);
  }
  if (at < end) {
    out.emplace_back(at, end);
  }
  return out;
}

double overlap(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  double sum = 0;
  std::size_t j = 0;
  for (const auto& [s, e] : a) {
    while (j < b.size() && b[j].second <= s) {
      ++j;
    }
    for (std::size_t k = j; k < b.size() && b[k].first < e; ++k) {
      sum += std::max(0.0, std::min(e, b[k].second) - std::max(s, b[k].first));
    }
  }
  return sum;
}

constexpr double kIdleShare = 0.2;      // below this a device counts as busy
constexpr double kTransferShare = 0.5;  // of its idle time, for transfer-bound gaps

// The times of a trace's events, in microseconds: finite and within a century.
constexpr double kMaxTraceMicros = 3.2e15;

Result<TraceReport> analyze_checked(const nlohmann::json& trace, const std::string& name) {
  const auto bad = [&](const std::string& why) {
    return fail(Errc::kInvalidArgument, fmt::format("{}: {}", name, why));
  };
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array()) {
    return bad("not a Chrome trace (expected an object with traceEvents)");
  }
  TraceReport r;
  r.input = name;
  const auto& other = trace.value("otherData", nlohmann::json::object());
  if (other.value("schema", "") != "acco.trace/1") {
    return bad(
        "not an acco trace (otherData.schema is not acco.trace/1; acco schedule --trace "
        "writes one)");
  }
  r.policy = other.value("policy", "");
  const double elapsed_us = other.value("elapsed_us", 0.0);
  if (!(elapsed_us >= 0 && elapsed_us <= kMaxTraceMicros)) {
    return bad(fmt::format("otherData.elapsed_us {} is not a duration", elapsed_us));
  }
  std::map<int, std::string> device_names;    // devices: tid -> name
  std::map<int, std::string> transfer_names;  // transfers: tid -> "to <name>"
  std::map<int, std::vector<Interval>> tasks;
  std::map<int, std::vector<Interval>> transfers;
  std::map<int, double> bytes;
  double first = 1e300;
  for (const auto& e : trace["traceEvents"]) {
    if (!e.is_object()) {
      continue;
    }
    const int pid = e.value("pid", 0);
    const int tid = e.value("tid", 0);
    const std::string ph = e.value("ph", "");
    if (ph == "M" && e.value("name", "") == "thread_name") {
      const std::string thread = e.value("args", nlohmann::json::object()).value("name", "");
      (pid == 1 ? device_names : transfer_names)[tid] = thread;
    } else if (ph == "X" && e.contains("ts") && e.contains("dur") && e["ts"].is_number() &&
               e["dur"].is_number()) {
      const double ts = e["ts"].get<double>();
      const double dur = e["dur"].get<double>();
      if (!(std::abs(ts) <= kMaxTraceMicros && dur >= 0 && dur <= kMaxTraceMicros)) {
        return bad(fmt::format("an event's ts {} or dur {} is not a time (microseconds, dur >= 0)",
                               ts, dur));
      }
      first = std::min(first, ts);
      if (pid == 1) {
        tasks[tid].emplace_back(ts, ts + dur);
      } else if (pid == 2) {
        transfers[tid].emplace_back(ts, ts + dur);
        bytes[tid] += e.value("args", nlohmann::json::object()).value("bytes", 0.0);
      }
    }
  }
  if (device_names.empty()) {
    return bad("the trace names no device thread");
  }
  if (first > 1e299) {
    first = 0;
  }
  const double start = first;
  const double end = start + std::max(elapsed_us, 0.0);
  r.elapsed_seconds = elapsed_us / 1e6;
  for (const auto& [tid, dev] : device_names) {
    TraceDevice d;
    d.name = dev;
    const auto busy = merged(tasks[tid]);
    d.tasks = static_cast<int>(tasks[tid].size());
    d.busy_seconds = length(busy) / 1e6;
    const auto idle = complement(busy, start, end);
    d.idle_seconds = length(idle) / 1e6;
    // The transfer thread whose name is "to <device name>".
    std::vector<Interval> in;
    for (const auto& [ttid, tname] : transfer_names) {
      if (tname == "to " + dev) {
        in = merged(transfers[ttid]);
        d.transfer_bytes = bytes[ttid];
      }
    }
    d.transfer_seconds = length(in) / 1e6;
    d.idle_with_transfer_seconds = overlap(idle, in) / 1e6;
    const double span = r.elapsed_seconds > 0 ? r.elapsed_seconds : d.busy_seconds + d.idle_seconds;
    const double idle_share = span > 0 ? d.idle_seconds / span : 0;
    const double waiting = d.idle_seconds > 0 ? d.idle_with_transfer_seconds / d.idle_seconds : 0;
    if (d.tasks == 0) {
      d.verdict = "unused";
      d.why = "no task ran here";
    } else if (idle_share < kIdleShare) {
      d.verdict = "busy";
      d.why = fmt::format("computed {} of the run", units::format_percent(1 - idle_share));
    } else if (waiting >= kTransferShare) {
      d.verdict = "transfer-bound gaps";
      d.why = fmt::format(
          "idle {} of the run, and a transfer into it was in flight for {} of "
          "that idle time: the gaps are data movement",
          units::format_percent(idle_share), units::format_percent(waiting));
    } else {
      d.verdict = "dependency gaps";
      d.why = fmt::format(
          "idle {} of the run with a transfer in flight for only {} of it: the "
          "gaps are dependencies or placement, not data movement",
          units::format_percent(idle_share), units::format_percent(waiting));
    }
    r.devices.push_back(std::move(d));
  }
  return r;
}

}  // namespace

// A field of another type ("pid": "x") is a malformed file.
Result<TraceReport> analyze_trace(const nlohmann::json& trace, const std::string& name) {
  return core::catch_type_errors(name + ": a field of the trace",
                                 [&] { return analyze_checked(trace, name); });
}

report::Document trace_report(const TraceReport& r) {
  report::Document doc;
  // The heading line, then a blank line before the table.
  doc.add(report::Preformatted{
      fmt::format("acco analyze: {}: acco trace of policy {}, {} run, {} device(s)\n\n", r.input,
                  r.policy.empty() ? "?" : r.policy, units::format_seconds(r.elapsed_seconds),
                  r.devices.size())});
  std::vector<std::vector<std::string>> rows = {
      {"DEVICE", "TASKS", "BUSY", "IDLE", "IDLE WITH TRANSFER IN", "MOVED IN", "VERDICT", "WHY"}};
  for (const auto& d : r.devices) {
    rows.push_back(
        {d.name, std::to_string(d.tasks), units::format_seconds(d.busy_seconds),
         units::format_seconds(d.idle_seconds), units::format_seconds(d.idle_with_transfer_seconds),
         units::format_bytes(static_cast<std::uint64_t>(d.transfer_bytes)), d.verdict, d.why});
  }
  doc.add(report::plain_table(rows, report::TableStyle::layout(2, 1)));
  return doc;
}

nlohmann::ordered_json to_json(const TraceReport& r) {
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const auto& d : r.devices) {
    devices.push_back({{"device", d.name},
                       {"tasks", d.tasks},
                       {"busy_seconds", d.busy_seconds},
                       {"idle_seconds", d.idle_seconds},
                       {"idle_with_transfer_seconds", d.idle_with_transfer_seconds},
                       {"transfer_seconds", d.transfer_seconds},
                       {"transfer_bytes", d.transfer_bytes},
                       {"verdict", d.verdict},
                       {"why", d.why}});
  }
  return {{"schema", "acco.analyze-trace/1"},
          {"input", r.input},
          {"policy", r.policy},
          {"elapsed_seconds", r.elapsed_seconds},
          {"devices", devices}};
}

}  // namespace acco::analyze
