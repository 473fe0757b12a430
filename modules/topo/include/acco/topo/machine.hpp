// The machine model: what a probe found (NUMA nodes, the PCIe tree, GPUs, NICs, InfiniBand ports,
// NVMe, IOMMU, NVML facts) as plain values. Sources fill it, the link model annotates it, checks
// read it, reporters print it. Bandwidths are bytes per second, one direction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "acco/core/sysfs_reader.hpp"

namespace acco::topo {

enum class DeviceKind {
  kGpu,          // PCI class 0x03xx (display, 3D controller) but not display-only vendors
  kAccelerator,  // class 0x12xx (processing accelerator), 0x0b40 (co-processor)
  kNic,          // class 0x0200-0x0280 (network), 0x0c06 (InfiniBand)
  kNvme,         // class 0x010802
  kStorage,      // other class 0x01xx
  kBridge,       // class 0x0604 (root ports, switch ports)
  kNvSwitch,     // class 0x0680 from NVIDIA
  kHostBridge,   // class 0x0600
  kOther,
};
[[nodiscard]] const char* to_string(DeviceKind kind);

// A PCIe link as sysfs reports it. Zero means unknown (no PCIe capability, VM, link down).
struct PcieLink {
  double speed_gts = 0;  // giga-transfers per second per lane: 2.5, 5, 8, 16, 32, 64
  int width = 0;         // lanes
  [[nodiscard]] bool known() const { return speed_gts > 0 && width > 0; }
  bool operator==(const PcieLink&) const = default;
};

// Where a fact came from, so a user can check it: a file and what it held.
struct Evidence {
  std::string source;  // "/sys/bus/pci/devices/0000:41:00.0/current_link_width" or "nvml:..."
  std::string value;
  bool operator==(const Evidence&) const = default;
};

// An interrupt vector of a device and where the kernel may deliver it.
struct Irq {
  int irq = 0;
  std::string affinity_text;  // /proc/irq/N/smp_affinity_list as read (escaped): "0-47"
  std::vector<int> cpus;      // parsed; empty when the file was absent or unparsable
  bool operator==(const Irq&) const = default;
};

struct PciDevice {
  std::string address;           // "0000:41:00.0"
  std::string parent;            // upstream bridge's address; empty when on a root bus
  std::string root_bus;          // "pci0000:40", the host bridge this device hangs under
  std::string sysfs_path;        // canonical: "/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0"
  std::uint32_t class_code = 0;  // 24-bit: 0x030200
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::uint16_t subsystem_vendor_id = 0;
  std::uint16_t subsystem_device_id = 0;
  DeviceKind kind = DeviceKind::kOther;
  std::string driver;  // bound driver's name; empty when none
  int numa_node = -1;  // -1: the kernel does not know
  std::vector<int> local_cpus;
  PcieLink current;  // current_link_speed / current_link_width
  PcieLink max;      // max_link_speed / max_link_width
  std::optional<int> iommu_group;
  std::string slot;  // physical slot name from /sys/bus/pci/slots, empty when unknown
  // ACS control register (ext cap 0x000D + 6) when extended config space was readable (root).
  std::optional<std::uint16_t> acs_control;
  bool config_extended_readable = false;

  // Filled by the link model (annotate_links); 0 when unknown.
  double capable_bytes_per_second = 0;  // min(device max, parent port max)
  double current_bytes_per_second = 0;  // this device's current link
  double path_bytes_per_second = 0;     // narrowest current link from here to the root
  // hwloc's linkspeed (an XML export's only link figure): used when `current` is unknown.
  double reported_bytes_per_second = 0;
  std::string path_limited_by;  // address of the device whose link is narrowest

  // How numa_node was found: "numa_node", "local_cpulist", "local_cpus" (the node owning those
  // CPUs) or "parent bridge <address>"; empty when nothing says.
  std::string numa_source = {};
  // The files behind numa_node and what each held, quoted as read (units::quote_attribute).
  std::vector<Evidence> numa_evidence = {};

