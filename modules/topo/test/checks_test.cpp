// Every rule has a machine that triggers it and a healthy twin that stays quiet. Machines are
// generated sysroots (tests/support) read through the real sysfs source.
#include "acco/topo/checks.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/core/fs.hpp"
#include "acco/testing/matchers.hpp"
#include "acco/topo/link_model.hpp"
#include "acco/topo/sysfs_source.hpp"

#include "machines.hpp"
#include "sysroot_builder.hpp"

namespace acco::topo {
namespace {

using acco::testing::DgxH100Options;
using acco::testing::FirmwareQuirksOptions;
using ::acco::testing::IsOk;
using acco::testing::TempDir;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::Not;

struct Probed {
  Machine machine;
  std::vector<Finding> findings;
};

Probed probe_dir(const std::filesystem::path& dir, NvmlReport nvml = {}) {
  auto fs = core::make_disk_fs(dir.string());
  EXPECT_THAT(fs, IsOk());
  auto m = discover_sysfs(**fs);
  EXPECT_THAT(m, IsOk());
  m->nvml = std::move(nvml);
  annotate_links(*m);
  return {*m, check(*m)};
}

Probed dgx(const DgxH100Options& options = {}) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path(), options);
  return probe_dir(dir.path());
}

std::vector<std::string> rules_of(const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) {
    out.push_back(f.rule);
  }
  return out;
}

const Finding* find_rule(const std::vector<Finding>& findings, const std::string& rule) {
  const auto it = std::find_if(findings.begin(), findings.end(),
                               [&](const Finding& f) { return f.rule == rule; });
  return it == findings.end() ? nullptr : &*it;
}

std::string gpu(int i) {
  return std::string(acco::testing::kDgxH100Gpus[static_cast<std::size_t>(i)]);
}
std::string nic(int i) {
  return std::string(acco::testing::kDgxH100Nics[static_cast<std::size_t>(i)]);
}

NvmlGpu nvml_gpu(const std::string& pci, std::optional<int> pstate, int links, int active) {
  NvmlGpu g;
  g.pci = pci;
  g.name = "NVIDIA H100 80GB HBM3";
  g.pstate = pstate;
  for (int i = 0; i < links; ++i) {
    g.nvlinks.push_back({i, i < active, "0000:05:00.0", 5});
  }
  return g;
}

TEST(ChecksTest, HealthyDgxH100HasNoWarnings) {
  const auto p = dgx();
  for (const auto& f : p.findings) {
    EXPECT_EQ(f.severity, Severity::kInfo) << f.rule << ": " << f.message;
  }
  EXPECT_THAT(rules_of(p.findings), Not(Contains("pcie-link-downtrained")));
}

TEST(ChecksTest, DgxDiscoveryFindsEveryDevice) {
  const auto p = dgx();
  int gpus = 0;
  int nics = 0;
  int nvme = 0;
  for (const auto& d : p.machine.pci_devices) {
    gpus += d.kind == DeviceKind::kGpu ? 1 : 0;
    nics += d.kind == DeviceKind::kNic ? 1 : 0;
    nvme += d.kind == DeviceKind::kNvme ? 1 : 0;
  }
  EXPECT_EQ(gpus, 8);
  EXPECT_GE(nics, 8);
  EXPECT_EQ(nvme, 2);
  EXPECT_EQ(p.machine.numa_nodes.size(), 2U);
  EXPECT_EQ(p.machine.package_of_node(1), 1);
  EXPECT_GE(p.machine.ib_ports.size(), 8U);
  EXPECT_TRUE(p.machine.gpudirect.rdma_loaded);
  EXPECT_TRUE(p.machine.input_issues.empty());
  const auto* g = p.machine.find(gpu(0));
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->driver, "nvidia");
  EXPECT_NEAR(g->path_bytes_per_second, 63.0e9, 0.1e9);
  EXPECT_EQ(to_string(classify_path(p.machine, gpu(0), nic(0))), "PIX");
  EXPECT_EQ(to_string(classify_path(p.machine, gpu(0), nic(4))), "SYS");
}

TEST(ChecksTest, NarrowGpuLinkIsCriticalDowntrain) {
  const auto p = dgx({.gpu_width_x8 = 2});
  const auto* f = find_rule(p.findings, "pcie-link-downtrained");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_EQ(f->devices.front(), gpu(2));
  EXPECT_FALSE(f->evidence.empty());
}

TEST(ChecksTest, SlowGpuWithoutLoadEvidenceIsPossiblyIdle) {
  const auto p = dgx({.gpu_speed_2_5gt = 1});
  const auto* f = find_rule(p.findings, "pcie-link-downtrained");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_NE(f->message.find("idle"), std::string::npos);
}

TEST(ChecksTest, SlowGpuInP0IsAWarning) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path(), {.gpu_speed_2_5gt = 1});
  NvmlReport nvml;
  nvml.available = true;
  nvml.gpus = {nvml_gpu(gpu(1), 0, 18, 18)};
  const auto p = probe_dir(dir.path(), nvml);
  const auto* f = find_rule(p.findings, "pcie-link-downtrained");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
}

TEST(ChecksTest, Gen5GpuInGen4SlotIsSlotLimited) {
  const auto p = dgx({.gpu_in_gen4_slot = 3});
  const auto* f = find_rule(p.findings, "pcie-slot-limited");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->devices.front(), gpu(3));
  EXPECT_THAT(rules_of(dgx().findings), Not(Contains("pcie-slot-limited")));
}

TEST(ChecksTest, NarrowSwitchUplinkIsPathBottleneckAndOversubscribed) {
  const auto p = dgx({.switch_uplink_x4 = 0});
  const auto* f = find_rule(p.findings, "pcie-path-bottleneck");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->devices.front(), gpu(0));
  EXPECT_THAT(rules_of(p.findings), Contains("pcie-uplink-oversubscribed"));
  const auto healthy = rules_of(dgx().findings);
  EXPECT_THAT(healthy, Not(Contains("pcie-path-bottleneck")));
  EXPECT_THAT(healthy, Not(Contains("pcie-uplink-oversubscribed")));
}

