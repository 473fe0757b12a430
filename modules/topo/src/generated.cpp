#include "acco/topo/generated.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "acco/topo/link_model.hpp"
#include "acco/topo/sysfs_source.hpp"

namespace acco::topo {
// One namespace of its own: unity builds put this file beside the other topo sources.
namespace generated_nodes {
namespace {

struct Ids {
  std::uint32_t class_code = 0;
  std::uint16_t vendor = 0;
  std::uint16_t device = 0;
};

// PCI ids as `lspci -nn` shows them on these machines.
constexpr Ids kH100Sxm{0x030200, 0x10de, 0x2330};
constexpr Ids kA100Sxm80{0x030200, 0x10de, 0x20b2};
constexpr Ids kL40s{0x030200, 0x10de, 0x26b9};
constexpr Ids kNvSwitch3{0x068000, 0x10de, 0x22a3};  // H100 generation
constexpr Ids kNvSwitch2{0x068000, 0x10de, 0x1af1};  // A100 generation
constexpr Ids kConnectX7{0x020700, 0x15b3, 0x1021};
constexpr Ids kConnectX6{0x020700, 0x15b3, 0x101b};  // HDR InfiniBand
constexpr Ids kConnectX6Dx{0x020000, 0x15b3, 0x101d};
constexpr Ids kPexSwitch{0x060400, 0x1000, 0xc030};
constexpr Ids kIntelRootPort{0x060400, 0x8086, 0x352a};
constexpr Ids kAmdRootPort{0x060400, 0x1022, 0x1483};
constexpr Ids kHostBridge{0x060000, 0x8086, 0x09a2};

constexpr PcieLink kGen5x16{32, 16};
constexpr PcieLink kGen5x4{32, 4};
constexpr PcieLink kGen4x16{16, 16};
constexpr PcieLink kGen4x4{16, 4};

std::string bus(int number) {
  return fmt::format("0000:{:02x}", number);
}

// Builds the PCIe tree top-down: each function names its parent (empty on a root bus) and the
// link it trains at, which is both ends' lower speed and width as the kernel reports it.
class Tree {
 public:
  explicit Tree(std::string name) { m_.origin = "generated " + std::move(name); }

  std::string add(const std::string& address, const std::string& parent, Ids ids, PcieLink max,
                  int numa_node, std::string model = {}) {
    ACCO_CHECK(find(address) == nullptr);
    PciDevice d;
    d.address = address;
    d.parent = parent;
    d.class_code = ids.class_code;
    d.vendor_id = ids.vendor;
    d.device_id = ids.device;
    d.subsystem_vendor_id = ids.vendor;
    d.kind = classify_pci(ids.class_code, ids.vendor);
    d.numa_node = numa_node;
    d.max = max;
    d.current = max;
    d.model = std::move(model);
    if (PciDevice* up = find(parent); up != nullptr) {
      d.root_bus = up->root_bus;
      d.sysfs_path = up->sysfs_path + "/" + address;
      if (facing_down_.contains(parent)) {
        // A root or downstream port reports the link to the function below it; the switch's
        // upstream port reports its own link up, so the ports inside a switch keep their own.
        d.current = PcieLink{std::min(max.speed_gts, up->max.speed_gts),
                             std::min(max.width, up->max.width)};
        up->current = d.current;
      }
      if (d.kind == DeviceKind::kBridge && !facing_down_.contains(parent)) {
        facing_down_.insert(address);  // a switch's downstream port
      }
    } else {
      d.root_bus = "pci" + address.substr(0, 7);
      d.sysfs_path = "/sys/devices/" + d.root_bus + "/" + address;
      if (d.kind == DeviceKind::kBridge) {
        facing_down_.insert(address);  // a root port
      }
    }
    m_.pci_devices.push_back(std::move(d));
    return address;
  }

  // An InfiniBand HCA's port 1, active at `gbps` over 4 lanes.
  void ib_port(const std::string& device, const std::string& pci, double gbps,
               std::string_view rate_name, std::string_view link_layer = "InfiniBand") {
    IbPort p;
    p.device = device;
    p.pci = pci;
    p.state = 4;
    p.state_text = "4: ACTIVE";
    p.phys_state = 5;
    p.phys_state_text = "5: LinkUp";
    p.rate_gbps = gbps;
    p.data_rate_gbps = gbps;
    p.lanes = 4;
    p.rate_text = fmt::format("{} Gb/sec (4X {})", gbps, rate_name);
    p.link_layer = std::string(link_layer);
    m_.ib_ports.push_back(std::move(p));
  }