  // NICs only: the MSI/MSI-X vectors (msi_irqs/) and the CPUs each may run on
  // (/proc/irq/N/smp_affinity_list). Empty when the device has none or they were not read.
  std::vector<Irq> irqs = {};

  // Names from the PCI ID database (pci.ids), each empty when it does not list the ids: the
  // vendor ("NVIDIA Corporation") and the subsystem's entry under the device.
  std::string vendor_name = {};
  std::string subsystem_name = {};
  // The name shown for the device: NVML's for a GPU it answered for, else the database's device
  // entry ("MT2910 Family [ConnectX-7]"), else "Vendor Device dddd" when only the vendor is
  // listed; empty when nothing names it (the ids are then all there is).
  std::string model = {};

  bool operator==(const PciDevice&) const = default;
};

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;
  std::vector<int> distances;  // to node i, in node-id order as the kernel lists them
  int package = -1;  // socket of its CPUs (the lowest when several); -1 when none is known
  std::uint64_t memory_bytes = 0;
  // The file the CPUs were read from (".../node0/cpulist", or ".../cpumap" without a cpulist)
  // and its text as read, quoted; both empty when neither could be read.
  std::string cpus_source = {};
  std::string cpus_text = {};
  bool memory_known = false;  // meminfo gave MemTotal, so memory_bytes 0 means no memory

  // What the kernel says of a node's memory (Documentation/ABI/stable/sysfs-devices-node and
  // testing/sysfs-kernel-mm-memory-tiers); each is empty or absent when its file is. It matters
  // most for memory-only nodes: CXL expanders, HBM and NVDIMM tiers, GPU memory on Grace Hopper
  // and POWER9.
  // The nodes whose CPUs reach this memory best (access0/initiators/nodeN, from ACPI HMAT).
  std::vector<int> initiators = {};
  // HMAT's figures for those initiators (access0/initiators/): MB/s and nanoseconds.
  std::optional<std::uint64_t> read_bandwidth_mbps = {};
  std::optional<std::uint64_t> write_bandwidth_mbps = {};
  std::optional<std::uint64_t> read_latency_ns = {};
  std::optional<std::uint64_t> write_latency_ns = {};
  // The memory tier listing this node (/sys/devices/virtual/memory_tiering/memory_tierN/nodelist):
  // a higher N is slower memory (DRAM is tier 4 on kernels 6.1+).
  std::optional<int> memory_tier = {};
  // A memory-side cache in front of this memory (memory_side_cache/indexN/size), bytes.
  std::uint64_t memory_side_cache_bytes = 0;
  // hwloc's locality for a node with no CPUs of its own (the CPUs it hangs below): where its
  // memory is near, never CPUs the node holds.
  std::vector<int> near_cpus = {};

  // The kernel's own CPU list was read and is empty while the node holds memory.
  [[nodiscard]] bool memory_only() const {
    return cpus.empty() && !cpus_source.empty() && (!memory_known || memory_bytes > 0);
  }
  bool operator==(const NumaNode&) const = default;
};

struct NetInterface {
  std::string name;                        // "eth0", "ens1f0np0", "ib0"
  std::string pci;                         // owning PCI function; empty for virtual interfaces
  std::optional<std::int64_t> speed_mbps;  // absent when the kernel reports -1 or cannot tell
  std::string operstate;                   // "up", "down", "unknown"
  std::optional<int> mtu = {};             // /sys/class/net/X/mtu, bytes of IP payload
  bool operator==(const NetInterface&) const = default;
};