TEST(ChecksTest, WithoutGpuDirectNicTrafficOversubscribesTheSwitch) {
  const auto p = dgx({.no_peermem = true});
  EXPECT_THAT(rules_of(p.findings), Contains("pcie-uplink-oversubscribed"));
  EXPECT_THAT(rules_of(p.findings), Contains("gpudirect-rdma-missing"));
  EXPECT_THAT(rules_of(dgx().findings), Not(Contains("gpudirect-rdma-missing")));
}

TEST(ChecksTest, UnknownNumaOnTwoSocketHostIsReported) {
  const auto p = dgx({.numa_unknown = true});
  const auto* f = find_rule(p.findings, "numa-unknown");
  ASSERT_NE(f, nullptr);
  EXPECT_GE(f->devices.size(), 8U);
  EXPECT_THAT(rules_of(dgx().findings), Not(Contains("numa-unknown")));
}

TEST(ChecksTest, PollingIbPortIsDownAndCritical) {
  const auto p = dgx({.ib_port_polling = 5});
  const auto* f = find_rule(p.findings, "ib-port-down");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_NE(f->message.find("Polling"), std::string::npos);
  EXPECT_THAT(rules_of(dgx().findings), Not(Contains("ib-port-down")));
}

TEST(ChecksTest, DisabledIbPortSaysDisabled) {
  const auto p = dgx({.ib_port_disabled = 2});
  const auto* f = find_rule(p.findings, "ib-port-down");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("disabled"), std::string::npos);
}

TEST(ChecksTest, HdrPortAmongNdrPortsIsRateLow) {
  const auto p = dgx({.ib_rate_hdr = 4});
  const auto* f = find_rule(p.findings, "ib-rate-low");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->devices, Contains(nic(4)));
  EXPECT_THAT(rules_of(dgx().findings), Not(Contains("ib-rate-low")));
}

TEST(ChecksTest, TwoLanePortIsRateLow) {
  EXPECT_THAT(rules_of(dgx({.ib_rate_2x = 6}).findings), Contains("ib-rate-low"));
}

TEST(ChecksTest, NdrNicOnGen4x8CannotCarryItsPort) {
  const auto p = dgx({.nic_gen4_x8 = 7});
  const auto* f = find_rule(p.findings, "nic-pcie-limited");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->devices.front(), nic(7));
  EXPECT_THAT(rules_of(dgx().findings), Not(Contains("nic-pcie-limited")));
}

TEST(ChecksTest, TranslatingIommuGroupsAreReported) {
  const auto p = dgx({.iommu_dma_fq = true});
  const auto* f = find_rule(p.findings, "iommu-translated");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->recommendation.find("iommu=pt"), std::string::npos);
  EXPECT_THAT(rules_of(dgx().findings), Not(Contains("iommu-translated")));
}

TEST(ChecksTest, AcsRedirectReadAsRootIsAWarning) {
  const auto p = dgx({.acs_redirect = 1});
  const auto it = std::find_if(p.findings.begin(), p.findings.end(), [](const Finding& f) {
    return f.rule == "acs-p2p-redirect" && f.severity == Severity::kWarning;
  });
  ASSERT_NE(it, p.findings.end());
  EXPECT_NE(it->recommendation.find("setpci"), std::string::npos);
}

TEST(ChecksTest, AcsClearReadAsRootIsQuiet) {
  const auto p = dgx({.config_as_root = true});
  EXPECT_THAT(rules_of(p.findings), Not(Contains("acs-p2p-redirect")));
}

TEST(ChecksTest, AcsWithoutRootSaysItCouldNotCheck) {
  const auto p = dgx();
  const auto* f = find_rule(p.findings, "acs-p2p-redirect");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_NE(f->message.find("root"), std::string::npos);
}

TEST(ChecksTest, InactiveNvlinksAreReported) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  NvmlReport nvml;
  nvml.available = true;
  nvml.gpus = {nvml_gpu(gpu(0), 0, 18, 16), nvml_gpu(gpu(1), 0, 18, 18),
               nvml_gpu(gpu(2), 0, 18, 0)};
  const auto p = probe_dir(dir.path(), nvml);
  std::vector<const Finding*> nvlink;
  for (const auto& f : p.findings) {
    if (f.rule == "nvlink-down") {
      nvlink.push_back(&f);
    }
  }
  ASSERT_EQ(nvlink.size(), 2U);
  EXPECT_EQ(nvlink[0]->severity, Severity::kCritical);
  EXPECT_EQ(nvlink[0]->devices.front(), gpu(2));
  EXPECT_EQ(nvlink[1]->severity, Severity::kWarning);
  EXPECT_EQ(to_string(classify_path(p.machine, gpu(0), gpu(1))), "NV16");
}

// nvidia-smi -mig 1 without a reset, and the way back: a warning each; an applied mode is none.
TEST(ChecksTest, AMigModeWaitingForAResetIsAWarning) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  NvmlReport nvml;
  nvml.available = true;
  nvml.gpus = {nvml_gpu(gpu(0), 0, 18, 18), nvml_gpu(gpu(1), 1, 18, 18),
               nvml_gpu(gpu(2), 2, 18, 18)};
  nvml.gpus[0].mig_enabled = false;
  nvml.gpus[0].mig_pending = true;
  nvml.gpus[1].mig_enabled = true;
  nvml.gpus[1].mig_pending = false;
  nvml.gpus[2].mig_enabled = true;
  nvml.gpus[2].mig_pending = true;
  const auto p = probe_dir(dir.path(), nvml);
  std::vector<const Finding*> pending;
  for (const auto& f : p.findings) {
    if (f.rule == "mig-pending-reset") {
      pending.push_back(&f);
    }
  }
  ASSERT_EQ(pending.size(), 2U);
  EXPECT_EQ(pending[0]->devices.front(), gpu(0));
  EXPECT_THAT(pending[0]->message, HasSubstr("MIG mode is off now and becomes on only at"));
  EXPECT_THAT(pending[0]->recommendation, HasSubstr("nvidia-smi -i 0 -r"));
  EXPECT_EQ(pending[0]->evidence.front().value, "current disabled, pending enabled");
  EXPECT_THAT(pending[1]->message, HasSubstr("MIG instances that are meant to be gone"));
}

