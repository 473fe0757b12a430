#include "acco/cluster/expected_peak.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "acco/core/units.hpp"

namespace acco::cluster {

NodeLink fastest_link(const topo::Machine& machine, std::span<const QdiscLimit> limits) {
  NodeLink best{machine.hostname, "", 0};
  for (const topo::IbPort& p : machine.ib_ports) {
    const double rate = p.data_rate_gbps * 1e9 / 8;
    if (p.state == 4 && rate > best.bytes_per_second) {  // 4: ACTIVE
      best.port = fmt::format("{}:{}", p.device, p.port);
      best.bytes_per_second = rate;
    }
  }
  for (const topo::NetInterface& n : machine.net_interfaces) {
    if (n.name == "lo" || n.operstate != "up") {
      continue;
    }
    const auto limit = std::find_if(limits.begin(), limits.end(),
                                    [&](const QdiscLimit& l) { return l.interface == n.name; });
    const bool speed_known = n.speed_mbps && *n.speed_mbps > 0;
    double rate = speed_known ? static_cast<double>(*n.speed_mbps) * 1e6 / 8 : 0;
    std::string port = n.name;
    if (limit != limits.end() && (rate <= 0 || limit->bytes_per_second < rate)) {
      rate = limit->bytes_per_second;
      port = fmt::format("{} ({})", n.name, limit->kind);
    }
    if (rate > best.bytes_per_second) {
      best.port = port;
      best.bytes_per_second = rate;
    }
  }
  return best;
}

ExpectedPeak expected_peak(const std::vector<NodeLink>& nodes) {
  if (nodes.size() < 2) {
    return {0, "one node: the ranks share memory, no network link bounds them"};
  }
  const auto slowest = std::min_element(
      nodes.begin(), nodes.end(),
      [](const NodeLink& a, const NodeLink& b) { return a.bytes_per_second < b.bytes_per_second; });
  if (slowest->bytes_per_second <= 0) {
    return {0, fmt::format("node {} has no network port up with a known speed", slowest->node)};
  }
  return {slowest->bytes_per_second,
          fmt::format("{} at {} on {}, the slowest of {} nodes' fastest ports", slowest->port,
                      units::format_rate(slowest->bytes_per_second), slowest->node, nodes.size())};
}

std::string encode(const NodeLink& link) {
  return fmt::format("{}\t{}\t{}", link.node, link.port, link.bytes_per_second);
}

Result<NodeLink> decode_node_link(const std::string& text) {
  const auto a = text.find('\t');
  const auto b = a == std::string::npos ? a : text.find('\t', a + 1);
  if (b == std::string::npos) {
    return fail(Errc::kInvalidArgument, fmt::format("node link '{}': expected 3 fields", text));
  }
  NodeLink link{text.substr(0, a), text.substr(a + 1, b - a - 1), 0};
  const std::string rate = text.substr(b + 1);
  const auto [ptr, ec] =
      std::from_chars(rate.data(), rate.data() + rate.size(), link.bytes_per_second);
  if (ec != std::errc() || ptr != rate.data() + rate.size()) {
    return fail(Errc::kInvalidArgument, fmt::format("node link '{}': bad rate", text));
  }
  return link;
}

}  // namespace acco::cluster
