#include "acco/topo/nccl_env.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "acco/core/file.hpp"
#include "acco/core/units.hpp"
#include "acco/topo/link_model.hpp"

#include "checks/check_support.hpp"

namespace acco::topo {
namespace {

constexpr int kPortActive = 4;  // ib_port_state ACTIVE

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) {
    out += (out.empty() ? "" : std::string(sep)) + item;
  }
  return out;
}

// The active RDMA ports at the fastest rate; `slower` gets those left out.
std::vector<const IbPort*> rdma_ports(const Machine& m, std::vector<const IbPort*>& slower) {
  double best = 0;
  for (const auto& p : m.ib_ports) {
    if (p.state == kPortActive) {
      best = std::max(best, p.rate_gbps);
    }
  }
  std::vector<const IbPort*> out;
  for (const auto& p : m.ib_ports) {
    if (p.state != kPortActive) {
      continue;
    }
    (p.rate_gbps + 0.01 >= best ? out : slower).push_back(&p);
  }
  return out;
}

// Interfaces no collective should bind to even when they have a PCI function behind them.
bool virtual_name(std::string_view name) {
  constexpr std::array<std::string_view, 11> kPrefixes = {
      "lo", "docker", "virbr", "veth", "br-", "cni", "flannel", "cali", "vxlan", "tun", "tap"};
  return std::any_of(kPrefixes.begin(), kPrefixes.end(), [&](std::string_view prefix) {
    return name.substr(0, prefix.size()) == prefix;
  });
}

struct SocketChoice {
  std::vector<std::string> names;
  std::string reason;
};

// The up interfaces of physical functions at the fastest known speed. IPoIB interfaces count
// only when nothing else is up: NCCL's bootstrap and MPI's out-of-band traffic belong on the
// Ethernet side, and an IPoIB interface often carries no address.
SocketChoice socket_interfaces(const Machine& m) {
  std::set<std::string> ipoib;
  for (const auto& p : m.ib_ports) {
    if (p.link_layer == "InfiniBand" && !p.netdev.empty()) {
      ipoib.insert(p.netdev);
    }
  }
  std::vector<const NetInterface*> up;
  std::vector<const NetInterface*> up_ipoib;
  for (const auto& n : m.net_interfaces) {
    if (n.pci.empty() || n.operstate != "up" || virtual_name(n.name)) {
      continue;
    }
    (ipoib.contains(n.name) ? up_ipoib : up).push_back(&n);
  }
  const bool only_ipoib = up.empty();
  const auto& pool = only_ipoib ? up_ipoib : up;
  SocketChoice choice;
  if (pool.empty()) {
    return choice;
  }
  std::int64_t best = 0;
  for (const auto* n : pool) {
    best = std::max(best, n->speed_mbps.value_or(0));
  }
  for (const auto* n : pool) {
    if (best == 0 || n->speed_mbps.value_or(0) == best) {
      choice.names.push_back(n->name);
    }
  }
  choice.reason = fmt::format(
      "{} interface(s) up with a PCI function behind them ({}){}{}", pool.size(),
      only_ipoib ? "IPoIB only: no Ethernet interface is up"
                 : "loopback, bridges, veth, IPoIB left out",
      best > 0 ? fmt::format(", the fastest at {} Mb/s", best) : std::string(", speeds unknown"),
      pool.size() > choice.names.size()
          ? fmt::format(", {} slower left out", pool.size() - choice.names.size())
          : std::string());
  return choice;
}

std::string port_list(const std::vector<const IbPort*>& ports) {
  std::vector<std::string> names;
  names.reserve(ports.size());
  for (const auto* p : ports) {
    names.push_back(fmt::format("{}:{}", p->device, p->port));
  }
  return join(names, ",");
}

