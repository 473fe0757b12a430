// Writes a fake Linux sysroot (a directory holding sys/ and proc/) in the kernel's real layout, so
// the probe can be tested on machines we do not have. Every file is written as soon as it is
// described; every link is relative, so the tree can be copied or tarred. Test code only: errors
// throw (std::invalid_argument for a bad description, std::filesystem::filesystem_error or
// std::runtime_error for a failed write).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "acco/testing/files.hpp"

namespace acco::testing {

// A PCIe link: generation 1-6 (2.5, 5, 8, 16, 32, 64 GT/s) and lanes. Gen 0 is "Unknown" (no
// link trained), which the kernel prints for an empty slot.
struct Link {
  int gen = 0;
  int width = 0;
  bool operator==(const Link&) const = default;
};

// The kernel's pci_speed_string() text for a generation: "32.0 GT/s PCIe", "Unknown" for 0.
[[nodiscard]] std::string link_speed_text(int gen);

struct PciIds {
  std::uint32_t class_code = 0;  // 24-bit: 0x030200
  std::uint16_t vendor = 0;
  std::uint16_t device = 0;
  std::uint16_t subsystem_vendor = 0;
  std::uint16_t subsystem_device = 0;
};

// What a PCI function is before the fluent setters refine it.
struct FunctionSpec {
  PciIds ids = {};
  // Absent: no PCIe capability (VM virtio, host bridge), so no *_link_* files at all.
  std::optional<Link> max_link = {};
  std::string driver = {};  // empty: no driver bound
};

struct NumaNodeSpec {
  int id = 0;
  std::string cpus = {};            // "0-55,112-167"
  std::vector<int> distances = {};  // {10, 21}
  std::uint64_t memory_kib = 0;
  int package = -1;  // socket of its CPUs; -1 means the same number as the node
  // An empty `cpus` is a memory-only node (GPU memory on POWER9, CXL); memory_kib 0 as well is a
  // node with nothing in it.
  // HMAT (Documentation/ABI/stable/sysfs-devices-node): access0/initiators/nodeN links and, when
  // non-zero, read/write bandwidth (MB/s) and latency (ns) there. Empty: no access0 directory.
  std::vector<int> initiators = {};
  int read_bandwidth_mbps = 0;
  int read_latency_ns = 0;
  // memory_tierN/nodelist under sys/devices/virtual/memory_tiering lists it; -1: no tier files.
  int memory_tier = -1;
};

struct CpuInfoSpec {
  std::string vendor_id = {};  // "GenuineIntel", "AuthenticAMD"
  int family = 6;
  int model = 0;
  std::string model_name = {};
  std::string flags = {};  // space-separated; a VM's include "hypervisor"
  // Blocks written, for the lowest-numbered CPUs. The real file has one per CPU; readers look
  // at the first few, so big machines need not write hundreds.
  int processors = 4;
};

struct NetSpec {
  // Mb/s. -1 is what virtual NICs report; absent writes no file, as for lo (read gives EINVAL).
  std::optional<std::int64_t> speed_mbps = -1;
  std::string operstate = "up";
  int mtu = 1500;
};

struct IbPortSpec {
  std::string state = "4: ACTIVE";
  std::string phys_state = "5: LinkUp";
  std::string rate = "400 Gb/sec (4X NDR)";
  std::string link_layer = "InfiniBand";  // "Ethernet" for RoCE
  // gid_attrs/types/N for N = 0.. ("IB/RoCE v1", "RoCE v2"), an empty entry writes a zero-byte
  // file as an unpopulated GID reads; none: no gid_attrs/types directory.
  std::vector<std::string> gid_types = {};
  std::string ndev = {};  // gid_attrs/ndevs/0; empty: no file
};

struct IbSpec {
  std::string node_guid = {};                      // "946d:ae03:00c4:5f20"
  std::string fw_ver = {};                         // "28.39.1002"
  std::vector<IbPortSpec> ports = {IbPortSpec{}};  // port numbers count from 1
};

// A namespace's block queue (sys/block/<ns>/queue and mq/), healthy by default: what a data-centre
// NVMe drive shows on a 6.x kernel. An absent figure writes no file.
struct BlockQueueSpec {
  std::optional<std::string> scheduler = "[none] mq-deadline";
  std::optional<std::int64_t> nr_requests = 1023;  // io_queue_depth 1024 less one
  std::optional<std::int64_t> max_sectors_kb = 1280;
  std::optional<std::int64_t> max_hw_sectors_kb = 2048;
  std::optional<std::int64_t> read_ahead_kb = 128;
  std::optional<std::int64_t> logical_block_size = 512;
  std::optional<int> io_poll = 0;
  // Directories under mq/; -1: one per CPU, at most 128 (the driver asks for one per CPU and
  // the controller grants its maximum); absent: no mq/ directory.
  std::optional<int> hw_queues = -1;
};

struct NvmeSpec {
  std::string model = {};
  std::string serial = {};
  std::string firmware_rev = {};
  std::string state = "live";
  std::vector<std::uint64_t> namespace_sectors = {};  // one namespace per entry, 512-byte sectors
  BlockQueueSpec queue = {};                          // every namespace's
  int partitions = 0;  // nvme0n1p1.. below each namespace, each with its dev number
};

class SysrootBuilder;

// A handle on one PCI function in a SysrootBuilder; cheap to copy, valid while the builder lives.
// Setters rewrite the affected files at once and return *this.
class PciFunction {
 public:
  [[nodiscard]] const std::string& bdf() const { return bdf_; }
  // Absolute path of the function's directory under sys/devices.
  [[nodiscard]] std::filesystem::path dir() const;

