#include "machines.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "sysroot_builder.hpp"

namespace acco::testing {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kDriverVersion = "580.95.05";

constexpr std::string_view kSapphireRapidsFlags =
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx "
    "fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon pebs "
    "bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf tsc_known_freq pni pclmulqdq dtes64 "
    "monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic "
    "movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch "
    "cpuid_fault epb cat_l3 cat_l2 cdp_l3 invpcid_single intel_ppin cdp_l2 ssbd mba ibrs ibpb "
    "stibp ibrs_enhanced tpr_shadow flexpriority ept vpid ept_ad fsgsbase tsc_adjust bmi1 avx2 "
    "smep bmi2 erms invpcid cqm rdt_a avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb "
    "intel_pt avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves split_lock_detect "
    "avx_vnni avx512_bf16 wbnoinvd dtherm ida arat pln pts avx512vbmi umip pku ospke waitpkg "
    "avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg tme avx512_vpopcntdq la57 rdpid "
    "bus_lock_detect cldemote movdiri movdir64b enqcmd fsrm md_clear serialize tsxldtrk pconfig "
    "arch_lbr ibt amx_bf16 avx512_fp16 amx_tile amx_int8 flush_l1d arch_capabilities";

// What QEMU passes through of a Sapphire Rapids host: no host-only features, plus "hypervisor".
constexpr std::string_view kSapphireRapidsGuestFlags =
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse "
    "sse2 ss syscall nx pdpe1gb rdtscp lm constant_tsc arch_perfmon rep_good nopl xtopology cpuid "
    "tsc_known_freq pni pclmulqdq ssse3 fma cx16 pdcm pcid sse4_1 sse4_2 x2apic movbe popcnt "
    "tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm abm 3dnowprefetch "
    "cpuid_fault ssbd ibrs ibpb stibp ibrs_enhanced fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms "
    "invpcid avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw "
    "avx512vl xsaveopt xsavec xgetbv1 xsaves avx_vnni avx512_bf16 wbnoinvd arat avx512vbmi umip "
    "pku ospke waitpkg avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg "
    "avx512_vpopcntdq la57 rdpid bus_lock_detect cldemote movdiri movdir64b fsrm md_clear "
    "serialize tsxldtrk amx_bf16 avx512_fp16 amx_tile amx_int8 arch_capabilities";

constexpr std::string_view kMilanFlags =
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse "
    "sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl nonstop_tsc "
    "cpuid extd_apicid aperfmperf rapl pni pclmulqdq monitor ssse3 fma cx16 pcid sse4_1 sse4_2 "
    "x2apic movbe popcnt aes xsave avx f16c rdrand lahf_lm cmp_legacy svm extapic cr8_legacy abm "
    "sse4a misalignsse 3dnowprefetch osvw ibs skinit wdt tce topoext perfctr_core perfctr_nb bpext "
    "perfctr_llc mwaitx cpb cat_l3 cdp_l3 invpcid_single hw_pstate ssbd mba ibrs ibpb stibp "
    "vmmcall fsgsbase bmi1 avx2 smep bmi2 erms invpcid cqm rdt_a rdseed adx smap clflushopt clwb "
    "sha_ni xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local "
    "clzero irperf xsaveerptr rdpru wbnoinvd amd_ppin brs arat npt lbrv svm_lock nrip_save "
    "tsc_scale vmcb_clean flushbyasid decodeassists pausefilter pfthreshold v_vmsave_vmload vgif "
    "v_spec_ctrl umip pku ospke vaes vpclmulqdq rdpid overflow_recov succor smca fsrm";

constexpr std::string_view kEpycGuestFlags =
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse "
    "sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl cpuid "
    "extd_apicid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe "
    "popcnt tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm cmp_legacy cr8_legacy "
    "abm sse4a misalignsse 3dnowprefetch osvw topoext ssbd ibrs ibpb stibp vmmcall fsgsbase bmi1 "
    "avx2 smep bmi2 erms invpcid rdseed adx smap clflushopt clwb sha_ni xsaveopt xsavec xgetbv1 "
    "xsaves clzero xsaveerptr wbnoinvd arat umip pku ospke vaes vpclmulqdq rdpid fsrm "
    "arch_capabilities";

const NetSpec kLoopback{.speed_mbps = std::nullopt, .operstate = "unknown", .mtu = 65536};

// PCI IDs as `lspci -nn` shows them on the machines these stand for.
FunctionSpec h100(Link max) {
  return {{0x030200, 0x10de, 0x2330, 0x10de, 0x16c1}, max, "nvidia"};
}
FunctionSpec nvswitch() {
  return {{0x068000, 0x10de, 0x22a3, 0x10de, 0x1796}, Link{4, 4}, "nvidia-nvswitch"};
}
FunctionSpec rtx6000_ada() {
  return {{0x030000, 0x10de, 0x26b1, 0x10de, 0x16a1}, Link{4, 16}, "nvidia"};
}
FunctionSpec connectx7(Link max) {
  return {{0x020700, 0x15b3, 0x1021, 0x15b3, 0x0041}, max, "mlx5_core"};
}
FunctionSpec connectx6_dx() {
  return {{0x020000, 0x15b3, 0x101d, 0x15b3, 0x0016}, Link{4, 16}, "mlx5_core"};
}
FunctionSpec pm9a3() {
  return {{0x010802, 0x144d, 0xa80a, 0x144d, 0xa812}, Link{4, 4}, "nvme"};
}
FunctionSpec samsung_990_pro() {
  return {{0x010802, 0x144d, 0xa80c, 0x144d, 0xa801}, Link{4, 4}, "nvme"};
}
FunctionSpec broadcom_pex(Link max) {
  return {{0x060400, 0x1000, 0xc030, 0x1000, 0x100b}, max, "pcieport"};
}
FunctionSpec sapphire_rapids_root_port(Link max) {
  return {{0x060400, 0x8086, 0x352a, 0x8086, 0x0000}, max, "pcieport"};
}
FunctionSpec amd_gpp_bridge(Link max) {
  return {{0x060400, 0x1022, 0x1483, 0x1022, 0x1453}, max, "pcieport"};
}
FunctionSpec qemu_root_port() {
  // QEMU's pcie-root-port advertises 16 GT/s x32 by default (x-speed, x-width since QEMU 4.0).
  return {{0x060400, 0x1b36, 0x000c, 0x1b36, 0x0000}, Link{4, 32}, "pcieport"};
}
FunctionSpec h200() {
  return {{0x030200, 0x10de, 0x2335, 0x10de, 0x18be}, Link{5, 16}, "nvidia"};
}
FunctionSpec qemu_xio3130(bool upstream) {
  // QEMU's x3130-upstream and xio3130-downstream keep the TI ids and advertise 2.5 GT/s x1.
  return {
      {0x060400, 0x104c, static_cast<std::uint16_t>(upstream ? 0x8232 : 0x8233), 0x0000, 0x0000},
      Link{1, 1},
      "pcieport"};
}
FunctionSpec a100_pcie() {
  return {{0x030200, 0x10de, 0x20f1, 0x10de, 0x145f}, Link{4, 16}, "nvidia"};
}
FunctionSpec connectx6() {
  return {{0x020700, 0x15b3, 0x101b, 0x15b3, 0x0006}, Link{4, 16}, "mlx5_core"};
}
FunctionSpec connectx2() {
  // mlx4-era HCAs report the old InfiniBand class, serial bus 0x0c06.
  return {{0x0c0600, 0x15b3, 0x673c, 0x15b3, 0x0048}, Link{2, 8}, "mlx4_core"};
}
FunctionSpec connectx4_lx() {
  return {{0x020000, 0x15b3, 0x1015, 0x15b3, 0x0003}, Link{3, 8}, "mlx5_core"};
}
FunctionSpec connectx6_dx_max(Link max) {
  return {{0x020000, 0x15b3, 0x101d, 0x15b3, 0x0016}, max, "mlx5_core"};
}
FunctionSpec broadcom_pex_gen4(Link max) {
  return {{0x060400, 0x1000, 0xc010, 0x1000, 0x100b}, max, "pcieport"};
}
FunctionSpec mi210() {
  return {{0x038000, 0x1002, 0x740f, 0x1002, 0x0c34}, Link{4, 16}, "amdgpu"};
}
FunctionSpec xeon_phi() {
  return {{0x0b4000, 0x8086, 0x2250, 0x8086, 0x2500}, Link{2, 16}, "mic"};
}
FunctionSpec aspeed_vga() {
  return {{0x030000, 0x1a03, 0x2000, 0x1a03, 0x2000}, Link{2, 1}, "ast"};
}
FunctionSpec cirrus_vga() {
  return {{0x030000, 0x1013, 0x00b8, 0x1af4, 0x1100}, std::nullopt, "cirrus"};
}
FunctionSpec host_bridge(std::uint16_t vendor, std::uint16_t device) {
  return {{0x060000, vendor, device, vendor, 0x0000}, std::nullopt, ""};
}
FunctionSpec virtio(std::uint16_t device, std::uint32_t class_code) {
  return {{class_code, 0x1af4, device, 0x1af4, 0x1100}, std::nullopt, "virtio-pci"};
}

std::string bus_name(int bus) {
  return fmt::format("0000:{:02x}", bus);
}

int bus_of(std::string_view bdf) {
  return std::stoi(std::string(bdf.substr(5, 2)), nullptr, 16);
}

void check_index(const std::optional<int>& index, int count, std::string_view option) {
  if (index && (*index < 0 || *index >= count)) {
    throw std::invalid_argument(fmt::format("{} = {}: must be 0-{}", option, *index, count - 1));
  }
}

bool is(const std::optional<int>& index, int i) {
  return index && *index == i;
}

IbPortSpec dgx_ib_port(const DgxH100Options& o, int i) {
  IbPortSpec port;
  if (is(o.ib_port_polling, i) || is(o.ib_port_disabled, i)) {
    port.state = "1: DOWN";
    port.phys_state = is(o.ib_port_polling, i) ? "2: Polling" : "3: Disabled";
  }
  if (is(o.ib_rate_hdr, i)) {
    port.rate = "200 Gb/sec (4X HDR)";
  }
  if (is(o.ib_rate_2x, i)) {
    port.rate = "100 Gb/sec (2X HDR)";
  }
  return port;
}

// One GPU, its NIC and their Broadcom PEX switch, as HGX H100 baseboards wire them: root port
// XX:01.0, switch upstream port on bus XX+1, downstream ports on XX+2, GPU on XX+3, NIC on XX+4.
void write_dgx_gpu_tray(SysrootBuilder& b, const DgxH100Options& o, int i, int numa_node) {
  const int gpu_bus = bus_of(kDgxH100Gpus[static_cast<std::size_t>(i)]);
  const int root = gpu_bus - 3;
  auto rp = b.root_bus(bus_name(root), numa_node)
                .add(fmt::format("{}:01.0", bus_name(root)), sapphire_rapids_root_port({5, 16}));
  auto up = rp.add(fmt::format("{}:00.0", bus_name(root + 1)),
                   broadcom_pex(is(o.switch_uplink_x4, i) ? Link{5, 4} : Link{5, 16}));
  auto gpu_port = up.add(fmt::format("{}:00.0", bus_name(root + 2)),
                         broadcom_pex(is(o.gpu_in_gen4_slot, i) ? Link{4, 16} : Link{5, 16}));
  auto nic_port = up.add(fmt::format("{}:01.0", bus_name(root + 2)), broadcom_pex({5, 16}));
  auto gpu = gpu_port.add(kDgxH100Gpus[static_cast<std::size_t>(i)], h100({5, 16}));
  auto nic = nic_port.add(kDgxH100Nics[static_cast<std::size_t>(i)],
                          connectx7(is(o.nic_gen4_x8, i) ? Link{4, 8} : Link{5, 16}));

  if (is(o.gpu_width_x8, i) || is(o.gpu_speed_2_5gt, i)) {
    gpu.current_link({is(o.gpu_speed_2_5gt, i) ? 1 : (is(o.gpu_in_gen4_slot, i) ? 4 : 5),
                      is(o.gpu_width_x8, i) ? 8 : 16});
  }
  if (is(o.acs_redirect, i)) {
    gpu_port.full_config(0x001d);
  }
  // ACS is off on the switch's downstream ports, so the kernel puts everything below the
  // upstream port in one IOMMU group.
  nic_port.same_iommu_group_as(gpu_port);
  nic.same_iommu_group_as(gpu_port);
  if (!is(o.iommu_group_split, i)) {
    gpu.same_iommu_group_as(gpu_port);
  }

  const int nic_bus = bus_of(kDgxH100Nics[static_cast<std::size_t>(i)]);
  const IbPortSpec port = dgx_ib_port(o, i);
  nic.infiniband(fmt::format("mlx5_{}", i),
                 {.node_guid = fmt::format("946d:ae03:00c4:{:04x}", 0x5f20 + i * 8),
                  .fw_ver = "28.39.1002",
                  .ports = {port}})
      .netdev(fmt::format("ibp{}s0", nic_bus),
              {.speed_mbps = 400000,
               .operstate = port.state == "4: ACTIVE" ? "up" : "down",
               .mtu = 4092});
}

BlockQueueSpec dgx_block_queue(const DgxH100Options& o, int i) {
  BlockQueueSpec q;
  if (is(o.nvme_scheduler, i)) {
    q.scheduler = "none [mq-deadline] kyber bfq";
  }
  if (is(o.nvme_nr_requests, i)) {
    q.nr_requests = 16;
  }
  if (is(o.nvme_max_sectors, i)) {
    q.max_sectors_kb = 64;
  }
  if (is(o.nvme_read_ahead_off, i)) {
    q.read_ahead_kb = 0;
  }
  if (is(o.nvme_read_ahead_large, i)) {
    q.read_ahead_kb = 65536;
  }
  if (is(o.nvme_queues_few, i)) {
    q.hw_queues = 8;
  }
  if (o.nvme_poll_queues) {
    q.io_poll = 1;
  }
  return q;
}

// As a DGX OS install shows them (trimmed to what --data-dir tests need); "\040" is how
// mountinfo writes a space.
void write_dgx_mounts(SysrootBuilder& b, const DgxH100Options& o) {
  const std::string raid_options = o.raid_sync          ? "rw,noatime,sync"
                                   : o.raid_strictatime ? "rw"
                                                        : "rw,noatime";
  const std::string raid_super = o.raid_data_journal ? "rw,stripe=32,data=journal" : "rw,stripe=32";
  b.file("proc/self/mountinfo",
         fmt::format(
             "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro\n"
             "23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
             "24 22 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
             "25 22 0:5 / /dev rw,nosuid,relatime shared:2 - devtmpfs udev rw,mode=755\n"
             "26 25 0:24 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw,inode64\n"
             "31 22 8:1 / /boot/efi rw,relatime shared:20 - vfat /dev/sda1 rw,fmask=0077\n"
             "40 22 253:0 / /raid {0} shared:30 - ext4 /dev/mapper/vg0-raid {1}\n"
             "41 22 253:0 /scratch\\040space /scratch\\040space {0} shared:30 - ext4 "
             "/dev/mapper/vg0-raid {1}\n"
             "42 22 0:50 / /mnt/datasets rw,relatime shared:31 - nfs4 storage01:/export/datasets "
             "rw,vers=4.2,rsize=1048576,wsize=1048576,proto=tcp\n"
             "43 22 0:51 / /mnt/s3 rw,nosuid,nodev,relatime shared:32 - fuse.s3fs s3fs "
             "rw,user_id=0,group_id=0\n"
             "50 22 0:60 / /var/lib/docker/overlay2/l1/merged rw,relatime - overlay overlay "
             "rw,lowerdir=/var/lib/docker/overlay2/l/A,upperdir=/var/lib/docker/overlay2/l1/diff\n",
             raid_options, raid_super));
}

}  // namespace