// The kernel's cpumap form NCCL reads as affinity: 32-bit hex groups, most significant first.
std::string cpu_mask(const std::vector<int>& cpus, int nr_cpus) {
  const int groups = std::max(1, (nr_cpus + 31) / 32);
  std::vector<std::uint32_t> words(static_cast<std::size_t>(groups), 0);
  for (const int cpu : cpus) {
    if (cpu >= 0 && cpu / 32 < groups) {
      words[static_cast<std::size_t>(cpu / 32)] |= 1U << (cpu % 32);
    }
  }
  std::string out;
  for (int g = groups - 1; g >= 0; --g) {
    out += fmt::format("{}{:08x}", out.empty() ? "" : ",", words[static_cast<std::size_t>(g)]);
  }
  return out;
}

// The device's own link capability: in a guest the emulated port above it trains to whatever
// the hypervisor chose, while max_link_* still comes from the passed-through device.
PcieLink own_link(const PciDevice& d) {
  return d.max.known() ? d.max : d.current;
}

std::string pci_element(const PciDevice& d, const std::string& indent) {
  const PcieLink link = own_link(d);
  std::string attrs = fmt::format(
      R"(busid="{}" class="0x{:06x}" vendor="0x{:04x}" device="0x{:04x}" subsystem_vendor="0x{:04x}" subsystem_device="0x{:04x}")",
      d.address, d.class_code, d.vendor_id, d.device_id, d.subsystem_vendor_id,
      d.subsystem_device_id);
  if (link.known()) {
    attrs += fmt::format(R"( link_speed="{}" link_width="{}")", detail::speed_text(link.speed_gts),
                         link.width);
  }
  return fmt::format("{}<pci {}/>\n", indent, attrs);
}

struct Group {
  std::vector<const PciDevice*> gpus;
  std::vector<const PciDevice*> nics;
};

// The RDMA NICs at the fastest rate, one entry per PCI function, in address order.
std::vector<const PciDevice*> rail_nics(const Machine& m) {
  std::vector<const IbPort*> slower;
  std::vector<const PciDevice*> nics;
  for (const auto* p : rdma_ports(m, slower)) {
    const PciDevice* d = m.find(p->pci);
    if (d != nullptr && std::find(nics.begin(), nics.end(), d) == nics.end()) {
      nics.push_back(d);
    }
  }
  std::sort(nics.begin(), nics.end(),
            [](const PciDevice* a, const PciDevice* b) { return a->address < b->address; });
  return nics;
}

// As many switches as the smaller side when the larger divides evenly over them, each taking
// its share in address order; else every device alone.
std::vector<Group> make_groups(const std::vector<const PciDevice*>& gpus,
                               const std::vector<const PciDevice*>& nics, bool paired) {
  std::vector<Group> groups;
  if (paired) {
    const std::size_t small = std::min(gpus.size(), nics.size());
    groups.resize(small);
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      groups[i * small / gpus.size()].gpus.push_back(gpus[i]);
    }
    for (std::size_t i = 0; i < nics.size(); ++i) {
      groups[i * small / nics.size()].nics.push_back(nics[i]);
    }
    return groups;
  }
  for (const auto* g : gpus) {
    groups.push_back({{g}, {}});
  }
  for (const auto* n : nics) {
    groups.push_back({{}, {n}});
  }
  return groups;
}

struct Placement {
  std::vector<const NumaNode*> nodes;               // those with CPUs
  int nr_cpus = 0;                                  // highest CPU + 1, the affinity mask's width
  std::map<int, std::vector<std::size_t>> by_node;  // node id -> groups
  bool spread = false;  // some group's node was unknown and chosen by order
};

// The NUMA node of each group: its devices' own when known, else spread over the nodes in
// order.
Placement place(const Machine& m, const std::vector<Group>& groups) {
  Placement out;
  for (const auto& n : m.numa_nodes) {
    if (!n.cpus.empty()) {
      out.nodes.push_back(&n);
      out.nr_cpus = std::max(out.nr_cpus, n.cpus.back() + 1);
    }
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    int node = -1;
    for (const auto& members : {groups[i].gpus, groups[i].nics}) {
      for (const auto* d : members) {
        node = node < 0 ? d->numa_node : node;
      }
    }
    if (node < 0 && !out.nodes.empty()) {
      node = out.nodes[i * out.nodes.size() / groups.size()]->id;
      out.spread = true;
    }
    out.by_node[node].push_back(i);
  }
  return out;
}

