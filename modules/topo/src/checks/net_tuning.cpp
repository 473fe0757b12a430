// Network assessment beyond port state and rate: the MTU and GID types of RoCE ports, whether
// every GPU has a NIC under its PCIe switch (rail balance), where a NIC's interrupts land, the
// socket buffer ceilings against the link rate, and the /dev/shm size and RLIMIT_MEMLOCK that
// NCCL, UCX and MPI need.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/topo/link_model.hpp"

#include "checks/check_support.hpp"
#include "checks/rule_checks.hpp"

namespace acco::topo::detail {
namespace {

constexpr int kPortActive = 4;  // ib_port_state ACTIVE

// RoCE sizes its IB MTU from the netdev's: iboe_get_mtu() takes off 96 bytes of GRH, UDP, BTH,
// atomic and XRC extension headers and ICRC, then rounds down to 256..4096. A netdev MTU of
// 4192 or more is what a 4096-byte RoCE MTU, the largest, needs.
constexpr int kRoceHeaderBytes = 96;
constexpr int kRoceMtuMax = 4096;

int roce_mtu(int netdev_mtu) {
  const int payload = netdev_mtu - kRoceHeaderBytes;
  for (const int mtu : {4096, 2048, 1024, 512, 256}) {
    if (payload >= mtu) {
      return mtu;
    }
  }
  return 0;
}

const NetInterface* find_netdev(const Machine& m, const std::string& name) {
  const auto it = std::find_if(m.net_interfaces.begin(), m.net_interfaces.end(),
                               [&](const NetInterface& n) { return n.name == name; });
  return it == m.net_interfaces.end() ? nullptr : &*it;
}

std::string port_attr(const IbPort& p, const std::string& file) {
  return fmt::format("/sys/class/infiniband/{}/ports/{}/{}", p.device, p.port, file);
}

bool is_active_roce(const IbPort& p) {
  return p.state == kPortActive && p.link_layer == "Ethernet";
}

// A data-centre round trip under load. The fabric's idle RTT is 10-50 us, but incast queueing in
// the switches adds up to about a millisecond, and a TCP stream needs rate x RTT of buffer to stay
// at line rate through it.
constexpr double kTypicalRttSeconds = 1e-3;

// The smallest power of two at or above `bytes`, so the sysctl lines carry round figures.
std::int64_t round_up_pow2(double bytes) {
  return static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(bytes)));
}

constexpr std::uint64_t kShmWanted = 1ULL << 30;   // 1 GiB
constexpr std::uint64_t kShmDocker = 64ULL << 20;  // Docker's and Podman's default

}  // namespace

void check_roce_mtu_low(const Machine& m, std::vector<Finding>& out) {
  // Data rails are the fastest RDMA ports; a slower RoCE port beside them is a management or
  // storage port, where the MTU matters less.
  double fastest = 0;
  for (const auto& p : m.ib_ports) {
    if (p.state == kPortActive) {
      fastest = std::max(fastest, p.rate_gbps);
    }
  }
  for (const auto& p : m.ib_ports) {
    if (!is_active_roce(p) || p.netdev.empty()) {
      continue;
    }
    const NetInterface* n = find_netdev(m, p.netdev);
    if (n == nullptr || !n->mtu || roce_mtu(*n->mtu) >= kRoceMtuMax) {
      continue;
    }
    const bool rail = p.rate_gbps + 0.01 >= fastest;
    Finding f;
    f.severity = rail ? Severity::kWarning : Severity::kInfo;
    f.devices = {p.device};
    if (!p.pci.empty()) {
      f.devices.push_back(p.pci);
    }
    f.evidence = {{port_attr(p, "link_layer"), p.link_layer},
                  {port_attr(p, "rate"), p.rate_text},
                  {fmt::format("/sys/class/net/{}/mtu", n->name), std::to_string(*n->mtu)}};
    const int effective = roce_mtu(*n->mtu);
    f.message = fmt::format(
        "RoCE port {} port {} runs over {} with MTU {}, so its RoCE MTU is {} bytes instead of "
        "4096: every RDMA message is cut into {}x as many packets{}",
        p.device, p.port, n->name, *n->mtu, effective, effective > 0 ? kRoceMtuMax / effective : 0,
        rail ? std::string()
             : fmt::format(" (a {} Gb/s port beside {} Gb/s rails: management or storage)",
                           p.rate_gbps, fastest));
    f.recommendation = fmt::format(
        "`ip link set dev {} mtu 9000` (4200 at least; the switch ports must carry jumbo frames "
        "of that size too), persisted in the interface's netplan/NetworkManager/ifcfg file",
        n->name);
    out.push_back(std::move(f));
  }
}

