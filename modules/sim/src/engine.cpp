#include "engine.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <simgrid/s4u.hpp>

#include "acco/power/simulated_device.hpp"
#include "acco/sched/schedule_math.hpp"
#include "acco/sim/simulate.hpp"

#include "copies.hpp"
#include "governed.hpp"
#include "wire.hpp"

namespace acco::sim {
namespace {

namespace sg4 = simgrid::s4u;

// A host computes 1e9 "flops" a second: a task of s seconds is an execution of s x 1e9.
constexpr double kHostSpeed = 1e9;

std::chrono::nanoseconds nanos(double seconds) {
  return std::chrono::nanoseconds(std::llround(seconds * 1e9));
}

std::string device_name(const Platform& p, int d) {
  const int n = static_cast<int>(p.node.devices.size());
  return fmt::format("n{} GPU{}", d / n, d % n);
}

// The SimGrid platform: one zone per node (its GPUs, its host memory and, with several nodes, a
// router towards the fabric), routes from the node model; the nodes on the fabric's zone.
struct Built {
  std::vector<sg4::Host*> devices;  // global device index
  std::vector<sg4::Host*> memory;   // per node
};

sg4::NetZone* build_node(const Platform& p, int index, Built& built,
                         simgrid::kernel::routing::NetPoint** gateway, const sg4::NetZone* parent) {
  const auto& node = p.node;
  auto* zone = sg4::create_full_zone(fmt::format("n{}", index));
  if (parent != nullptr) {
    zone->set_parent(parent);  // before its links: they take the parent's network model
  }
  std::vector<sg4::Link*> links;
  for (const auto& l : node.links) {
    const auto name = fmt::format("n{} {}", index, l.name);
    links.push_back(l.shared ? zone->create_split_duplex_link(name, l.bytes_per_second)
                                   ->set_latency(l.latency)
                                   ->seal()
                             : zone->create_link(name, l.bytes_per_second)
                                   ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
                                   ->set_latency(l.latency)
                                   ->seal());
  }
  const auto in_route = [&](int l, sg4::LinkInRoute::Direction direction) {
    const auto i = static_cast<std::size_t>(l);
    return node.links[i].shared ? sg4::LinkInRoute(links[i], direction)
                                : sg4::LinkInRoute(links[i]);
  };
  const auto up = [&](int l) { return in_route(l, sg4::LinkInRoute::Direction::UP); };
  const auto down = [&](int l) { return in_route(l, sg4::LinkInRoute::Direction::DOWN); };
  std::vector<sg4::Host*> hosts;
  for (std::size_t i = 0; i < node.devices.size(); ++i) {
    hosts.push_back(zone->create_host(fmt::format("n{} GPU{}", index, i), kHostSpeed)->seal());
    built.devices.push_back(hosts.back());
  }
  auto* memory = zone->create_host(fmt::format("n{} memory", index), kHostSpeed)->seal();
  built.memory.push_back(memory);
  simgrid::kernel::routing::NetPoint* gw = nullptr;
  if (gateway != nullptr) {
    gw = zone->create_router(fmt::format("n{} gw", index));
    *gateway = gw;
  }
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    std::vector<sg4::LinkInRoute> to_memory;
    for (const int l : node.to_host[i]) {
      to_memory.push_back(up(l));
    }
    zone->add_route(hosts[i]->get_netpoint(), memory->get_netpoint(), nullptr, nullptr, to_memory,
                    true);
    if (gw != nullptr) {
      auto out = to_memory;
      if (node.nic >= 0) {
        out.push_back(up(node.nic));
      }
      zone->add_route(hosts[i]->get_netpoint(), gw, nullptr, nullptr, out, true);
    }
    for (std::size_t j = i + 1; j < hosts.size(); ++j) {
      // i's links up to the common switch, then j's down (the peer list holds both in order).
      std::vector<sg4::LinkInRoute> between;
      const auto& mine = node.to_host[i];
      for (const int l : node.peer[i][j]) {
        const bool ours =
            std::find(mine.begin(), mine.end(), l) != mine.end() ||
            node.links[static_cast<std::size_t>(l)].name == fmt::format("nvlink GPU{}", i);
        between.push_back(ours ? up(l) : down(l));
      }
      zone->add_route(hosts[i]->get_netpoint(), hosts[j]->get_netpoint(), nullptr, nullptr, between,
                      true);
    }
  }
  if (gw != nullptr) {
    std::vector<sg4::LinkInRoute> out;
    if (node.nic >= 0) {
      out.push_back(up(node.nic));
    }
    zone->add_route(memory->get_netpoint(), gw, nullptr, nullptr, out, true);
  }
  return zone;
}

// Rail-optimized: one full zone per group of nodes (every host's route to every other host of
// the group is route()'s, so a GPU sends through its own port, or its PXN relay's), a router
// per group as its way to the spines, and the groups on a star whose centre is the spines.
struct RailZone {
  sg4::NetZone* zone = nullptr;
  simgrid::kernel::routing::NetPoint* gateway = nullptr;
};

RailZone build_group(const Platform& p, int group, Built& built, const sg4::NetZone* parent) {
  const int n = static_cast<int>(p.node.devices.size());
  const int first = group * p.fabric.k;
  const int last = std::min(p.nodes, first + p.fabric.k);
  RailZone g;
  g.zone = sg4::create_full_zone(fmt::format("g{}", group));
  if (parent != nullptr) {
    g.zone->set_parent(parent);
  }
  const int per_node = p.links_per_node();
  const auto make_link = [&](const Link& l, const std::string& name) {
    return l.shared ? g.zone->create_split_duplex_link(name, l.bytes_per_second)
                          ->set_latency(l.latency)
                          ->seal()
                    : g.zone->create_link(name, l.bytes_per_second)
                          ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
                          ->set_latency(l.latency)
                          ->seal();
  };
  std::map<std::pair<int, int>, std::pair<sg4::Link*, bool>> links;  // (node, link) -> shared
  for (int node = first; node < last; ++node) {
    for (int i = 0; i < per_node; ++i) {
      const Link l = p.link(i);
      links[{node, i}] = {make_link(l, fmt::format("n{} {}", node, l.name)), l.shared};
    }
  }
  const int rails = static_cast<int>(p.node.ports.size());
  for (int r = 0; r < rails; ++r) {
    const Link l = p.spine_link(group * rails + r);
    links[{-1, group * rails + r}] = {make_link(l, l.name), true};
  }
  const auto in_route = [&](const std::vector<RouteHop>& hops) {
    std::vector<sg4::LinkInRoute> out;
    out.reserve(hops.size());
    for (const auto& hop : hops) {
      const auto& [link, shared] = links.at({hop.node, hop.link});
      out.push_back(shared ? sg4::LinkInRoute(link, hop.up ? sg4::LinkInRoute::Direction::UP
                                                           : sg4::LinkInRoute::Direction::DOWN)
                           : sg4::LinkInRoute(link));
    }
    return out;
  };
  std::vector<std::pair<int, sg4::Host*>> hosts;  // (device index, or -1 - node; host)
  for (int node = first; node < last; ++node) {
    for (int i = 0; i < n; ++i) {
      auto* host = g.zone->create_host(fmt::format("n{} GPU{}", node, i), kHostSpeed)->seal();
      built.devices.push_back(host);
      hosts.emplace_back(node * n + i, host);
    }
    auto* memory = g.zone->create_host(fmt::format("n{} memory", node), kHostSpeed)->seal();
    built.memory.push_back(memory);
    hosts.emplace_back(-1 - node, memory);
  }
  for (const auto& [from, src] : hosts) {
    for (const auto& [to, dst] : hosts) {
      if (from != to) {
        g.zone->add_route(src->get_netpoint(), dst->get_netpoint(), nullptr, nullptr,
                          in_route(route(p, from, to)), false);
      }
    }
  }
  if (parent != nullptr) {
    g.gateway = g.zone->create_router(fmt::format("g{} gw", group));
    for (const auto& [from, src] : hosts) {
      g.zone->add_route(src->get_netpoint(), g.gateway, nullptr, nullptr,
                        in_route(route_out(p, from)), true);
    }
  }
  return g;
}

void build_rails(const Platform& p, Built& built) {
  const int groups = p.groups();
  if (groups == 1) {
    build_group(p, 0, built, nullptr).zone->seal();
    return;
  }
  auto* spines = sg4::create_star_zone("spines");
  for (int g = 0; g < groups; ++g) {
    const auto group = build_group(p, g, built, spines);
    group.zone->seal();
    spines->add_route(group.zone->get_netpoint(), nullptr, group.gateway, nullptr, {}, true);
  }
  spines->seal();
}

Built build_platform(const Platform& p) {
  Built built;
  if (p.rails()) {
    build_rails(p, built);
    return built;
  }
  if (p.nodes == 1) {
    build_node(p, 0, built, nullptr, nullptr)->seal();
    return built;
  }
  if (p.fabric.kind == FabricKind::kSingleSwitch) {
    auto* fabric = sg4::create_star_zone("fabric");
    for (int i = 0; i < p.nodes; ++i) {
      simgrid::kernel::routing::NetPoint* gw = nullptr;
      auto* node = build_node(p, i, built, &gw, fabric);
      node->seal();
      auto* link = fabric
                       ->create_split_duplex_link(fmt::format("n{} fabric", i),
                                                  p.fabric_link_bytes_per_second())
                       ->set_latency(p.fabric.latency)
                       ->seal();
      fabric->add_route(node->get_netpoint(), nullptr, gw, nullptr,
                        {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
    }
    fabric->seal();
    return built;
  }
  // Two levels: K/2 nodes under each leaf switch, K/2 spines above every leaf (fewer with an
  // oversubscription: each leaf's up-links are K/2 over it).
  const unsigned half = static_cast<unsigned>(p.fabric.k / 2);
  const unsigned leaves = static_cast<unsigned>(p.nodes) / half;
  sg4::ClusterCallbacks callbacks(
      [&](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long id) {
        simgrid::kernel::routing::NetPoint* gw = nullptr;
        auto* node = build_node(p, static_cast<int>(id), built, &gw, zone);
        node->seal();
        return std::make_pair(node->get_netpoint(), gw);
      });
  sg4::create_fatTree_zone(
      "fabric", nullptr,
      sg4::FatTreeParams(2, {half, leaves},
                         {1, half / static_cast<unsigned>(p.fabric.oversubscription)}, {1, 1}),
      callbacks, p.fabric_link_bytes_per_second(), p.fabric.latency,
      sg4::Link::SharingPolicy::SPLITDUPLEX)
      ->seal();
  return built;
}

struct Task {
  std::size_t pending = 0;  // predecessors not yet done
  std::vector<std::size_t> next;
  double priority = 0;  // higher first
  int planned = -1;     // HEFT's device
  bool moved = false;   // placed off its planned device, which the governor closed
};

class Simulation {
 public:
  Simulation(const Platform& p, const sched::Workload& w, const SimOptions& o)
      : p_(p), w_(w), o_(o), policy_(sched::make_policy(o.policy)) {}

  Result<SimResult> run() {
    const auto devices = static_cast<std::size_t>(p_.devices());
    ACCO_RETURN_IF_ERROR(check_options());
    ACCO_RETURN_IF_ERROR(make_thermal());
    planning_ = policy_->plans_graphs() && o_.pinned.empty();
    narrowing_ = o_.policy == sched::PolicyKind::kDmda &&
                 devices > static_cast<std::size_t>(std::max(0, o_.full_scan_devices)) &&
                 std::all_of(w_.tasks.begin(), w_.tasks.end(),
                             [](const sched::WorkTask& task) { return task.seconds.size() == 1; });
    for (std::size_t d = 0; narrowing_ && d < devices; ++d) {
      by_available_.insert({0.0, static_cast<int>(d)});
    }
    result_.policy = std::string(sched::to_string(o_.policy));
    ACCO_RETURN_IF_ERROR(prepare(), "sim");
    built_ = build_platform(p_);
    copies_ = std::make_unique<Copies>(
        built_.devices,
        devices >= static_cast<std::size_t>(std::max(0, o_.mailbox_copies_devices)));
    queues_.assign(devices, {});
    available_.assign(devices, 0);
    idle_.assign(devices, false);
    ready_at_.assign(w_.tasks.size(), 0);
    result_.devices.resize(devices);
    for (std::size_t d = 0; d < devices; ++d) {
      result_.devices[d].name = device_name(p_, static_cast<int>(d));
      wake_.push_back(sg4::Semaphore::create(0));
    }
    // Every datum starts in host memory, spread over the nodes.
    valid_.resize(w_.data_bytes.size());
    for (std::size_t i = 0; i < valid_.size(); ++i) {
      valid_[i] = {-1 - (o_.home.empty() ? static_cast<int>(i % static_cast<std::size_t>(p_.nodes))
                                         : o_.home[i])};
    }
    for (std::size_t d = 0; d < devices; ++d) {
      sg4::Actor::create(result_.devices[d].name, built_.devices[d],
                         [this, d] { worker(static_cast<int>(d)); });
    }
    if (governed_) {
      sg4::Actor::create("governor", built_.memory[0], [this] { govern(); });
    }
    sg4::Actor::create("release", built_.memory[0], [this] {
      for (std::size_t t = 0; t < tasks_.size(); ++t) {
        if (tasks_[t].pending == 0) {
          ready(t, -1);
        }
      }
    });
    sg4::Engine::get_instance()->run();
    if (done_ != w_.tasks.size()) {
      return fail(Errc::kInternal, fmt::format("the simulation stopped with {} of {} tasks done",
                                               done_, w_.tasks.size()));
    }
    finish();
    return result_;
  }

 private:
  // The options against the workload and the platform: one time per task or per device, pins
  // and homes within range, a cooling factor per device.
  Status check_options() const {
    const auto devices = static_cast<std::size_t>(p_.devices());
    if (!(o_.task_overhead_seconds >= 0 && o_.task_overhead_seconds <= 1)) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("a task overhead of {} s is not 0 to 1 s", o_.task_overhead_seconds));
    }
    for (const auto& t : w_.tasks) {
      if (t.seconds.size() != 1 && t.seconds.size() != devices) {
        return fail(Errc::kInvalidArgument, fmt::format("task {} has {} times for {} devices",
                                                        t.name, t.seconds.size(), devices));
      }
    }
    if (!o_.pinned.empty() && o_.pinned.size() != w_.tasks.size()) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("{} pins for {} tasks", o_.pinned.size(), w_.tasks.size()));
    }
    for (const int d : o_.pinned) {
      if (d < -1 || d >= static_cast<int>(devices)) {
        return fail(Errc::kInvalidArgument,
                    fmt::format("a task pinned to device {} of {}", d, devices));
      }
    }
    if (!o_.home.empty() && o_.home.size() != w_.data_bytes.size()) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("{} homes for {} data", o_.home.size(), w_.data_bytes.size()));
    }
    for (const int n : o_.home) {
      if (n < 0 || n >= p_.nodes) {
        return fail(Errc::kInvalidArgument, fmt::format("a datum on node {} of {}", n, p_.nodes));
      }
    }
    if (!o_.cooling.empty() && o_.cooling.size() != devices) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("{} cooling factors for {} devices", o_.cooling.size(), devices));
    }
    return {};
  }

  // With cooling factors: every device's thermal model, warmed up, and with a governor mode its
  // governor.
  Status make_thermal() {
    const auto devices = static_cast<std::size_t>(p_.devices());
    for (std::size_t d = 0; d < o_.cooling.size(); ++d) {
      if (!(o_.cooling[d] >= 1) || o_.cooling[d] > 100) {
        return fail(
            Errc::kInvalidArgument,
            fmt::format("device {}'s cooling factor {} is not from 1 to 100", d, o_.cooling[d]));
      }
      thermal_.emplace_back(static_cast<int>(d));
      if (o_.power_limit_watts > 0) {
        ACCO_RETURN_IF_ERROR(thermal_.back().set_power_limit(o_.power_limit_watts), "power limit");
      }
      warm_up(thermal_.back(), o_.cooling[d]);
    }
    thermal_busy_.assign(thermal_.size(), 0);
    thermal_since_.assign(thermal_.size(), 0);
    thermal_work_.assign(thermal_.size(), 0);
    thermal_running_.assign(thermal_.size(), -1);
    if (!o_.governor.empty()) {
      if (thermal_.empty()) {
        return fail(Errc::kInvalidArgument, "a governor needs the thermal model (cooling factors)");
      }
      std::vector<std::string> names;
      for (std::size_t d = 0; d < devices; ++d) {
        names.push_back(device_name(p_, static_cast<int>(d)));
      }
      ACCO_ASSIGN_OR_RETURN(governed_, Governed::create(o_.governor, thermal_, std::move(names)));
    }
    return {};
  }

  [[nodiscard]] double seconds(std::size_t t, int d) const {
    const auto& s = w_.tasks[t].seconds;
    return s.size() == 1 ? s[0] : s[static_cast<std::size_t>(d)];
  }

  Status prepare() {
    const auto edges = sched::infer_edges(w_);
    tasks_.resize(w_.tasks.size());
    for (const auto& e : edges) {
      tasks_[e.from].next.push_back(e.to);
      ++tasks_[e.to].pending;
    }
    // Bounds and priorities on a DAG of the distinct columns (one when every device is alike).
    const std::size_t columns = w_.tasks.empty() ? 0 : w_.tasks[0].seconds.size();
    sched::Dag dag;
    for (const auto& t : w_.tasks) {
      dag.cost.push_back(t.seconds);
    }
    for (const auto& e : edges) {
      dag.edges.push_back({e.from, e.to, 0});
    }
    result_.tasks = w_.tasks.size();
    if (w_.tasks.empty()) {
      return {};
    }
    if (columns == 1) {
      double work = 0;
      for (const auto& t : w_.tasks) {
        work += t.seconds[0];
      }
      // Edges are sorted by (to, from) and tasks are in submission order: predecessors first.
      std::vector<double> finish(w_.tasks.size(), 0);
      std::size_t e = 0;
      for (std::size_t t = 0; t < w_.tasks.size(); ++t) {
        double start = 0;
        for (; e < edges.size() && edges[e].to == t; ++e) {
          start = std::max(start, finish[edges[e].from]);
        }
        finish[t] = start + w_.tasks[t].seconds[0];
        result_.critical_path = std::max(result_.critical_path, finish[t]);
      }
      result_.area = work / p_.devices();
    } else {
      ACCO_ASSIGN_OR_RETURN(const auto b, sched::bounds(dag), "bounds");
      result_.critical_path = b.critical_path;
      result_.area = b.area;
    }
    // Priorities: upward ranks at each task's fastest device, as the runtime gives a graph.
    ACCO_ASSIGN_OR_RETURN(const auto ranks, sched::upward_ranks(dag, sched::RankCost::kBest),
                          "ranks");
    for (std::size_t t = 0; t < tasks_.size(); ++t) {
      tasks_[t].priority = ranks[t];
    }
    for (std::size_t t = 0; t < o_.pinned.size(); ++t) {
      tasks_[t].planned = o_.pinned[t];
    }
    if (planning_) {
      // HEFT's plan over every device, copies costed on the route between devices 0 and 1.
      sched::Dag plan;
      const int n = p_.devices();
      for (std::size_t t = 0; t < w_.tasks.size(); ++t) {
        plan.cost.emplace_back();
        for (int d = 0; d < n; ++d) {
          plan.cost.back().push_back(seconds(t, d));
        }
      }
      for (const auto& edge : edges) {
        plan.edges.push_back(
            {edge.from, edge.to,
             n > 1 ? copy_seconds(p_, 0, 1, static_cast<double>(edge.bytes)) : 0.0});
      }
      ACCO_ASSIGN_OR_RETURN(const auto heft, sched::heft(plan), "heft");
      plan_order_.assign(static_cast<std::size_t>(n), {});
      for (const auto t : heft.order) {
        tasks_[t].planned = static_cast<int>(heft.tasks[t].processor);
        tasks_[t].priority = -heft.tasks[t].start;
        plan_order_[heft.tasks[t].processor].push_back(t);
      }
      // Each device runs its tasks in the plan's order (insertion may put a later task first).
      for (auto& order : plan_order_) {
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
          return heft.tasks[a].start < heft.tasks[b].start;
        });
      }
      next_planned_.assign(static_cast<std::size_t>(n), 0);
    }
    return {};
  }

  // The devices task t's decision looks at: every one, or with narrowing_ (dmda on more than
  // kFullScanDevices alike devices) the devices of the nodes that hold a replica of an input and
  // the kShortList that free up first. dmda's choice is among them whenever the devices off the
  // data's nodes cost the same to reach: of those, the first free wins.
  void candidates(std::size_t t) {
    candidates_.clear();
    const int devices = p_.devices();
    if (!narrowing_) {
      for (int d = 0; d < devices; ++d) {
        candidates_.push_back(d);
      }
      return;
    }
    const int n = static_cast<int>(p_.node.devices.size());
    for (const auto& [datum, mode] : w_.tasks[t].accesses) {
      if (!sched::reads(mode)) {
        continue;
      }
      for (const int at : valid_[datum]) {
        const int node = at >= 0 ? at / n : -1 - at;
        for (int d = node * n; d < (node + 1) * n; ++d) {
          candidates_.push_back(d);
        }
      }
    }
    std::size_t listed = 0;
    for (auto it = by_available_.begin(); it != by_available_.end() && listed < kShortList;
         ++it, ++listed) {
      candidates_.push_back(it->second);
    }
    std::sort(candidates_.begin(), candidates_.end());
    candidates_.erase(std::unique(candidates_.begin(), candidates_.end()), candidates_.end());
  }

  // The cheapest copy of datum `i` to device `d`: its time and source; 0 and d when valid there.
  std::pair<double, int> fetch_cost(std::size_t i, int d) const {
    double best = std::numeric_limits<double>::infinity();
    int from = d;
    for (const int at : valid_[i]) {
      if (at == d) {
        return {0, d};
      }
      const double c = copy_seconds(p_, at, d, static_cast<double>(w_.data_bytes[i]));
      if (c < best) {
        best = c;
        from = at;
      }
    }
    return {best, from};
  }

  void ready(std::size_t t, int released_by) {
    ready_at_[t] = sg4::Engine::get_clock();
    place(t, released_by);
  }

  // Whether device d takes new tasks: the governor has not closed it, or closed every device.
  [[nodiscard]] bool open(int d) const { return !governed_ || all_closed_ || governed_->open(d); }

  // Queues task t on a device: its pin or HEFT's plan, else the policy's choice; eager's goes to
  // the shared queue. A planned task whose device the governor closed is placed by the policy.
  void place(std::size_t t, int released_by) {
    const double now = sg4::Engine::get_clock();
    int device = tasks_[t].planned;
    if (device >= 0 && planning_ && !open(device)) {
      tasks_[t].moved = true;
      // Its planned device may sleep waiting for it: woken, it skips it in its plan.
      wake(static_cast<std::size_t>(device));
      device = -1;
    }
    double transfer = 0;
    if (device < 0) {
      candidates(t);
      view_.now = now;
      view_.devices.resize(candidates_.size());
      int released_at = -1;
      for (std::size_t c = 0; c < candidates_.size(); ++c) {
        const int d = candidates_[c];
        const auto du = static_cast<std::size_t>(d);
        released_at = d == released_by ? static_cast<int>(c) : released_at;
        auto& v = view_.devices[c];
        v.eligible = open(d);
        v.weight = weight(d);
        v.queued = queues_[du].size();
        v.available_at = std::max(now, available_[du]) + o_.task_overhead_seconds;
        v.predicted = seconds(t, d);
        v.calibrated = true;
        v.transfer = 0;
        for (const auto& [datum, mode] : w_.tasks[t].accesses) {
          if (sched::reads(mode)) {
            v.transfer += fetch_cost(datum, d).first;
          }
        }
      }
      const int pick = policy_->place(view_, o_.knobs, released_at, nullptr);
      if (pick >= 0) {
        device = candidates_[static_cast<std::size_t>(pick)];
        transfer = view_.devices[static_cast<std::size_t>(pick)].transfer;
        if (planning_ && tasks_[t].moved) {
          tasks_[t].planned = device;  // its inputs' producers send them there
        }
      }
    }
    if (device < 0) {  // the shared queue: one idle device takes it (waking all costs O(devices))
      // By priority, after the tasks of equal priority, searched from the back as the runtime
      // does (a new task usually ranks below the queued ones).
      auto at = shared_.end();
      while (at != shared_.begin() && tasks_[*std::prev(at)].priority < tasks_[t].priority) {
        --at;
      }
      shared_.insert(at, t);
      if (deferring_) {  // the releasing device looks first (see worker)
        ++owed_;
        return;
      }
      wake_idle(1);
      return;
    }
    const auto d = static_cast<std::size_t>(device);
    if (narrowing_) {
      by_available_.erase({available_[d], device});
    }
    available_[d] = std::max(now, available_[d]) + o_.task_overhead_seconds +
                    seconds(t, device) / weight(device) + transfer;
    if (narrowing_) {
      by_available_.insert({available_[d], device});
    }
    auto& q = queues_[d];
    const auto at = std::find_if(q.begin(), q.end(), [&](std::size_t other) {
      return tasks_[other].priority < tasks_[t].priority;
    });
    q.insert(at, t);
    // Its inputs start towards it now (StarPU prefetches when a task is pushed to a worker).
    for (const auto& [datum, mode] : w_.tasks[t].accesses) {
      if (sched::reads(mode)) {
        start_copy(datum, device, true);
      }
    }
    wake(d);
    if (policy_->steals()) {
      wake_idle(1);  // it may steal: the runtime wakes the first sleeping device too
    }
  }

  // The next task for device d: its queue, the shared queue, or (ws) one stolen where it pays.
  long next(int d) {
    auto& q = queues_[static_cast<std::size_t>(d)];
    if (planning_) {  // the plan's next task on d, once it is ready
      const auto du = static_cast<std::size_t>(d);
      // A task the governor moved here from a closed device comes first; the plan's tasks it
      // moved away are skipped.
      if (const auto it =
              std::find_if(q.begin(), q.end(), [&](std::size_t t) { return tasks_[t].moved; });
          it != q.end()) {
        const auto t = *it;
        q.erase(it);
        return static_cast<long>(t);
      }
      while (next_planned_[du] < plan_order_[du].size() &&
             tasks_[plan_order_[du][next_planned_[du]]].moved) {
        ++next_planned_[du];
      }
      if (next_planned_[du] >= plan_order_[du].size()) {
        return -1;
      }
      const auto want = plan_order_[du][next_planned_[du]];
      const auto at = std::find(q.begin(), q.end(), want);
      if (at == q.end()) {
        return -1;
      }
      q.erase(at);
      ++next_planned_[du];
      return static_cast<long>(want);
    }
    if (!q.empty()) {
      const auto t = q.front();
      q.pop_front();
      return static_cast<long>(t);
    }
    if (!open(d)) {  // closed: its own queue only (the runtime's "no new work")
      return -1;
    }
    if (!shared_.empty()) {
      const auto t = shared_.front();
      shared_.pop_front();
      return static_cast<long>(t);
    }
    if (policy_->steals()) {
      std::size_t victim = queues_.size();
      for (std::size_t v = 0; v < queues_.size(); ++v) {
        if (queues_[v].size() >= 2 &&
            (victim == queues_.size() || queues_[v].size() > queues_[victim].size())) {
          victim = v;
        }
      }
      // A pinned task stays where it is pinned (StarPU's execute_on_a_specific_worker).
      if (victim < queues_.size() && (o_.pinned.empty() || o_.pinned[queues_[victim].back()] < 0)) {
        const auto t = queues_[victim].back();
        const double now = sg4::Engine::get_clock();
        sched::DeviceView from;
        from.eligible = true;
        from.available_at = std::max(now, available_[victim]);
        from.queued = queues_[victim].size();
        from.predicted = seconds(t, static_cast<int>(victim));
        sched::DeviceView to;
        to.eligible = true;  // an open device (closed ones do not steal)
        to.predicted = seconds(t, d);
        to.weight = weight(d);
        for (const auto& [datum, mode] : w_.tasks[t].accesses) {
          if (sched::reads(mode)) {
            to.transfer += fetch_cost(datum, d).first;
          }
        }
        if (sched::steal_pays(from, to, now)) {
          queues_[victim].pop_back();
          // Its time leaves the victim's expected drain and joins the thief's.
          available_[victim] = std::max(now, available_[victim] - *from.predicted);
          const auto du = static_cast<std::size_t>(d);
          available_[du] = std::max(now, available_[du]) + *to.predicted / to.weight;
          return static_cast<long>(t);
        }
      }
    }
    return -1;
  }

  // Brings task t's inputs to device d and waits for them; the bytes that had to come.
  std::uint64_t fetch_inputs(std::size_t t, int d) {
    std::uint64_t bytes = 0;
    std::vector<std::size_t> copies;
    std::vector<std::size_t> fetched;
    for (const auto& [datum, mode] : w_.tasks[t].accesses) {
      if (!sched::reads(mode) ||
          std::find(fetched.begin(), fetched.end(), datum) != fetched.end()) {
        continue;
      }
      start_copy(datum, d, false);
      if (const auto it = inflight_.find({datum, d}); it != inflight_.end()) {
        copies.push_back(it->second);
        fetched.push_back(datum);
        bytes += w_.data_bytes[datum];
      }
    }
    copies_->wait(copies, static_cast<std::size_t>(d));
    for (const auto datum : fetched) {
      inflight_.erase({datum, d});
      if (std::find(valid_[datum].begin(), valid_[datum].end(), d) == valid_[datum].end()) {
        valid_[datum].push_back(d);
      }
    }
    return bytes;
  }

  void worker(int d) {
    const auto du = static_cast<std::size_t>(d);
    while (done_ < w_.tasks.size()) {
      const long got = next(d);
      if (owed_ > 0) {  // the tasks it released that it did not take: a device each
        wake_idle(std::min(owed_, shared_.size()));
        owed_ = 0;
      }
      if (got < 0) {
        idle_[du] = true;
        wake_[du]->acquire();
        continue;
      }
      const auto t = static_cast<std::size_t>(got);
      if (o_.task_overhead_seconds > 0) {
        sg4::this_actor::sleep_for(o_.task_overhead_seconds);
      }
      const double taken = sg4::Engine::get_clock();
      const std::uint64_t fetched_bytes = fetch_inputs(t, d);
      const double start = sg4::Engine::get_clock();
      if (thermal_.empty()) {
        sg4::this_actor::execute(seconds(t, d) * kHostSpeed);
      } else {
        run_throttled(du, seconds(t, d));
      }
      const double end = sg4::Engine::get_clock();
      result_.devices[du].busy_seconds += end - start;
      ++result_.devices[du].tasks;
      if (o_.record) {
        record_task(t, d, {taken, start, end}, fetched_bytes);
      }
      std::vector<std::size_t> written;
      for (const auto& [datum, mode] : w_.tasks[t].accesses) {
        if (sched::writes(mode)) {
          valid_[datum] = {d};
          inflight_.erase(inflight_.lower_bound({datum, std::numeric_limits<int>::min()}),
                          inflight_.lower_bound({datum + 1, std::numeric_limits<int>::min()}));
          written.push_back(datum);
        }
      }
      // A plan says where each consumer runs: the outputs leave for it at once, as HEFT assumes.
      for (const auto s : tasks_[t].next) {
        const int to = tasks_[s].planned;
        if (to < 0 || to == d) {
          continue;
        }
        for (const auto& [datum, mode] : w_.tasks[s].accesses) {
          if (sched::reads(mode) &&
              std::find(written.begin(), written.end(), datum) != written.end()) {
            start_copy(datum, to, true);
          }
        }
      }
      ++done_;
      result_.makespan = sg4::Engine::get_clock();
      // The tasks it releases into the shared queue wake other devices only once it has taken
      // its next one: a runtime's releasing thread is running, the others take a wake-up to
      // start (SimGrid would run the woken actors first).
      deferring_ = true;
      for (const auto s : tasks_[t].next) {
        if (--tasks_[s].pending == 0) {
          ready(s, d);
        }
      }
      deferring_ = false;
      if (done_ == w_.tasks.size()) {
        for (std::size_t o = 0; o < wake_.size(); ++o) {
          wake(o);
        }
      }
    }
  }

  // Task t's record: taken from its queue, started once its inputs were in, finished.
  void record_task(std::size_t t, int d, std::array<double, 3> times, std::uint64_t bytes) {
    const auto [taken, start, end] = times;
    sched::TaskRecord r;
    r.id = t;
    r.device = d;
    r.status = sched::TaskStatus::kDone;
    r.ready = nanos(ready_at_[t]);
    r.started = nanos(start);
    r.finished = nanos(end);
    r.predicted = nanos(seconds(t, d));
    r.transfer_bytes = bytes;
    r.transfer_time = nanos(start - taken);
    result_.task_records.push_back(std::move(r));
  }

  // Starts copying datum `i` to device `d` from its cheapest valid replica, unless it is there
  // or on its way; `prefetch` when no task waits for it yet.
  void start_copy(std::size_t i, int d, bool prefetch) {
    if (std::find(valid_[i].begin(), valid_[i].end(), d) != valid_[i].end() ||
        inflight_.contains({i, d})) {
      return;
    }
    const auto [cost, from] = fetch_cost(i, d);
    if (from == d) {
      return;
    }
    const auto bytes = w_.data_bytes[i];
    sg4::Host* src = from >= 0 ? built_.devices[static_cast<std::size_t>(from)]
                               : built_.memory[static_cast<std::size_t>(-1 - from)];
    const auto copy = copies_->start(src, static_cast<std::size_t>(d), bytes, !prefetch);
    if (o_.record) {  // its times once the run is over (finish)
      sched::TransferRecord r;
      r.handle = i;
      r.from = from >= 0 ? from + 1 : sched::kHostNode;
      r.to = d + 1;
      r.bytes = bytes;
      r.prefetch = prefetch;
      result_.transfer_records.push_back(r);
    }
    inflight_[{i, d}] = copy;
    account(from, d, static_cast<double>(bytes));
  }

  // Every hop's bytes by direction: a split-duplex link is busy up and down separately.
  void account(int from, int to, double bytes) {
    ++result_.copies;
    result_.bytes_moved += bytes;
    const int n = static_cast<int>(p_.node.devices.size());
    for (const auto& hop : route(p_, from, to)) {
      if (hop.node < 0 && !p_.rails()) {  // the fabric: the receiver's down-link, the sender's up
        link_bytes_[{-1, to >= 0 ? to / n : -1 - to}] += bytes;
        link_bytes_[{-2, from >= 0 ? from / n : -1 - from}] += bytes;
      } else {
        link_bytes_[{hop.node < 0 ? -3 : hop.node, 2 * hop.link + (hop.up ? 1 : 0)}] += bytes;
      }
    }
  }

  // A device that has been busy a while: at its full-load heat when healthy (no throttling
  // then, so starting there changes no time), else after ten minutes of full load.
  static void warm_up(power::SimulatedDevice& device, double cooling) {
    const auto& m = device.model();
    device.set_temperatures(m.ambient_celsius + m.max_watts * (m.r_junction_sink + m.r_sink_air),
                            m.ambient_celsius + m.max_watts * m.r_sink_air);
    if (cooling > 1) {
      device.set_cooling_factor(cooling);
      device.set_load({.utilization = 1});
      device.advance(600);
    }
    device.set_load({});
  }

  // Advances device d's model (idle) to now: its energy and heat between tasks.
  void thermal_idle(std::size_t d, double now) {
    auto& device = thermal_[d];
    const double idle = now - thermal_since_[d];
    if (idle > 0) {
      device.set_load({});
      result_.devices[d].energy_joules += advance(device, idle);
    }
    thermal_since_[d] = now;
  }

  // Advances `device` by `seconds` in steps of at most 0.1 s; the energy it drew.
  static double advance(power::SimulatedDevice& device, double seconds) {
    double joules = 0;
    while (seconds > 1e-12) {
      const double dt = std::min(seconds, 0.1);
      device.advance(dt);
      joules += device.power_watts() * dt;
      seconds -= dt;
    }
    return joules;
  }

  // Runs `work` seconds of full-clock work on device d at the clock its model allows, in slices
  // of at most 0.1 s; a device lost at its shutdown temperature crawls at 1 % (the run goes on,
  // and its peak temperature says why).
  void run_throttled(std::size_t d, double work) {
    auto& device = thermal_[d];
    auto& use = result_.devices[d];
    thermal_idle(d, sg4::Engine::get_clock());
    device.set_load({.utilization = 1});
    const double start = sg4::Engine::get_clock();
    thermal_running_[d] = start;
    thermal_work_[d] += work;
    while (work > 1e-12) {
      const double ratio = std::max(device.running_speed_ratio(), 0.01);
      const double wall = std::min(0.1, work / ratio);
      sg4::this_actor::execute(wall * kHostSpeed);
      use.energy_joules += advance(device, wall);
      use.peak_celsius = std::max(use.peak_celsius, device.junction_celsius());
      work -= wall * ratio;
    }
    thermal_busy_[d] += sg4::Engine::get_clock() - start;
    thermal_since_[d] = sg4::Engine::get_clock();
    thermal_running_[d] = -1;
  }

  // The governor's loop on the virtual clock, a daemon (the run ends with its last task): every
  // period, each device's model brought to now and its busy share of the period (the first
  // round: 1, the devices have been busy a while), the governor's round, and the queues of the
  // devices it drained placed again.
  void govern() {
    sg4::Actor::self()->daemonize();
    const std::size_t n = thermal_.size();
    std::vector<double> utilization(n, 1.0);
    std::vector<double> busy_before(n, 0);
    double last = -1;
    bool stalled_before = false;
    while (done_ < w_.tasks.size()) {
      const double now = sg4::Engine::get_clock();
      for (std::size_t d = 0; d < n; ++d) {
        const bool running = thermal_running_[d] >= 0;
        if (!running) {
          thermal_idle(d, now);
        }
        const double busy = thermal_busy_[d] + (running ? now - thermal_running_[d] : 0);
        if (last >= 0 && now > last) {
          utilization[d] = std::clamp((busy - busy_before[d]) / (now - last), 0.0, 1.0);
        }
        busy_before[d] = busy;
      }
      last = now;
      const auto drained = governed_->tick(utilization, now);
      all_closed_ = true;
      for (std::size_t d = 0; d < n && all_closed_; ++d) {
        all_closed_ = !governed_->open(static_cast<int>(d));
      }
      for (const int d : drained) {
        const auto du = static_cast<std::size_t>(d);
        auto queued = std::move(queues_[du]);
        queues_[du].clear();
        if (narrowing_) {
          by_available_.erase({available_[du], d});
          by_available_.insert({now, d});
        }
        available_[du] = now;  // its queue leaves: only what it runs now is left
        for (const auto t : queued) {
          place(t, -1);  // a planned or pinned one: its device is closed (planned) or kept (pin)
        }
      }
      wake_open();
      // A run that cannot go on (every device asleep, tasks left) would tick for ever: stop,
      // and the run reports the tasks it did not finish.
      const bool stalled = done_ < w_.tasks.size() &&
                           std::all_of(idle_.begin(), idle_.end(), [](bool idle) { return idle; });
      if (stalled && stalled_before) {
        return;
      }
      stalled_before = stalled;
      sg4::this_actor::sleep_for(governed_->period_seconds());
    }
  }

  // Wakes up to `count` idle devices that may take work, the lowest first.
  void wake_idle(std::size_t count) {
    for (std::size_t d = 0; d < idle_.size() && count > 0; ++d) {
      if (open(static_cast<int>(d)) && wake(d)) {
        --count;
      }
    }
  }

  // Wakes device d if it sleeps; whether it did.
  bool wake(std::size_t d) {
    if (!idle_[d]) {
      return false;
    }
    idle_[d] = false;
    wake_[d]->release();
    return true;
  }

  // Its weight in the policies' view: the governor's headroom, else 1.
  [[nodiscard]] double weight(int d) const { return governed_ ? governed_->weight(d) : 1.0; }

  // Wakes every idle device that may take work (the shared queue, stolen work, moved tasks).
  void wake_open() {
    for (std::size_t d = 0; d < idle_.size(); ++d) {
      if (open(static_cast<int>(d))) {
        wake(d);
      }
    }
  }

  // What a link_bytes_ key is: the link, the node it belongs to (-1: the spines), its name with
  // the direction as the report says it ("n3 nic up") and as a heat map's column ("nic up").
  struct KeyedLink {
    Link link;
    int node = -1;
    std::string reported;
    std::string column;
  };
  [[nodiscard]] KeyedLink keyed(std::pair<int, int> key) const {
    KeyedLink k;
    if (key.first == -1 || key.first == -2) {  // a node's whole fabric link: (-1 down | -2 up)
      const char* way = key.first == -1 ? "down" : "up";
      k.link = Link{"fabric", "fabric", p_.fabric_link_bytes_per_second(), 0};
      k.node = key.second;
      k.reported = fmt::format("n{} fabric {}", key.second, way);
      k.column = fmt::format("fabric {}", way);
      return k;
    }
    const char* way = key.second % 2 == 1 ? "up" : "down";
    k.link = key.first == -3 ? p_.spine_link(key.second / 2) : p_.link(key.second / 2);
    k.node = key.first >= 0 ? key.first : -1;
    k.column = fmt::format("{} {}", k.link.name, way);
    k.reported = k.node >= 0 ? fmt::format("n{} {}", k.node, k.column) : k.column;
    return k;
  }

  // Per kind: bytes, and the busiest link (bytes / bandwidth over the makespan); with records,
  // every link direction's load.
  void link_uses() {
    for (const char* kind : {"pcie", "nvlink", "nic", "fabric"}) {
      LinkUse use;
      use.kind = kind;
      for (const auto& [key, bytes] : link_bytes_) {
        KeyedLink k = keyed(key);
        if (k.link.kind != kind) {
          continue;
        }
        use.bytes += bytes;
        const double share =
            result_.makespan > 0 ? bytes / k.link.bytes_per_second / result_.makespan : 0;
        if (o_.record) {
          result_.link_loads.push_back({k.node, kind, k.column, share});
        }
        if (share > use.busiest_share) {
          use.busiest_share = share;
          use.busiest = std::move(k.reported);
        }
      }
      if (use.bytes > 0) {
        result_.links.push_back(use);
      }
    }
  }

  // The busiest device or link, by its busy share of the makespan.
  void name_bottleneck() {
    double worst = -1;
    for (const auto& d : result_.devices) {
      const double share = result_.makespan > 0 ? d.busy_seconds / result_.makespan : 0;
      if (share > worst) {
        worst = share;
        result_.bottleneck = fmt::format("device {} busy {:.0f} %", d.name, 100 * share);
      }
    }
    for (const auto& l : result_.links) {
      if (l.busiest_share > worst) {
        worst = l.busiest_share;
        result_.bottleneck = fmt::format("link {} busy {:.0f} %", l.busiest, 100 * l.busiest_share);
      }
    }
  }

  void finish() {
    copies_->settle();
    for (std::size_t c = 0; c < result_.transfer_records.size(); ++c) {
      result_.transfer_records[c].start = nanos(copies_->start_time(c));
      result_.transfer_records[c].end = nanos(copies_->end_time(c));
    }
    link_uses();
    for (std::size_t d = 0; d < thermal_.size(); ++d) {
      thermal_idle(d, result_.makespan);
      auto& use = result_.devices[d];
      use.peak_celsius = std::max(use.peak_celsius, thermal_[d].junction_celsius());
      // The full-clock work it did over the time it took.
      use.clock_share =
          thermal_busy_[d] > 0 ? std::min(1.0, thermal_work_[d] / thermal_busy_[d]) : 1;
      result_.energy_joules += use.energy_joules;
    }
    if (governed_) {
      result_.governor = o_.governor;
      result_.governor_actions = governed_->actions();
    }
    name_bottleneck();
  }

  const Platform& p_;
  const sched::Workload& w_;
  SimOptions o_;
  std::unique_ptr<sched::Policy> policy_;
  bool planning_ = false;  // heft: each device runs its plan's tasks in order
  // dmda on many alike devices: each decision looks at the candidates() only.
  static constexpr std::size_t kShortList = 32;
  bool narrowing_ = false;
  std::set<std::pair<double, int>> by_available_;  // (available_, device) with narrowing_
  std::vector<int> candidates_;
  // With SimOptions::cooling: each device's model, its busy time under it, the time it was
  // last advanced to, and the full-clock work of each task it ran.
  std::vector<power::SimulatedDevice> thermal_;
  std::vector<double> thermal_busy_;
  std::vector<double> thermal_since_;
  std::vector<double> thermal_work_;
  std::vector<double> thermal_running_;  // the start of the task it runs; -1 idle
  std::unique_ptr<Governed> governed_;   // with SimOptions::governor
  bool all_closed_ = false;              // the governor closed every device: they all take work
  bool deferring_ = false;               // a worker is releasing tasks: wakes are owed, not done
  std::size_t owed_ = 0;                 // wakes owed for tasks released into the shared queue
  Built built_;
  std::vector<Task> tasks_;
  std::vector<std::deque<std::size_t>> queues_;
  std::deque<std::size_t> shared_;
  std::vector<double> available_;
  std::vector<bool> idle_;
  std::vector<double> ready_at_;  // per task: when its last dependency finished
  std::vector<sg4::SemaphorePtr> wake_;
  std::vector<std::vector<int>> valid_;  // per datum: devices (or -1 - node) holding it
  // (node, 2 x link + 1 up | 0 down); the fabric: (-1 down | -2 up, node); on rails, a leaf's
  // spine link: (-3, 2 x link + 1 up | 0 down).
  std::map<std::pair<int, int>, double> link_bytes_;
  std::size_t done_ = 0;
  std::unique_ptr<Copies> copies_;
  std::map<std::pair<std::size_t, int>, std::size_t> inflight_;  // (datum, device): its copy
  std::vector<std::vector<std::size_t>> plan_order_;             // HEFT: per device
  std::vector<std::size_t> next_planned_;
  sched::SystemView view_;
  SimResult result_;
};