  // Adds a function below this bridge (class 0x0604). The role (switch upstream or downstream
  // port, endpoint) follows from the nesting. All children of a bridge share one bus number.
  PciFunction add(std::string_view bdf, const FunctionSpec& spec) const;

  // The device's own capability. The trained link of a device below a root or downstream port
  // is min(device max, port max) unless current_link overrides it; both ends report it.
  PciFunction& max_link(Link link);
  // Overrides the trained link this function sits on; on a root or downstream port, the link
  // to its first child. Both ends of the link report it.
  PciFunction& current_link(Link link);
  PciFunction& slot(std::string_view name);
  // Writes config as root reads it (4096 bytes: header, PCI Express capability at 0x40 and,
  // when acs_control is given, an ACS extended capability at 0x100 with that control word).
  // Without this call config holds the 64 bytes an unprivileged read returns.
  PciFunction& full_config(std::optional<std::uint16_t> acs_control = std::nullopt);
  // Moves this function into the IOMMU group of `other` (as when no ACS isolates them).
  PciFunction& same_iommu_group_as(const PciFunction& other);
  PciFunction& netdev(std::string_view name, const NetSpec& spec = {});
  // A virtio child device (sys/devices/.../<BDF>/<child>), as virtio-pci creates.
  PciFunction& virtio(std::string_view child);
  // A netdev below a virtio child, as virtio-net registers it.
  PciFunction& virtio_netdev(std::string_view child, std::string_view name,
                             const NetSpec& spec = {});
  PciFunction& infiniband(std::string_view name, const IbSpec& spec);
  // MSI-X vectors first_irq .. first_irq + count - 1 (msi_irqs/N) with
  // proc/irq/N/smp_affinity_list holding `affinity` ("0-31").
  PciFunction& msi_irqs(int first_irq, int count, std::string_view affinity);
  // An NVMe controller with its namespaces, their block queues and device numbers (259:N,
  // sys/dev/block links) and sys/module/nvme/parameters/poll_queues (0 unless
  // SysrootBuilder::nvme_poll_queues said otherwise).
  PciFunction& nvme(std::string_view name, const NvmeSpec& spec);
  // Writes one attribute file ("<value>\n"), for cases the setters do not cover.
  PciFunction& attr(std::string_view name, std::string_view value);
  // Writes a file's bytes exactly as given (no newline added): empty files, trailing NULs.
  PciFunction& attr_bytes(std::string_view name, std::string_view content);
  // Removes one attribute file, as on kernels or captures without it.
  PciFunction& remove_attr(std::string_view name);
  // Overrides the NUMA node of this function alone (numa_node, local_cpulist, local_cpus), as
  // firmware that gives a root port a node but not the devices below it.
  PciFunction& numa_node(int node);
  // Removes its /sys/bus/pci/devices link: a capture that copied sys/devices but not every bus
  // link. The function stays in sys/devices.
  PciFunction& unlisted();