struct IbPort {
  std::string device;  // "mlx5_0"
  int port = 1;
  std::string pci;
  int state = 0;                // 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER
  std::string state_text;       // "4: ACTIVE"
  int phys_state = 0;           // 5 LinkUp, 2 Polling, 3 Disabled
  std::string phys_state_text;  // "5: LinkUp"
  double rate_gbps = 0;         // signalling rate in Gb/s from "400 Gb/sec (4X NDR)"
  int lanes = 0;                // 4 from "4X"
  std::string rate_text;
  std::string link_layer;  // "InfiniBand" or "Ethernet" (RoCE)
  // What the port carries after line encoding, in Gb/s: InfiniBand SDR/DDR/QDR lose 20% to
  // 8b/10b (4X QDR: 40 Gb/s signalling, 32 Gb/s data), FDR10 and later use 64b/66b; RoCE ports
  // report an Ethernet rate, which is already the data rate.
  double data_rate_gbps = 0;
  // The netdev the port carries (RoCE: the Ethernet interface; IB: the IPoIB one), from
  // gid_attrs/ndevs/0, else the only entry of the device's net/ directory; empty when neither.
  std::string netdev = {};
  // The distinct GID types of the port's populated GIDs (gid_attrs/types/N), in index order:
  // "IB/RoCE v1", "RoCE v2". Empty when none was readable (InfiniBand ports on old kernels).
  std::vector<std::string> gid_types = {};
  std::optional<int> roce_v2_gid_index = {};  // the lowest GID index of type "RoCE v2"
  bool operator==(const IbPort&) const = default;
};

struct NvmeController {
  std::string name;  // "nvme0"
  std::string pci;   // empty for fabrics-attached controllers
  std::string model;
  std::string transport;                // "pcie", "rdma", "tcp", "fc"
  std::vector<std::string> namespaces;  // "nvme0n1"
  bool operator==(const NvmeController&) const = default;
};

// How the block layer queues one NVMe namespace's requests (/sys/block/<name>/queue/ and mq/).
// Each figure is absent when its file is (older kernels, captures that skipped it).
struct NvmeNamespace {
  std::string name;                         // "nvme0n1"; multipath paths (nvme0c0n1) are left out
  std::string controller;                   // "nvme0", whose directory lists it; empty when none
  std::string scheduler_text;               // queue/scheduler as read: "[none] mq-deadline kyber"
  std::optional<std::string> scheduler;     // the active one, in brackets: "none"
  std::optional<std::int64_t> nr_requests;  // requests the block layer queues per hardware queue
  std::optional<std::int64_t> max_sectors_kb;      // largest request it builds, KiB
  std::optional<std::int64_t> max_hw_sectors_kb;   // largest the controller takes (MDTS), KiB
  std::optional<std::int64_t> read_ahead_kb;       // buffered read-ahead window, KiB
  std::optional<std::int64_t> logical_block_size;  // bytes: O_DIRECT alignment
  std::optional<bool> io_poll;                     // queue/io_poll: polled completions possible
  std::optional<int> hw_queues;                    // directories under mq/
  bool operator==(const NvmeNamespace&) const = default;
};

// One line of /proc/self/mountinfo (proc(5)), with the kernel's octal escapes undone.
struct Mount {
  int id = 0;
  int parent = 0;
  std::string device;         // "259:2", major:minor of st_dev
  std::string root;           // the directory of the file system mounted here: "/" or a bind's
  std::string mount_point;    // "/data"
  std::string options;        // per-mount: "rw,noatime"
  std::string fs_type;        // "ext4", "xfs", "nfs4", "fuse.sshfs"
  std::string source;         // "/dev/nvme0n1p2", "server:/export", "tmpfs"
  std::string super_options;  // per-file-system: "rw,attr2,inode64"
  bool operator==(const Mount&) const = default;
};

// What trying O_DIRECT and io_uring in the data directory showed: a scratch file written there,
// opened with O_DIRECT and read back, and an io_uring ring set up. Only a live probe tries (acco's
// io module, through the caller: topo does no I/O of its own on the data).
struct DirectIo {
  bool o_direct = false;
  std::string o_direct_error;  // "open(O_DIRECT): Invalid argument"; empty when it worked
  bool io_uring = false;
  std::string io_uring_error;  // "io_uring not permitted here (Operation not permitted: ...)"
  std::uint32_t memory_alignment = 0;  // bytes an O_DIRECT buffer aligns to; 0 unknown
  std::uint32_t offset_alignment = 0;  // bytes an O_DIRECT offset and length align to
  std::string alignment_source;        // "statx" (STATX_DIOALIGN), "logical_block_size", "default"
  bool operator==(const DirectIo&) const = default;
};

