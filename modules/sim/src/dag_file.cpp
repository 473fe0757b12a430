#include "acco/sim/dag_file.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/core/file.hpp"

namespace acco::sim {
namespace {

Result<double> non_negative(const nlohmann::json& v, const std::string& what) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: {} is not a number of 0 or more", what, v.dump()));
  }
  return v.get<double>();
}

}  // namespace

Result<sched::Workload> workload_from_dag(const nlohmann::json& dag) {
  if (!dag.is_object() || dag.value("schema", "") != "acco.dag/1") {
    return fail(Errc::kInvalidArgument, "not a task graph: \"schema\" is not \"acco.dag/1\"");
  }
  const auto tasks = dag.find("tasks");
  if (tasks == dag.end() || !tasks->is_array() || tasks->empty()) {
    return fail(Errc::kInvalidArgument, "\"tasks\" is not a non-empty array");
  }
  std::map<std::string, std::size_t> index;
  std::vector<sched::WorkTask> work;
  std::size_t columns = 0;
  for (const auto& t : *tasks) {
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string()) {
      return fail(Errc::kInvalidArgument, fmt::format("a task has no \"name\": {}", t.dump()));
    }
    const auto name = t["name"].get<std::string>();
    if (!index.emplace(name, work.size()).second) {
      return fail(Errc::kInvalidArgument, fmt::format("task '{}' is named twice", name));
    }
    sched::WorkTask w;
    w.name = name;
    w.type = t.value("type", "task");
    const auto seconds = t.find("seconds");
    if (seconds == t.end()) {
      return fail(Errc::kInvalidArgument, fmt::format("task '{}' has no \"seconds\"", name));
    }
    for (const auto& s : seconds->is_array() ? *seconds : nlohmann::json::array({*seconds})) {
      ACCO_ASSIGN_OR_RETURN(const double v, non_negative(s, fmt::format("task '{}'", name)));
      w.seconds.push_back(v);
    }
    if (w.seconds.empty() || (columns != 0 && w.seconds.size() != columns)) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("task '{}' has {} times where the first task has {}", name,
                              w.seconds.size(), columns));
    }
    columns = w.seconds.size();
    work.push_back(std::move(w));
  }
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> out(work.size());  // (to, bytes)
  std::vector<std::size_t> pending(work.size(), 0);
  for (const auto& e : dag.value("edges", nlohmann::json::array())) {
    const auto end = [&](const char* key) -> Result<std::size_t> {
      const auto it = e.find(key);
      if (it == e.end() || !it->is_string() || index.count(it->get<std::string>()) == 0) {
        return fail(Errc::kInvalidArgument,
                    fmt::format("edge {}: \"{}\" names no task", e.dump(), key));
      }
      return index.at(it->get<std::string>());
    };
    ACCO_ASSIGN_OR_RETURN(const auto from, end("from"));
    ACCO_ASSIGN_OR_RETURN(const auto to, end("to"));
    if (from == to) {
      return fail(Errc::kInvalidArgument, fmt::format("edge {} joins a task to itself", e.dump()));
    }
    ACCO_ASSIGN_OR_RETURN(const double bytes, non_negative(e.value("bytes", nlohmann::json(0)),
                                                           fmt::format("edge {} bytes", e.dump())));
    out[from].emplace_back(to, static_cast<std::size_t>(bytes));
    ++pending[to];
  }
  // Kahn's order, the file's order among ready tasks.
  std::deque<std::size_t> ready;
  for (std::size_t t = 0; t < work.size(); ++t) {
    if (pending[t] == 0) {
      ready.push_back(t);
    }
  }
  std::vector<std::size_t> order;
  while (!ready.empty()) {
    const auto t = ready.front();
    ready.pop_front();
    order.push_back(t);
    std::vector<std::size_t> released;
    for (const auto& [to, bytes] : out[t]) {
      if (--pending[to] == 0) {
        released.push_back(to);
      }
    }
    std::sort(released.begin(), released.end());
    ready.insert(ready.end(), released.begin(), released.end());
  }
  if (order.size() != work.size()) {
    for (std::size_t t = 0; t < work.size(); ++t) {
      if (pending[t] != 0) {
        return fail(Errc::kInvalidArgument,
                    fmt::format("the edges make a cycle through task '{}'", work[t].name));
      }
    }
  }
  // Each edge a datum: written by its producer, read by its consumer.
  sched::Workload w;
  w.name = dag.value("name", "dag");
  std::vector<std::size_t> position(work.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    position[order[i]] = i;
  }
  std::vector<sched::WorkTask> sorted;
  for (const auto t : order) {
    sorted.push_back(work[t]);
  }
  for (std::size_t from = 0; from < work.size(); ++from) {
    for (const auto& [to, bytes] : out[from]) {
      const auto datum = w.data_bytes.size();
      w.data_bytes.push_back(bytes);
      sorted[position[from]].accesses.emplace_back(datum, sched::Access::kWrite);
      sorted[position[to]].accesses.emplace_back(datum, sched::Access::kRead);
    }
  }
  w.tasks = std::move(sorted);
  return w;
}

Result<sched::Workload> load_dag(const std::string& path) {
  ACCO_ASSIGN_OR_RETURN(const auto text, core::read_text_file(path));
  const auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded()) {
    return fail(Errc::kInvalidArgument, fmt::format("{}: not JSON", path));
  }
  ACCO_ASSIGN_OR_RETURN(auto w, workload_from_dag(json), path);
  return w;
}

}  // namespace acco::sim