 private:
  friend class SysrootBuilder;
  friend class PciBus;
  PciFunction(SysrootBuilder* builder, std::string bdf) : builder_(builder), bdf_(std::move(bdf)) {}
  SysrootBuilder* builder_;
  std::string bdf_ = {};
};

// A root bus (sys/devices/pciDDDD:BB) behind a host bridge, local to one NUMA node.
class PciBus {
 public:
  // Adds a function on this bus: a root port when it is a bridge, else a root-complex device
  // (what a flattened VM shows). Its bus number must be this bus.
  PciFunction add(std::string_view bdf, const FunctionSpec& spec) const;

 private:
  friend class SysrootBuilder;
  PciBus(SysrootBuilder* builder, std::string name) : builder_(builder), name_(std::move(name)) {}
  SysrootBuilder* builder_;
  std::string name_ = {};
};

// One cache level of every core or package (sys/devices/system/cpu/cpuN/cache/indexK).
struct CacheSpec {
  int level = 1;
  std::string type = "Data";  // "Data", "Instruction" or "Unified", as the kernel writes it
  std::uint64_t size_kib = 48;
  bool per_package = false;  // one instance per package (an L3) rather than per core
};

// The CPU topology files (Documentation/admin-guide/cputopology.rst) that libhwloc reads: each
// package's CPUs (from the NUMA nodes) are split into cores of `threads_per_core` threads, the
// first thread of every core numbered first, the siblings after them, as x86 kernels number
// them ("0-55,112-167": core 0 is CPUs 0 and 112).
struct CpuTopologySpec {
  int threads_per_core = 1;
  std::vector<CacheSpec> caches = {};
  std::vector<int> offline = {};  // CPUs listed but offline: no topology/ or cache/ directory
  // Each package's CPUs ("0-15" -> 0) when the nodes do not give them (nodes that overlap, one
  // node over two packages); empty: from the nodes.
  std::vector<std::pair<std::string, int>> packages = {};
};

class SysrootBuilder {
 public:
  // `root` must not exist or be empty; it gets sys/ and proc/ with the directories every
  // machine has (sys/kernel/iommu_groups is there, and empty, until iommu() is called).
  explicit SysrootBuilder(std::filesystem::path root);

  [[nodiscard]] const std::filesystem::path& root() const { return root_; }

  // NUMA nodes and their CPUs. Declare all of them before any PCI function, since masks and
  // local_cpulist are written from them.
  SysrootBuilder& numa_node(const NumaNodeSpec& spec);
  // proc/cpuinfo; after the NUMA nodes, which give each CPU's package.
  SysrootBuilder& cpuinfo(const CpuInfoSpec& spec);
  // Cores, threads and caches of every CPU; after the NUMA nodes, which give each CPU's package.
  SysrootBuilder& cpu_topology(const CpuTopologySpec& spec);
  // Overrides physical_package_id of these CPUs ("0-15"); -1 is what s390 and POWER7 report.
  // After the NUMA nodes, which write the packages they were given.
  SysrootBuilder& cpu_packages(std::string_view cpus, int package);
  // Takes these CPUs offline as hot-unplug does: no topology/ directory, left out of
  // sys/devices/system/cpu/online. Node CPU lists keep them, as kernels whose node masks hold
  // every possible CPU do. After the NUMA nodes.
  SysrootBuilder& offline_cpus(std::string_view cpus);
  // Removes a file or directory, path relative to the root
  // ("sys/devices/system/node/node0/cpulist").
  SysrootBuilder& remove(std::string_view relative_path);
  SysrootBuilder& cmdline(std::string_view cmdline);
  SysrootBuilder& hostname(std::string_view name);
  SysrootBuilder& osrelease(std::string_view release);
  // sys/module/nvidia/version and proc/driver/nvidia/version.
  SysrootBuilder& nvidia_driver(std::string_view version);
  // sys/module/nvidia_peermem/version: GPUDirect RDMA available.
  SysrootBuilder& nvidia_peermem(std::string_view version);
  // Turns the IOMMU on: each function added from now on gets a group of its own of this type
  // ("identity", "DMA-FQ", "DMA").
  SysrootBuilder& iommu(std::string_view group_type);
  // From now on every function with a PCIe capability gets the 4096-byte config root reads, and
  // root and downstream ports an ACS capability with control 0 (PCIe ports that do not redirect).
  SysrootBuilder& config_as_root();
  // A netdev with no device behind it (sys/devices/virtual/net/<name>), such as lo.
  SysrootBuilder& virtual_netdev(std::string_view name, const NetSpec& spec = {});
  // sys/module/nvme/parameters/poll_queues.
  SysrootBuilder& nvme_poll_queues(int queues);
  // A stacked block device (device mapper "dm-0", md "md0") under sys/devices/virtual/block, with
  // its device number ("253:0") in sys/dev/block and a slaves/ link to each block device named
  // (namespaces, partitions or other stacked devices written before it).
  SysrootBuilder& virtual_block_device(std::string_view name, std::string_view dev,
                                       const std::vector<std::string>& slaves);
  // Writes any file, path relative to the root ("proc/sys/kernel/foo"), content as given.
  SysrootBuilder& file(std::string_view relative_path, std::string_view content);

