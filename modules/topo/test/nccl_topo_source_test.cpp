// NCCL topology files (tests/data/nccl_topo: a bare-metal dump, a KVM guest's flat dump, a cloud
// VM's seed) read into the machine model, and malformed ones refused with what is wrong.
#include "acco/topo/nccl_topo_source.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/core/file.hpp"
#include "acco/testing/matchers.hpp"
#include "acco/topo/link_model.hpp"

namespace acco::topo {
namespace {

using ::acco::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Machine read(const std::string& name) {
  const auto xml = core::read_text_file(std::string(ACCO_NCCL_TOPO_DIR) + "/" + name);
  EXPECT_TRUE(xml.has_value());
  auto m = machine_from_nccl_topo(xml.value_or(""));
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().message);
  return m.value_or(Machine{});
}

long count(const Machine& m, DeviceKind kind) {
  return std::count_if(m.pci_devices.begin(), m.pci_devices.end(),
                       [&](const PciDevice& d) { return d.kind == kind; });
}

TEST(NcclTopo, ABareMetalDumpHasItsNodesSwitchesGpusNvlinksAndNics) {
  Machine m = read("dgx_h100.xml");
  EXPECT_FALSE(m.sysfs_read);
  ASSERT_EQ(m.numa_nodes.size(), 2U);
  EXPECT_EQ(m.numa_nodes[0].cpus.size(), 56U);
  EXPECT_EQ(m.numa_nodes[1].cpus.front(), 56);
  EXPECT_EQ(m.online_cpus.size(), 112U);
  EXPECT_EQ(count(m, DeviceKind::kBridge), 8);
  EXPECT_EQ(count(m, DeviceKind::kGpu), 8);
  EXPECT_EQ(count(m, DeviceKind::kNic), 8);
  const PciDevice* gpu = m.find("0000:18:00.0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->parent, "0000:15:00.0");
  EXPECT_EQ(gpu->root_bus, "pci0000:15");
  EXPECT_EQ(gpu->numa_node, 0);
  EXPECT_EQ(gpu->vendor_id, 0x10de);
  EXPECT_EQ(gpu->device_id, 0x2330);
  EXPECT_EQ(gpu->current, (PcieLink{32, 16}));
  EXPECT_EQ(m.find("0000:df:00.0")->numa_node, 1);
  ASSERT_EQ(m.nvml.gpus.size(), 8U);
  const NvmlGpu* g = m.nvml_gpu("0000:18:00.0");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->nvlinks.size(), 18U);  // 5 + 4 + 4 + 5
  EXPECT_EQ(g->nvlinks.front().remote_pci, "0000:05:00.0");
  EXPECT_EQ(g->nvlinks.front().version, 5);  // sm 90: NVLink 4.0
  ASSERT_EQ(m.net_interfaces.size(), 8U);
  EXPECT_EQ(m.net_interfaces.front().name, "mlx5_0");
  EXPECT_EQ(m.net_interfaces.front().pci, "0000:17:00.0");
  EXPECT_EQ(m.net_interfaces.front().speed_mbps, 400000);
  // The link model reads the dump's figures: Gen5 x16 end to end.
  annotate_links(m);
  EXPECT_GT(m.find("0000:18:00.0")->path_bytes_per_second, 60e9);
}

TEST(NcclTopo, AKvmGuestsFlatDumpLeavesEveryDeviceOnNoNode) {
  const Machine m = read("kvm_guest_flat.xml");
  EXPECT_TRUE(m.numa_nodes.empty());  // numaid -1
  EXPECT_EQ(m.online_cpus.size(), 64U);
  EXPECT_EQ(count(m, DeviceKind::kGpu), 4);
  for (const PciDevice& d : m.pci_devices) {
    EXPECT_EQ(d.numa_node, -1) << d.address;
    EXPECT_TRUE(d.parent.empty()) << d.address;
    EXPECT_EQ(d.local_cpus.size(), 64U) << d.address;
  }
  EXPECT_EQ(m.find("0000:0e:00.0")->current, (PcieLink{0, 0}));  // "Unknown"
  // NCCL's (xml.cc) mark for a far end the guest cannot see: an NVSwitch, assumed.
  EXPECT_EQ(m.nvml_gpu("0000:0a:00.0")->nvlinks.front().remote_pci, "fffffff:ffff:ff");
}

TEST(NcclTopo, ACloudSeedHasItsFunctionsUnderSyntheticBridgesAndNothingElse) {
  const Machine m = read("cloud_vm_seed.xml");
  EXPECT_EQ(count(m, DeviceKind::kBridge), 2);
  EXPECT_EQ(count(m, DeviceKind::kGpu), 4);
  EXPECT_EQ(count(m, DeviceKind::kNic), 4);
  EXPECT_EQ(m.find("0001:00:00.0")->parent, "ffff:ff:01.0");
  EXPECT_EQ(m.find("0001:00:00.0")->root_bus, "pciffff:ff");
  EXPECT_TRUE(m.nvml.gpus.empty());       // no <gpu>: NCCL fills them in
  EXPECT_TRUE(m.net_interfaces.empty());  // no <nic>
}

TEST(NcclTopo, AFunctionWithoutAClassIsWhatItHolds) {
  const auto m = machine_from_nccl_topo(
      R"(<system version="1"><cpu numaid="0"><pci busid="17:00.0"><gpu dev="0"/></pci>)"
      R"(<pci busid="0000:18:00.0"><nic><net name="ib0"/></nic></pci></cpu></system>)");
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_EQ(m->find("0000:17:00.0")->kind, DeviceKind::kGpu);
  EXPECT_EQ(m->find("0000:18:00.0")->kind, DeviceKind::kNic);
  EXPECT_FALSE(m->net_interfaces.front().speed_mbps.has_value());
  EXPECT_EQ(m->nvml_gpu("0000:17:00.0")->nvlinks.size(), 0U);
}

TEST(NcclTopo, MalformedFilesAreRefusedNamingWhatIsWrong) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "not XML"},
      {"<system><cpu>", "not XML (line 1"},
      {"<topology/>", "the root element is <topology>, expected <system>"},
      {"<system><pci/></system>", "<pci> on line 1: no busid"},
      {R"(<system><pci busid="zz:00.0"/></system>)",
       "busid=\"zz:00.0\" is not a PCI address (0000:17:00.0)"},
      {R"(<system><pci busid="0000::1:00.0"/></system>)", "is not a PCI address"},
      {R"(<system><pci busid="0000:17:20.0"/></system>)", "is not a PCI address"},  // device > 1f
      {R"(<system><pci busid="0000:17:00.8"/></system>)", "is not a PCI address"},
      {R"(<!DOCTYPE system [<!ENTITY e "x">]><system><nic><net name="&e;"/></nic></system>)",
       "a <!DOCTYPE> (entity declarations) is not read"},
      {R"(<system><pci busid="0000:17:00.0"/><pci busid="0000:17:00.0"/></system>)",
       "busid 0000:17:00.0 appears twice"},
      {R"(<system><cpu affinity="xyz"/></system>)", "affinity=\"xyz\" is not a CPU mask"},
      {R"(<system><cpu numaid="4096"/></system>)",
       "numaid=\"4096\" is not a whole number from -1 to 4095"},
      {R"(<system><pci busid="0000:17:00.0" link_width="x16"/></system>)",
       "link_width=\"x16\" is not a whole number from 0 to 32"},
      {R"(<system><gpu dev="0"/></system>)", "a <gpu> outside a <pci>"},
      {R"(<system><pci busid="0000:17:00.0"><gpu><nvlink count="2"/></gpu></pci></system>)",
       "<nvlink> on line 1: no target"},
      {R"(<system><nic><net speed="1"/></nic></system>)", "<net> on line 1: no name"},
  };
  for (const auto& [xml, message] : cases) {
    EXPECT_THAT(machine_from_nccl_topo(xml), StatusIs(Errc::kInvalidArgument, HasSubstr(message)))
        << xml;
  }
}

