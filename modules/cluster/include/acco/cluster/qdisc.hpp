// The rate limit of each network interface's root queueing discipline, read from the kernel over
// rtnetlink (an RTM_GETQDISC dump, what `tc qdisc show` asks): a port shaped with tbf below its
// line rate carries no more than the shaping, whatever /sys/class/net/X/speed says (a veth reads
// 10 Gb/s there). Only tbf carries one rate for the whole interface; htb and others rate their
// classes, not the root, and are not read.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "acco/core/result.hpp"

namespace acco::cluster {

struct QdiscLimit {
  std::string interface;  // "eth0"
  std::string kind;       // "tbf"
  double bytes_per_second = 0;
  bool operator==(const QdiscLimit&) const = default;
};

// Pure: the root tbf limits in a buffer of netlink messages (RTM_NEWQDISC, as a dump returns
// them), each named by `name_of(ifindex)`. Other qdiscs, non-root ones and malformed or truncated
// messages are skipped.
[[nodiscard]] std::vector<QdiscLimit> parse_qdisc_dump(
    std::span<const std::byte> messages, const std::function<std::string(int)>& name_of);

// This network namespace's root tbf limits. kUnavailable when the netlink socket cannot be
// opened or the dump fails (a sandbox without NETLINK_ROUTE), with the reason.
[[nodiscard]] Result<std::vector<QdiscLimit>> root_qdisc_limits();

}  // namespace acco::cluster
