#include "acco/sim/dag_file.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

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

struct Parsed {
  std::map<std::string, std::size_t> index;
  std::vector<sched::WorkTask> work;
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> out;  // per task: (to, bytes)
  std::vector<std::size_t> pending;                                   // predecessors
};

Status parse_tasks(const nlohmann::json& tasks, Parsed& p) {
  std::size_t columns = 0;
  for (const auto& t : tasks) {
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string()) {
      return fail(Errc::kInvalidArgument, fmt::format("a task has no \"name\": {}", t.dump()));
    }
    const auto name = t["name"].get<std::string>();
    if (!p.index.emplace(name, p.work.size()).second) {
      return fail(Errc::kInvalidArgument, fmt::format("task '{}' is named twice", name));
    }
    sched::WorkTask w;
    w.name = name;
    w.type = t.contains("type") && t["type"].is_string() ? t["type"].get<std::string>() : "task";
    const auto seconds = t.find("seconds");
    if (seconds == t.end()) {
      return fail(Errc::kInvalidArgument, fmt::format("task '{}' has no \"seconds\"", name));
    }
    const auto row = seconds->is_array() ? *seconds : nlohmann::json::array({*seconds});
    w.seconds.reserve(row.size());
    for (const auto& v : row) {
      ACCO_ASSIGN_OR_RETURN(const double x, non_negative(v, fmt::format("task '{}'", name)));
      w.seconds.push_back(x);
    }
    if (w.seconds.empty() || (columns != 0 && w.seconds.size() != columns)) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("task '{}' has {} times where the first task has {}", name,
                              w.seconds.size(), columns));
    }
    columns = w.seconds.size();
    p.work.push_back(std::move(w));
  }
  return {};
}

Status parse_edges(const nlohmann::json& edges, Parsed& p) {
  p.out.assign(p.work.size(), {});
  p.pending.assign(p.work.size(), 0);
  if (!edges.is_array()) {
    return fail(Errc::kInvalidArgument, "\"edges\" is not an array");
  }
  for (const auto& e : edges) {
    const auto end = [&](const char* key) -> Result<std::size_t> {
      const auto it = e.is_object() ? e.find(key) : e.end();
      if (it == e.end() || !it->is_string() || !p.index.contains(it->get<std::string>())) {
        return fail(Errc::kInvalidArgument,
                    fmt::format("edge {}: \"{}\" names no task", e.dump(), key));
      }
      return p.index.at(it->get<std::string>());
    };
    ACCO_ASSIGN_OR_RETURN(const auto from, end("from"));
    ACCO_ASSIGN_OR_RETURN(const auto to, end("to"));
    if (from == to) {
      return fail(Errc::kInvalidArgument, fmt::format("edge {} joins a task to itself", e.dump()));
    }
    ACCO_ASSIGN_OR_RETURN(const double bytes,
                          non_negative(e.contains("bytes") ? e["bytes"] : nlohmann::json(0),
                                       fmt::format("edge {} bytes", e.dump())));
    p.out[from].emplace_back(to, static_cast<std::size_t>(bytes));
    ++p.pending[to];
  }
  return {};
}

// Kahn's order, the file's order among ready tasks; kInvalidArgument naming a task on a cycle.
Result<std::vector<std::size_t>> topological(Parsed& p) {
  std::deque<std::size_t> ready;
  for (std::size_t t = 0; t < p.work.size(); ++t) {
    if (p.pending[t] == 0) {
      ready.push_back(t);
    }
  }
  std::vector<std::size_t> order;
  order.reserve(p.work.size());
  while (!ready.empty()) {
    const auto t = ready.front();
    ready.pop_front();
    order.push_back(t);
    std::vector<std::size_t> released;
    for (const auto& [to, bytes] : p.out[t]) {
      if (--p.pending[to] == 0) {
        released.push_back(to);
      }
    }
    std::sort(released.begin(), released.end());
    ready.insert(ready.end(), released.begin(), released.end());
  }
  for (std::size_t t = 0; t < p.work.size(); ++t) {
    if (p.pending[t] != 0) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("the edges make a cycle through task '{}'", p.work[t].name));
    }
  }
  return order;
}

}  // namespace