TEST(NcclTopo, ManyDevicesBelowAHugeMaskAreRefusedBeforeTheyTakeGigabytes) {
  // 1M CPUs (the mask's limit) copied into each of 17 devices is past 16M entries.
  std::string mask(8, 'f');
  for (int i = 1; i < 32768; ++i) {
    mask += ",ffffffff";
  }
  std::string xml = "<system><cpu numaid=\"0\" affinity=\"" + mask + "\">";
  for (int i = 0; i < 17; ++i) {
    xml += fmt::format("<pci busid=\"0000:{:02x}:00.0\"/>", i);
  }
  xml += "</cpu></system>";
  EXPECT_THAT(machine_from_nccl_topo(xml),
              StatusIs(Errc::kInvalidArgument, HasSubstr("more than 16777216 CPUs listed")));
}

TEST(NcclTopo, AnEmptyFileSaysSoAfterAnotherFailed) {
  ASSERT_FALSE(machine_from_nccl_topo("<system><cpu>").has_value());
  const auto empty = machine_from_nccl_topo("");
  ASSERT_FALSE(empty.has_value());
  EXPECT_THAT(empty.error().message, HasSubstr("not XML"));
  EXPECT_THAT(empty.error().message, ::testing::Not(HasSubstr("cpu")));  // not the last file's
}

TEST(NcclTopo, NvlinksPastAnyMachinesAreRefused) {
  std::string xml = R"(<system><pci busid="0000:17:00.0"><gpu dev="0" sm="90">)";
  for (int i = 0; i < 1025; ++i) {
    xml += R"(<nvlink target="0000:05:00.0" count="64"/>)";
  }
  xml += "</gpu></pci></system>";
  EXPECT_THAT(machine_from_nccl_topo(xml),
              StatusIs(Errc::kInvalidArgument, HasSubstr("more than 65536 NVLinks in the file")));
}

TEST(NcclTopo, AFileLargerThanAnyTopologyIsRefusedUnread) {
  const std::string big(kMaxNcclTopoBytes + 1, ' ');
  EXPECT_THAT(machine_from_nccl_topo(big),
              StatusIs(Errc::kInvalidArgument, HasSubstr("more than the 16777216 read")));
}

}  // namespace
}  // namespace acco::topo