// A DGX seen from inside containers: Docker without --gpus and without /dev/infiniband, Podman
// with every node it needs, and the host itself (no container: nothing to say).
TEST(ChecksTest, AContainerWithoutTheHostsDeviceNodesIsTold) {
  namespace fs = std::filesystem;
  const auto touch = [](const fs::path& path) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << "";
  };
  TempDir docker;
  acco::testing::write_dgx_h100(docker.path());
  touch(docker.path() / ".dockerenv");
  const auto p = probe_dir(docker.path());
  EXPECT_EQ(p.machine.container.runtime, "docker");
  std::vector<const Finding*> found;
  for (const auto& f : p.findings) {
    if (f.rule == "container-devices-missing") {
      found.push_back(&f);
    }
  }
  ASSERT_EQ(found.size(), 2U);
  EXPECT_EQ(found[0]->severity, Severity::kCritical);
  EXPECT_THAT(found[0]->message, HasSubstr("in a docker container that was given none of the "
                                           "host's NVIDIA device nodes: the 8 GPU(s)"));
  EXPECT_THAT(found[0]->recommendation, HasSubstr("docker run --gpus all"));
  EXPECT_EQ(found[1]->severity, Severity::kWarning);
  EXPECT_THAT(found[1]->recommendation, HasSubstr("--device=/dev/infiniband --cap-add=IPC_LOCK"));

  TempDir podman;
  acco::testing::write_dgx_h100(podman.path());
  fs::create_directories(podman.path() / "run");
  std::ofstream(podman.path() / "run/.containerenv") << "engine=\"podman-4.3.1\"\nname=\"train\"\n";
  for (const char* node : {"dev/nvidiactl", "dev/nvidia0", "dev/nvidia-uvm",
                           "dev/infiniband/uverbs0", "dev/infiniband/rdma_cm"}) {
    touch(podman.path() / node);
  }
  const auto q = probe_dir(podman.path());
  EXPECT_EQ(q.machine.container.runtime, "podman");
  EXPECT_EQ(q.machine.container.evidence, "/run/.containerenv: engine=\"podman-4.3.1\"");
  EXPECT_THAT(q.machine.container.nvidia_nodes, ElementsAre("nvidia-uvm", "nvidia0", "nvidiactl"));
  EXPECT_THAT(rules_of(q.findings), Not(Contains("container-devices-missing")));

  const auto host = dgx();
  EXPECT_EQ(host.machine.container.runtime, "");
  EXPECT_THAT(rules_of(host.findings), Not(Contains("container-devices-missing")));
}

// After a driver upgrade without a reboot: the kernel module is the old one, NVML answers 18.
TEST(ChecksTest, LibrariesThatDoNotMatchTheKernelModuleAreCritical) {
  namespace fs = std::filesystem;
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  fs::create_directories(dir.path() / "proc/driver/nvidia");
  std::ofstream(dir.path() / "proc/driver/nvidia/version")
      << "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC "
         "2024\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";
  fs::create_directories(dir.path() / "etc/cdi");
  std::ofstream(dir.path() / "etc/cdi/nvidia.yaml") << "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\n";
  std::ofstream(dir.path() / "etc/cdi/README") << "not a spec\n";
  NvmlReport nvml;
  nvml.reason = "nvmlInit_v2: Driver/library version mismatch (18)";
  const auto p = probe_dir(dir.path(), nvml);
  EXPECT_EQ(p.machine.software.kernel_module, "550.54.15");
  EXPECT_THAT(p.machine.software.kernel_module_line, HasSubstr("NVRM version: NVIDIA UNIX"));
  EXPECT_THAT(p.machine.software.cdi_specs, ElementsAre("/etc/cdi/nvidia.yaml"));
  const auto* f = find_rule(p.findings, "nvidia-driver-mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_EQ(f->devices.size(), 8U);
  EXPECT_THAT(f->message, HasSubstr("loaded kernel module (550.54.15)"));
  EXPECT_THAT(f->recommendation, HasSubstr("modprobe nvidia"));
  EXPECT_EQ(find_rule(p.findings, "nvml-unavailable"), nullptr) << "one finding for one cause";

  // The open kernel modules' line, and NVML failing for another reason.
  std::ofstream(dir.path() / "proc/driver/nvidia/version")
      << "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  "
         "(dvs-builder@U16-I3-B03-4-3)  Sun Jul 27 07:09:52 UTC 2025\n";
  NvmlReport missing;
  missing.reason = "nvmlInit_v2: Driver Not Loaded (9)";
  const auto q = probe_dir(dir.path(), missing);
  EXPECT_EQ(q.machine.software.kernel_module, "580.65.06");
  EXPECT_EQ(find_rule(q.findings, "nvidia-driver-mismatch"), nullptr);
  EXPECT_NE(find_rule(q.findings, "nvml-unavailable"), nullptr);
  fs::remove(dir.path() / "proc/driver/nvidia/version");
  EXPECT_TRUE(probe_dir(dir.path(), missing).machine.software.kernel_module.empty())
      << "no NVIDIA module: nothing";
}

TEST(ChecksTest, WorkstationHasDowntrainAndRemoteNicAndNvme) {
  TempDir dir;
  acco::testing::write_workstation(dir.path());
  const auto p = probe_dir(dir.path());
  const auto rules = rules_of(p.findings);
  EXPECT_THAT(rules, Contains("pcie-link-downtrained"));
  EXPECT_THAT(rules, Contains("gpu-nic-remote"));
  EXPECT_THAT(rules, Contains("nvme-gpu-remote"));
  const auto* f = find_rule(p.findings, "gpu-nic-remote");
  EXPECT_EQ(f->devices.front(), "0000:01:00.0");
}

TEST(ChecksTest, HealthyWorkstationHasNoDowntrainOrRemoteNic) {
  TempDir dir;
  acco::testing::write_workstation(dir.path(), {.full_width = true, .nic_on_each_socket = true});
  const auto rules = rules_of(probe_dir(dir.path()).findings);
  EXPECT_THAT(rules, Not(Contains("pcie-link-downtrained")));
  EXPECT_THAT(rules, Not(Contains("gpu-nic-remote")));
}

TEST(ChecksTest, FlattenedVmIsReportedAsVirtualizedWithUnknownNuma) {
  TempDir dir;
  acco::testing::write_flattened_vm(dir.path());
  const auto p = probe_dir(dir.path());
  const auto* f = find_rule(p.findings, "virtualized-topology");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_EQ(f->devices.size(), 4U);
  EXPECT_THAT(rules_of(p.findings), Contains("numa-unknown"));
  EXPECT_THAT(rules_of(dgx().findings), Not(Contains("virtualized-topology")));
}

TEST(ChecksTest, SingleNodeVmDoesNotReportUnknownNuma) {
  TempDir dir;
  acco::testing::write_flattened_vm(dir.path(), {.single_numa_node = true});
  EXPECT_THAT(rules_of(probe_dir(dir.path()).findings), Not(Contains("numa-unknown")));
}

TEST(ChecksTest, CiVmReportsOnlyThatItIsAVirtualMachine) {
  TempDir dir;
  acco::testing::write_ci_vm(dir.path());
  const auto p = probe_dir(dir.path());
  ASSERT_EQ(p.findings.size(), 1U) << p.findings.front().rule;
  EXPECT_EQ(p.findings.front().rule, "virtualized-topology");
  EXPECT_EQ(p.findings.front().severity, Severity::kInfo);
  EXPECT_EQ(p.machine.pci_devices.size(), 6U);
}

TEST(ChecksTest, NvidiaGpusWithoutNvmlSayWhatWasSkipped) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  NvmlReport nvml;
  nvml.reason = "libnvidia-ml.so.1: cannot open shared object file";
  const auto p = probe_dir(dir.path(), nvml);
  const auto* f = find_rule(p.findings, "nvml-unavailable");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("cannot open"), std::string::npos);
}