// One made-up switch at the fastest of its devices' own links, with the devices below it.
std::string switch_xml(const Group& g, int number) {
  PcieLink fastest;
  for (const auto& members : {g.gpus, g.nics}) {
    for (const auto* d : members) {
      const PcieLink l = own_link(*d);
      fastest = l.speed_gts > fastest.speed_gts ? l : fastest;
    }
  }
  std::string link;
  if (fastest.known()) {
    link = fmt::format(R"( link_speed="{}" link_width="{}")", detail::speed_text(fastest.speed_gts),
                       fastest.width);
  }
  std::string xml =
      fmt::format("    <pci busid=\"ffff:ff:{:02x}.0\" class=\"0x060400\"{}>\n", number, link);
  for (const auto& members : {g.gpus, g.nics}) {
    for (const auto* d : members) {
      xml += pci_element(*d, "      ");
    }
  }
  return xml + "    </pci>\n";
}

}  // namespace

Status write_nccl_topo_file(const Machine& machine, const NcclEnv& env, const std::string& path) {
  if (!env.wants_topo_file) {
    return fail(Errc::kInvalidArgument,
                env.virtual_machine
                    ? fmt::format("{} is a virtual machine without GPUs; there is nothing for "
                                  "NCCL to pair",
                                  machine.origin)
                    : fmt::format("{} is not a virtual machine; NCCL reads its PCI topology from "
                                  "sysfs as it is",
                                  machine.origin));
  }
  if (auto written = core::write_file_atomic(path, nccl_topo_xml(machine)); !written) {
    return fail(Errc::kCannotWrite, std::move(written.error().message));
  }
  return {};
}

NcclEnv nccl_env(const Machine& m) {
  NcclEnv env;
  std::vector<const IbPort*> slower;
  const auto ports = rdma_ports(m, slower);
  if (!ports.empty()) {
    std::string reason = fmt::format("the {} active InfiniBand/RoCE port(s) at {} Gb/s",
                                     ports.size(), ports.front()->rate_gbps);
    if (!slower.empty()) {
      reason += fmt::format("; slower ports left out: {}", port_list(slower));
    }
    const auto down = std::count_if(m.ib_ports.begin(), m.ib_ports.end(),
                                    [](const IbPort& p) { return p.state != kPortActive; });
    if (down > 0) {
      reason += fmt::format("; {} port(s) not ACTIVE left out", down);
    }
    env.settings.push_back({"NCCL_IB_HCA", "=" + port_list(ports), reason});
  } else {
    env.notes.push_back(m.ib_ports.empty()
                            ? "no InfiniBand/RoCE port: NCCL uses its socket transport"
                            : "no InfiniBand/RoCE port is ACTIVE: NCCL falls back to sockets");
  }
  const SocketChoice sockets = socket_interfaces(m);
  if (!sockets.names.empty()) {
    env.settings.push_back({"NCCL_SOCKET_IFNAME", "=" + join(sockets.names, ","), sockets.reason});
    env.settings.push_back({"OMPI_MCA_btl_tcp_if_include", join(sockets.names, ","),
                            "the same interfaces for "
                            "Open MPI's TCP BTL"});
  } else {
    env.notes.push_back("no physical interface is up: NCCL_SOCKET_IFNAME left to NCCL");
  }
  if (!ports.empty()) {
    env.settings.push_back({"UCX_NET_DEVICES", port_list(ports), "the same RDMA ports for UCX"});
  } else if (!sockets.names.empty()) {
    env.settings.push_back(
        {"UCX_NET_DEVICES", join(sockets.names, ","), "no RDMA port: UCX over TCP on these"});
  }
  env.virtual_machine = !detail::guest_evidence(m).empty();
  env.wants_topo_file = env.virtual_machine && !detail::gdr_gpus(m).empty();
  return env;
}

