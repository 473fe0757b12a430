// The bus bandwidth a collective can reach: the slowest link its data crosses. Across nodes that
// is the slowest node's fastest network port (an active InfiniBand/RoCE port's data rate, else an
// up Ethernet interface's speed); within one node the ranks share memory and no network link
// bounds them, so no peak is claimed (multinode.md c: inter-node busbw ~ the NIC rate).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "acco/cluster/collective_bench.hpp"
#include "acco/cluster/qdisc.hpp"
#include "acco/topo/machine.hpp"

namespace acco::cluster {

struct NodeLink {
  std::string node;  // host name, as the node reports it (for the message only)
  std::string port;  // "mlx5_0:1", "eth0"; empty when the node has none up
  double bytes_per_second = 0;
  bool operator==(const NodeLink&) const = default;
};

// The fastest active port of `machine` (loopback, down and unknown-speed interfaces left out). An
// interface in `limits` (its root qdisc's rate, root_qdisc_limits()) carries at most that rate,
// and an interface of unknown speed with a limit carries the limit; its port then reads
// "eth0 (tbf)".
[[nodiscard]] NodeLink fastest_link(const topo::Machine& machine,
                                    std::span<const QdiscLimit> limits = {});

// One entry per node. Fewer than two nodes: no peak, the reason in `source`.
[[nodiscard]] ExpectedPeak expected_peak(const std::vector<NodeLink>& nodes);

// "node\tport\trate" and back, to gather the nodes' links over the communicator.
[[nodiscard]] std::string encode(const NodeLink& link);
[[nodiscard]] Result<NodeLink> decode_node_link(const std::string& text);

}  // namespace acco::cluster