TEST(ChecksTest, FindingsAreSortedBySeverityThenRule) {
  const auto p = dgx({.gpu_width_x8 = 0, .ib_rate_hdr = 3, .no_peermem = true});
  for (std::size_t i = 1; i < p.findings.size(); ++i) {
    EXPECT_GE(p.findings[i - 1].severity, p.findings[i].severity);
  }
}

Probed quirks(const FirmwareQuirksOptions& options = {}) {
  TempDir dir;
  acco::testing::write_firmware_quirks(dir.path(), options);
  return probe_dir(dir.path());
}

std::vector<const Finding*> all_of_rule(const std::vector<Finding>& findings,
                                        const std::string& rule) {
  std::vector<const Finding*> out;
  for (const auto& f : findings) {
    if (f.rule == rule) {
      out.push_back(&f);
    }
  }
  return out;
}

TEST(ChecksTest, OverlappingNumaNodesAreInconsistentFirmwareTopology) {
  const auto p = quirks({.overlapping_nodes = true});
  const auto found = all_of_rule(p.findings, "numa-topology-inconsistent");
  ASSERT_EQ(found.size(), 1U);
  const auto& f = *found[0];
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_THAT(f.devices, ElementsAre("node0", "node1"));
  EXPECT_THAT(f.message, HasSubstr("hwloc merges"));
  EXPECT_THAT(f.message, HasSubstr("0-31"));
  EXPECT_THAT(f.evidence,
              ElementsAre(Field(&Evidence::source, "/sys/devices/system/node/node0/cpulist"),
                          Field(&Evidence::source, "/sys/devices/system/node/node1/cpulist")));
  EXPECT_EQ(f.evidence[0].value, "0-31");
}

// Nodes holding 0-15 and 12-31 share CPUs 12-15; they do not "list the same CPUs".
TEST(ChecksTest, PartlyOverlappingNodesAreQuotedAsRead) {
  const auto p = quirks({.partly_overlapping_nodes = true});
  const auto found = all_of_rule(p.findings, "numa-topology-inconsistent");
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0]->severity, Severity::kWarning);
  EXPECT_THAT(found[0]->message,
              HasSubstr("list overlapping CPUs (node 0 0-15, node 1 12-31; CPU(s) 12-15 in more "
                        "than one)"));
  EXPECT_THAT(found[0]->message, Not(HasSubstr("the same CPUs")));
  EXPECT_EQ(found[0]->evidence[1].value, "12-31");
}

TEST(ChecksTest, IdenticalNodeListsAreTheSameCpus) {
  const auto p = quirks({.overlapping_nodes = true});
  const auto found = all_of_rule(p.findings, "numa-topology-inconsistent");
  ASSERT_EQ(found.size(), 1U);
  EXPECT_THAT(found[0]->message, HasSubstr("NUMA nodes 0 and 1 list the same CPUs (0-31)"));
}

TEST(ChecksTest, OnlineCpusOfAnOfflineNodeNameThatNode) {
  const auto p = quirks({.offline_node = true});
  const auto found = all_of_rule(p.findings, "numa-topology-inconsistent");
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0]->severity, Severity::kWarning);
  EXPECT_THAT(found[0]->message,
              HasSubstr("online CPU(s) 16-31 are in no online NUMA node's CPU list, and node(s) 1 "
                        "are possible but offline (node/possible 0-1, node/online 0)"));
  EXPECT_THAT(found[0]->message, Not(HasSubstr("SRAT")));
  EXPECT_THAT(found[0]->evidence, Contains(Evidence{"/sys/devices/system/node/possible", "0-1"}));
}

