#include "wire.hpp"

#include <chrono>
#include <cstdint>

#include <fmt/format.h>

namespace acco::sim {

nlohmann::json request_json(const Platform& p, const sched::Workload& w, const SimOptions& o) {
  nlohmann::json links = nlohmann::json::array();
  for (const auto& l : p.node.links) {
    links.push_back({l.name, l.kind, l.bytes_per_second, l.latency, l.shared});
  }
  nlohmann::json ports = nlohmann::json::array();
  for (const auto& port : p.node.ports) {
    ports.push_back({port.pci, port.name, port.bytes_per_second, port.from_host});
  }
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& t : w.tasks) {
    nlohmann::json accesses = nlohmann::json::array();
    for (const auto& [datum, mode] : t.accesses) {
      accesses.push_back({datum, std::string(sched::to_string(mode))});
    }
    tasks.push_back({t.type, t.name, t.flops, t.seconds, accesses});
  }
  return {{"node",
           {{"origin", p.node.origin},
            {"devices", p.node.devices},
            {"links", links},
            {"to_host", p.node.to_host},
            {"peer", p.node.peer},
            {"nic", p.node.nic},
            {"fabric_ports", p.node.fabric_ports},
            {"ports", ports},
            {"port_of", p.node.port_of},
            {"to_port", p.node.to_port},
            {"notes", p.node.notes}}},
          {"nodes", p.nodes},
          {"fabric",
           {static_cast<int>(p.fabric.kind), p.fabric.k, p.fabric.bytes_per_second,
            p.fabric.latency, p.fabric.oversubscription}},
          {"workload", {{"name", w.name}, {"data_bytes", w.data_bytes}, {"tasks", tasks}}},
          {"options",
           {std::string(sched::to_string(o.policy)), o.knobs.alpha, o.knobs.beta,
            o.knobs.sorted_decision, o.record, o.pinned, o.home, o.cooling, o.full_scan_devices,
            o.power_limit_watts, o.governor, o.task_overhead_seconds, o.mailbox_copies_devices}}};
}

Result<Request> request_from_json(const nlohmann::json& j) {
  try {
    Request r;
    const auto& node = j.at("node");
    r.platform.node.origin = node.at("origin").get<std::string>();
    r.platform.node.devices = node.at("devices").get<std::vector<std::string>>();
    for (const auto& l : node.at("links")) {
      r.platform.node.links.push_back({l.at(0).get<std::string>(), l.at(1).get<std::string>(),
                                       l.at(2).get<double>(), l.at(3).get<double>(),
                                       l.at(4).get<bool>()});
    }
    r.platform.node.to_host = node.at("to_host").get<std::vector<std::vector<int>>>();
    r.platform.node.peer = node.at("peer").get<std::vector<std::vector<std::vector<int>>>>();
    r.platform.node.nic = node.at("nic").get<int>();
    r.platform.node.fabric_ports = node.at("fabric_ports").get<int>();
    for (const auto& port : node.at("ports")) {
      r.platform.node.ports.push_back({port.at(0).get<std::string>(), port.at(1).get<std::string>(),
                                       port.at(2).get<double>(),
                                       port.at(3).get<std::vector<int>>()});
    }
    r.platform.node.port_of = node.at("port_of").get<std::vector<int>>();
    r.platform.node.to_port = node.at("to_port").get<std::vector<std::vector<int>>>();
    r.platform.node.notes = node.at("notes").get<std::vector<std::string>>();
    r.platform.nodes = j.at("nodes").get<int>();
    const auto& f = j.at("fabric");
    r.platform.fabric = {static_cast<FabricKind>(f.at(0).get<int>()), f.at(1).get<int>(),
                         f.at(2).get<double>(), f.at(3).get<double>(), f.at(4).get<int>()};
    const auto& w = j.at("workload");
    r.workload.name = w.at("name").get<std::string>();
    r.workload.data_bytes = w.at("data_bytes").get<std::vector<std::size_t>>();
    for (const auto& t : w.at("tasks")) {
      sched::WorkTask task;
      task.type = t.at(0).get<std::string>();
      task.name = t.at(1).get<std::string>();
      task.flops = t.at(2).get<double>();
      task.seconds = t.at(3).get<std::vector<double>>();
      for (const auto& a : t.at(4)) {
        ACCO_ASSIGN_OR_RETURN(const auto mode,
                              sched::access_from_string(a.at(1).get<std::string>()));
        const auto datum = a.at(0).get<std::size_t>();
        if (datum >= r.workload.data_bytes.size()) {
          return fail(Errc::kInvalidArgument, fmt::format("task {} names datum {} of {}", task.name,
                                                          datum, r.workload.data_bytes.size()));
        }
        task.accesses.emplace_back(datum, mode);
      }
      r.workload.tasks.push_back(std::move(task));
    }
    const auto& o = j.at("options");
    ACCO_ASSIGN_OR_RETURN(r.options.policy, sched::policy_from_string(o.at(0).get<std::string>()));
    r.options.knobs.alpha = o.at(1).get<double>();
    r.options.knobs.beta = o.at(2).get<double>();
    r.options.knobs.sorted_decision = o.at(3).get<bool>();
    r.options.record = o.at(4).get<bool>();
    r.options.pinned = o.at(5).get<std::vector<int>>();
    r.options.home = o.at(6).get<std::vector<int>>();
    r.options.cooling = o.at(7).get<std::vector<double>>();
    r.options.full_scan_devices = o.at(8).get<int>();
    r.options.power_limit_watts = o.at(9).get<double>();
    r.options.governor = o.at(10).get<std::string>();
    r.options.task_overhead_seconds = o.at(11).get<double>();
    r.options.mailbox_copies_devices = o.at(12).get<int>();
    return r;
  } catch (const nlohmann::json::exception& e) {
    return fail(Errc::kInvalidArgument, fmt::format("a simulation request: {}", e.what()));
  }
}