// The mount holding the data directory named with --data-dir, and the NVMe namespaces below its
// source device.
struct DataDir {
  std::string path;         // absolute, as matched against the mount points
  std::string unavailable;  // why the mount is unknown; empty when `mount` was found
  Mount mount = {};
  // How the source device was tied to NVMe namespaces: "/dev/nvme0n1p2" or the
  // /sys/dev/block/MAJ:MIN path followed; empty when it was not.
  std::string device_evidence = {};
  std::vector<std::string> nvme_namespaces = {};  // "nvme0n1"; several under RAID or LVM
  // What O_DIRECT and io_uring did there; absent when not tried, and `direct_io_untried` then
  // says why ("recorded machine", "cannot create a scratch file: Permission denied").
  std::optional<DirectIo> direct_io = {};
  std::string direct_io_untried = {};
  bool operator==(const DataDir&) const = default;
};

struct IommuGroup {
  int id = 0;
  std::string type;  // "DMA", "DMA-FQ", "identity", "blocked", "unmanaged"; empty when unreadable
  std::vector<std::string> devices;
  bool operator==(const IommuGroup&) const = default;
};

struct Iommu {
  bool enabled = false;  // any group exists
  std::vector<IommuGroup> groups;
  std::string cmdline;  // /proc/cmdline
  bool operator==(const Iommu&) const = default;
};

struct GpuDirect {
  bool rdma_loaded = false;
  std::string evidence;  // the file that proved it, or the files looked at
  bool operator==(const GpuDirect&) const = default;
};

// NVML's answers for one GPU. Optional fields are absent when NVML did not support the query.
struct NvLink {
  int link = 0;
  bool active = false;
  std::string remote_pci;  // peer GPU or NVSwitch address
  int version = 0;         // nvmlDeviceGetNvLinkVersion: 4 = NVLink 3.0 (A100), 5 = 4.0 (H100)
  bool operator==(const NvLink&) const = default;
};

struct P2pStatus {
  std::string peer_pci;
  std::string read;  // "OK", "CNS", "GNS", "TNS", "DR", "NS", "U"
  std::string write;
  bool operator==(const P2pStatus&) const = default;
};

// One MIG instance of a GPU (NVML's MIG device handle): what CUDA_VISIBLE_DEVICES=MIG-... makes
// one process see.
struct MigDevice {
  int slot = 0;         // nvmlDeviceGetMigDeviceHandleByIndex's index
  std::string uuid;     // "MIG-5e4c..." (older drivers: "MIG-GPU-.../gi/ci")
  std::string profile;  // "3g.40gb", from the device's name ("NVIDIA H100 80GB HBM3 MIG 3g.40gb")
  std::uint64_t memory_total_bytes = 0;
  std::optional<int> gpu_instance = {};  // absent when the driver lacks the call
  std::optional<int> compute_instance = {};
  bool operator==(const MigDevice&) const = default;
};

struct NvmlGpu {
  int index = 0;
  std::string pci;  // normalised to "0000:41:00.0"
  std::string name;
  std::string uuid;
  std::uint64_t memory_total_bytes = 0;
  std::optional<int> pstate;  // 0 (P0, busy) .. 15; absent when unknown
  std::optional<bool> persistence_mode;
  std::optional<bool> mig_enabled;
  int mig_instances = 0;
  // The MIG mode after the next GPU reset, when NVML said; differs from mig_enabled while a
  // change waits for one (nvidia-smi -mig 1 without a reset).
  std::optional<bool> mig_pending = {};
  std::vector<MigDevice> mig_devices = {};  // in slot order; empty without MIG
  std::optional<int> pcie_current_gen;
  std::optional<int> pcie_current_width;
  std::optional<int> pcie_max_gen;
  std::optional<int> pcie_max_width;
  std::vector<NvLink> nvlinks;
  std::vector<P2pStatus> p2p;
  bool operator==(const NvmlGpu&) const = default;
};