// Intel's X722 in a Lewisburg PCH: its 8 GT/s x1 functions sit behind a 2.5 GT/s x1 internal port.
// No slot to change: pcie-slot-limited says so as info, and no warning blames that port.
TEST(ChecksTest, ChipsetIntegratedNicIsNotToldToMoveSlots) {
  const auto p = quirks({.chipset_nic = true});
  const std::string x722(acco::testing::kQuirksX722);
  const auto slot = all_of_rule(p.findings, "pcie-slot-limited");
  ASSERT_EQ(slot.size(), 2U);  // both functions
  for (const auto* f : slot) {
    EXPECT_EQ(f->severity, Severity::kInfo);
    EXPECT_THAT(f->message, HasSubstr("is built into the chipset or SoC"));
    EXPECT_THAT(f->recommendation, Not(HasSubstr("slot wired")));
  }
  EXPECT_THAT(slot[0]->message,
              HasSubstr("0000:3d:00.0 reports Gen3 x1 and its port 0000:00:1c.4 reports "
                        "Gen1 x1 for the one link between them"));
  for (const auto& f : p.findings) {
    const bool about_x722 = std::find(f.devices.begin(), f.devices.end(), x722) != f.devices.end();
    EXPECT_FALSE(about_x722 && f.severity != Severity::kInfo) << f.rule << ": " << f.message;
  }
}

// In a VM the same two readings are a passed-through device behind a port QEMU emulates: no
// chipset, and still nothing the guest could move.
TEST(ChecksTest, AFasterDeviceBehindAnEmulatedPortInAGuestIsNotCalledChipset) {
  auto p = quirks({.chipset_nic = true});
  Machine m = p.machine;
  m.hypervisor = true;
  const auto findings = check(m);
  const auto slot = all_of_rule(findings, "pcie-slot-limited");
  ASSERT_EQ(slot.size(), 2U);
  EXPECT_EQ(slot[0]->severity, Severity::kInfo);
  EXPECT_THAT(slot[0]->message, HasSubstr("sits behind a port the hypervisor emulates"));
  EXPECT_THAT(slot[0]->message, Not(HasSubstr("chipset")));
  EXPECT_THAT(slot[0]->recommendation, HasSubstr("on the host"));
}

// The same card in a real slot too narrow for it (both ends agree) stays a warning.
TEST(ChecksTest, InternalLinkNeedsEvidence) {
  auto p = quirks({.chipset_nic = true});
  Machine m = p.machine;
  for (auto& d : m.pci_devices) {
    if (d.address.rfind("0000:3d:00.", 0) == 0) {
      d.current = {2.5, 1};
      d.max = {8, 4};
    }
  }
  annotate_links(m);
  const auto findings = check(m);
  const auto slot = all_of_rule(findings, "pcie-slot-limited");
  ASSERT_FALSE(slot.empty());
  EXPECT_EQ(slot[0]->severity, Severity::kWarning);
  EXPECT_THAT(slot[0]->message, HasSubstr("the slot caps it"));
}

TEST(ChecksTest, NodeWithNoCpusAndNoMemoryIsInfo) {
  const auto p = quirks({.empty_node = true});
  const auto found = all_of_rule(p.findings, "numa-topology-inconsistent");
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0]->severity, Severity::kInfo);
  EXPECT_THAT(found[0]->devices, ElementsAre("node2"));
  EXPECT_THAT(found[0]->evidence,
              Contains(Field(&Evidence::source, "/sys/devices/system/node/node2/meminfo")));
}

TEST(ChecksTest, OnlineCpuInNoNodeIsAWarning) {
  const auto p = quirks({.cpu_in_no_node = true});
  const auto found = all_of_rule(p.findings, "numa-topology-inconsistent");
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0]->severity, Severity::kWarning);
  EXPECT_THAT(found[0]->message, HasSubstr("online CPU(s) 31 "));
  EXPECT_EQ(found[0]->evidence.front().source, "/sys/devices/system/cpu/online");
}

TEST(ChecksTest, ConsistentQuirksStayQuietAboutFirmwareTopology) {
  for (const auto& options :
       {FirmwareQuirksOptions{}, FirmwareQuirksOptions{.cpulist_nul = true},
        FirmwareQuirksOptions{.cpumap_only = true},
        FirmwareQuirksOptions{.first_cpu_offline = true},
        FirmwareQuirksOptions{.package_unknown = true}, FirmwareQuirksOptions{.one_node = true},
        FirmwareQuirksOptions{.memory_only_node = true}}) {
    const auto p = quirks(options);
    EXPECT_THAT(rules_of(p.findings), Not(Contains("numa-topology-inconsistent")));
    EXPECT_THAT(rules_of(p.findings), Not(Contains("input-unreadable")));
  }
}

TEST(ChecksTest, QdrHcaOnGen2x8IsNotPcieLimitedByItsSignallingRate) {
  // 4X QDR signals 40 Gb/s but carries 32 after 8b/10b, which Gen2 x8 (4 GB/s) carries.
  const auto p = quirks({.old_hca = true});
  EXPECT_THAT(rules_of(p.findings), Not(Contains("nic-pcie-limited")));
  ASSERT_EQ(p.machine.ib_ports.size(), 1U);
  EXPECT_DOUBLE_EQ(p.machine.ib_ports[0].data_rate_gbps, 32);
}

TEST(ChecksTest, NicPcieLimitedComparesTheDataRate) {
  auto p = quirks({.old_hca = true});
  // The same HCA at Gen2 x4 (2 GB/s = 16 Gb/s) cannot carry 32 Gb/s of data.
  Machine m = p.machine;
  for (auto& d : m.pci_devices) {
    if (d.address == acco::testing::kQuirksHca) {
      d.current.width = 4;
    }
  }
  annotate_links(m);
  const auto findings = check(m);
  const auto* f = find_rule(findings, "nic-pcie-limited");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->message, HasSubstr("32.0 Gb/s"));
  EXPECT_THAT(f->evidence.front().value, HasSubstr("40 Gb/sec (4X QDR)"));
}

TEST(ChecksTest, NumaUnknownQuotesWhatTheFilesSaid) {
  const auto p = dgx({.numa_unknown = true});
  const auto* f = find_rule(p.findings, "numa-unknown");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->message, HasSubstr("report numa_node -1"));
  EXPECT_EQ(f->evidence.front().value, "-1");
}

