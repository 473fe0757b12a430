// Canned machines written as sysroots: a healthy DGX H100, a two-socket workstation, a flattened
// KVM guest and the CI VM. Each options struct injects one fault at a time (or a fix), so every
// check has a sysroot that triggers it and a healthy twin that does not. `dir` must not exist or
// be empty; errors throw as in SysrootBuilder.
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace acco::testing {

// A PCI ID database (pci.ids format) with the real entries for the ids the machines below use,
// and a class section. Each machine writes it at usr/share/misc/pci.ids, except kvm_guest (at
// usr/share/hwdata/pci.ids, as RHEL places it) and ci_vm (none, like the CI VM itself).
[[nodiscard]] std::string_view pci_ids_fixture();
inline constexpr std::string_view kPciIdsPath = "usr/share/misc/pci.ids";
inline constexpr std::string_view kHwdataPciIdsPath = "usr/share/hwdata/pci.ids";

// GPU i, its ConnectX-7 (mlx5_i) and its PCIe switch belong together; the options below that
// take an index pick one of these.
inline constexpr std::array<std::string_view, 8> kDgxH100Gpus = {
    "0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
    "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};
inline constexpr std::array<std::string_view, 8> kDgxH100Nics = {
    "0000:19:00.0", "0000:2b:00.0", "0000:3b:00.0", "0000:5e:00.0",
    "0000:9b:00.0", "0000:ac:00.0", "0000:bb:00.0", "0000:dc:00.0"};
inline constexpr std::array<std::string_view, 4> kDgxH100NvSwitches = {
    "0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"};

struct DgxH100Options {
  std::optional<int> gpu_width_x8 = std::nullopt;  // GPU i trained at x8 (both ends of its link)
  std::optional<int> gpu_speed_2_5gt =
      std::nullopt;  // GPU i's link at 2.5 GT/s, as an idle GPU shows
  std::optional<int> gpu_in_gen4_slot =
      std::nullopt;  // GPU i's switch downstream port is Gen4 (max and link)
  std::optional<int> switch_uplink_x4 =
      std::nullopt;           // switch i's upstream port is x4 (max and link)
  bool numa_unknown = false;  // numa_node -1 on every device, local_cpulist all CPUs
  std::optional<int> ib_port_polling =
      std::nullopt;  // mlx5_i "1: DOWN" / "2: Polling", netdev down
  std::optional<int> ib_port_disabled =
      std::nullopt;                               // mlx5_i "1: DOWN" / "3: Disabled", netdev down
  std::optional<int> ib_rate_hdr = std::nullopt;  // mlx5_i at "200 Gb/sec (4X HDR)"
  std::optional<int> ib_rate_2x = std::nullopt;   // mlx5_i at "100 Gb/sec (2X HDR)"
  std::optional<int> nic_gen4_x8 = std::nullopt;  // NIC i is a Gen4 x8 device (max and link)
  bool iommu_dma_fq = false;                      // groups DMA-FQ and no iommu=pt on the cmdline
  bool no_peermem = false;                        // nvidia_peermem not loaded
  // GPU i's switch downstream port has ACSCtl 0x001d (SrcValid ReqRedir CmpltRedir UpstreamFwd)
  // in a 4096-byte config.
  std::optional<int> acs_redirect = std::nullopt;
  // Config as root reads it: 4096 bytes on every PCIe function, ACS capability with control 0 on
  // root and downstream ports. The healthy twin of acs_redirect.
  bool config_as_root = false;
  // GPU i in an IOMMU group of its own, apart from its NIC: what ACS isolation looks like
  // without root.
  std::optional<int> iommu_group_split = std::nullopt;
  // Storage: the block queue of nvmeN's namespace (N 0 or 1) with one setting off.
  std::optional<int> nvme_scheduler = std::nullopt;         // "none [mq-deadline] kyber bfq"
  std::optional<int> nvme_nr_requests = std::nullopt;       // nr_requests 16
  std::optional<int> nvme_max_sectors = std::nullopt;       // max_sectors_kb 64 of 2048
  std::optional<int> nvme_read_ahead_off = std::nullopt;    // read_ahead_kb 0
  std::optional<int> nvme_read_ahead_large = std::nullopt;  // read_ahead_kb 65536
  std::optional<int> nvme_queues_few = std::nullopt;        // 8 hardware queues
  bool nvme_poll_queues = false;  // fix: poll_queues 4, io_poll 1 on both namespaces
  // /raid (ext4 on LVM dm-0 over nvme1n1, rw,noatime) mounted with one option that costs.
  bool raid_sync = false;
  bool raid_strictatime = false;  // neither noatime nor relatime
  bool raid_data_journal = false;
};
// Its mounts (proc/self/mountinfo) for --data-dir: / on nvme0n1p2 (ext4), /boot/efi on sda1
// (vfat, not NVMe), /raid on dm-0 over nvme1n1 (ext4), "/raid/scratch space" bound onto
// "/scratch space", /dev/shm (tmpfs), /mnt/datasets (nfs4), /mnt/s3 (fuse.s3fs) and a container
// root on overlay at /var/lib/docker/overlay2/l1/merged.
void write_dgx_h100(const std::filesystem::path& dir, const DgxH100Options& options = {});

// GPUs in slots at 0000:01:00.0 and 0000:21:00.0 (NUMA 0), 0000:41:00.0 and 0000:61:00.0
// (NUMA 1); the ConnectX-6 Dx at 0000:a1:00.0 (ens3f0np0, mlx5_0 RoCE) and the NVMe at
// 0000:c1:00.0 on NUMA 1.
inline constexpr std::array<std::string_view, 4> kWorkstationGpus = {
    "0000:01:00.0", "0000:21:00.0", "0000:41:00.0", "0000:61:00.0"};
struct WorkstationOptions {
  bool full_width = false;          // 0000:41:00.0 trained at x16 instead of x8
  bool nic_on_each_socket = false;  // adds a ConnectX-6 Dx at 0000:31:00.0 (ens4f0np0) on NUMA 0
};
void write_workstation(const std::filesystem::path& dir, const WorkstationOptions& options = {});

// GPUs at 0000:00:05.0..0000:00:08.0 on the root bus, or 0000:01:00.0..0000:04:00.0 behind QEMU
// root ports; virtio-net at 0000:00:03.0 with enp0s3 under virtio0.
struct FlattenedVmOptions {
  bool single_numa_node = false;  // one vNUMA node, where numa_node -1 is harmless
  bool qemu_root_ports = false;   // each GPU behind a QEMU root port 1b36:000c (16 GT/s x32)
};
void write_flattened_vm(const std::filesystem::path& dir, const FlattenedVmOptions& options = {});

// The 2-vCPU Firecracker VM acco's CI runs on: nothing is knowable, so nothing may be reported.
struct CiVmOptions {};
void write_ci_vm(const std::filesystem::path& dir, const CiVmOptions& options = {});

// A two-socket server (CPUs 0-15 on node 0 and package 0, 16-31 on node 1 and package 1) with an
// A100 on each node, a ConnectX-6 HDR HCA on node 1 and ASPEED BMC video, healthy by default.
// Each option is one quirk that real sysfs trees show, written from the kernel's documented
// formats, for the probe's robustness and the firmware-topology checks.
inline constexpr std::string_view kQuirksGpu0 = "0000:18:00.0";      // node 0
inline constexpr std::string_view kQuirksGpu1 = "0000:cb:00.0";      // node 1
inline constexpr std::string_view kQuirksGpu1Port = "0000:ca:00.0";  // its root port
inline constexpr std::string_view kQuirksGpu0Port = "0000:17:00.0";
inline constexpr std::string_view kQuirksHca = "0000:e3:00.0";           // mlx5_0, node 1
inline constexpr std::string_view kQuirksHcaDomain32 = "10000:01:00.0";  // with domain_32bit
inline constexpr std::string_view kQuirksPhi = "0000:41:00.0";           // with coprocessor
inline constexpr std::string_view kQuirksCirrus = "0000:00:02.0";        // with cirrus_vga
inline constexpr std::string_view kQuirksAspeed = "0000:03:00.0";
inline constexpr std::string_view kQuirksX722 = "0000:3d:00.0";      // with chipset_nic, and .1
inline constexpr std::string_view kQuirksX722Port = "0000:00:1c.4";  // its PCH-internal port
struct FirmwareQuirksOptions {
  bool cpulist_nul = false;        // node 0's cpulist reads "0-15\n\0"
  bool cpumap_only = false;        // nodes have cpumap but no cpulist (older kernels)
  bool first_cpu_offline = false;  // CPUs 0 and 16 offline (no topology/), still in the node lists
  bool package_unknown = false;    // physical_package_id -1 on every CPU (s390, POWER7)
  bool one_node = false;           // one NUMA node over both packages (node interleaving)
  // node 2: 16 GiB and no CPUs, a CXL expander: HMAT initiator node 0 (25.6 GB/s, 250 ns),
  // memory tier 22 beside the DRAM nodes' tier 4, nearest to node 0 by distance
  bool memory_only_node = false;
  // node 2: 16 GiB and no CPUs with no HMAT and no tiers (GPU memory on Grace Hopper, POWER9),
  // nearest to node 1 by distance alone
  bool gpu_memory_node = false;
  bool empty_node = false;                // node 2: no CPUs and MemTotal 0 kB
  bool overlapping_nodes = false;         // both nodes list CPUs 0-31 (a broken SRAT)
  bool partly_overlapping_nodes = false;  // node 0 lists 0-15, node 1 12-31
  // CPUs 24-31 report physical_package_id 2 and package_cpus 20-31, which conflicts with package
  // 1's 16-31: the kernel names three packages, hwloc keeps two
  bool package_dropped = false;
  bool offline_node = false;    // node 1 possible but not online: CPUs 16-31 online in no node
  bool chipset_nic = false;     // adds an X722 (2x 10 GbE, 8 GT/s x1) behind a 2.5 GT/s x1 PCH port
  bool cpu_in_no_node = false;  // CPU 31 online but in neither node's list
  bool numa_node_absent = false;      // GPU 1 has no numa_node file (local_cpulist places it)
  bool numa_from_local_cpus = false;  // GPU 1: numa_node -1, no local_cpulist, local_cpus mask
  bool numa_from_parent = false;      // GPU 1: numa_node -1, local CPUs all; its root port says 1
  bool domain_32bit = false;          // the HCA and its root port in PCI domain 10000
  bool bridge_unlisted = false;       // GPU 0's root port absent from /sys/bus/pci/devices
  bool empty_attribute = false;       // GPU 0's subsystem_device is a zero-byte file
  bool coprocessor = false;           // adds a Xeon Phi (class 0x0b40) on node 0
  bool cirrus_vga = false;            // adds an emulated Cirrus VGA (1013:00b8) on the root bus
  bool old_hca = false;               // the HCA is a ConnectX-2: class 0x0c06, Gen2 x8, 4X QDR
};
void write_firmware_quirks(const std::filesystem::path& dir,
                           const FirmwareQuirksOptions& options = {});

// A one-socket PCIe server (EPYC, CPUs 0-31) with multi-function NICs: a dual-port ConnectX-6
// Dx (2x 100 GbE RoCE, functions 0000:11:00.0 and .1, mlx5_0/mlx5_1) on a Gen4 x16 root port,
// and behind a Gen4 PEX switch an A100 (0000:43:00.0) beside a dual-port ConnectX-6 HDR HCA
// (2x 200 Gb/s InfiniBand, 0000:44:00.0 and .1, mlx5_2/mlx5_3), which one Gen4 x16 link cannot
// carry (50 GB/s needed, 31.5 available). nvidia_peermem is loaded.
inline constexpr std::string_view kPcieServerDual100 = "0000:11:00.0";
inline constexpr std::string_view kPcieServerDual200 = "0000:44:00.0";
inline constexpr std::string_view kPcieServerSwitchUp = "0000:41:00.0";
inline constexpr std::string_view kPcieServerMgmt = "0000:21:00.0";
struct PcieServerOptions {
  bool nic_gen4_x8 = false;       // the dual-port 100G card is a Gen4 x8 device (25 vs 15.75 GB/s)
  bool switch_uplink_x8 = false;  // the switch's upstream port trained at Gen4 x8
  bool no_peermem = false;        // nvidia_peermem not loaded
  bool mgmt_cx4_lx = false;       // adds a ConnectX-4 Lx 25 GbE management port (mlx5_4, RoCE)
};
void write_pcie_server(const std::filesystem::path& dir, const PcieServerOptions& options = {});

// A one-socket AMD box (EPYC, CPUs 0-31) with two Instinct MI210 (1002:740f, class 0x0380) and
// two ConnectX-6 HDR HCAs behind two levels of Gen4 PEX switches: root port 0000:80:01.1, level-1
// switch 0000:81:00.0, level-2 switches 0000:83:00.0 and 0000:88:00.0, each with one MI210
// (0000:85:00.0, 0000:8a:00.0) and one HCA (0000:86:00.0, 0000:8b:00.0). amd_peermem is loaded.
inline constexpr std::string_view kAmdBoxLevel1 = "0000:81:00.0";
inline constexpr std::array<std::string_view, 2> kAmdBoxLevel2 = {"0000:83:00.0", "0000:88:00.0"};
inline constexpr std::array<std::string_view, 2> kAmdBoxGpus = {"0000:85:00.0", "0000:8a:00.0"};
struct AmdAcceleratorOptions {
  bool no_peermem = false;  // amd_peermem not loaded
};
void write_amd_accelerator(const std::filesystem::path& dir,
                           const AmdAcceleratorOptions& options = {});

// A KVM guest of a bare-metal H200 box (the nccl-tests#256 pair): 4 H200 (0000:01..04:00.0) each
// behind a QEMU pcie-root-port (1b36:000c, 16 GT/s x32, 0000:00:02.0-3), two ConnectX-7 400G
// (0000:05:00.0, 0000:06:00.0, mlx5_0/mlx5_1) on root ports 0000:00:02.4-5, and two more
// (0000:09:00.0, 0000:0a:00.0, mlx5_2/mlx5_3) behind QEMU's emulated TI XIO3130 switch (upstream
// 0000:07:00.0, 104c:8232, and downstream ports 0000:08:00.0/01.0, 104c:8233, all 2.5 GT/s x1)
// on root port 0000:00:02.6. Every device trains against its emulated port (the H200s and NICs
// at Gen4, the NICs below the XIO3130 at 2.5 GT/s x1). Two vNUMA nodes, numa_node -1
// everywhere, nvidia_peermem loaded.
inline constexpr std::array<std::string_view, 4> kKvmGuestGpus = {"0000:01:00.0", "0000:02:00.0",
                                                                  "0000:03:00.0", "0000:04:00.0"};
inline constexpr std::array<std::string_view, 4> kKvmGuestNics = {"0000:05:00.0", "0000:06:00.0",
                                                                  "0000:09:00.0", "0000:0a:00.0"};
inline constexpr std::string_view kKvmGuestXio3130Up = "0000:07:00.0";
struct KvmGuestOptions {
  bool no_cpu_flag = false;   // /proc/cpuinfo without "hypervisor" (as on arm64 guests)
  bool nic_rate_hdr = false;  // mlx5_1 (0000:06:00.0) runs at 200 Gb/sec (4X HDR)
  bool no_peermem = false;    // nvidia_peermem not loaded
};
void write_kvm_guest(const std::filesystem::path& dir, const KvmGuestOptions& options = {});

// Every canned machine by name, with its option names, for acco-make-sysroot and table-driven
// tests.
struct FaultInfo {
  std::string_view name;  // "gpu-width-x8"; takes "=N" when `indexed`
  bool indexed = false;   // picks a GPU/NIC/switch 0-7, 0 unless given
  std::string_view what;
};
struct CannedMachine {
  std::string_view name;  // "dgx_h100"
  std::string_view what;
  std::vector<FaultInfo> faults;
  // Writes the machine with the named faults ("gpu-width-x8", "gpu-width-x8=3").
  // Throws std::invalid_argument naming the valid faults for an unknown name or index.
  void (*write)(const std::filesystem::path& dir, const std::vector<std::string>& faults);
};
[[nodiscard]] const std::vector<CannedMachine>& canned_machines();

}  // namespace acco::testing
