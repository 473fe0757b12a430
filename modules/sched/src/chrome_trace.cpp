#include <set>
#include <string>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/core/file.hpp"
#include "acco/core/result.hpp"
#include "acco/sched/record.hpp"

namespace acco::sched {
namespace {

// Process ids of the two groups of lanes in the viewer.
constexpr int kDevicesPid = 1;
constexpr int kTransfersPid = 2;

// The trace format's unit is the microsecond; fractions keep nanosecond resolution.
double us(std::chrono::nanoseconds t) {
  return static_cast<double>(t.count()) / 1e3;
}

std::string node_name(NodeId node) {
  ACCO_CHECK(node >= kHostNode);
  return node == kHostNode ? "host" : fmt::format("dev{}", node - 1);
}

std::string device_name(const RunRecord& run, int device) {
  for (const auto& d : run.devices) {
    if (d.device == device) {
      return d.name;
    }
  }
  return fmt::format("dev{}", device);
}

nlohmann::json metadata(const char* what, int pid, int tid, const std::string& name) {
  return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

nlohmann::json task_event(const TaskRecord& task) {
  nlohmann::json args = {
      {"id", task.id},
      {"type", task.type},
      {"priority", task.priority},
      {"queue_wait_us", us(task.started - task.ready)},
      {"transfer_bytes", task.transfer_bytes},
      {"transfer_us", us(task.transfer_time)},
      {"predicted_us",
       task.predicted.count() > 0 ? nlohmann::json(us(task.predicted)) : nlohmann::json(nullptr)},
      {"reason", task.reason},
      {"status", to_string(task.status)},
  };
  if (task.status == TaskStatus::kFailed) {
    args["error"] = task.error;
  }
  return {{"ph", "X"},
          {"pid", kDevicesPid},
          {"tid", task.device},
          {"ts", us(task.started)},
          {"dur", us(task.finished - task.started)},
          {"name", task.name.empty() ? task.type : task.name},
          {"cat", task.type},
          {"args", std::move(args)}};
}

nlohmann::json transfer_event(const TransferRecord& t) {
  nlohmann::json args = {
      {"bytes", t.bytes}, {"handle", t.handle}, {"prefetch", t.prefetch}, {"eviction", t.eviction}};
  if (!t.error.empty()) {
    args["error"] = t.error;
  }
  return {{"ph", "X"},
          {"pid", kTransfersPid},
          {"tid", t.to},
          {"ts", us(t.start)},
          {"dur", us(t.end - t.start)},
          {"name", fmt::format("{} -> {}{}", node_name(t.from), node_name(t.to),
                               t.error.empty() ? "" : " (failed)")},
          {"cat", "transfer"},
          {"args", std::move(args)}};
}

}  // namespace

const char* to_string(TaskStatus status) {
  switch (status) {
    case TaskStatus::kPending:
      return "pending";
    case TaskStatus::kDone:
      return "done";
    case TaskStatus::kFailed:
      return "failed";
  }
  ACCO_CHECK(false);
  return "";
}

nlohmann::json chrome_trace(const RunRecord& run) {
  auto events = nlohmann::json::array();
  events.push_back(metadata("process_name", kDevicesPid, 0, "devices"));
  for (const auto& d : run.devices) {
    events.push_back(metadata("thread_name", kDevicesPid, d.device, d.name));
  }
  // One lane per destination that received anything, in node order.
  std::set<NodeId> destinations;
  for (const auto& t : run.transfers) {
    destinations.insert(t.to);
  }
  events.push_back(metadata("process_name", kTransfersPid, 0, "transfers"));
  for (const auto node : destinations) {
    events.push_back(
        metadata("thread_name", kTransfersPid, node,
                 node == kHostNode ? std::string("to host") : "to " + device_name(run, node - 1)));
  }
  for (const auto& task : run.tasks) {
    if (task.device >= 0 && task.status != TaskStatus::kPending) {
      events.push_back(task_event(task));
    }
  }
  for (const auto& t : run.transfers) {
    events.push_back(transfer_event(t));
  }
  // A device that failed: an instant event on its lane, with why (its tasks moved elsewhere;
  // their reasons say "re-placed").
  for (const auto& d : run.devices) {
    if (d.failed && d.failed_at.count() >= 0) {
      events.push_back({{"ph", "i"},
                        {"s", "t"},
                        {"pid", kDevicesPid},
                        {"tid", d.device},
                        {"ts", us(d.failed_at)},
                        {"name", "device failed"},
                        {"cat", "failure"},
                        {"args", {{"why", d.failure}}}});
    }
  }
  // The trace format has no place for a version; viewers show otherData as metadata.
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ms"},
          {"otherData",
           {{"schema", "acco.trace/1"}, {"policy", run.policy}, {"elapsed_us", us(run.elapsed)}}}};
}

Result<std::string> write_chrome_trace(const RunRecord& run, std::string_view name,
                                       const std::string& path) {
  ACCO_RETURN_IF_ERROR(core::write_output_file(path, chrome_trace(run).dump()));
  return fmt::format("acco: trace of {} written to {}\n", name, path);
}

}  // namespace acco::sched