  // GPU `pci` as NVML lists it, with `links` active NVLinks of NVML version `version` spread over
  // the switches in turn.
  void nvml_gpu(const std::string& pci, std::string name, std::uint64_t memory_gib, int links,
                int version, const std::vector<std::string>& switches) {
    NvmlGpu g;
    g.index = static_cast<int>(m_.nvml.gpus.size());
    g.pci = pci;
    g.name = std::move(name);
    g.memory_total_bytes = memory_gib << 30U;
    for (int l = 0; l < links; ++l) {
      g.nvlinks.push_back(
          NvLink{l, true, switches[static_cast<std::size_t>(l) % switches.size()], version});
    }
    m_.nvml.gpus.push_back(std::move(g));
  }

  [[nodiscard]] PciDevice* find(const std::string& address) {
    for (auto& d : m_.pci_devices) {
      if (d.address == address) {
        return &d;
      }
    }
    return nullptr;
  }

  Machine done() && {
    std::sort(m_.pci_devices.begin(), m_.pci_devices.end(),
              [](const PciDevice& a, const PciDevice& b) { return a.address < b.address; });
    m_.nvml.available = !m_.nvml.gpus.empty();
    m_.sysfs_read = true;
    annotate_links(m_);
    return std::move(m_);
  }

 private:
  Machine m_;
  std::set<std::string> facing_down_;  // root ports and switches' downstream ports
};

// The DGX H100 as NVIDIA builds it (and as acco's test sysroot of one is written): 8 H100 SXM5
// each behind a Broadcom PEX switch it shares with its own ConnectX-7 (NDR 400 Gb/s), the
// switch on a Gen5 x16 CPU root port; 18 NVLink 4.0 links a GPU to four NVSwitches (5, 5, 4,
// 4); a dual-port 100 GbE ConnectX-6 Dx for management.
Machine dgx_h100() {
  Tree t("dgx-h100");
  t.add("0000:00:00.0", "", kHostBridge, {}, 0);
  const auto mgmt = t.add("0000:00:01.0", "", kIntelRootPort, kGen5x16, 0);
  for (const auto* fn : {"0000:01:00.0", "0000:01:00.1"}) {
    t.add(fn, mgmt, kConnectX6Dx, kGen4x16, 0);
  }
  t.ib_port("mlx5_8", "0000:01:00.0", 100, "EDR", "Ethernet");
  t.ib_port("mlx5_9", "0000:01:00.1", 100, "EDR", "Ethernet");
  const auto nvs_port = t.add("0000:00:05.0", "", kIntelRootPort, kGen5x16, 0);
  const auto nvs_up = t.add("0000:03:00.0", nvs_port, kPexSwitch, kGen5x16, 0);
  std::vector<std::string> switches;
  for (int k = 0; k < 4; ++k) {
    const auto down = t.add(fmt::format("0000:04:{:02x}.0", k), nvs_up, kPexSwitch, kGen5x4, 0);
    switches.push_back(
        t.add(fmt::format("0000:{:02x}:00.0", 5 + k), down, kNvSwitch3, kGen4x4, 0, "NVSwitch"));
  }
  constexpr std::array<int, 8> kGpuBus = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
  for (int i = 0; i < 8; ++i) {
    const int b = kGpuBus[static_cast<std::size_t>(i)];
    const int node = i < 4 ? 0 : 1;
    const auto root = t.add(bus(b - 3) + ":01.0", "", kIntelRootPort, kGen5x16, node);
    const auto up = t.add(bus(b - 2) + ":00.0", root, kPexSwitch, kGen5x16, node);
    const auto gpu_port = t.add(bus(b - 1) + ":00.0", up, kPexSwitch, kGen5x16, node);
    const auto nic_port = t.add(bus(b - 1) + ":01.0", up, kPexSwitch, kGen5x16, node);
    const auto gpu =
        t.add(bus(b) + ":00.0", gpu_port, kH100Sxm, kGen5x16, node, "NVIDIA H100 80GB HBM3");
    const auto nic = t.add(bus(b + 1) + ":00.0", nic_port, kConnectX7, kGen5x16, node);
    t.ib_port(fmt::format("mlx5_{}", i), nic, 400, "NDR");
    // NVML's order of links over the four switches: 5, 5, 4, 4 (NVIDIA's HGX H100 layout).
    t.nvml_gpu(gpu, "NVIDIA H100 80GB HBM3", 80, 18, 5, switches);
  }
  return std::move(t).done();
}

// The HGX A100 8-GPU board in the DGX A100's layout (NVIDIA DGX A100 User Guide): four PEX
// switches on Gen4 x16 CPU root ports, each with two A100 SXM4 80GB and two ConnectX-6 HDR
// (200 Gb/s, ibp12s0 ... ibp204s0); 12 NVLink 3.0 links a GPU to six NVSwitches (2 each). The
// DGX's storage and management NICs are not part of the board and left out.
Machine hgx_a100() {
  Tree t("hgx-a100");
  constexpr std::array<std::array<int, 4>, 4> kGroups = {{{0x07, 0x0f, 0x0c, 0x12},
                                                          {0x47, 0x4e, 0x4b, 0x54},
                                                          {0x87, 0x90, 0x8d, 0x94},
                                                          {0xb7, 0xbd, 0xba, 0xcc}}};
  std::vector<std::string> switches;
  const auto nvs_root = t.add("0000:e0:01.0", "", kAmdRootPort, kGen4x16, 1);
  const auto nvs_up = t.add("0000:e1:00.0", nvs_root, kPexSwitch, kGen4x16, 1);
  for (int k = 0; k < 6; ++k) {
    const auto down = t.add(fmt::format("0000:e2:{:02x}.0", k), nvs_up, kPexSwitch, kGen4x4, 1);
    switches.push_back(
        t.add(fmt::format("0000:{:02x}:00.0", 0xe4 + k), down, kNvSwitch2, kGen4x4, 1, "NVSwitch"));
  }
  constexpr std::array<int, 4> kRootBus = {0x00, 0x40, 0x80, 0xb0};
  int nic_index = 0;
  for (std::size_t g = 0; g < kGroups.size(); ++g) {
    const int base = kRootBus[g];
    const int node = g < 2 ? 0 : 1;
    const auto root = t.add(bus(base) + ":01.1", "", kAmdRootPort, kGen4x16, node);
    const auto up = t.add(bus(base + 1) + ":00.0", root, kPexSwitch, kGen4x16, node);
    for (std::size_t k = 0; k < 4; ++k) {
      const int b = kGroups[g][k];
      const auto port =
          t.add(fmt::format("{}:{:02x}.0", bus(base + 2), k), up, kPexSwitch, kGen4x16, node);
      if (k < 2) {
        const auto gpu =
            t.add(bus(b) + ":00.0", port, kA100Sxm80, kGen4x16, node, "NVIDIA A100-SXM4-80GB");
        t.nvml_gpu(gpu, "NVIDIA A100-SXM4-80GB", 80, 12, 4, switches);
      } else {
        const auto nic = t.add(bus(b) + ":00.0", port, kConnectX6, kGen4x16, node);
        t.ib_port(fmt::format("mlx5_{}", nic_index++), nic, 200, "HDR");
      }
    }
  }
  return std::move(t).done();
}

// A one-socket PCIe server: four L40S (PCIe Gen4 x16, no NVLink) each on a CPU root port of
// its own, and one ConnectX-7 (NDR 400 Gb/s) on a fifth. Peer copies cross the root complex.
Machine pcie_4gpu() {
  Tree t("pcie-4gpu");
  for (int i = 0; i < 4; ++i) {
    const int base = i * 0x20;
    const auto root = t.add(bus(base) + ":01.1", "", kAmdRootPort, kGen5x16, 0);
    const auto gpu = t.add(bus(base + 1) + ":00.0", root, kL40s, kGen4x16, 0, "NVIDIA L40S");
    t.nvml_gpu(gpu, "NVIDIA L40S", 48, 0, 0, {});
  }
  const auto root = t.add("0000:80:01.1", "", kAmdRootPort, kGen5x16, 0);
  const auto nic = t.add("0000:81:00.0", root, kConnectX7, kGen5x16, 0);
  t.ib_port("mlx5_0", nic, 400, "NDR");
  return std::move(t).done();
}

}  // namespace
}  // namespace generated_nodes

const std::vector<GeneratedMachineInfo>& generated_machines() {
  static const std::vector<GeneratedMachineInfo> all = {
      {"dgx-h100", "8 H100 SXM5, NVLink 4.0 through NVSwitch, 8 ConnectX-7 NDR 400 Gb/s"},
      {"hgx-a100", "8 A100 SXM4 80GB, NVLink 3.0 through NVSwitch, 8 ConnectX-6 HDR 200 Gb/s"},
      {"pcie-4gpu", "4 L40S on PCIe Gen4 x16, no NVLink, 1 ConnectX-7 NDR 400 Gb/s"},
  };
  return all;
}

Result<Machine> generated_machine(std::string_view name) {
  if (name == "dgx-h100") {
    return generated_nodes::dgx_h100();
  }
  if (name == "hgx-a100") {
    return generated_nodes::hgx_a100();
  }
  if (name == "pcie-4gpu") {
    return generated_nodes::pcie_4gpu();
  }
  std::string names;
  for (const auto& m : generated_machines()) {
    names += (names.empty() ? "" : ", ") + std::string(m.name);
  }
  return fail(Errc::kInvalidArgument,
              fmt::format("'{}' is not a generated node: one of {}", name, names));
}

}  // namespace acco::topo