// The child: SimGrid's engine with the CM02 flow model, quiet, then the run; the answer as JSON
// on `fd`. Threads as contexts under AddressSanitizer (it cannot follow raw stack switches).
}  // namespace

nlohmann::json run_engine(nlohmann::json request) {
  auto parsed = request_from_json(request);
  request = nullptr;
  if (!parsed) {
    return {{"error", parsed.error().message}, {"code", static_cast<int>(parsed.error().code)}};
  }
  const auto& [platform, workload, options] = *parsed;
  // SimGrid's engine: the CMM02 flow model, quiet; no guard page under each actor's stack (each
  // is a mapping of its own, and tens of thousands of copy actors would pass vm.max_map_count);
  // threads as contexts under the sanitizers (they cannot follow raw stack switches).
  std::vector<std::string> args = {"acco-sim-engine", "--cfg=network/model:CM02",
                                   "--cfg=network/TCP-gamma:0", "--cfg=contexts/guard-size:0",
                                   "--log=root.thres:critical"};
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  args.emplace_back("--cfg=contexts/factory:thread");
#endif
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  try {
    sg4::Engine engine(&argc, argv.data());
    Simulation sim(platform, workload, options);
    auto r = sim.run();
    if (!r) {
      return {{"error", r.error().message}, {"code", static_cast<int>(r.error().code)}};
    }
    if (options.record) {
      return {{"result", to_json(*r)}, {"records", records_json(*r)}};
    }
    return {{"result", to_json(*r)}};
  } catch (const std::exception& e) {  // SimGrid's own errors: an answer, never an unwind
    return {{"error", std::string("SimGrid: ") + e.what()},
            {"code", static_cast<int>(Errc::kInternal)}};
  }
}

}  // namespace acco::sim
