#include "acco/cluster/cluster.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <span>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/core/stats.hpp"
#include "acco/core/units.hpp"

namespace acco::cluster {
namespace {

std::string link_text(const topo::PcieLink& link) {
  if (link.width == 0) {
    return "unknown";
  }
  return fmt::format("{:g} GT/s x{}", link.speed_gts, link.width);
}

// Seconds per exchange of `bytes` with `peer`, the fastest of `iters`: what the link can do. A
// busy CPU or a neighbour's traffic only ever slows an exchange, and a shaped or downtrained link
// can never beat its rate, so the best time separates the two where a median would mix them.
Result<double> time_exchange(Communicator& comm, int peer, std::size_t bytes, int iters) {
  std::vector<std::byte> send(bytes, std::byte{0x5a});
  std::vector<std::byte> recv(bytes);
  ACCO_RETURN_IF_ERROR(comm.exchange(peer, send, recv));  // warm-up: connections, pages
  // An exchange returns once this rank has the peer's bytes and its own are in the transport's
  // buffers, not yet delivered: where one direction is slower than the other, the bytes still in
  // flight would go untimed. A one-byte exchange after it cannot complete before the peer has
  // received everything (it sends its byte only after its receive), so each try is timed to the
  // delivery of both directions.
  std::array<std::byte, 1> ack_out{};
  std::array<std::byte, 1> ack_in{};
  std::vector<double> times;
  for (int i = 0; i < iters; ++i) {
    const double start = comm.seconds();
    ACCO_RETURN_IF_ERROR(comm.exchange(peer, send, recv));
    ACCO_RETURN_IF_ERROR(comm.exchange(peer, ack_out, ack_in));
    times.push_back(comm.seconds() - start);
  }
  if (std::any_of(recv.begin(), recv.end(), [](std::byte b) { return b != std::byte{0x5a}; })) {
    return fail(Errc::kDeviceError,
                fmt::format("exchange with rank {}: wrong bytes came back", peer));
  }
  return *std::min_element(times.begin(), times.end());
}

nlohmann::ordered_json pair_json(const PairResult& p) {
  nlohmann::ordered_json j;
  j["a"] = p.a;
  j["b"] = p.b;
  j["node_a"] = p.node_a;
  j["node_b"] = p.node_b;
  j["reached"] = p.reached;
  j["latency_seconds"] = p.latency_seconds;
  j["bytes_per_second"] = p.bytes_per_second;
  j["error"] = p.error;
  j["ratio"] = p.ratio;
  j["slow"] = p.slow;
  return j;
}

// One node as the report shows it; also what a rank sends rank 0 (decode_node_summary).
nlohmann::ordered_json node_json(const NodeSummary& n) {
  nlohmann::ordered_json node;
  node["node"] = n.node;
  node["rank"] = n.rank;
  node["host"] = n.host;
  node["error"] = n.error;
  node["traits"] = nlohmann::ordered_json::object();
  for (const Trait& t : n.traits) {
    node["traits"][t.key] = t.value;
  }
  node["findings"] = nlohmann::ordered_json::array();
  for (const topo::Finding& f : n.findings) {
    node["findings"].push_back(
        {{"rule", f.rule}, {"severity", topo::to_string(f.severity)}, {"message", f.message}});
  }
  return node;
}

// A pair as pair_json() wrote it (what was measured; the ranking is made again on rank 0).
Result<PairResult> decode_pair(const nlohmann::ordered_json& e) {
  try {
    PairResult p;
    p.a = e.at("a").get<int>();
    p.b = e.at("b").get<int>();
    p.node_a = e.at("node_a").get<int>();
    p.node_b = e.at("node_b").get<int>();
    p.reached = e.at("reached").get<bool>();
    p.latency_seconds = e.at("latency_seconds").get<double>();
    p.bytes_per_second = e.at("bytes_per_second").get<double>();
    p.error = e.at("error").get<std::string>();
    return p;
  } catch (const nlohmann::json::exception& x) {
    return fail(Errc::kInternal, fmt::format("pair result: {}", x.what()));
  }
}

}  // namespace

std::vector<Trait> node_traits(const topo::Machine& m) {
  std::vector<Trait> t;
  t.push_back({"kernel", m.kernel.empty() ? "unknown" : m.kernel});
  t.push_back({"cpu packages", std::to_string(m.cpu.packages)});
  t.push_back({"cpu cores", std::to_string(m.cpu.cores)});
  t.push_back({"online cpus", std::to_string(m.online_cpus.size())});
  t.push_back({"gpu driver", m.nvml.driver_version.empty() ? "none" : m.nvml.driver_version});
  int gpus = 0;
  for (const topo::PciDevice& d : m.pci_devices) {
    if (d.kind != topo::DeviceKind::kGpu && d.kind != topo::DeviceKind::kAccelerator) {
      continue;
    }
    const auto* nvml = m.nvml_gpu(d.address);
    // The n-th GPU of each node is compared with the n-th of the others: addresses differ
    // between otherwise identical machines less often than models and links do, but they do.
    t.push_back({fmt::format("gpu {} model", gpus), nvml != nullptr ? nvml->name : d.address});
    t.push_back({fmt::format("gpu {} pcie", gpus), link_text(d.current)});
    ++gpus;
  }
  t.push_back({"gpus", std::to_string(gpus)});
  int nics = 0;
  for (const topo::PciDevice& d : m.pci_devices) {
    if (d.kind == topo::DeviceKind::kNic) {
      t.push_back({fmt::format("nic {} pcie", nics), link_text(d.current)});
      ++nics;
    }
  }
  t.push_back({"nics", std::to_string(nics)});
  for (const topo::IbPort& p : m.ib_ports) {
    t.push_back({fmt::format("ib {}/{} state", p.device, p.port), p.state_text});
    t.push_back(
        {fmt::format("ib {}/{} rate", p.device, p.port), fmt::format("{:g} Gb/s", p.rate_gbps)});
  }
  for (const topo::NetInterface& n : m.net_interfaces) {
    if (n.name == "lo") {
      continue;
    }
    t.push_back({fmt::format("net {} mtu", n.name), n.mtu ? std::to_string(*n.mtu) : "unknown"});
  }
  return t;
}

std::string encode(const NodeSummary& node) {
  return node_json(node).dump();
}

Result<NodeSummary> decode_node_summary(const std::string& text) {
  try {
    const auto j = nlohmann::ordered_json::parse(text);  // the traits keep their order
    NodeSummary n;
    n.node = j.at("node").get<int>();
    n.rank = j.at("rank").get<int>();
    n.host = j.at("host").get<std::string>();
    n.error = j.at("error").get<std::string>();
    for (const auto& [key, value] : j.at("traits").items()) {
      n.traits.push_back({key, value.get<std::string>()});
    }
    for (const auto& f : j.at("findings")) {
      topo::Finding finding;
      finding.rule = f.at("rule").get<std::string>();
      if (!topo::parse_severity(f.at("severity").get<std::string>(), finding.severity)) {
        return fail(Errc::kInvalidArgument, "node summary: unknown severity");
      }
      finding.message = f.at("message").get<std::string>();
      n.findings.push_back(std::move(finding));
    }
    return n;
  } catch (const nlohmann::json::exception& e) {
    return fail(Errc::kInvalidArgument, fmt::format("node summary: {}", e.what()));
  }
}

std::vector<Outlier> find_outliers(const std::vector<NodeSummary>& nodes) {
  std::vector<Outlier> out;
  if (nodes.size() < 2) {
    return out;
  }
  std::vector<std::string> keys;  // in first-seen order
  for (const NodeSummary& n : nodes) {
    for (const Trait& t : n.traits) {
      if (std::find(keys.begin(), keys.end(), t.key) == keys.end()) {
        keys.push_back(t.key);
      }
    }
  }
  for (const std::string& key : keys) {
    std::vector<std::string> values;
    std::map<std::string, int> counts;
    for (const NodeSummary& n : nodes) {
      const auto it = std::find_if(n.traits.begin(), n.traits.end(),
                                   [&](const Trait& t) { return t.key == key; });
      values.push_back(it != n.traits.end() ? it->value : "(absent)");
      ++counts[values.back()];
    }
    if (counts.size() == 1) {
      continue;
    }
    const auto top =
        std::max_element(counts.begin(), counts.end(),
                         [](const auto& x, const auto& y) { return x.second < y.second; });
    const bool majority = 2 * top->second > static_cast<int>(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (majority && values[i] == top->first) {
        continue;
      }
      out.push_back({key, nodes[i].node, values[i], majority ? top->first : "(no majority)"});
    }
  }
  return out;
}

Result<std::vector<PairResult>> measure_pairs(Communicator& comm, const PairOptions& options) {
  if (options.bytes < 8 || options.bytes > (std::uint64_t{1} << 30) || options.iters < 1 ||
      options.iters > 1000) {
    return fail(Errc::kInvalidArgument,
                fmt::format("pair test of {} bytes x {}: expected 8 B to 1 GiB, 1 to 1000 times",
                            options.bytes, options.iters));
  }
  ACCO_ASSIGN_OR_RETURN(const auto node_of, comm.allgather(static_cast<double>(comm.node())));
  const int me = comm.rank();
  std::vector<PairResult> mine;  // the pairs where this rank is `a`
  for (int a = 0; a < comm.size(); ++a) {
    for (int b = a + 1; b < comm.size(); ++b) {
      if (me == a || me == b) {
        const int peer = me == a ? b : a;
        PairResult p;
        p.a = a;
        p.b = b;
        p.node_a = static_cast<int>(node_of[static_cast<std::size_t>(a)]);
        p.node_b = static_cast<int>(node_of[static_cast<std::size_t>(b)]);
        auto latency = time_exchange(comm, peer, 8, options.iters);
        auto bulk = latency ? time_exchange(comm, peer, options.bytes, options.iters)
                            : Result<double>(tl::unexpected<Error>(latency.error()));
        if (bulk) {
          p.reached = true;
          p.latency_seconds = *latency;
          p.bytes_per_second = static_cast<double>(options.bytes) / *bulk;
        } else {
          p.error = bulk.error().message;
        }
        if (me == a) {
          mine.push_back(std::move(p));
        }
      }
      ACCO_RETURN_IF_ERROR(comm.barrier());  // one pair at a time
    }
  }
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const PairResult& p : mine) {
    j.push_back(pair_json(p));
  }
  ACCO_ASSIGN_OR_RETURN(const auto all, comm.gather(j.dump()));
  std::vector<PairResult> pairs;
  for (const std::string& text : all) {
    const auto list = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!list.is_array()) {
      return fail(Errc::kInternal, "pair results: not a JSON list");
    }
    for (const auto& e : list) {
      ACCO_ASSIGN_OR_RETURN(auto p, decode_pair(e));
      pairs.push_back(std::move(p));
    }
  }
  std::sort(pairs.begin(), pairs.end(), [](const PairResult& x, const PairResult& y) {
    return std::tie(x.a, x.b) < std::tie(y.a, y.b);
  });
  return pairs;
}

