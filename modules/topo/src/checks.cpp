// The rule table: one row per rule, from which both the documented list (rules(), what `acco
// rules` prints) and the checks that check() runs come, so a rule cannot be run without being
// documented or documented without being run. The checks themselves live in checks/ by theme. A
// rule whose evidence topo does not read is listed here too, without a check, and raised where
// that evidence is read (tune-profile-missing: the doctor, from the saved tune profile); the CLI's
// rules_test holds every rule id raised anywhere in the sources against this table.
#include "acco/topo/checks.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "acco/core/names.hpp"

#include "checks/rule_checks.hpp"

namespace acco::topo {
namespace {

using detail::CheckFn;

struct Rule {
  std::string_view id;
  Severity lowest;   // the least severe finding the rule reports
  Severity highest;  // the most severe
  std::string_view title;
  CheckFn check;  // nullptr: raised outside topo (see the top of this file)
  // Its findings rest on PCIe link figures, which a virtual machine's hypervisor makes up.
  bool reads_links = false;
};

constexpr Severity kInfo = Severity::kInfo;
constexpr Severity kWarning = Severity::kWarning;
constexpr Severity kCritical = Severity::kCritical;

// In documentation order, which is also the order check() runs them in.
constexpr std::array kRules = {
    Rule{"pcie-link-downtrained", kInfo, kCritical,
         "PCIe link trained below what device and port support",
         detail::check_pcie_link_downtrained, true},
    Rule{"pcie-slot-limited", kInfo, kWarning, "device supports more than its slot or port",
         detail::check_pcie_slot_limited, true},
    Rule{"pcie-path-bottleneck", kInfo, kWarning,
         "a link above the device is narrower than its own", detail::check_pcie_path_bottleneck,
         true},
    Rule{"pcie-uplink-oversubscribed", kInfo, kWarning,
         "host-bound devices behind a switch exceed its uplink",
         detail::check_pcie_uplink_oversubscribed, true},
    Rule{"gpu-nic-remote", kWarning, kWarning, "a GPU's nearest NIC is across sockets",
         detail::check_gpu_nic_remote},
    Rule{"nvme-gpu-remote", kWarning, kWarning, "a GPU's nearest NVMe drive is across sockets",
         detail::check_nvme_gpu_remote},
    Rule{"nvme-scheduler-not-none", kWarning, kWarning,
         "an NVMe namespace queues through an I/O scheduler",
         detail::check_nvme_scheduler_not_none},
    Rule{"nvme-nr-requests-low", kInfo, kWarning,
         "an NVMe namespace queues few requests per hardware queue",
         detail::check_nvme_nr_requests_low},
    Rule{"nvme-max-sectors-small", kInfo, kWarning,
         "an NVMe namespace splits reads below what its controller takes",
         detail::check_nvme_max_sectors_small},
    Rule{"nvme-read-ahead-small", kInfo, kWarning,
         "an NVMe namespace reads ahead less than the kernel default, or not at all",
         detail::check_nvme_read_ahead_small},
    Rule{"nvme-read-ahead-large", kInfo, kInfo, "an NVMe namespace reads ahead more than 16 MiB",
         detail::check_nvme_read_ahead_large},
    Rule{"nvme-queues-few", kInfo, kInfo, "an NVMe namespace has fewer hardware queues than cores",
         detail::check_nvme_queues_few},
    Rule{"nvme-poll-queues-none", kInfo, kInfo, "the nvme driver has no poll queues (no IOPOLL)",
         detail::check_nvme_poll_queues_none},
    Rule{"data-dir-fs", kInfo, kWarning,
         "the data directory is on overlay, FUSE, memory or network storage, or unknown",
         detail::check_data_dir_fs},
    Rule{
        "data-dir-mount-options", kInfo, kWarning,
        "the data directory's mount options cost reads or writes (sync, data=journal, strictatime)",
        detail::check_data_dir_mount_options},
    Rule{"data-dir-not-nvme", kInfo, kInfo, "the data directory is not on an NVMe namespace",
         detail::check_data_dir_not_nvme},
    Rule{"data-dir-direct-io-refused", kInfo, kWarning,
         "O_DIRECT was refused in the data directory (reads go through the page cache)",
         detail::check_data_dir_direct_io_refused},
    Rule{"data-dir-io-uring-refused", kWarning, kWarning,
         "io_uring cannot be set up (the reader falls back to pread)",
         detail::check_data_dir_io_uring_refused},
    Rule{"numa-unknown", kWarning, kWarning,
         "devices whose NUMA node nothing in sysfs gives, on a multi-node host",
         detail::check_numa_unknown},
    Rule{"numa-topology-inconsistent", kInfo, kWarning,
         "NUMA nodes overlap, are empty, or miss online CPUs (firmware SRAT/SLIT)",
         detail::check_numa_topology_inconsistent},
    Rule{"ib-port-down", kCritical, kCritical, "an InfiniBand/RoCE port is not ACTIVE",
         detail::check_ib_port_down},
    Rule{"ib-rate-low", kWarning, kWarning,
         "an InfiniBand/RoCE port runs below its peers or with few lanes",
         detail::check_ib_rate_low},
    Rule{"nic-pcie-limited", kInfo, kWarning, "a NIC's PCIe path cannot carry its port rate",
         detail::check_nic_pcie_limited, true},
    Rule{"roce-mtu-low", kInfo, kWarning, "a RoCE port's netdev MTU gives a RoCE MTU below 4096",
         detail::check_roce_mtu_low},
    Rule{"roce-gid-v1-only", kWarning, kWarning, "an active RoCE port has no RoCE v2 GID",
         detail::check_roce_gid_v1_only},
    Rule{"rail-unbalanced", kWarning, kWarning,
         "a GPU has no RDMA NIC under its PCIe switch while other GPUs do",
         detail::check_rail_unbalanced},
    Rule{"nic-irq-remote", kWarning, kWarning,
         "a NIC's interrupts go only to CPUs outside its NUMA node", detail::check_nic_irq_remote},
    Rule{"net-socket-buffers-small", kInfo, kWarning,
         "socket buffer ceilings below the fastest link's rate x 1 ms",
         detail::check_net_socket_buffers_small},
    Rule{"dev-shm-small", kWarning, kCritical, "/dev/shm is smaller than 1 GiB",
         detail::check_dev_shm_small},
    Rule{"memlock-limited", kInfo, kWarning, "RLIMIT_MEMLOCK is not unlimited",
         detail::check_memlock_limited},
    Rule{"iommu-translated", kWarning, kWarning, "GPUs/NICs sit in translating IOMMU groups",
         detail::check_iommu_translated},
    Rule{"gpudirect-rdma-missing", kInfo, kWarning, "GPUs and RDMA NICs without GPUDirect RDMA",
         detail::check_gpudirect_rdma_missing},
    Rule{"acs-p2p-redirect", kInfo, kWarning,
         "ACS redirects peer-to-peer traffic to the root complex", detail::check_acs_p2p_redirect},
    Rule{"nvlink-down", kWarning, kCritical, "NVLinks reported inactive by NVML",
         detail::check_nvlink_down},
    Rule{"mig-pending-reset", kWarning, kWarning, "a GPU's MIG mode changes only at its next reset",
         detail::check_mig_pending_reset},
    Rule{"virtualized-topology", kInfo, kWarning, "a VM's flattened, emulated topology",
         detail::check_virtualized_topology},
    Rule{"container-devices-missing", kWarning, kCritical,
         "a container was not given the host's GPU or RDMA device nodes",
         detail::check_container_devices_missing},
    Rule{"nvidia-driver-mismatch", kCritical, kCritical,
         "the NVIDIA libraries do not match the loaded kernel module (NVML error 18)",
         detail::check_nvidia_driver_mismatch},
    Rule{"cuda-needs-newer-driver", kWarning, kCritical,
         "CUDA libraries or frameworks built for a newer CUDA than the loaded driver supports",
         detail::check_cuda_needs_newer_driver},
    Rule{"cuda-compat-older-than-driver", kWarning, kWarning,
         "a forward-compatibility CUDA driver older than the loaded kernel module",
         detail::check_cuda_compat_older_than_driver},
    Rule{"nvml-unavailable", kInfo, kInfo, "NVIDIA GPUs present but NVML could not be used",
         detail::check_nvml_unavailable},
    Rule{"hwloc-disagrees", kInfo, kInfo, "acco's sysfs reader and hwloc read the CPUs differently",
         detail::check_hwloc_disagrees},
    Rule{"input-unreadable", kInfo, kInfo, "a sysfs/procfs file exists but could not be understood",
         detail::check_input_unreadable},
    // Raised by `acco doctor` on the live machine, which reads the saved profile (acco::tune sits
    // above topo).
    Rule{"tune-profile-missing", kInfo, kInfo,
         "no acco tune profile for this machine: the transfer engine runs on its defaults",
         nullptr},
};

}  // namespace

const char* to_string(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kCritical:
      return "critical";
  }
  return "info";
}