TEST(ChecksTest, EveryRuleIsDocumentedInTheRuleList) {
  std::vector<std::string> ids;
  for (const auto& r : rules()) {
    ids.push_back(r.id);
  }
  for (const auto* rule :
       {"pcie-link-downtrained", "pcie-slot-limited", "pcie-path-bottleneck",
        "pcie-uplink-oversubscribed", "gpu-nic-remote", "nvme-gpu-remote", "numa-unknown",
        "ib-port-down", "ib-rate-low", "nic-pcie-limited", "iommu-translated",
        "gpudirect-rdma-missing", "acs-p2p-redirect", "nvlink-down", "mig-pending-reset",
        "virtualized-topology", "numa-topology-inconsistent", "data-dir-direct-io-refused",
        "data-dir-io-uring-refused"}) {
    EXPECT_THAT(ids, Contains(rule));
  }
}

// check() and rules() come from one table: whatever a machine triggers is listed, with a severity
// inside the range the list gives for its rule.
TEST(ChecksTest, EveryFindingNamesAListedRuleWithASeverityInItsRange) {
  std::vector<Probed> probed;
  probed.push_back(dgx({.gpu_width_x8 = 2,
                        .gpu_speed_2_5gt = 1,
                        .gpu_in_gen4_slot = 3,
                        .switch_uplink_x4 = 0,
                        .numa_unknown = true,
                        .ib_port_polling = 5,
                        .ib_port_disabled = 2,
                        .ib_rate_hdr = 4,
                        .nic_gen4_x8 = 7,
                        .iommu_dma_fq = true,
                        .no_peermem = true}));
  probed.push_back(dgx({.acs_redirect = 1}));
  probed.push_back(quirks({.empty_node = true, .overlapping_nodes = true}));
  probed.push_back(quirks({.cpu_in_no_node = true}));
  probed.push_back(dgx());
  for (const auto write :
       {+[](const std::filesystem::path& dir) { acco::testing::write_workstation(dir); },
        +[](const std::filesystem::path& dir) { acco::testing::write_flattened_vm(dir); },
        +[](const std::filesystem::path& dir) { acco::testing::write_ci_vm(dir); }}) {
    TempDir dir;
    write(dir.path());
    probed.push_back(probe_dir(dir.path()));
  }
  std::set<std::string> seen;
  for (const auto& p : probed) {
    for (const auto& f : p.findings) {
      const auto it = std::find_if(rules().begin(), rules().end(),
                                   [&](const RuleInfo& r) { return r.id == f.rule; });
      ASSERT_NE(it, rules().end()) << f.rule;
      EXPECT_GE(f.severity, it->lowest) << f.rule << ": " << f.message;
      EXPECT_LE(f.severity, it->highest) << f.rule << ": " << f.message;
      seen.insert(f.rule);
    }
  }
  EXPECT_GE(seen.size(), 14U);
}

Probed pcie_server(const acco::testing::PcieServerOptions& options = {}) {
  TempDir dir;
  acco::testing::write_pcie_server(dir.path(), options);
  return probe_dir(dir.path());
}

std::vector<const Finding*> findings_of(const std::vector<Finding>& findings,
                                        const std::string& rule) {
  std::vector<const Finding*> out;
  for (const auto& f : findings) {
    if (f.rule == rule) {
      out.push_back(&f);
    }
  }
  return out;
}

TEST(ChecksTest, DualPort100gCardAtGen4x8IsPcieLimitedAsOnePhysicalDevice) {
  // Each port needs 12.5 GB/s, which Gen4 x8 (15.75) carries; both need 25 on the one link.
  const auto p = pcie_server({.nic_gen4_x8 = true});
  const auto limited = findings_of(p.findings, "nic-pcie-limited");
  const auto it = std::find_if(limited.begin(), limited.end(), [](const Finding* f) {
    return f->devices.front() == acco::testing::kPcieServerDual100;
  });
  ASSERT_NE(it, limited.end());
  EXPECT_THAT((*it)->devices, ElementsAre("0000:11:00.0", "0000:11:00.1"));
  EXPECT_THAT((*it)->message, HasSubstr("2 functions"));
  EXPECT_THAT((*it)->message, HasSubstr("200.0 Gb/s"));
  EXPECT_THAT((*it)->message, HasSubstr("25.0 GB/s needed"));
  const auto fine = pcie_server();
  const auto healthy = findings_of(fine.findings, "nic-pcie-limited");
  EXPECT_TRUE(std::none_of(healthy.begin(), healthy.end(), [](const Finding* f) {
    return f->devices.front() == acco::testing::kPcieServerDual100;
  }));
}

TEST(ChecksTest, DualPort200gHcaAtGen4x16IsPcieLimited) {
  const auto p = pcie_server();
  const auto* f = find_rule(p.findings, "nic-pcie-limited");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->devices, ElementsAre("0000:44:00.0", "0000:44:00.1"));
  EXPECT_THAT(f->message, HasSubstr("50.0 GB/s needed"));
  EXPECT_THAT(f->message, HasSubstr("31.5 GB/s"));
}

TEST(ChecksTest, NicPcieLimitedQuotesThePortThatSetsTheLimit) {
  const auto p = dgx({.switch_uplink_x4 = 0});
  const auto* f = find_rule(p.findings, "nic-pcie-limited");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->devices.front(), nic(0));
  // The switch's upstream port (bus 0x16 for the first tray) trained at x4, not the NIC.
  EXPECT_THAT(f->evidence,
              Contains(Evidence{"/sys/bus/pci/devices/0000:16:00.0/current_link_width", "4"}));
  EXPECT_THAT(f->evidence,
              Not(Contains(Field(&Evidence::source, HasSubstr(nic(0) + "/current_link_width")))));
  EXPECT_THAT(f->message, HasSubstr("of 0000:16:00.0"));
}