void check_roce_gid_v1_only(const Machine& m, std::vector<Finding>& out) {
  for (const auto& p : m.ib_ports) {
    if (!is_active_roce(p) || p.gid_types.empty() || p.roce_v2_gid_index) {
      continue;
    }
    Finding f;
    f.severity = Severity::kWarning;
    f.devices = {p.device};
    if (!p.pci.empty()) {
      f.devices.push_back(p.pci);
    }
    std::string types;
    for (const auto& t : p.gid_types) {
      types += (types.empty() ? "" : ", ") + t;
    }
    f.evidence = {{port_attr(p, "gid_attrs/types/*"), types}};
    f.message = fmt::format(
        "RoCE port {} port {} has no RoCE v2 GID (types: {}): RoCE v1 is not routable across "
        "IP subnets and gets no ECN congestion control, so NCCL and UCX on a routed or lossy "
        "fabric stall or fall back",
        p.device, p.port, types);
    f.recommendation = fmt::format(
        "Enable RoCE v2 (`cma_roce_mode -d {} -p {} -m 2`, and give {} an IP address: RoCE v2 "
        "GIDs are made from the interface's addresses), then set NCCL_IB_GID_INDEX to the "
        "index whose gid_attrs/types entry reads 'RoCE v2' (`show_gids {}`)",
        p.device, p.port, p.netdev.empty() ? std::string("its netdev") : p.netdev, p.device);
    out.push_back(std::move(f));
  }
}

void check_rail_unbalanced(const Machine& m, std::vector<Finding>& out) {
  // Rails are the RDMA NICs; an Ethernet port without RDMA carries no GPUDirect traffic. A NIC
  // function driven by the same driver as those with ports counts too: its port files may have
  // been unreadable (then left out of ib_ports), which says nothing about the card.
  std::set<std::string> rails;
  std::set<std::string> rdma_drivers;
  for (const auto& p : m.ib_ports) {
    if (const PciDevice* d = m.find(p.pci)) {
      rails.insert(d->address);
      if (!d->driver.empty()) {
        rdma_drivers.insert(d->driver);
      }
    }
  }
  for (const auto& d : m.pci_devices) {
    if (d.kind == DeviceKind::kNic && rdma_drivers.contains(d.driver)) {
      rails.insert(d.address);
    }
  }
  const auto gpus = gdr_gpus(m);
  if (rails.empty() || gpus.size() < 2) {
    return;
  }
  struct Nearest {
    std::string gpu;
    std::string nic;
    Path path;
  };
  std::vector<Nearest> nearest;
  for (const auto& g : gpus) {
    Nearest best{g, {}, {}};
    for (const auto& nic : rails) {
      const auto path = classify_path(m, g, nic);
      if (best.nic.empty() || path.path_class < best.path.path_class) {
        best.nic = nic;
        best.path = path;
      }
    }
    nearest.push_back(std::move(best));
  }
  const auto on_switch = [](const Nearest& n) { return n.path.path_class <= PathClass::kPxb; };
  const auto railed = std::count_if(nearest.begin(), nearest.end(), on_switch);
  if (railed == 0) {
    return;  // no GPU shares a switch with a NIC: the socket level is gpu-nic-remote's
  }
  for (const auto& n : nearest) {
    if (on_switch(n)) {
      continue;
    }
    Finding f;
    f.severity = Severity::kWarning;
    f.devices = {n.gpu, n.nic};
    const PciDevice* gpu = m.find(n.gpu);
    const PciDevice* nic = m.find(n.nic);
    // The path class, and the bridges each hangs off, which show why it is not PIX/PXB.
    f.evidence = {{fmt::format("path class {} <-> {}", n.gpu, n.nic), to_string(n.path)},
                  {fmt::format("upstream bridge of {}", n.gpu), gpu->parent},
                  {fmt::format("upstream bridge of {}", n.nic), nic->parent}};
    f.message = fmt::format(
        "gpu {} has no RDMA NIC under its PCIe switch while {} of {} GPUs do: its nearest, {}, "
        "is {} away, so its GPUDirect traffic crosses the root complex and shares {}'s rail",
        n.gpu, railed, nearest.size(), n.nic, to_string(n.path), n.nic);
    f.recommendation =
        "Install a NIC under the GPU's PCIe switch (one NIC per GPU, or per GPU pair, on "
        "every switch alike); until then let NCCL pair it across rails (NCCL_CROSS_NIC=1, PXN "
        "with NCCL_PXN_DISABLE=0) and check the pairing with `nvidia-smi topo -m`";
    out.push_back(std::move(f));
  }
}