void write_dgx_h100(const fs::path& dir, const DgxH100Options& o) {
  const std::pair<std::optional<int>, std::string_view> indexed[] = {
      {o.gpu_width_x8, "gpu_width_x8"},
      {o.gpu_speed_2_5gt, "gpu_speed_2_5gt"},
      {o.gpu_in_gen4_slot, "gpu_in_gen4_slot"},
      {o.switch_uplink_x4, "switch_uplink_x4"},
      {o.ib_port_polling, "ib_port_polling"},
      {o.ib_port_disabled, "ib_port_disabled"},
      {o.ib_rate_hdr, "ib_rate_hdr"},
      {o.ib_rate_2x, "ib_rate_2x"},
      {o.nic_gen4_x8, "nic_gen4_x8"},
      {o.acs_redirect, "acs_redirect"},
      {o.iommu_group_split, "iommu_group_split"}};
  for (const auto& [index, name] : indexed) {
    check_index(index, 8, name);
  }
  const std::pair<std::optional<int>, std::string_view> drives[] = {
      {o.nvme_scheduler, "nvme_scheduler"},
      {o.nvme_nr_requests, "nvme_nr_requests"},
      {o.nvme_max_sectors, "nvme_max_sectors"},
      {o.nvme_read_ahead_off, "nvme_read_ahead_off"},
      {o.nvme_read_ahead_large, "nvme_read_ahead_large"},
      {o.nvme_queues_few, "nvme_queues_few"}};
  for (const auto& [index, name] : drives) {
    check_index(index, 2, name);
  }
  const int node0 = o.numa_unknown ? -1 : 0;
  const int node1 = o.numa_unknown ? -1 : 1;

  SysrootBuilder b(dir);
  b.file(kPciIdsPath, pci_ids_fixture());
  b.numa_node({.id = 0, .cpus = "0-55,112-167", .distances = {10, 21}, .memory_kib = 1056508412})
      .numa_node(
          {.id = 1, .cpus = "56-111,168-223", .distances = {21, 10}, .memory_kib = 1056946044})
      .cpuinfo({.vendor_id = "GenuineIntel",
                .family = 6,
                .model = 143,
                .model_name = "Intel(R) Xeon(R) Platinum 8480C",
                .flags = std::string(kSapphireRapidsFlags)})
      // Sapphire Rapids: 56 cores of 2 threads per socket, 48K L1d, 32K L1i, 2M L2 per core,
      // 105M L3 per socket.
      .cpu_topology({.threads_per_core = 2,
                     .caches = {{1, "Data", 48},
                                {1, "Instruction", 32},
                                {2, "Unified", 2048},
                                {3, "Unified", 107520, true}}})
      .hostname("dgx-h100-01")
      .osrelease("5.15.0-1063-nvidia")
      .cmdline(fmt::format(
          "BOOT_IMAGE=/boot/vmlinuz-5.15.0-1063-nvidia root=UUID=8c1f3a52-6d0e-4b7a-9f2d-"
          "3e5a7c9b1d44 ro quiet splash intel_iommu=on{}",
          o.iommu_dma_fq ? "" : " iommu=pt"))
      .nvidia_driver(kDriverVersion)
      .iommu(o.iommu_dma_fq ? "DMA-FQ" : "identity")
      .virtual_netdev("lo", kLoopback);
  if (!o.no_peermem) {
    b.nvidia_peermem(kDriverVersion);
  }
  if (o.config_as_root) {
    b.config_as_root();
  }

  auto bus0 = b.root_bus("0000:00", node0);
  bus0.add("0000:00:00.0", host_bridge(0x8086, 0x09a2));
  auto mgmt_port = bus0.add("0000:00:01.0", sapphire_rapids_root_port({5, 16}));
  auto nvme0_port = bus0.add("0000:00:03.0", sapphire_rapids_root_port({5, 4}));
  auto nvswitch_port = bus0.add("0000:00:05.0", sapphire_rapids_root_port({5, 16}));

  // The management NIC: dual-port 100 GbE, RoCE devices mlx5_8 and mlx5_9.
  auto mgmt0 = mgmt_port.add("0000:01:00.0", connectx6_dx());
  auto mgmt1 = mgmt_port.add("0000:01:00.1", connectx6_dx());
  mgmt1.same_iommu_group_as(mgmt0);
  const IbPortSpec roce{.rate = "100 Gb/sec (4X EDR)", .link_layer = "Ethernet"};
  mgmt0.netdev("enp1s0f0np0", {.speed_mbps = 100000})
      .infiniband("mlx5_8",
                  {.node_guid = "b83f:d203:00a1:7c40", .fw_ver = "22.39.1002", .ports = {roce}});
  mgmt1.netdev("enp1s0f1np1", {.speed_mbps = 100000})
      .infiniband("mlx5_9",
                  {.node_guid = "b83f:d203:00a1:7c41", .fw_ver = "22.39.1002", .ports = {roce}});

  if (o.nvme_poll_queues) {
    b.nvme_poll_queues(4);
  }
  nvme0_port.add("0000:02:00.0", pm9a3())
      .nvme("nvme0", {.model = "SAMSUNG MZQL23T8HCLS-00A07",
                      .serial = "S64HNE0T700001",
                      .firmware_rev = "GDC5602Q",
                      .namespace_sectors = {7501476528},
                      .queue = dgx_block_queue(o, 0),
                      .partitions = 2});

  auto nvswitch_up = nvswitch_port.add("0000:03:00.0", broadcom_pex({5, 16}));
  for (std::size_t k = 0; k < kDgxH100NvSwitches.size(); ++k) {
    nvswitch_up.add(fmt::format("0000:04:{:02x}.0", k), broadcom_pex({5, 4}))
        .add(kDgxH100NvSwitches[k], nvswitch());
  }

  for (int i = 0; i < 8; ++i) {
    write_dgx_gpu_tray(b, o, i, i < 4 ? node0 : node1);
  }

  b.root_bus("0000:c0", node1)
      .add("0000:c0:01.0", sapphire_rapids_root_port({5, 4}))
      .add("0000:c1:00.0", pm9a3())
      .nvme("nvme1", {.model = "SAMSUNG MZQL23T8HCLS-00A07",
                      .serial = "S64HNE0T700002",
                      .firmware_rev = "GDC5602Q",
                      .namespace_sectors = {7501476528},
                      .queue = dgx_block_queue(o, 1)});
  b.virtual_block_device("dm-0", "253:0", {"nvme1n1"});
  write_dgx_mounts(b, o);
}

