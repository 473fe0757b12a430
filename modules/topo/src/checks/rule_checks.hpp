// The check behind each rule, grouped by theme into the files named below. A check appends the
// findings of its one rule to `out`, in a fixed order; check() (checks.cpp) runs them in the order
// of the rule table, stamps each finding with its rule's id and sorts.
#pragma once

#include <vector>

#include "acco/topo/checks.hpp"
#include "acco/topo/machine.hpp"

namespace acco::topo::detail {

using CheckFn = void (*)(const Machine& m, std::vector<Finding>& out);

// pcie.cpp: links, slots, paths to the CPU, switch uplinks and ACS on the bridges.
void check_pcie_link_downtrained(const Machine& m, std::vector<Finding>& out);
void check_pcie_slot_limited(const Machine& m, std::vector<Finding>& out);
void check_pcie_path_bottleneck(const Machine& m, std::vector<Finding>& out);
void check_pcie_uplink_oversubscribed(const Machine& m, std::vector<Finding>& out);
void check_acs_p2p_redirect(const Machine& m, std::vector<Finding>& out);

// locality.cpp: which socket a device hangs off.
void check_gpu_nic_remote(const Machine& m, std::vector<Finding>& out);
void check_numa_unknown(const Machine& m, std::vector<Finding>& out);

// storage.cpp: NVMe drives, their block queues and the data directory's file system, O_DIRECT
// and io_uring there.
void check_nvme_gpu_remote(const Machine& m, std::vector<Finding>& out);
void check_nvme_scheduler_not_none(const Machine& m, std::vector<Finding>& out);
void check_nvme_nr_requests_low(const Machine& m, std::vector<Finding>& out);
void check_nvme_max_sectors_small(const Machine& m, std::vector<Finding>& out);
void check_nvme_read_ahead_small(const Machine& m, std::vector<Finding>& out);
void check_nvme_read_ahead_large(const Machine& m, std::vector<Finding>& out);
void check_nvme_queues_few(const Machine& m, std::vector<Finding>& out);
void check_nvme_poll_queues_none(const Machine& m, std::vector<Finding>& out);
void check_data_dir_fs(const Machine& m, std::vector<Finding>& out);
void check_data_dir_mount_options(const Machine& m, std::vector<Finding>& out);
void check_data_dir_not_nvme(const Machine& m, std::vector<Finding>& out);
void check_data_dir_direct_io_refused(const Machine& m, std::vector<Finding>& out);
void check_data_dir_io_uring_refused(const Machine& m, std::vector<Finding>& out);

// network.cpp: InfiniBand/RoCE ports, NIC bandwidth, GPUDirect RDMA and NVLink.
void check_ib_port_down(const Machine& m, std::vector<Finding>& out);
void check_ib_rate_low(const Machine& m, std::vector<Finding>& out);
void check_nic_pcie_limited(const Machine& m, std::vector<Finding>& out);
void check_gpudirect_rdma_missing(const Machine& m, std::vector<Finding>& out);
void check_nvlink_down(const Machine& m, std::vector<Finding>& out);
void check_mig_pending_reset(const Machine& m, std::vector<Finding>& out);
void check_container_devices_missing(const Machine& m, std::vector<Finding>& out);
void check_nvidia_driver_mismatch(const Machine& m, std::vector<Finding>& out);

// software.cpp: CUDA builds against the loaded driver, forward-compatibility drivers.
void check_cuda_needs_newer_driver(const Machine& m, std::vector<Finding>& out);
void check_cuda_compat_older_than_driver(const Machine& m, std::vector<Finding>& out);

// net_tuning.cpp: RoCE MTU and GID types, rail balance, NIC interrupts, socket buffers, /dev/shm
// and RLIMIT_MEMLOCK.
void check_roce_mtu_low(const Machine& m, std::vector<Finding>& out);
void check_roce_gid_v1_only(const Machine& m, std::vector<Finding>& out);
void check_rail_unbalanced(const Machine& m, std::vector<Finding>& out);
void check_nic_irq_remote(const Machine& m, std::vector<Finding>& out);
void check_net_socket_buffers_small(const Machine& m, std::vector<Finding>& out);
void check_dev_shm_small(const Machine& m, std::vector<Finding>& out);
void check_memlock_limited(const Machine& m, std::vector<Finding>& out);

// cpu.cpp: CPU and NUMA facts where sysfs and hwloc disagree.
void check_hwloc_disagrees(const Machine& m, std::vector<Finding>& out);

// platform.cpp: the IOMMU, virtualization, the NVIDIA driver, the firmware's NUMA tables and
// unreadable inputs.
void check_iommu_translated(const Machine& m, std::vector<Finding>& out);
void check_virtualized_topology(const Machine& m, std::vector<Finding>& out);
void check_nvml_unavailable(const Machine& m, std::vector<Finding>& out);
void check_numa_topology_inconsistent(const Machine& m, std::vector<Finding>& out);
void check_input_unreadable(const Machine& m, std::vector<Finding>& out);

// guest.cpp: a finding of a rule that reads PCIe link figures, made in a virtual machine, where
// those figures are the hypervisor's: downgraded to info, the emulated bridges named with their
// ids as evidence, and a fix that says where the physical link can be checked. Unchanged on
// bare metal.
void reframe_link_finding_for_guest(const Machine& m, Finding& f);

}  // namespace acco::topo::detail