void rank_pairs(std::vector<PairResult>& pairs) {
  for (const bool across : {false, true}) {
    std::vector<double> rates;
    for (const PairResult& p : pairs) {
      if (p.reached && (p.node_a != p.node_b) == across) {
        rates.push_back(p.bytes_per_second);
      }
    }
    if (rates.empty()) {
      continue;
    }
    const double median = core::stats::median(rates);
    for (PairResult& p : pairs) {
      if (p.reached && (p.node_a != p.node_b) == across && median > 0) {
        p.ratio = p.bytes_per_second / median;
        p.slow = rates.size() >= 3 && p.ratio < kSlowPairRatio;
      }
    }
  }
}

std::optional<int> slow_node(const std::vector<PairResult>& pairs) {
  std::map<int, int> in;
  int slow = 0;
  for (const PairResult& p : pairs) {
    if (p.slow && p.node_a != p.node_b) {
      ++slow;
      ++in[p.node_a];
      ++in[p.node_b];
    }
  }
  std::optional<int> node;
  for (const auto& [n, count] : in) {
    if (slow >= 2 && count == slow) {
      if (node) {
        return std::nullopt;  // two nodes in every slow pair: no single culprit
      }
      node = n;
    }
  }
  return node;
}

int problem_count(const ClusterReport& r) {
  int n = static_cast<int>(r.outliers.size());
  for (const PairResult& p : r.pairs) {
    n += (!p.reached || p.slow) ? 1 : 0;
  }
  for (const NodeSummary& node : r.nodes) {
    n += node.error.empty() ? 0 : 1;
    n += static_cast<int>(
        std::count_if(node.findings.begin(), node.findings.end(),
                      [](const auto& f) { return f.severity == topo::Severity::kCritical; }));
  }
  return n;
}