void write_workstation(const fs::path& dir, const WorkstationOptions& o) {
  SysrootBuilder b(dir);
  b.file(kPciIdsPath, pci_ids_fixture());
  b.numa_node({.id = 0, .cpus = "0-31,64-95", .distances = {10, 32}, .memory_kib = 263921340})
      .numa_node({.id = 1, .cpus = "32-63,96-127", .distances = {32, 10}, .memory_kib = 264193732})
      .cpuinfo({.vendor_id = "AuthenticAMD",
                .family = 25,
                .model = 1,
                .model_name = "AMD EPYC 7543 32-Core Processor",
                .flags = std::string(kMilanFlags)})
      // Milan: 32 cores of 2 threads per socket, 32K L1d and L1i, 512K L2 per core; its L3 is
      // per 8-core chiplet, written here as one per socket (256M).
      .cpu_topology({.threads_per_core = 2,
                     .caches = {{1, "Data", 32},
                                {1, "Instruction", 32},
                                {2, "Unified", 512},
                                {3, "Unified", 262144, true}}})
      .hostname("ws-01")
      .osrelease("6.1.0-28-amd64")
      .cmdline(
          "BOOT_IMAGE=/vmlinuz-6.1.0-28-amd64 root=UUID=2f5b7c4e-91a3-4d7a-8a62-0c1d9e3f4b21 ro "
          "quiet")
      .nvidia_driver(kDriverVersion)
      .virtual_netdev("lo", kLoopback);

  const std::array<std::string_view, 4> slots = {"1", "2", "5", "6"};
  for (std::size_t i = 0; i < kWorkstationGpus.size(); ++i) {
    const int root = bus_of(kWorkstationGpus[i]) - 1;
    auto bus = b.root_bus(bus_name(root), i < 2 ? 0 : 1);
    if (root == 0) {
      bus.add("0000:00:00.0", host_bridge(0x1022, 0x1480));
    }
    auto gpu = bus.add(fmt::format("{}:01.1", bus_name(root)), amd_gpp_bridge({4, 16}))
                   .add(kWorkstationGpus[i], rtx6000_ada())
                   .slot(slots[i]);
    if (kWorkstationGpus[i] == "0000:41:00.0" && !o.full_width) {
      gpu.current_link({4, 8});
    }
  }

  const IbPortSpec roce{.rate = "100 Gb/sec (4X EDR)", .link_layer = "Ethernet"};
  if (o.nic_on_each_socket) {
    b.root_bus("0000:30", 0)
        .add("0000:30:01.1", amd_gpp_bridge({4, 16}))
        .add("0000:31:00.0", connectx6_dx())
        .slot("4")
        .netdev("ens4f0np0", {.speed_mbps = 100000})
        .infiniband("mlx5_1",
                    {.node_guid = "0c42:a103:0065:2f11", .fw_ver = "22.39.1002", .ports = {roce}});
  }
  b.root_bus("0000:a0", 1)
      .add("0000:a0:01.1", amd_gpp_bridge({4, 16}))
      .add("0000:a1:00.0", connectx6_dx())
      .slot("3")
      .netdev("ens3f0np0", {.speed_mbps = 100000})
      .infiniband("mlx5_0",
                  {.node_guid = "0c42:a103:0065:2f10", .fw_ver = "22.39.1002", .ports = {roce}});
  b.root_bus("0000:c0", 1)
      .add("0000:c0:01.1", amd_gpp_bridge({4, 4}))
      .add("0000:c1:00.0", samsung_990_pro())
      .nvme("nvme0", {.model = "Samsung SSD 990 PRO 2TB",
                      .serial = "S73WNJ0W123456X",
                      .firmware_rev = "4B2QJXD7",
                      .namespace_sectors = {3907029168}});
}