void check_nic_irq_remote(const Machine& m, std::vector<Finding>& out) {
  if (m.numa_nodes.size() < 2) {
    return;
  }
  for (const auto& d : m.pci_devices) {
    if (d.kind != DeviceKind::kNic || d.irqs.empty() || d.numa_node < 0) {
      continue;
    }
    const auto node = std::find_if(m.numa_nodes.begin(), m.numa_nodes.end(),
                                   [&](const NumaNode& n) { return n.id == d.numa_node; });
    if (node == m.numa_nodes.end() || node->cpus.empty()) {
      continue;
    }
    const std::set<int> local(node->cpus.begin(), node->cpus.end());
    std::vector<const Irq*> remote;
    for (const auto& irq : d.irqs) {
      if (!irq.cpus.empty() && std::none_of(irq.cpus.begin(), irq.cpus.end(),
                                            [&](int cpu) { return local.contains(cpu); })) {
        remote.push_back(&irq);
      }
    }
    if (remote.empty()) {
      continue;
    }
    const std::string cpulist = units::format_cpulist(node->cpus);
    Finding f;
    f.severity = Severity::kWarning;
    f.devices = {d.address};
    f.evidence = numa_evidence(d);
    f.evidence.push_back({node->cpus_source.empty()
                              ? fmt::format("/sys/devices/system/node/node{}/cpulist", node->id)
                              : node->cpus_source,
                          cpulist});
    std::string numbers;
    for (const auto* irq : remote) {
      numbers += (numbers.empty() ? "" : " ") + std::to_string(irq->irq);
      if (f.evidence.size() < 6) {
        f.evidence.push_back(
            {fmt::format("/proc/irq/{}/smp_affinity_list", irq->irq), irq->affinity_text});
      }
    }
    f.message = fmt::format(
        "{}: {} of its {} interrupt vectors are delivered only to CPUs outside its NUMA node {} "
        "(CPUs {}), so every completion crosses the socket interconnect before the driver sees "
        "it",
        name_of(d), remote.size(), d.irqs.size(), d.numa_node, cpulist);
    f.recommendation = fmt::format(
        "Keep them on node {}: `for i in {}; do echo {} > /proc/irq/$i/smp_affinity_list; "
        "done`, and stop irqbalance from moving them back (`systemctl disable --now "
        "irqbalance`, or IRQBALANCE_BANNED_CPULIST), or run `set_irq_affinity_cpulist.sh {} "
        "<netdev>` from mlnx-tools",
        d.numa_node, numbers, cpulist, cpulist);
    out.push_back(std::move(f));
  }
}