struct NvmlReport {
  bool available = false;
  std::string reason;  // why not available: "libnvidia-ml.so.1: cannot open shared object file"
  std::string library;
  std::string driver_version;
  std::vector<NvmlGpu> gpus;
  bool operator==(const NvmlReport&) const = default;
};

// A file that exists but could not be understood (what core::SysfsReader notes). Checks turn
// these into `input-unreadable`.
using InputIssue = core::FileIssue;

// One level of CPU cache as hwloc reports it.
struct CacheLevel {
  std::string name;         // "L1d", "L1i", "L2", "L3"
  std::uint64_t bytes = 0;  // one instance
  int count = 0;            // instances in the machine
  bool operator==(const CacheLevel&) const = default;
};

// The CPU topology as libhwloc reads it (packages, cores, PUs, caches); `source` is empty when
// hwloc was not used, and `unavailable` then says why. Counts are 0 when unknown.
struct CpuTopology {
  std::string source;       // "hwloc 2.9.0"
  std::string unavailable;  // why hwloc's view is absent
  int packages = 0;
  int cores = 0;
  int pus = 0;
  int numa_nodes = 0;
  std::vector<CacheLevel> caches;  // L1d, L1i, L2, L3 ... in that order
  // Where acco's own sysfs reader and hwloc disagree, each with the reason.
  std::vector<std::string> disagreements;
  bool operator==(const CpuTopology&) const = default;
};

// Host-wide limits that NCCL, UCX and MPI run into, each absent when its file is.
struct HostLimits {
  // Socket buffer ceilings, bytes: /proc/sys/net/core/{r,w}mem_max and the third (max) field of
  // /proc/sys/net/ipv4/tcp_{r,w}mem.
  std::optional<std::int64_t> rmem_max = {};
  std::optional<std::int64_t> wmem_max = {};
  std::optional<std::int64_t> tcp_rmem_max = {};
  std::optional<std::int64_t> tcp_wmem_max = {};
  std::string tcp_rmem_text = {};  // as read: "4096 131072 6291456"
  std::string tcp_wmem_text = {};
  // /dev/shm's size, bytes: its tmpfs size= option in /proc/self/mountinfo, else (a tmpfs
  // mounted without one) the kernel's default of half of MemTotal. Absent when /dev/shm is not
  // a mount there or its size cannot be told.
  std::optional<std::uint64_t> shm_bytes = {};
  std::string shm_evidence = {};  // "size=65536k" or "no size= option: half of MemTotal ..."
  // RLIMIT_MEMLOCK soft limit from /proc/self/limits ("Max locked memory"): unlimited, or bytes.
  std::optional<bool> memlock_unlimited = {};
  std::optional<std::uint64_t> memlock_bytes = {};
  std::string memlock_text = {};  // the soft field as read: "8388608", "unlimited"
  bool operator==(const HostLimits&) const = default;
};

// The PCI ID database the devices were named from, or why they were not.
struct PciIdsSource {
  std::string path;         // "/usr/share/misc/pci.ids" (within the sysroot) or the file named
  std::string version;      // its "Version:" header line: "2023.04.10"; empty when none
  std::string unavailable;  // why there are no names; empty when the database was read
  // "10de:2335": the vendor:device ids of the functions the database read does not list as a
  // device (an older file than the hardware: lspci says "NVIDIA Corporation Device 2335"), each
  // once, in address order. Empty when every function is listed or there is no database.
  std::vector<std::string> unlisted = {};
  bool operator==(const PciIdsSource&) const = default;
};