void write_flattened_vm(const fs::path& dir, const FlattenedVmOptions& o) {
  SysrootBuilder b(dir);
  b.file(kPciIdsPath, pci_ids_fixture());
  if (o.single_numa_node) {
    b.numa_node({.id = 0, .cpus = "0-95", .distances = {10}, .memory_kib = 1980760064});
  } else {
    b.numa_node({.id = 0, .cpus = "0-47", .distances = {10, 20}, .memory_kib = 990380032})
        .numa_node({.id = 1, .cpus = "48-95", .distances = {20, 10}, .memory_kib = 990380032});
  }
  b.cpuinfo({.vendor_id = "GenuineIntel",
             .family = 6,
             .model = 143,
             .model_name = "Intel Xeon Processor (SapphireRapids)",
             .flags = std::string(kSapphireRapidsGuestFlags)})
      // A KVM guest: one thread per vCPU, the caches QEMU's CPU model declares.
      .cpu_topology({.threads_per_core = 1,
                     .caches = {{1, "Data", 48},
                                {1, "Instruction", 32},
                                {2, "Unified", 2048},
                                {3, "Unified", 16384, true}}})
      .hostname("gpu-vm")
      .osrelease("6.8.0-45-generic")
      .cmdline(
          "BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=UUID=5d0c9e1a-27b4-4f83-b6e9-71a2c4d8f306 ro "
          "console=ttyS0,115200")
      .nvidia_driver(kDriverVersion)
      .virtual_netdev("lo", kLoopback);

  // Without vNUMA the guest firmware gives no proximity, so every device reads -1.
  auto bus = b.root_bus("0000:00", -1);
  bus.add("0000:00:00.0", host_bridge(0x8086, 0x29c0));
  bus.add("0000:00:03.0", virtio(0x1041, 0x020000)).virtio_netdev("virtio0", "enp0s3");
  // Passthrough shows a Gen5 H100 at 16 GT/s (nccl-tests#256).
  for (int i = 0; i < 4; ++i) {
    if (o.qemu_root_ports) {
      bus.add(fmt::format("0000:00:1c.{}", i), qemu_root_port())
          .add(fmt::format("0000:{:02x}:00.0", i + 1), h100({4, 16}));
    } else {
      bus.add(fmt::format("0000:00:{:02x}.0", 5 + i), h100({4, 16}));
    }
  }
}

void write_kvm_guest(const fs::path& dir, const KvmGuestOptions& o) {
  SysrootBuilder b(dir);
  b.file(kHwdataPciIdsPath, pci_ids_fixture());
  b.numa_node({.id = 0, .cpus = "0-47", .distances = {10, 20}, .memory_kib = 990380032})
      .numa_node({.id = 1, .cpus = "48-95", .distances = {20, 10}, .memory_kib = 990380032});
  std::string flags(kSapphireRapidsGuestFlags);
  if (o.no_cpu_flag) {
    flags.erase(flags.find(" hypervisor"), std::string_view(" hypervisor").size());
  }
  b.cpuinfo({.vendor_id = "GenuineIntel",
             .family = 6,
             .model = 143,
             .model_name = "Intel Xeon Processor (SapphireRapids)",
             .flags = flags})
      .cpu_topology({.threads_per_core = 1,
                     .caches = {{1, "Data", 48},
                                {1, "Instruction", 32},
                                {2, "Unified", 2048},
                                {3, "Unified", 16384, true}}})
      .hostname("h200-vm")
      .osrelease("6.8.0-45-generic")
      .cmdline(
          "BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=UUID=9b1f4c2e-6d3a-4e7b-8c05-2a7e1d9f4b63 ro "
          "console=ttyS0,115200")
      .nvidia_driver(kDriverVersion)
      .virtual_netdev("lo", kLoopback);
  if (!o.no_peermem) {
    b.nvidia_peermem(kDriverVersion);
  }

  auto bus = b.root_bus("0000:00", -1);
  bus.add("0000:00:00.0", host_bridge(0x8086, 0x29c0));
  bus.add("0000:00:03.0", virtio(0x1041, 0x020000)).virtio_netdev("virtio0", "enp0s3");
  for (std::size_t i = 0; i < kKvmGuestGpus.size(); ++i) {
    bus.add(fmt::format("0000:00:02.{}", i), qemu_root_port()).add(kKvmGuestGpus[i], h200());
  }
  const auto nic = [&](PciFunction port, std::size_t i) {
    const bool hdr = o.nic_rate_hdr && i == 1;
    const IbPortSpec rate{.rate = hdr ? "200 Gb/sec (4X HDR)" : "400 Gb/sec (4X NDR)"};
    port.add(kKvmGuestNics[i], connectx7({5, 16}))
        .infiniband(fmt::format("mlx5_{}", i),
                    {.node_guid = fmt::format("946d:ae03:00c4:{:04x}", 0x6a10 + i * 8),
                     .fw_ver = "28.39.1002",
                     .ports = {rate}})
        .netdev(fmt::format("ibp{}s0", bus_of(kKvmGuestNics[i])),
                {.speed_mbps = hdr ? 200000 : 400000, .mtu = 4092});
  };
  nic(bus.add("0000:00:02.4", qemu_root_port()), 0);
  nic(bus.add("0000:00:02.5", qemu_root_port()), 1);
  auto up = bus.add("0000:00:02.6", qemu_root_port()).add(kKvmGuestXio3130Up, qemu_xio3130(true));
  nic(up.add("0000:08:00.0", qemu_xio3130(false)), 2);
  nic(up.add("0000:08:01.0", qemu_xio3130(false)), 3);
}