std::string to_text(const ClusterReport& r) {
  std::string out =
      fmt::format("# acco cluster: {} rank{} on {} node{} ({})\n", r.ranks, r.ranks == 1 ? "" : "s",
                  r.nodes.size(), r.nodes.size() == 1 ? "" : "s", r.library);
  out += "#\n# nodes\n";
  for (const NodeSummary& n : r.nodes) {
    if (!n.error.empty()) {
      out +=
          fmt::format("  node {} (rank {}, {}): not probed: {}\n", n.node, n.rank, n.host, n.error);
      continue;
    }
    int critical = 0;
    int warning = 0;
    std::string rules;
    for (const topo::Finding& f : n.findings) {
      critical += f.severity == topo::Severity::kCritical ? 1 : 0;
      warning += f.severity == topo::Severity::kWarning ? 1 : 0;
      rules += (rules.empty() ? "" : ", ") + f.rule;
    }
    out += fmt::format("  node {} (rank {}, {}): {} finding{} ({} critical, {} warning){}{}\n",
                       n.node, n.rank, n.host, n.findings.size(), n.findings.size() == 1 ? "" : "s",
                       critical, warning, rules.empty() ? "" : ": ", rules);
  }
  out += "#\n# outliers among the nodes\n";
  if (r.nodes.size() < 2) {
    out += "  one node: nothing to compare\n";
  } else if (r.outliers.empty()) {
    out += "  none: every node has the same kernel, driver, GPUs, NICs, links and MTUs\n";
  }
  for (const Outlier& o : r.outliers) {
    out += fmt::format("  node {}: {} is {}, the others {}\n", o.node, o.key, o.value, o.others);
  }
  out += fmt::format(
      "#\n# pairs: exchanges of 8 B (latency) and {} (bandwidth each way), best of {}\n",
      units::format_bytes(r.pair_options.bytes), r.pair_options.iters);
  out += fmt::format("# {:>4} {:>4} {:>9} {:>8} {:>12} {:>10} {:>7}\n", "a", "b", "nodes",
                     "reached", "latency(us)", "GB/s", "ratio");
  for (const PairResult& p : r.pairs) {
    const std::string nodes = fmt::format("{}-{}", p.node_a, p.node_b);
    if (!p.reached) {
      out +=
          fmt::format("  {:>4} {:>4} {:>9} {:>8}  UNREACHED: {}\n", p.a, p.b, nodes, "no", p.error);
      continue;
    }
    out += fmt::format(
        "  {:>4} {:>4} {:>9} {:>8} {:>12.1f} {:>10.2f} {:>7.2f}{}\n", p.a, p.b, nodes, "yes",
        p.latency_seconds * 1e6, p.bytes_per_second / 1e9, p.ratio,
        p.slow ? fmt::format("  SLOW: below {:.0f} % of the median {}", 100 * kSlowPairRatio,
                             p.node_a == p.node_b ? "within a node" : "across nodes")
               : "");
  }
  if (r.pairs.empty()) {
    out += "  one rank: no pairs\n";
  }
  if (const auto culprit = slow_node(r.pairs)) {
    const auto it = std::find_if(r.nodes.begin(), r.nodes.end(),
                                 [&](const NodeSummary& n) { return n.node == *culprit; });
    out += fmt::format("#   node {}{} is in every slow pair: look at its link first\n", *culprit,
                       it != r.nodes.end() ? fmt::format(" ({})", it->host) : std::string());
  }
  const int problems = problem_count(r);
  out += fmt::format("#\n# {} problem{}\n", problems, problems == 1 ? "" : "s");
  return out;
}

nlohmann::ordered_json to_json(const ClusterReport& r) {
  nlohmann::ordered_json j;
  j["schema"] = kClusterSchema;
  j["ranks"] = r.ranks;
  j["library"] = r.library;
  j["nodes"] = nlohmann::ordered_json::array();
  for (const NodeSummary& n : r.nodes) {
    j["nodes"].push_back(node_json(n));
  }
  j["outliers"] = nlohmann::ordered_json::array();
  for (const Outlier& o : r.outliers) {
    j["outliers"].push_back(
        {{"node", o.node}, {"key", o.key}, {"value", o.value}, {"others", o.others}});
  }
  j["pair_bytes"] = r.pair_options.bytes;
  j["pair_iters"] = r.pair_options.iters;
  j["pairs"] = nlohmann::ordered_json::array();
  for (const PairResult& p : r.pairs) {
    j["pairs"].push_back(pair_json(p));
  }
  const auto culprit = slow_node(r.pairs);
  j["slow_node"] = culprit ? nlohmann::ordered_json(*culprit) : nlohmann::ordered_json();
  j["problems"] = problem_count(r);
  return j;
}

}  // namespace acco::cluster