nlohmann::json records_json(const SimResult& r) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& t : r.task_records) {
    tasks.push_back({t.id, t.device, t.ready.count(), t.started.count(), t.finished.count(),
                     t.predicted.count(), t.transfer_bytes, t.transfer_time.count()});
  }
  nlohmann::json copies = nlohmann::json::array();
  for (const auto& c : r.transfer_records) {
    copies.push_back({c.handle, c.from, c.to, c.bytes, c.start.count(), c.end.count(), c.prefetch});
  }
  nlohmann::json loads = nlohmann::json::array();
  for (const auto& l : r.link_loads) {
    loads.push_back({l.node, l.kind, l.name, l.share});
  }
  return {{"tasks", std::move(tasks)}, {"transfers", std::move(copies)}, {"links", loads}};
}

Status read_records(const nlohmann::json& j, const sched::Workload& w, SimResult& r) {
  using std::chrono::nanoseconds;
  try {
    for (const auto& t : j.at("tasks")) {
      sched::TaskRecord task;
      task.id = t.at(0).get<std::size_t>();
      if (task.id >= w.tasks.size()) {
        return fail(Errc::kInvalidArgument,
                    fmt::format("a task record names task {} of {}", task.id, w.tasks.size()));
      }
      task.type = w.tasks[task.id].type;
      task.name = w.tasks[task.id].name;
      task.device = t.at(1).get<int>();
      task.status = sched::TaskStatus::kDone;
      task.ready = nanoseconds(t.at(2).get<std::int64_t>());
      task.submitted = task.ready;
      task.started = nanoseconds(t.at(3).get<std::int64_t>());
      task.finished = nanoseconds(t.at(4).get<std::int64_t>());
      task.predicted = nanoseconds(t.at(5).get<std::int64_t>());
      task.transfer_bytes = t.at(6).get<std::uint64_t>();
      task.transfer_time = nanoseconds(t.at(7).get<std::int64_t>());
      r.task_records.push_back(std::move(task));
    }
    for (const auto& c : j.at("transfers")) {
      sched::TransferRecord copy;
      copy.handle = c.at(0).get<std::size_t>();
      copy.from = c.at(1).get<int>();
      copy.to = c.at(2).get<int>();
      copy.bytes = c.at(3).get<std::uint64_t>();
      copy.start = nanoseconds(c.at(4).get<std::int64_t>());
      copy.end = nanoseconds(c.at(5).get<std::int64_t>());
      copy.prefetch = c.at(6).get<bool>();
      r.transfer_records.push_back(copy);
    }
    for (const auto& l : j.at("links")) {
      r.link_loads.push_back({l.at(0).get<int>(), l.at(1).get<std::string>(),
                              l.at(2).get<std::string>(), l.at(3).get<double>()});
    }
    return {};
  } catch (const nlohmann::json::exception& e) {
    return fail(Errc::kInvalidArgument, fmt::format("a simulation record: {}", e.what()));
  }
}

}  // namespace acco::sim