void write_ci_vm(const fs::path& dir, const CiVmOptions& /*options*/) {
  SysrootBuilder b(dir);
  b.numa_node({.id = 0, .cpus = "0-1", .distances = {10}, .memory_kib = 4028880})
      .cpuinfo({.vendor_id = "AuthenticAMD",
                .family = 25,
                .model = 1,
                .model_name = "AMD EPYC",
                .flags = std::string(kEpycGuestFlags),
                .processors = 2})
      // Firecracker: two vCPUs, one thread each, one package.
      .cpu_topology({.threads_per_core = 1,
                     .caches = {{1, "Data", 32},
                                {1, "Instruction", 32},
                                {2, "Unified", 512},
                                {3, "Unified", 32768, true}}})
      .hostname("localhost")
      .osrelease("6.18.44-fc-v657")
      .cmdline("console=ttyS0 reboot=k panic=1 root=/dev/vda rw")
      .virtual_netdev("lo", kLoopback);

  // Firecracker's virtio devices are plain PCI functions on the root bus: no PCIe capability,
  // no link files, no NUMA information (see the topology reference, section b).
  auto bus = b.root_bus("0000:00", -1);
  bus.add("0000:00:00.0", host_bridge(0x8086, 0x0d57));
  bus.add("0000:00:01.0", virtio(0x1042, 0x018000)).virtio("virtio0");
  bus.add("0000:00:02.0", virtio(0x1045, 0xffff00)).virtio("virtio1");
  bus.add("0000:00:03.0", virtio(0x1041, 0x020000)).virtio_netdev("virtio2", "eth0");
  bus.add("0000:00:04.0", virtio(0x1044, 0xffff00)).virtio("virtio3");
  bus.add("0000:00:05.0", virtio(0x1053, 0xffff00)).virtio("virtio4");
}

void write_firmware_quirks(const fs::path& dir, const FirmwareQuirksOptions& o) {
  SysrootBuilder b(dir);
  b.file(kPciIdsPath, pci_ids_fixture());
  const bool third_node = o.memory_only_node || o.gpu_memory_node || o.empty_node;
  // The third node's distances: a CXL expander on socket 0, GPU memory on socket 1, or an empty
  // proximity domain as far from both.
  const std::vector<int> node2_distances = o.memory_only_node  ? std::vector<int>{14, 24, 10}
                                           : o.gpu_memory_node ? std::vector<int>{40, 20, 10}
                                                               : std::vector<int>{31, 31, 10};
  const int dram_tier = o.memory_only_node ? 4 : -1;
  if (o.one_node) {
    b.numa_node({.id = 0, .cpus = "0-31", .distances = {10}, .memory_kib = 134217728});
  } else {
    b.numa_node({.id = 0,
                 .cpus = o.overlapping_nodes ? "0-31" : "0-15",
                 .distances = third_node ? std::vector<int>{10, 21, node2_distances[0]}
                                         : std::vector<int>{10, 21},
                 .memory_kib = 67108864,
                 .memory_tier = dram_tier})
        .numa_node({.id = 1,
                    .cpus = o.overlapping_nodes          ? "0-31"
                            : o.partly_overlapping_nodes ? "12-31"
                            : o.cpu_in_no_node           ? "16-30"
                                                         : "16-31",
                    .distances = third_node ? std::vector<int>{21, 10, node2_distances[1]}
                                            : std::vector<int>{21, 10},
                    .memory_kib = 67108864,
                    .memory_tier = dram_tier});
  }
  if (third_node) {
    NumaNodeSpec node2{.id = 2,
                       .cpus = "",
                       .distances = node2_distances,
                       .memory_kib = o.empty_node ? 0U : 16777216U};
    if (o.memory_only_node) {
      // An HMAT that names socket 0 as the initiator; dax/kmem puts the memory in tier 22.
      node2.initiators = {0};
      node2.read_bandwidth_mbps = 25600;
      node2.read_latency_ns = 250;
      node2.memory_tier = 22;
    }
    b.numa_node(node2);
  }
  if (o.offline_node) {
    // A node the kernel did not bring up has no directory and is only in node/possible; node 0's
    // distance row lists the online nodes.
    b.remove("sys/devices/system/node/node1")
        .file("sys/devices/system/node/online", "0\n")
        .file("sys/devices/system/node/node0/distance", "10\n");
  }
  // Sapphire Rapids Gold 6430 cut to 16 single-thread cores per package, so the quirks stay small.
  b.cpu_topology({.threads_per_core = 1,
                  .caches = {{1, "Data", 48},
                             {1, "Instruction", 32},
                             {2, "Unified", 2048},
                             {3, "Unified", 61440, true}},
                  .packages = {{"0-15", 0}, {"16-31", 1}}});
  // Packages by CPU, whatever the nodes say.
  b.cpu_packages("0-15", o.package_unknown ? -1 : 0)
      .cpu_packages("16-31", o.package_unknown ? -1 : 1);
  if (o.cpu_in_no_node) {
    b.file("sys/devices/system/cpu/online", "0-31\n");
  }
  if (o.package_dropped) {
    // Firmware that gives half a socket its own package id and a package mask that cuts across
    // the other package's (topology_core_cpumask from a broken MADT/CPUID enumeration).
    for (int cpu = 24; cpu < 32; ++cpu) {
      const std::string topo = fmt::format("sys/devices/system/cpu/cpu{}/topology/", cpu);
      b.file(topo + "physical_package_id", "2\n");
      for (const char* name : {"package_cpus", "core_siblings"}) {
        b.file(topo + name, "fff00000\n").file(topo + name + "_list", "20-31\n");
      }
    }
  }
  if (o.first_cpu_offline) {
    b.offline_cpus("0,16");
  }
  if (o.cpulist_nul) {
    b.file("sys/devices/system/node/node0/cpulist", std::string("0-15\n\0", 6));
  }
  if (o.cpumap_only) {
    b.remove("sys/devices/system/node/node0/cpulist")
        .remove("sys/devices/system/node/node1/cpulist");
  }
  b.cpuinfo({.vendor_id = "GenuineIntel",
             .family = 6,
             .model = 143,
             .model_name = "Intel(R) Xeon(R) Gold 6430",
             .flags = std::string(kSapphireRapidsFlags)})
      .hostname("quirks-01")
      .osrelease("6.1.0-28-amd64")
      .cmdline("BOOT_IMAGE=/vmlinuz-6.1.0-28-amd64 root=/dev/sda1 ro quiet iommu=pt")
      .nvidia_driver(kDriverVersion)
      .nvidia_peermem(kDriverVersion)
      .virtual_netdev("lo", kLoopback);
  const int node1 = o.one_node ? 0 : 1;

  auto bus0 = b.root_bus("0000:00", 0);
  bus0.add("0000:00:00.0", host_bridge(0x8086, 0x09a2));
  bus0.add("0000:00:1c.0", sapphire_rapids_root_port({3, 1})).add(kQuirksAspeed, aspeed_vga());
  if (o.cirrus_vga) {
    bus0.add(kQuirksCirrus, cirrus_vga());
  }

  auto gpu0_port =
      b.root_bus("0000:17", 0).add(kQuirksGpu0Port, sapphire_rapids_root_port({4, 16}));
  auto gpu0 = gpu0_port.add(kQuirksGpu0, a100_pcie());
  if (o.bridge_unlisted) {
    gpu0_port.unlisted();
  }
  if (o.empty_attribute) {
    gpu0.attr_bytes("subsystem_device", "");
  }

  auto gpu1_port = b.root_bus("0000:ca", o.numa_from_parent ? -1 : node1)
                       .add(kQuirksGpu1Port, sapphire_rapids_root_port({4, 16}));
  auto gpu1 = gpu1_port.add(kQuirksGpu1, a100_pcie());
  if (o.numa_from_parent) {
    gpu1_port.numa_node(node1);
  }
  if (o.numa_node_absent) {
    gpu1.remove_attr("numa_node");
  }
  if (o.numa_from_local_cpus) {
    gpu1.attr("numa_node", "-1").remove_attr("local_cpulist");
  }

  const std::string hca_bus = o.domain_32bit ? "10000:00" : "0000:e2";
  const std::string hca_port = o.domain_32bit ? "10000:00:02.0" : "0000:e2:00.0";
  const std::string hca_bdf(o.domain_32bit ? kQuirksHcaDomain32 : kQuirksHca);
  auto hca = b.root_bus(hca_bus, node1)
                 .add(hca_port, sapphire_rapids_root_port({4, 16}))
                 .add(hca_bdf, o.old_hca ? connectx2() : connectx6());
  const std::string ib_name = o.old_hca ? "mlx4_0" : "mlx5_0";
  hca.infiniband(ib_name,
                 {.node_guid = "0002:c903:00f9:bfa0",
                  .fw_ver = o.old_hca ? "2.9.1000" : "20.39.1002",
                  .ports = {{.rate = o.old_hca ? "40 Gb/sec (4X QDR)" : "200 Gb/sec (4X HDR)"}}})
      .netdev("ib0", {.speed_mbps = o.old_hca ? 40000 : 200000, .mtu = 4092});

  if (o.chipset_nic) {
    // Intel's X722 is built into the Lewisburg PCH: its functions report 8 GT/s x1 while the
    // PCH-internal port above them reports 2.5 GT/s x1 (a link no slot wires, and one that could
    // not carry two 10 GbE ports).
    auto port = bus0.add(std::string(kQuirksX722Port),
                         {{0x060400, 0x8086, 0xa194, 0x8086, 0x0000}, Link{1, 1}, "pcieport"});
    for (int f = 0; f < 2; ++f) {
      port.add(fmt::format("0000:3d:00.{}", f),
               {{0x020000, 0x8086, 0x37d3, 0x8086, 0x37d3}, Link{3, 1}, "i40e"})
          .netdev(fmt::format("eno{}", f + 1), {.speed_mbps = 10000});
    }
    for (int f = 0; f < 2; ++f) {
      b.file(fmt::format("sys/devices/pci0000:00/{}/0000:3d:00.{}/current_link_speed",
                         kQuirksX722Port, f),
             "8.0 GT/s PCIe\n");
    }
  }

  if (o.coprocessor) {
    b.root_bus("0000:40", 0)
        .add("0000:40:00.0", sapphire_rapids_root_port({3, 16}))
        .add(kQuirksPhi, xeon_phi());
  }
}