bool parse_severity(std::string_view text, Severity& out) {
  static constexpr std::array kSeverities = {Severity::kInfo, Severity::kWarning,
                                             Severity::kCritical};
  const auto s = core::find_named(text, kSeverities);
  if (s) {
    out = *s;
  }
  return s.has_value();
}

const std::vector<RuleInfo>& rules() {
  static const std::vector<RuleInfo> table = [] {
    std::vector<RuleInfo> info;
    info.reserve(kRules.size());
    for (const Rule& rule : kRules) {
      info.push_back({std::string(rule.id), std::string(rule.title), rule.lowest, rule.highest});
    }
    return info;
  }();
  return table;
}

const RuleInfo* find_rule(std::string_view id) {
  const auto& all = rules();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const RuleInfo& r) { return r.id == id; });
  return it == all.end() ? nullptr : &*it;
}

std::vector<Finding> check(const Machine& machine) {
  std::vector<Finding> out;
  for (const Rule& rule : kRules) {
    if (rule.check == nullptr) {
      continue;
    }
    const std::size_t first = out.size();
    rule.check(machine, out);
    for (std::size_t i = first; i < out.size(); ++i) {
      out[i].rule = rule.id;
      if (rule.reads_links) {
        detail::reframe_link_finding_for_guest(machine, out[i]);
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) {
      return a.severity > b.severity;
    }
    if (a.rule != b.rule) {
      return a.rule < b.rule;
    }
    return a.devices < b.devices;
  });
  return out;
}

}  // namespace acco::topo