Result<sched::Workload> workload_from_dag(const nlohmann::json& dag) {
  if (!dag.is_object() || !dag.contains("schema") || dag["schema"] != "acco.dag/1") {
    return fail(Errc::kInvalidArgument, "not a task graph: \"schema\" is not \"acco.dag/1\"");
  }
  const auto tasks = dag.find("tasks");
  if (tasks == dag.end() || !tasks->is_array() || tasks->empty()) {
    return fail(Errc::kInvalidArgument, "\"tasks\" is not a non-empty array");
  }
  Parsed p;
  ACCO_RETURN_IF_ERROR(parse_tasks(*tasks, p));
  ACCO_RETURN_IF_ERROR(
      parse_edges(dag.contains("edges") ? dag["edges"] : nlohmann::json::array(), p));
  ACCO_ASSIGN_OR_RETURN(const auto order, topological(p));
  // Each edge a datum: written by its producer, read by its consumer.
  sched::Workload w;
  w.name = dag.contains("name") && dag["name"].is_string() ? dag["name"].get<std::string>() : "dag";
  std::vector<std::size_t> position(p.work.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    position[order[i]] = i;
  }
  w.tasks.reserve(order.size());
  for (const auto t : order) {
    w.tasks.push_back(p.work[t]);
  }
  for (std::size_t from = 0; from < p.work.size(); ++from) {
    for (const auto& [to, bytes] : p.out[from]) {
      const auto datum = w.data_bytes.size();
      w.data_bytes.push_back(bytes);
      w.tasks[position[from]].accesses.emplace_back(datum, sched::Access::kWrite);
      w.tasks[position[to]].accesses.emplace_back(datum, sched::Access::kRead);
    }
  }
  return w;
}

Result<nlohmann::json> dag_from_stg(std::string_view text, const std::string& name) {
  std::istringstream in{std::string(text)};
  std::string line;
  std::size_t number = 0;
  long long n = -1;  // tasks, dummies left out
  auto tasks = nlohmann::json::array();
  auto edges = nlohmann::json::array();
  const auto bad = [&](const std::string& what) {
    return fail(Errc::kInvalidArgument, fmt::format("line {}: {}", number, what));
  };
  while (std::getline(in, line)) {
    ++number;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) {
      continue;
    }
    if (line[first] == '#') {  // the information part
      break;
    }
    std::istringstream fields(line);
    std::vector<long long> v;
    long long x = 0;
    while (fields >> x) {
      v.push_back(x);
    }
    if (!fields.eof()) {
      return bad(fmt::format("'{}' is not whole numbers", line.substr(first)));
    }
    if (n < 0) {
      if (v.size() != 1 || v[0] < 0 || v[0] > 10'000'000) {
        return bad("the first line is not the number of tasks (0 to 10 million)");
      }
      n = v[0];
      continue;
    }
    const auto id = static_cast<long long>(tasks.size());
    if (id > n + 1) {
      return bad(fmt::format("a task after T{}, the exit task of {} tasks", n + 1, n));
    }
    if (v.size() < 3 || v[0] != id || v[1] < 0 || v[2] < 0 ||
        v.size() != static_cast<std::size_t>(v[2]) + 3) {
      return bad(fmt::format(
          "'{}' is not \"{} TIME PREDECESSORS IDS...\" with as many ids as predecessors",
          line.substr(first), id));
    }
    for (std::size_t i = 3; i < v.size(); ++i) {
      if (v[i] < 0 || v[i] > n + 1 || v[i] == id) {
        return bad(fmt::format("T{} names T{} as its predecessor", id, v[i]));
      }
      edges.push_back({{"from", fmt::format("T{}", v[i])}, {"to", fmt::format("T{}", id)}});
    }
    tasks.push_back(
        {{"name", fmt::format("T{}", id)}, {"seconds", static_cast<double>(v[1]) * 1e-3}});
  }
  if (n < 0) {
    return fail(Errc::kInvalidArgument, "no task graph: the first line is not the number of tasks");
  }
  if (static_cast<long long>(tasks.size()) != n + 2) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{} task lines for {} tasks and the two dummies (T0 to T{})",
                            tasks.size(), n, n + 1));
  }
  return nlohmann::json{
      {"schema", "acco.dag/1"}, {"name", name}, {"tasks", tasks}, {"edges", edges}};
}

Result<sched::Workload> load_dag(const std::string& path) {
  ACCO_ASSIGN_OR_RETURN(const auto text, core::read_text_file(path));
  if (const auto first = text.find_first_not_of(" \t\r\n");
      first != std::string::npos && text[first] != '{') {
    ACCO_ASSIGN_OR_RETURN(const auto dag,
                          dag_from_stg(text, std::filesystem::path(path).stem().string()), path);
    ACCO_ASSIGN_OR_RETURN(auto w, workload_from_dag(dag), path);
    return w;
  }
  const auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded()) {
    return fail(Errc::kInvalidArgument, fmt::format("{}: not JSON", path));
  }
  ACCO_ASSIGN_OR_RETURN(auto w, workload_from_dag(json), path);
  return w;
}

}  // namespace acco::sim