void write_pcie_server(const fs::path& dir, const PcieServerOptions& o) {
  SysrootBuilder b(dir);
  b.file(kPciIdsPath, pci_ids_fixture());
  b.numa_node({.id = 0, .cpus = "0-31", .distances = {10}, .memory_kib = 263921340})
      .cpuinfo({.vendor_id = "AuthenticAMD",
                .family = 25,
                .model = 1,
                .model_name = "AMD EPYC 7313 16-Core Processor",
                .flags = std::string(kMilanFlags)})
      // Milan: 16 cores of 2 threads, 32K L1d and L1i, 512K L2 per core, L3 written per socket.
      .cpu_topology({.threads_per_core = 2,
                     .caches = {{1, "Data", 32},
                                {1, "Instruction", 32},
                                {2, "Unified", 512},
                                {3, "Unified", 131072, true}}})
      .hostname("pcie-01")
      .osrelease("6.1.0-28-amd64")
      .cmdline(
          "BOOT_IMAGE=/vmlinuz-6.1.0-28-amd64 root=UUID=7a3e1c90-5b2d-4e8f-a1c6-3d9b0f2e4a17 ro "
          "quiet iommu=pt")
      .nvidia_driver(kDriverVersion)
      .virtual_netdev("lo", kLoopback);
  if (!o.no_peermem) {
    b.nvidia_peermem(kDriverVersion);
  }
  b.root_bus("0000:00", 0).add("0000:00:00.0", host_bridge(0x1022, 0x1480));

  // Each port of a ConnectX card is its own PCI function on the one link (mlx5).
  auto dual100_port = b.root_bus("0000:10", 0).add("0000:10:01.1", amd_gpp_bridge({4, 16}));
  const IbPortSpec roce100{.rate = "100 Gb/sec (4X EDR)", .link_layer = "Ethernet"};
  for (int f = 0; f < 2; ++f) {
    dual100_port
        .add(fmt::format("0000:11:00.{}", f),
             connectx6_dx_max(o.nic_gen4_x8 ? Link{4, 8} : Link{4, 16}))
        .netdev(fmt::format("ens1f{}np{}", f, f), {.speed_mbps = 100000})
        .infiniband(fmt::format("mlx5_{}", f),
                    {.node_guid = fmt::format("0c42:a103:0071:5a{:02x}", f),
                     .fw_ver = "22.39.1002",
                     .ports = {roce100}});
  }

  if (o.mgmt_cx4_lx) {
    b.root_bus("0000:20", 0)
        .add("0000:20:01.1", amd_gpp_bridge({4, 16}))
        .add(kPcieServerMgmt, connectx4_lx())
        .netdev("eno1np0", {.speed_mbps = 25000})
        .infiniband("mlx5_4",
                    {.node_guid = "b859:9f03:00d2:4e10",
                     .fw_ver = "14.32.1010",
                     .ports = {{.rate = "25 Gb/sec (1X EDR)", .link_layer = "Ethernet"}}});
  }

  auto up = b.root_bus("0000:40", 0)
                .add("0000:40:01.1", amd_gpp_bridge({4, 16}))
                .add(kPcieServerSwitchUp, broadcom_pex_gen4({4, 16}));
  if (o.switch_uplink_x8) {
    up.current_link({4, 8});
  }
  up.add("0000:42:00.0", broadcom_pex_gen4({4, 16})).add("0000:43:00.0", a100_pcie());
  auto hca_port = up.add("0000:42:01.0", broadcom_pex_gen4({4, 16}));
  for (int f = 0; f < 2; ++f) {
    hca_port.add(fmt::format("0000:44:00.{}", f), connectx6())
        .infiniband(fmt::format("mlx5_{}", 2 + f),
                    {.node_guid = fmt::format("0c42:a103:0071:5b{:02x}", f),
                     .fw_ver = "20.39.1002",
                     .ports = {{.rate = "200 Gb/sec (4X HDR)"}}})
        .netdev(fmt::format("ib{}", f), {.speed_mbps = 200000, .mtu = 4092});
  }
}

void write_amd_accelerator(const fs::path& dir, const AmdAcceleratorOptions& o) {
  SysrootBuilder b(dir);
  b.file(kPciIdsPath, pci_ids_fixture());
  b.numa_node({.id = 0, .cpus = "0-31", .distances = {10}, .memory_kib = 527845380})
      .cpuinfo({.vendor_id = "AuthenticAMD",
                .family = 25,
                .model = 1,
                .model_name = "AMD EPYC 7313 16-Core Processor",
                .flags = std::string(kMilanFlags)})
      .cpu_topology({.threads_per_core = 2,
                     .caches = {{1, "Data", 32},
                                {1, "Instruction", 32},
                                {2, "Unified", 512},
                                {3, "Unified", 131072, true}}})
      .hostname("mi210-01")
      .osrelease("5.15.0-91-generic")
      .cmdline(
          "BOOT_IMAGE=/vmlinuz-5.15.0-91-generic root=UUID=3b8d6f21-9c4e-4a57-b0e2-8f1a6d3c5e94 "
          "ro quiet iommu=pt")
      .virtual_netdev("lo", kLoopback);
  if (!o.no_peermem) {
    // A loaded module has its directory under /sys/module (Documentation/ABI/testing/sysfs-module).
    b.file("sys/module/amd_peermem/initstate", "live\n");
  }
  b.root_bus("0000:00", 0).add("0000:00:00.0", host_bridge(0x1022, 0x1480));
  auto level1 = b.root_bus("0000:80", 0)
                    .add("0000:80:01.1", amd_gpp_bridge({4, 16}))
                    .add(std::string(kAmdBoxLevel1), broadcom_pex_gen4({4, 16}));
  for (std::size_t i = 0; i < kAmdBoxLevel2.size(); ++i) {
    const int down_bus = i == 0 ? 0x84 : 0x89;
    auto level2 = level1.add(fmt::format("0000:82:{:02x}.0", i), broadcom_pex_gen4({4, 16}))
                      .add(std::string(kAmdBoxLevel2[i]), broadcom_pex_gen4({4, 16}));
    level2.add(fmt::format("0000:{:02x}:00.0", down_bus), broadcom_pex_gen4({4, 16}))
        .add(std::string(kAmdBoxGpus[i]), mi210());
    level2.add(fmt::format("0000:{:02x}:01.0", down_bus), broadcom_pex_gen4({4, 16}))
        .add(fmt::format("0000:{:02x}:00.0", down_bus + 2), connectx6())
        .infiniband(fmt::format("mlx5_{}", i),
                    {.node_guid = fmt::format("0c42:a103:0072:6c{:02x}", i),
                     .fw_ver = "20.39.1002",
                     .ports = {{.rate = "200 Gb/sec (4X HDR)"}}})
        .netdev(fmt::format("ib{}", i), {.speed_mbps = 200000, .mtu = 4092});
  }
}