  // A root bus, "0000:15" (or "10000:00" in a 32-bit domain, as VMD and Hyper-V create);
  // numa_node -1 when firmware does not say (local_cpulist is then every CPU, as the kernel
  // reports).
  PciBus root_bus(std::string_view name, int numa_node);
  // A handle on a function added earlier.
  [[nodiscard]] PciFunction function(std::string_view bdf);

 private:
  friend class PciFunction;
  friend class PciBus;
  enum class Role {
    kRootPort,
    kUpstreamPort,
    kDownstreamPort,
    kEndpoint,
  };
  struct Function {
    std::string bdf;
    std::filesystem::path dir;  // absolute
    std::string parent;         // empty on a root bus
    std::string root_bus;
    std::vector<std::string> children;
    FunctionSpec spec;
    Role role = Role::kEndpoint;
    std::optional<Link> link_override;  // the link towards the parent
    int numa_node = -1;
    std::optional<int> iommu_group;
    bool full_config = false;
    std::optional<std::uint16_t> acs_control;
  };
  struct Bus {
    int numa_node = -1;
    std::filesystem::path dir;
  };
  struct IommuGroup {
    std::string type;
    std::set<std::string> devices;
  };

  PciFunction add_function(const std::string& bus, const std::string& parent, std::string_view bdf,
                           const FunctionSpec& spec);
  Function& at(const std::string& bdf);
  [[nodiscard]] std::optional<Link> upstream_link(const Function& f) const;
  [[nodiscard]] std::optional<Link> current_link(const Function& f) const;
  [[nodiscard]] std::vector<std::uint8_t> config_bytes(const Function& f) const;
  [[nodiscard]] int subordinate_bus(const Function& f) const;
  void refresh(const std::string& bdf);
  void refresh_around(const std::string& bdf);
  void join_iommu_group(Function& f, int group);
  void write_netdev(const std::filesystem::path& parent_dir, std::string_view name,
                    const NetSpec& spec, const std::filesystem::path& device);
  [[nodiscard]] std::string cpu_mask(const std::vector<int>& cpus) const;
  [[nodiscard]] std::vector<int> all_cpus() const;

  std::filesystem::path root_;
  std::map<int, NumaNodeSpec> nodes_;
  std::map<int, std::vector<int>> node_cpus_;
  std::map<std::string, Bus> buses_;
  std::map<std::string, Function> functions_;
  std::optional<std::string> iommu_type_;
  bool config_as_root_ = false;
  std::map<int, IommuGroup> iommu_groups_;
  int next_iommu_group_ = 0;
  std::map<std::string, std::filesystem::path> block_devices_;  // name -> its directory
  int next_nvme_minor_ = 0;
};

}  // namespace acco::testing
