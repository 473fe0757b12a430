#include "acco/bench/machine_summary.hpp"

#include <gtest/gtest.h>

#include "acco/topo/link_model.hpp"

namespace acco::bench {
namespace {

topo::PciDevice device(std::string address, topo::DeviceKind kind, std::uint16_t device_id) {
  topo::PciDevice d;
  d.address = std::move(address);
  d.kind = kind;
  d.vendor_id = 0x10de;
  d.device_id = device_id;
  d.current = {32, 16};
  d.max = {32, 16};
  d.numa_node = 0;
  return d;
}

// Two H200s and a NIC on one socket; NVML names the first GPU only.
topo::Machine two_gpu_box() {
  topo::Machine m;
  m.hostname = "gpu-node-7";
  m.kernel = "6.1.0-18-amd64";
  m.numa_nodes = {{0, {0, 1, 2, 3}, {10}, 0, 64ULL << 30}};
  m.pci_devices = {device("0000:18:00.0", topo::DeviceKind::kGpu, 0x2335),
                   device("0000:19:00.0", topo::DeviceKind::kNic, 0x1021),
                   device("0000:2a:00.0", topo::DeviceKind::kGpu, 0x2335)};
  m.pci_devices[2].current = {16, 16};
  topo::annotate_links(m);
  m.nvml.available = true;
  m.nvml.driver_version = "560.35.03";
  topo::NvmlGpu g;
  g.pci = "0000:18:00.0";
  g.name = "NVIDIA H200";
  m.nvml.gpus = {g};
  return m;
}

TEST(MachineSummaryTest, ListsAcceleratorsWithTheirLinks) {
  const auto j = machine_summary(two_gpu_box());
  EXPECT_EQ(j["hostname"], "gpu-node-7");
  EXPECT_EQ(j["numa_nodes"], 1);
  EXPECT_EQ(j["cpus"], 4);
  EXPECT_EQ(j["memory_bytes"], 64ULL << 30);
  EXPECT_EQ(j["nvml_driver_version"], "560.35.03");
  ASSERT_EQ(j["accelerators"].size(), 2U);  // the NIC is not an accelerator
  EXPECT_EQ(j["accelerators"][0]["name"], "NVIDIA H200");
  EXPECT_EQ(j["accelerators"][0]["link_current"], "Gen5 x16");
  EXPECT_EQ(j["accelerators"][1]["name"], "10de:2335");
  EXPECT_EQ(j["accelerators"][1]["link_current"], "Gen4 x16");
  EXPECT_EQ(j["accelerators"][1]["device_id"], "0x2335");
}

TEST(MachineSummaryTest, ADeviceNvmlDoesNotNameGoesByItsPciIdName) {
  auto m = two_gpu_box();
  m.pci_devices[2].model = "NVIDIA Corporation Device 2335";
  m.pci_devices[0].model = "GH100 [H200 SXM 141GB]";
  const auto j = machine_summary(m);
  EXPECT_EQ(j["accelerators"][0]["name"], "NVIDIA H200");
  EXPECT_EQ(j["accelerators"][1]["name"], "NVIDIA Corporation Device 2335");
}

// The H200 on Debian 12: its pci.ids (2023.04.10) has no 10de:2335 and the bench's probe does
// not ask NVML, so the CUDA driver's name is the only model name there is.
TEST(MachineSummaryTest, TheDriversNameWinsForTheDeviceAtTheSameAddress) {
  auto m = two_gpu_box();
  m.nvml = {};
  m.pci_devices[0].model = "NVIDIA Corporation Device 2335";
  m.pci_devices[2].model = "NVIDIA Corporation Device 2335";
  auto j = machine_summary(m);
  ASSERT_EQ(j["accelerators"][0]["name"], "NVIDIA Corporation Device 2335");
  device::DeviceInfo first;
  first.name = "NVIDIA H200";
  first.pci = "0000:18:00.0";
  device::DeviceInfo emulated;  // no address: names nothing
  emulated.name = "host 0 (pcie5x16)";
  device::DeviceInfo upper;  // an address written in upper case is the same address
  upper.name = "NVIDIA H200 NVL";
  upper.pci = "0000:2A:00.0";
  name_from_devices(j, {emulated, first, upper});
  EXPECT_EQ(j["accelerators"][0]["name"], "NVIDIA H200");
  EXPECT_EQ(j["accelerators"][1]["name"], "NVIDIA H200 NVL");
  EXPECT_EQ(j["accelerators"][1]["device_id"], "0x2335");  // the ids stay

  auto unmatched = machine_summary(m);
  device::DeviceInfo elsewhere;
  elsewhere.name = "NVIDIA H200";
  elsewhere.pci = "0000:99:00.0";
  name_from_devices(unmatched, {elsewhere, emulated});
  EXPECT_EQ(unmatched["accelerators"][0]["name"], "NVIDIA Corporation Device 2335");
  nlohmann::json none = {{"backend", "cuda"}};  // no topology: nothing to name, no crash
  name_from_devices(none, {first});
  EXPECT_FALSE(none.contains("accelerators"));
}

TEST(MachineSummaryTest, UnknownsAreNull) {
  topo::Machine m;
  m.pci_devices = {device("0000:18:00.0", topo::DeviceKind::kGpu, 0x2335)};
  const auto j = machine_summary(m);
  EXPECT_TRUE(j["nvml_driver_version"].is_null());
  EXPECT_TRUE(j["accelerators"][0]["path_bytes_per_second"].is_null());  // not annotated
}

TEST(MachineFingerprintTest, StableAcrossLinkAndDriverChanges) {
  const auto base = two_gpu_box();
  auto retrained = base;
  retrained.pci_devices[0].current = {2.5, 16};
  retrained.nvml.driver_version = "570.0";
  retrained.kernel = "6.12";
  EXPECT_EQ(machine_fingerprint(base), machine_fingerprint(retrained));
  EXPECT_EQ(machine_fingerprint(base).rfind("gpu-node-7-", 0), 0U);
  EXPECT_EQ(machine_fingerprint(base).size(), std::string("gpu-node-7-").size() + 16);
}

TEST(MachineFingerprintTest, ChangesWhenAnAcceleratorChanges) {
  const auto base = two_gpu_box();
  auto swapped = base;
  swapped.pci_devices[2].device_id = 0x2330;  // an H100 in the second slot
  auto removed = base;
  removed.pci_devices.pop_back();
  auto other_host = base;
  other_host.hostname = "gpu-node-8";
  EXPECT_NE(machine_fingerprint(base), machine_fingerprint(swapped));
  EXPECT_NE(machine_fingerprint(base), machine_fingerprint(removed));
  EXPECT_NE(machine_fingerprint(base), machine_fingerprint(other_host));
}

TEST(MachineFingerprintTest, AMachineWithoutHostnameStillGetsOne) {
  EXPECT_EQ(machine_fingerprint(topo::Machine{}).rfind("unknown-host-", 0), 0U);
}

}  // namespace
}  // namespace acco::bench