// ---- by name ----

namespace {

template <class Options>
struct Fault {
  FaultInfo info;
  void (*apply)(Options&, int index);
};

template <class Options>
std::vector<FaultInfo> infos(const std::vector<Fault<Options>>& faults) {
  std::vector<FaultInfo> out;
  for (const auto& f : faults) {
    out.push_back(f.info);
  }
  return out;
}

template <class Options>
std::string fault_names(const std::vector<Fault<Options>>& faults) {
  std::string out;
  for (const auto& f : faults) {
    out +=
        fmt::format("{}{}{}", out.empty() ? "" : ", ", f.info.name, f.info.indexed ? "[=N]" : "");
  }
  return out.empty() ? "none" : out;
}

template <class Options>
Options options_from(std::string_view machine, const std::vector<Fault<Options>>& faults,
                     const std::vector<std::string>& names) {
  Options options;
  for (const auto& text : names) {
    const std::size_t eq = text.find('=');
    const std::string name = text.substr(0, eq);
    const Fault<Options>* fault = nullptr;
    for (const auto& f : faults) {
      if (f.info.name == name) {
        fault = &f;
      }
    }
    if (fault == nullptr) {
      throw std::invalid_argument(fmt::format("unknown fault '{}' for {} (faults: {})", text,
                                              machine, fault_names(faults)));
    }
    int index = 0;
    if (eq != std::string::npos) {
      const std::string digits = text.substr(eq + 1);
      const bool numeric =
          fault->info.indexed && digits.size() == 1 && digits[0] >= '0' && digits[0] <= '7';
      if (!numeric) {
        throw std::invalid_argument(fmt::format(
            "fault '{}' for {}: {}", text, machine,
            fault->info.indexed ? "the index must be 0-7" : "this fault takes no index"));
      }
      index = digits[0] - '0';
    }
    fault->apply(options, index);
  }
  return options;
}

const std::vector<Fault<DgxH100Options>>& dgx_faults() {
  using O = DgxH100Options;
  static const std::vector<Fault<O>> faults = {
      {{"gpu-width-x8", true, "GPU N trained at x8 of x16"},
       [](O& o, int i) { o.gpu_width_x8 = i; }},
      {{"gpu-speed-2.5gt", true, "GPU N's link at 2.5 GT/s, as when idle"},
       [](O& o, int i) { o.gpu_speed_2_5gt = i; }},
      {{"gpu-in-gen4-slot", true, "GPU N (Gen5) below a Gen4 switch port"},
       [](O& o, int i) { o.gpu_in_gen4_slot = i; }},
      {{"switch-uplink-x4", true, "switch N's uplink is Gen5 x4"},
       [](O& o, int i) { o.switch_uplink_x4 = i; }},
      {{"numa-unknown", false, "numa_node -1 on every device"},
       [](O& o, int) { o.numa_unknown = true; }},
      {{"ib-port-polling", true, "mlx5_N port DOWN, Polling"},
       [](O& o, int i) { o.ib_port_polling = i; }},
      {{"ib-port-disabled", true, "mlx5_N port DOWN, Disabled"},
       [](O& o, int i) { o.ib_port_disabled = i; }},
      {{"ib-rate-hdr", true, "mlx5_N at 200 Gb/sec (4X HDR)"},
       [](O& o, int i) { o.ib_rate_hdr = i; }},
      {{"ib-rate-2x", true, "mlx5_N at 100 Gb/sec (2X HDR)"},
       [](O& o, int i) { o.ib_rate_2x = i; }},
      {{"nic-gen4-x8", true, "NIC N is a Gen4 x8 device"}, [](O& o, int i) { o.nic_gen4_x8 = i; }},
      {{"iommu-dma-fq", false, "IOMMU groups DMA-FQ, no iommu=pt"},
       [](O& o, int) { o.iommu_dma_fq = true; }},
      {{"no-peermem", false, "nvidia_peermem not loaded"}, [](O& o, int) { o.no_peermem = true; }},
      {{"acs-redirect", true, "ACSCtl 0x001d on GPU N's switch downstream port"},
       [](O& o, int i) { o.acs_redirect = i; }},
      {{"config-as-root", false, "4096-byte config everywhere, ACS off"},
       [](O& o, int) { o.config_as_root = true; }},
      {{"iommu-group-split", true, "GPU N in an IOMMU group apart from its NIC"},
       [](O& o, int i) { o.iommu_group_split = i; }},
      {{"nvme-scheduler", true, "nvmeNn1 queues through mq-deadline"},
       [](O& o, int i) { o.nvme_scheduler = i; }},
      {{"nvme-nr-requests", true, "nvmeNn1 nr_requests 16"},
       [](O& o, int i) { o.nvme_nr_requests = i; }},
      {{"nvme-max-sectors", true, "nvmeNn1 max_sectors_kb 64 of 2048"},
       [](O& o, int i) { o.nvme_max_sectors = i; }},
      {{"nvme-read-ahead-off", true, "nvmeNn1 read_ahead_kb 0"},
       [](O& o, int i) { o.nvme_read_ahead_off = i; }},
      {{"nvme-read-ahead-large", true, "nvmeNn1 read_ahead_kb 65536"},
       [](O& o, int i) { o.nvme_read_ahead_large = i; }},
      {{"nvme-queues-few", true, "nvmeNn1 has 8 hardware queues"},
       [](O& o, int i) { o.nvme_queues_few = i; }},
      {{"nvme-poll-queues", false, "fix: nvme poll_queues 4"},
       [](O& o, int) { o.nvme_poll_queues = true; }},
      {{"raid-sync", false, "/raid mounted sync"}, [](O& o, int) { o.raid_sync = true; }},
      {{"raid-strictatime", false, "/raid mounted without noatime or relatime"},
       [](O& o, int) { o.raid_strictatime = true; }},
      {{"raid-data-journal", false, "/raid's ext4 with data=journal"},
       [](O& o, int) { o.raid_data_journal = true; }},
  };
  return faults;
}

const std::vector<Fault<WorkstationOptions>>& workstation_faults() {
  using O = WorkstationOptions;
  static const std::vector<Fault<O>> faults = {
      {{"full-width", false, "fix: 0000:41:00.0 at x16"}, [](O& o, int) { o.full_width = true; }},
      {{"nic-on-each-socket", false, "fix: a second NIC on NUMA 0"},
       [](O& o, int) { o.nic_on_each_socket = true; }},
  };
  return faults;
}

const std::vector<Fault<FlattenedVmOptions>>& flattened_vm_faults() {
  using O = FlattenedVmOptions;
  static const std::vector<Fault<O>> faults = {
      {{"single-numa-node", false, "one vNUMA node"}, [](O& o, int) { o.single_numa_node = true; }},
      {{"qemu-root-ports", false, "GPUs behind QEMU root ports"},
       [](O& o, int) { o.qemu_root_ports = true; }},
  };
  return faults;
}

const std::vector<Fault<FirmwareQuirksOptions>>& firmware_quirks_faults() {
  using O = FirmwareQuirksOptions;
  static const std::vector<Fault<O>> faults = {
      {{"cpulist-nul", false, "node 0's cpulist reads 0-15\\n\\0"},
       [](O& o, int) { o.cpulist_nul = true; }},
      {{"cpumap-only", false, "nodes have cpumap but no cpulist"},
       [](O& o, int) { o.cpumap_only = true; }},
      {{"first-cpu-offline", false, "CPUs 0 and 16 offline, still in the node lists"},
       [](O& o, int) { o.first_cpu_offline = true; }},
      {{"package-unknown", false, "physical_package_id -1 on every CPU"},
       [](O& o, int) { o.package_unknown = true; }},
      {{"one-node", false, "one NUMA node over both packages"},
       [](O& o, int) { o.one_node = true; }},
      {{"memory-only-node", false, "node 2 with memory and no CPUs"},
       [](O& o, int) { o.memory_only_node = true; }},
      {{"empty-node", false, "node 2 with no CPUs and no memory"},
       [](O& o, int) { o.empty_node = true; }},
      {{"gpu-memory-node", false, "node 2 with memory, no CPUs, no HMAT (Grace Hopper)"},
       [](O& o, int) { o.gpu_memory_node = true; }},
      {{"overlapping-nodes", false, "both nodes list CPUs 0-31"},
       [](O& o, int) { o.overlapping_nodes = true; }},
      {{"partly-overlapping-nodes", false, "node 0 lists CPUs 0-15, node 1 12-31"},
       [](O& o, int) { o.partly_overlapping_nodes = true; }},
      {{"package-dropped", false, "CPUs 24-31 in package 2, whose mask conflicts with 1's"},
       [](O& o, int) { o.package_dropped = true; }},
      {{"offline-node", false, "node 1 possible but offline, its CPUs online"},
       [](O& o, int) { o.offline_node = true; }},
      {{"chipset-nic", false, "adds an X722 behind a 2.5 GT/s x1 PCH-internal port"},
       [](O& o, int) { o.chipset_nic = true; }},
      {{"cpu-in-no-node", false, "CPU 31 online but in no node"},
       [](O& o, int) { o.cpu_in_no_node = true; }},
      {{"numa-node-absent", false, "GPU 1 without numa_node"},
       [](O& o, int) { o.numa_node_absent = true; }},
      {{"numa-from-local-cpus", false, "GPU 1: numa_node -1, only local_cpus"},
       [](O& o, int) { o.numa_from_local_cpus = true; }},
      {{"numa-from-parent", false, "GPU 1: numa_node -1, its root port on node 1"},
       [](O& o, int) { o.numa_from_parent = true; }},
      {{"domain-32bit", false, "the HCA in PCI domain 10000"},
       [](O& o, int) { o.domain_32bit = true; }},
      {{"bridge-unlisted", false, "GPU 0's root port missing from /sys/bus/pci/devices"},
       [](O& o, int) { o.bridge_unlisted = true; }},
      {{"empty-attribute", false, "GPU 0's subsystem_device is empty"},
       [](O& o, int) { o.empty_attribute = true; }},
      {{"coprocessor", false, "adds a Xeon Phi co-processor"},
       [](O& o, int) { o.coprocessor = true; }},
      {{"cirrus-vga", false, "adds an emulated Cirrus VGA"},
       [](O& o, int) { o.cirrus_vga = true; }},
      {{"old-hca", false, "the HCA is a ConnectX-2, class 0x0c06, Gen2 x8, 4X QDR"},
       [](O& o, int) { o.old_hca = true; }},
  };
  return faults;
}

const std::vector<Fault<PcieServerOptions>>& pcie_server_faults() {
  using O = PcieServerOptions;
  static const std::vector<Fault<O>> faults = {
      {{"nic-gen4-x8", false, "the dual-port 100G card is Gen4 x8"},
       [](O& o, int) { o.nic_gen4_x8 = true; }},
      {{"switch-uplink-x8", false, "the switch uplink trained at Gen4 x8"},
       [](O& o, int) { o.switch_uplink_x8 = true; }},
      {{"no-peermem", false, "nvidia_peermem not loaded"}, [](O& o, int) { o.no_peermem = true; }},
      {{"mgmt-cx4-lx", false, "adds a ConnectX-4 Lx 25 GbE management port"},
       [](O& o, int) { o.mgmt_cx4_lx = true; }},
  };
  return faults;
}

const std::vector<Fault<AmdAcceleratorOptions>>& amd_accelerator_faults() {
  using O = AmdAcceleratorOptions;
  static const std::vector<Fault<O>> faults = {
      {{"no-peermem", false, "amd_peermem not loaded"}, [](O& o, int) { o.no_peermem = true; }},
  };
  return faults;
}

const std::vector<Fault<KvmGuestOptions>>& kvm_guest_faults() {
  using O = KvmGuestOptions;
  static const std::vector<Fault<O>> faults = {
      {{"no-cpu-flag", false, "no hypervisor flag in /proc/cpuinfo (arm64-like)"},
       [](O& o, int) { o.no_cpu_flag = true; }},
      {{"nic-rate-hdr", false, "mlx5_1 at 200 Gb/sec (4X HDR)"},
       [](O& o, int) { o.nic_rate_hdr = true; }},
      {{"no-peermem", false, "nvidia_peermem not loaded"}, [](O& o, int) { o.no_peermem = true; }},
  };
  return faults;
}

const std::vector<Fault<CiVmOptions>>& ci_vm_faults() {
  static const std::vector<Fault<CiVmOptions>> faults;
  return faults;
}

}  // namespace