TEST(ChecksTest, SwitchUplinkLimitOfADualPortHcaQuotesTheUplink) {
  const auto p = pcie_server({.switch_uplink_x8 = true});
  const auto* f = find_rule(p.findings, "nic-pcie-limited");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->evidence, Contains(Evidence{std::string("/sys/bus/pci/devices/") +
                                                 std::string(acco::testing::kPcieServerSwitchUp) +
                                                 "/current_link_width",
                                             "8"}));
}

TEST(ChecksTest, DualPortNicCountsOnceBehindItsSwitch) {
  // Without GPUDirect RDMA: the A100 (31.5 GB/s) and the HCA once (31.5) over a 31.5 uplink.
  const auto p = pcie_server({.no_peermem = true});
  const auto* f = find_rule(p.findings, "pcie-uplink-oversubscribed");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->message, HasSubstr("2.0x"));
  EXPECT_THAT(f->message, HasSubstr("1 gpu + 1 nic"));
  // With it the HCA's traffic to the A100 stays under the switch.
  EXPECT_THAT(rules_of(pcie_server().findings), Not(Contains("pcie-uplink-oversubscribed")));
}

TEST(ChecksTest, ManagementPortIsNotComparedWithDataRailsOfAnotherModel) {
  // A 25 GbE ConnectX-4 Lx beside 100 GbE ConnectX-6 Dx ports, both RoCE.
  const auto p = pcie_server({.mgmt_cx4_lx = true});
  EXPECT_THAT(rules_of(p.findings), Not(Contains("ib-rate-low")));
  EXPECT_EQ(p.machine.ib_ports.size(), 5U);
}

TEST(ChecksTest, PortsOfOneModelAreStillComparedAndNameTheModel) {
  const auto p = dgx({.ib_rate_hdr = 4});
  const auto* f = find_rule(p.findings, "ib-rate-low");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->message, HasSubstr("15b3:1021"));
}

TEST(ChecksTest, AmdPeerMemoryCountsAsGpuDirect) {
  for (const char* file :
       {"sys/module/amd_peermem/initstate", "sys/kernel/mm/memory_peers/amdkfd/version"}) {
    TempDir dir;
    acco::testing::write_pcie_server(dir.path(), {.no_peermem = true});
    std::filesystem::create_directories((dir.path() / file).parent_path());
    std::ofstream(dir.path() / file) << "live\n";
    const auto p = probe_dir(dir.path());
    EXPECT_TRUE(p.machine.gpudirect.rdma_loaded) << file;
    EXPECT_THAT(rules_of(p.findings), Not(Contains("gpudirect-rdma-missing"))) << file;
  }
}

TEST(ChecksTest, DmaBufCapableKernelMakesMissingPeerMemoryInfo) {
  // Kernel 6.1 and mlx5_core: the dma-buf path may carry GPUDirect RDMA, sysfs cannot tell.
  const auto p = pcie_server({.no_peermem = true});
  const auto* f = find_rule(p.findings, "gpudirect-rdma-missing");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_THAT(f->message, HasSubstr("sysfs cannot confirm"));
  EXPECT_THAT(f->evidence, Contains(Evidence{"/proc/sys/kernel/osrelease", "6.1.0-28-amd64"}));
}

Probed amd_box(const acco::testing::AmdAcceleratorOptions& options = {}) {
  TempDir dir;
  acco::testing::write_amd_accelerator(dir.path(), options);
  return probe_dir(dir.path());
}

TEST(ChecksTest, AmdPeermemKeepsGpuNicTrafficUnderTheLevel2Switches) {
  const auto p = amd_box();
  EXPECT_TRUE(p.machine.gpudirect.rdma_loaded);
  EXPECT_EQ(p.machine.gpudirect.evidence, "/sys/module/amd_peermem");
  for (const auto& f : findings_of(p.findings, "pcie-uplink-oversubscribed")) {
    // Only the level-1 uplink carries both MI210s' host traffic (2.0x); the level-2 switches
    // see one GPU each, whose HCA traffic stays below them.
    EXPECT_EQ(f->devices.front(), acco::testing::kAmdBoxLevel1) << f->message;
    EXPECT_THAT(f->message, HasSubstr("2 gpus behind"));
  }
  EXPECT_EQ(findings_of(p.findings, "pcie-uplink-oversubscribed").size(), 1U);
  EXPECT_THAT(rules_of(p.findings), Not(Contains("gpudirect-rdma-missing")));
}

TEST(ChecksTest, AmdAcceleratorsWithoutPeerMemoryAreReported) {
  const auto p = amd_box({.no_peermem = true});
  const auto* f = find_rule(p.findings, "gpudirect-rdma-missing");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->devices, Contains(std::string(acco::testing::kAmdBoxGpus[0])));
  EXPECT_THAT(f->message, HasSubstr("2 GPU(s) and 2 RDMA NIC(s)"));
  // Without GPUDirect each level-2 switch carries its MI210 and its HCA to the host.
  EXPECT_EQ(findings_of(p.findings, "pcie-uplink-oversubscribed").size(), 3U);
}

Probed kvm_guest(const acco::testing::KvmGuestOptions& options = {}) {
  TempDir dir;
  acco::testing::write_kvm_guest(dir.path(), options);
  return probe_dir(dir.path());
}

bool has_evidence(const Finding& f, const std::string& source, const std::string& value) {
  return std::any_of(f.evidence.begin(), f.evidence.end(),
                     [&](const Evidence& e) { return e.source == source && e.value == value; });
}

const std::vector<std::string>& link_rules() {
  static const std::vector<std::string> ids = {"pcie-link-downtrained", "pcie-slot-limited",
                                               "pcie-path-bottleneck", "pcie-uplink-oversubscribed",
                                               "nic-pcie-limited"};
  return ids;
}