// Whether acco runs inside a container, and which of the host's device nodes it was given.
struct Container {
  // "docker", "podman", "kubernetes", "lxc", "apptainer"; empty when nothing says acco runs in
  // one (a container can hide it: then the checks that need it stay silent).
  std::string runtime = {};
  std::string evidence = {};  // the file that said so: "/.dockerenv exists"
  // NVIDIA and RDMA device nodes present, read wherever acco runs: "nvidiactl", "nvidia0",
  // "nvidia-uvm"; "uverbs0", "rdma_cm" (under /dev/infiniband).
  std::vector<std::string> nvidia_nodes = {};
  std::vector<std::string> rdma_nodes = {};
  bool operator==(const Container&) const = default;
};

// One piece of the CUDA stack found in the machine's files.
struct SoftwareComponent {
  // "cuda-toolkit", "cuda-runtime", "nccl", "cudnn", "cuda-compat" (a forward-compatibility
  // libcuda), "torch", "openmpi" or "ucx".
  std::string name = {};
  std::string version = {};  // "12.4.127"; a cuda-compat's is the driver's, "580.65.06"
  // The CUDA it was built for or is: "12.4", or "12" from a wheel's _cu12 suffix; empty when
  // the files do not say (a library file's name, a CPU build of torch).
  std::string cuda = {};
  std::string path = {};  // the file or directory it was read from
  bool operator==(const SoftwareComponent&) const = default;
};

// The NVIDIA software the machine's files show (the doctor reads the libraries a process loads).
struct SoftwareStack {
  // The loaded NVIDIA kernel module's version from /proc/driver/nvidia/version's NVRM line
  // ("580.65.06"), and that line; empty when no NVIDIA module is loaded (or the file is absent).
  std::string kernel_module = {};
  std::string kernel_module_line = {};
  // Container Device Interface specs (/etc/cdi, /var/run/cdi: *.json, *.yaml, *.yml), as paths.
  std::vector<std::string> cdi_specs = {};
  // CUDA libraries and frameworks installed here (topo/software.hpp says where they are read).
  std::vector<SoftwareComponent> components = {};
  bool operator==(const SoftwareStack&) const = default;
};

struct Machine {
  std::string origin;  // "/" , "sysroot /tmp/x" or "snapshot file.json"
  std::string hostname;
  std::string kernel;
  bool hypervisor = false;  // "hypervisor" CPU flag in /proc/cpuinfo
  std::vector<NumaNode> numa_nodes;
  std::vector<PciDevice> pci_devices;  // sorted by address
  std::vector<NetInterface> net_interfaces;
  std::vector<IbPort> ib_ports;
  std::vector<NvmeController> nvme_controllers;
  std::vector<NvmeNamespace> nvme_namespaces = {};  // sorted by name
  // /sys/module/nvme/parameters/poll_queues: queues the driver set aside for polled I/O.
  std::optional<int> nvme_poll_queues = {};
  std::optional<DataDir> data_dir = {};  // with --data-dir
  Iommu iommu;
  GpuDirect gpudirect;
  NvmlReport nvml;
  PciIdsSource pci_ids = {};
  std::vector<InputIssue> input_issues;
  // /sys/devices/system/cpu/online, and the distinct physical_package_id values of those CPUs
  // (-1, which s390 and POWER7 report, is unknown and left out), sorted.
  std::vector<int> online_cpus = {};
  std::vector<int> packages = {};
  // /sys/devices/system/node/possible and online: the nodes the firmware declares and those the
  // kernel brought up (a node directory exists only for an online node); empty when absent.
  std::vector<int> possible_nodes = {};
  std::vector<int> online_nodes = {};
  CpuTopology cpu;
  HostLimits limits = {};
  Container container = {};
  SoftwareStack software = {};
  // False when the machine comes from an hwloc XML export alone: drivers, IOMMU groups, ACS,
  // kernel modules, InfiniBand ports and link generations were not read, and the checks that
  // need them stay silent.
  bool sysfs_read = true;

  [[nodiscard]] const PciDevice* find(const std::string& address) const;
  [[nodiscard]] const NvmlGpu* nvml_gpu(const std::string& address) const;
  [[nodiscard]] int package_of_node(int numa_node) const;  // -1 when unknown
  bool operator==(const Machine&) const = default;
};

}  // namespace acco::topo