const std::vector<CannedMachine>& canned_machines() {
  static const std::vector<CannedMachine> machines = {
      {"dgx_h100", "8x H100 SXM, 8x ConnectX-7 NDR behind PEX switches, 4 NVSwitches",
       infos(dgx_faults()),
       [](const fs::path& dir, const std::vector<std::string>& names) {
         write_dgx_h100(dir, options_from("dgx_h100", dgx_faults(), names));
       }},
      {"workstation", "2 sockets, 4x RTX 6000 Ada on root ports, one 100G NIC on NUMA 1",
       infos(workstation_faults()),
       [](const fs::path& dir, const std::vector<std::string>& names) {
         write_workstation(dir, options_from("workstation", workstation_faults(), names));
       }},
      {"flattened_vm", "KVM guest, 4x H100 flat on the root bus, numa_node -1",
       infos(flattened_vm_faults()),
       [](const fs::path& dir, const std::vector<std::string>& names) {
         write_flattened_vm(dir, options_from("flattened_vm", flattened_vm_faults(), names));
       }},
      {"ci_vm", "2-vCPU Firecracker VM: virtio only, nothing knowable", infos(ci_vm_faults()),
       [](const fs::path& dir, const std::vector<std::string>& names) {
         write_ci_vm(dir, options_from("ci_vm", ci_vm_faults(), names));
       }},
      {"firmware_quirks", "2 sockets, 2 A100, an HDR HCA; faults are sysfs quirks of real trees",
       infos(firmware_quirks_faults()),
       [](const fs::path& dir, const std::vector<std::string>& names) {
         write_firmware_quirks(dir,
                               options_from("firmware_quirks", firmware_quirks_faults(), names));
       }},
      {"pcie_server", "1 socket, dual-port 100G and 200G ConnectX cards, an A100 behind a switch",
       infos(pcie_server_faults()),
       [](const fs::path& dir, const std::vector<std::string>& names) {
         write_pcie_server(dir, options_from("pcie_server", pcie_server_faults(), names));
       }},
      {"amd_accelerator", "1 socket, 2x MI210 and 2 HDR HCAs behind two levels of PEX switches",
       infos(amd_accelerator_faults()),
       [](const fs::path& dir, const std::vector<std::string>& names) {
         write_amd_accelerator(dir,
                               options_from("amd_accelerator", amd_accelerator_faults(), names));
       }},
      {"kvm_guest", "KVM guest: 4x H200 and 4x ConnectX-7 behind QEMU root ports and XIO3130",
       infos(kvm_guest_faults()),
       [](const fs::path& dir, const std::vector<std::string>& names) {
         write_kvm_guest(dir, options_from("kvm_guest", kvm_guest_faults(), names));
       }},
  };
  return machines;
}

}  // namespace acco::testing