TEST(ChecksTest, LinkFindingsInAGuestAreInfoThatNameTheEmulatedPorts) {
  const auto p = kvm_guest();
  int link_findings = 0;
  for (const auto& f : p.findings) {
    if (std::find(link_rules().begin(), link_rules().end(), f.rule) == link_rules().end()) {
      continue;
    }
    ++link_findings;
    EXPECT_EQ(f.severity, Severity::kInfo) << f.rule << ": " << f.message;
    EXPECT_THAT(f.message, HasSubstr("but this is a virtual machine")) << f.rule;
    EXPECT_THAT(f.message, HasSubstr("not evidence of a slow physical link")) << f.rule;
    EXPECT_THAT(f.recommendation, HasSubstr("on the host")) << f.rule;
    EXPECT_TRUE(has_evidence(f, "/proc/cpuinfo", "flags: hypervisor")) << f.rule;
  }
  // 4 GPUs and 4 NICs slot-limited by their emulated ports, 4 NICs below 400G, one XIO3130.
  EXPECT_EQ(link_findings, 13);
  // The 250 MB/s of QEMU's XIO3130 switch, as the issue saw it, with the ports' ids.
  const auto limited = findings_of(p.findings, "nic-pcie-limited");
  const auto it = std::find_if(limited.begin(), limited.end(), [](const Finding* f) {
    return f->devices.front() == acco::testing::kKvmGuestNics[2];
  });
  ASSERT_NE(it, limited.end());
  EXPECT_THAT((*it)->message, HasSubstr("carries only 250.0 MB/s"));
  EXPECT_THAT((*it)->message, HasSubstr("QEMU x3130-upstream"));
  EXPECT_TRUE(has_evidence(**it, "/sys/bus/pci/devices/0000:07:00.0/device", "0x8232"));
  // Nothing the guest cannot know is a warning: only the NUMA and topology facts are.
  for (const auto& f : p.findings) {
    if (f.severity >= Severity::kWarning) {
      EXPECT_THAT(f.rule, ::testing::AnyOf("numa-unknown", "virtualized-topology")) << f.message;
    }
  }
}

TEST(ChecksTest, GuestSlotLimitQuotesTheLinkBothEndsTrain) {
  // A Gen5 x16 H200 in QEMU's Gen4 x32 root port: 31.5 GB/s, not "63.0 instead of 63.0".
  const auto p = kvm_guest();
  const auto* f = find_rule(p.findings, "pcie-slot-limited");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->message, HasSubstr("caps it at 31.5 GB/s instead of 63.0 GB/s"));
}

TEST(ChecksTest, VirtualizedTopologyListsTheEmulatedBridgesAndWhatTheGuestCanKnow) {
  const auto p = kvm_guest();
  const auto* f = find_rule(p.findings, "virtualized-topology");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->message, HasSubstr("7 QEMU pcie-root-port"));
  EXPECT_THAT(f->message, HasSubstr("2 TI XIO3130 downstream port"));
  EXPECT_THAT(f->message, HasSubstr("What the guest can know"));
}

TEST(ChecksTest, GuestWithoutTheCpuFlagIsKnownByItsQemuBridges) {
  const auto p = kvm_guest({.no_cpu_flag = true});
  EXPECT_FALSE(p.machine.hypervisor);
  const auto* f = find_rule(p.findings, "virtualized-topology");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(has_evidence(*f, "/sys/bus/pci/devices/0000:00:02.0/vendor", "0x1b36"));
  for (const auto& finding : p.findings) {
    if (std::find(link_rules().begin(), link_rules().end(), finding.rule) != link_rules().end()) {
      EXPECT_EQ(finding.severity, Severity::kInfo) << finding.message;
    }
  }
}

TEST(ChecksTest, GuestStillJudgesWhatItCanKnow) {
  // The port rate comes from the NIC's firmware and the peer-memory module from the guest's own
  // kernel: both are real inside a VM.
  const auto p = kvm_guest({.nic_rate_hdr = true, .no_peermem = true});
  const auto* rate = find_rule(p.findings, "ib-rate-low");
  ASSERT_NE(rate, nullptr);
  EXPECT_EQ(rate->severity, Severity::kWarning);
  EXPECT_THAT(rate->devices, Contains("mlx5_1"));
  const auto* gdr = find_rule(p.findings, "gpudirect-rdma-missing");
  ASSERT_NE(gdr, nullptr);
  EXPECT_GE(gdr->severity, Severity::kInfo);
}

TEST(ChecksTest, RealXio3130OnBareMetalIsNotAGuest) {
  // TI's XIO3130 is also real silicon: without the CPU flag its ids prove nothing, and its slow
  // link is a real finding.
  TempDir dir;
  acco::testing::SysrootBuilder b(dir.path());
  b.numa_node({.id = 0, .cpus = "0-3", .distances = {10}, .memory_kib = 16777216})
      .cpuinfo({.vendor_id = "GenuineIntel", .model_name = "Intel Xeon", .flags = "fpu sse2"})
      .osrelease("6.1.0-28-amd64");
  b.root_bus("0000:00", 0)
      .add("0000:00:01.0",
           {{0x060400, 0x8086, 0x352a, 0x8086, 0}, acco::testing::Link{4, 16}, "pcieport"})
      .add("0000:01:00.0",
           {{0x060400, 0x104c, 0x8232, 0, 0}, acco::testing::Link{1, 1}, "pcieport"})
      .add("0000:02:00.0",
           {{0x060400, 0x104c, 0x8233, 0, 0}, acco::testing::Link{1, 1}, "pcieport"})
      .add("0000:03:00.0",
           {{0x020000, 0x15b3, 0x1015, 0x15b3, 3}, acco::testing::Link{3, 8}, "mlx5_core"})
      .netdev("eth0", {.speed_mbps = 25000});
  const auto p = probe_dir(dir.path());
  EXPECT_EQ(find_rule(p.findings, "virtualized-topology"), nullptr);
  const auto* f = find_rule(p.findings, "nic-pcie-limited");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_THAT(f->message, Not(HasSubstr("virtual machine")));
}

TEST(ChecksTest, RuleIdsAreUniqueAndEachHasATitleAndAnOrderedRange) {
  std::set<std::string> ids;
  for (const auto& r : rules()) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    EXPECT_FALSE(r.title.empty()) << r.id;
    EXPECT_LE(r.lowest, r.highest) << r.id;
  }
  EXPECT_EQ(ids.size(), 44U);
}

}  // namespace
}  // namespace acco::topo