std::string nccl_topo_xml(const Machine& m) {
  std::vector<const PciDevice*> gpus;
  for (const auto& address : detail::gdr_gpus(m)) {
    gpus.push_back(m.find(address));
  }
  const auto nics = rail_nics(m);
  const std::size_t small = std::min(gpus.size(), nics.size());
  const bool paired = small > 0 && std::max(gpus.size(), nics.size()) % small == 0;
  const auto groups = make_groups(gpus, nics, paired);
  const Placement placement = place(m, groups);

  std::string xml = fmt::format(
      "<!-- NCCL_TOPO_FILE for {} written by acco probe --nccl-topo-file.\n"
      "     The guest's PCI tree is the hypervisor's, so {}, in address order; check the pairing\n"
      "     against the host's `nvidia-smi topo -m`.{}\n"
      "     NCCL fills in the rest (GPU, NVLink and NIC details). -->\n",
      m.hostname.empty() ? std::string("this machine") : m.hostname,
      paired ? fmt::format("{} GPU(s) and {} NIC(s) share each made-up PCIe switch (ffff:ff:NN.0)",
                           gpus.size() / small, nics.size() / small)
             : std::string("each device has a made-up PCIe switch (ffff:ff:NN.0) of its own: the "
                           "GPU and NIC counts do not divide"),
      placement.spread ? "\n     numa_node is -1 in the guest: the switches are spread over its "
                         "NUMA nodes in order."
                       : "");
  xml += "<system version=\"1\">\n";
  int switch_number = 1;
  for (const auto& [node, members] : placement.by_node) {
    const auto it = std::find_if(placement.nodes.begin(), placement.nodes.end(),
                                 [node = node](const NumaNode* n) { return n->id == node; });
    xml += it != placement.nodes.end() ? fmt::format("  <cpu numaid=\"{}\" affinity=\"{}\">\n",
                                                     node, cpu_mask((*it)->cpus, placement.nr_cpus))
                                       : std::string("  <cpu numaid=\"-1\">\n");
    for (const std::size_t i : members) {
      xml += switch_xml(groups[i], switch_number++);
    }
    xml += "  </cpu>\n";
  }
  xml += "</system>\n";
  return xml;
}

nlohmann::ordered_json to_json(const NcclEnv& env, const std::string& topo_file) {
  nlohmann::ordered_json settings = nlohmann::ordered_json::array();
  for (const auto& s : env.settings) {
    settings.push_back({{"name", s.name}, {"value", s.value}, {"reason", s.reason}});
  }
  return {{"schema", "acco.nccl-env/1"},
          {"settings", settings},
          {"notes", env.notes},
          {"virtual_machine", env.virtual_machine},
          {"topo_file_advised", env.wants_topo_file},
          {"topo_file", topo_file.empty() ? nlohmann::ordered_json(nullptr)
                                          : nlohmann::ordered_json(topo_file)}};
}

// A value for a POSIX shell: single-quoted, a quote inside as '\''.
namespace {

std::string shell_quote(const std::string& value) {
  std::string out = "'";
  for (const char c : value) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

}  // namespace

std::string nccl_env_text(const topo::Machine& m, const topo::NcclEnv& env,
                          const std::string& topo_file) {
  std::string out =
      fmt::format("# NCCL, UCX and Open MPI settings acco recommends for {} ({})\n",
                  m.hostname.empty() ? std::string("this node") : m.hostname, m.origin);
  for (const auto& s : env.settings) {
    out += fmt::format("# {}: {}\nexport {}={}\n", s.name, s.reason, s.name, shell_quote(s.value));
  }
  for (const auto& note : env.notes) {
    out += fmt::format("# {}\n", note);
  }
  if (!topo_file.empty()) {
    out += fmt::format(
        "# NCCL_TOPO_FILE: a virtual machine, whose flattened PCI tree misleads NCCL; written by "
        "--nccl-topo-file\nexport NCCL_TOPO_FILE={}\n",
        shell_quote(topo_file));
  } else if (env.wants_topo_file) {
    out +=
        "# a virtual machine: NCCL misreads its flattened PCI tree; add --nccl-topo-file FILE to "
        "write an NCCL_TOPO_FILE\n";
  }
  return out;
}

}  // namespace acco::topo