void check_net_socket_buffers_small(const Machine& m, std::vector<Finding>& out) {
  const NetInterface* fastest = nullptr;
  for (const auto& n : m.net_interfaces) {
    if (!n.pci.empty() && n.operstate == "up" && n.speed_mbps &&
        (fastest == nullptr || *n.speed_mbps > *fastest->speed_mbps)) {
      fastest = &n;
    }
  }
  if (fastest == nullptr) {
    return;
  }
  const double bdp = static_cast<double>(*fastest->speed_mbps) * 1e6 / 8 * kTypicalRttSeconds;
  const std::int64_t wanted = round_up_pow2(bdp);
  const HostLimits& l = m.limits;
  struct Setting {
    const char* sysctl;
    const char* path;
    const std::optional<std::int64_t>& value;
    const std::string& text;
  };
  const std::string none;
  const std::vector<Setting> settings = {
      {"net.core.rmem_max", "/proc/sys/net/core/rmem_max", l.rmem_max, none},
      {"net.core.wmem_max", "/proc/sys/net/core/wmem_max", l.wmem_max, none},
      {"net.ipv4.tcp_rmem", "/proc/sys/net/ipv4/tcp_rmem", l.tcp_rmem_max, l.tcp_rmem_text},
      {"net.ipv4.tcp_wmem", "/proc/sys/net/ipv4/tcp_wmem", l.tcp_wmem_max, l.tcp_wmem_text}};
  Finding f;
  std::vector<std::string> lines;
  std::string low;
  for (const auto& s : settings) {
    if (!s.value || static_cast<double>(*s.value) >= bdp) {
      continue;
    }
    f.evidence.push_back({s.path, s.text.empty() ? std::to_string(*s.value) : s.text});
    low += (low.empty() ? "" : ", ") + fmt::format("{} {}", s.sysctl, *s.value);
    if (s.text.empty()) {
      lines.push_back(fmt::format("{} = {}", s.sysctl, wanted));
    } else {
      // Keep the minimum and default fields as they are; only the ceiling moves.
      const auto fields = units::split(s.text, ' ');
      const std::string head = fields.size() == 3 ? fields[0] + " " + fields[1] : "4096 131072";
      lines.push_back(fmt::format("{} = {} {}", s.sysctl, head, wanted));
    }
  }
  if (lines.empty()) {
    return;
  }
  const bool rdma = std::any_of(m.ib_ports.begin(), m.ib_ports.end(),
                                [](const IbPort& p) { return p.state == kPortActive; });
  f.severity = rdma ? Severity::kInfo : Severity::kWarning;
  f.devices = {fastest->name};
  f.evidence.insert(f.evidence.begin(), {fmt::format("/sys/class/net/{}/speed", fastest->name),
                                         std::to_string(*fastest->speed_mbps)});
  f.message = fmt::format(
      "socket buffer ceilings ({}) are below {}, what {} at {} Mb/s needs for one TCP stream "
      "over a 1 ms round trip{}",
      low, units::format_bytes(static_cast<std::uint64_t>(bdp)), fastest->name,
      *fastest->speed_mbps,
      rdma ? ": only NCCL's bootstrap and socket fallback use them here, the data goes over RDMA"
           : ": NCCL's socket transport, Gloo and MPI's TCP BTL cannot fill the link");
  std::string body;
  for (const auto& line : lines) {
    body += (body.empty() ? "" : "\n") + line;
  }
  f.recommendation = fmt::format(
      "Put these lines in /etc/sysctl.d/90-acco-net.conf and run `sysctl --system`:\n{}", body);
  out.push_back(std::move(f));
}

void check_dev_shm_small(const Machine& m, std::vector<Finding>& out) {
  const HostLimits& l = m.limits;
  if (!l.shm_bytes || *l.shm_bytes >= kShmWanted) {
    return;
  }
  Finding f;
  f.severity = *l.shm_bytes <= kShmDocker ? Severity::kCritical : Severity::kWarning;
  f.devices = {"/dev/shm"};
  f.evidence = {{"/proc/self/mountinfo", "/dev/shm tmpfs " + l.shm_evidence}};
  f.message = fmt::format(
      "/dev/shm holds only {}: NCCL's shared-memory transport, the CUDA IPC handles between "
      "local ranks and PyTorch's DataLoader workers need more, and NCCL fails with 'Error while "
      "creating shared memory segment' (nccl#290)",
      units::format_bytes(*l.shm_bytes));
  f.recommendation =
      "In a container: `docker run --ipc=host` or `--shm-size=1g` (Kubernetes: an emptyDir "
      "with medium: Memory mounted at /dev/shm); on a host: `mount -o remount,size=1G "
      "/dev/shm` and the same size= in /etc/fstab";
  out.push_back(std::move(f));
}

void check_memlock_limited(const Machine& m, std::vector<Finding>& out) {
  const HostLimits& l = m.limits;
  if (!l.memlock_unlimited || *l.memlock_unlimited) {
    return;
  }
  const bool rdma = !m.ib_ports.empty();
  Finding f;
  f.severity = rdma ? Severity::kWarning : Severity::kInfo;
  f.devices = {"RLIMIT_MEMLOCK"};
  f.evidence = {{"/proc/self/limits", "Max locked memory " + l.memlock_text}};
  const std::string limit =
      l.memlock_bytes ? units::format_bytes(*l.memlock_bytes) : l.memlock_text;
  f.message =
      rdma ? fmt::format(
                 "locked memory is limited to {} with {} RDMA port(s): every verbs memory "
                 "registration (NCCL's IB buffers, UCX, MPI) pins pages against this limit and "
                 "fails with 'Cannot allocate memory' once it is reached",
                 limit, m.ib_ports.size())
           : fmt::format(
                 "locked memory is limited to {}: UCX and MPI shared-memory transports and "
                 "io_uring registered buffers pin pages against this limit",
                 limit);
  f.recommendation =
      "`ulimit -l unlimited` in the job's shell (up to the hard limit), `--ulimit memlock=-1` for "
      "docker run, `* - memlock unlimited` in /etc/security/limits.d/90-rdma.conf, "
      "LimitMEMLOCK=infinity for systemd services (slurmd too, which passes its limit on)";
  out.push_back(std::move(f));
}

}  // namespace acco::topo::detail
