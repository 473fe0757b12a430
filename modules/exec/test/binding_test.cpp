#include "acco/exec/binding.hpp"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/core/units.hpp"
#include "acco/exec/request.hpp"
#include "acco/report/document.hpp"
#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"
#include "acco/topo/probe.hpp"

#include "machines.hpp"

namespace acco::exec {
namespace {

using ::acco::testing::HasValue;
using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

topo::Machine probe_dir(const std::filesystem::path& root) {
  topo::ProbeRequest request;
  request.sysroot = root.string();
  request.nvml = topo::NvmlMode::kOff;
  auto r = topo::probe(request);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? r->machine : topo::Machine{};
}

std::vector<int> cpus(const char* list) {
  return units::parse_cpulist(list).value();
}

class DgxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    acco::testing::write_dgx_h100(dir_.path());
    machine_ = probe_dir(dir_.path());
    devices_ = accelerators(machine_);
  }
  acco::testing::TempDir dir_;
  topo::Machine machine_;
  std::vector<Accelerator> devices_;
};

TEST_F(DgxTest, GpusAreNumberedInPciOrderWithoutNvml) {
  ASSERT_EQ(devices_.size(), 8U);
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    EXPECT_EQ(devices_[i].index, static_cast<int>(i));
    EXPECT_EQ(devices_[i].address, acco::testing::kDgxH100Gpus[i]);
  }
  EXPECT_EQ(devices_[0].numa_node, 0);
  EXPECT_EQ(devices_[4].numa_node, 1);
}

TEST_F(DgxTest, ADeviceIsFoundByIndexAddressOrNotAtAll) {
  EXPECT_THAT(select_device(devices_, "5"), HasValue(devices_[5]));
  EXPECT_THAT(select_device(devices_, "9A:00.0"), HasValue(devices_[4]));
  EXPECT_THAT(select_device(devices_, "0000:db:00.0"), HasValue(devices_[7]));
  EXPECT_THAT(select_device(devices_, "8"),
              StatusIs(Errc::kNotFound,
                       HasSubstr("--device 8: no such GPU (an index, a PCI address or a GPU UUID; "
                                 "there are 0 0000:18:00.0, 1 0000:2a:00.0, ")));
  EXPECT_THAT(select_device(devices_, "MIG-4b5e"),
              StatusIs(Errc::kNotFound, HasSubstr("--device MIG-4b5e: no such MIG instance")));
  EXPECT_THAT(select_device({}, "0"), StatusIs(Errc::kNotFound, HasSubstr("has no NVIDIA GPU")));
}

// With NVML's MIG list a MIG UUID names its GPU: the binding is the GPU's, the process sees the
// instance alone.
TEST_F(DgxTest, AMigInstanceIsBoundAsItsGpuAndMadeTheOnlyDeviceVisible) {
  topo::NvmlGpu gpu;
  gpu.index = 6;
  gpu.pci = std::string(acco::testing::kDgxH100Gpus[6]);
  gpu.uuid = "GPU-6";
  gpu.mig_enabled = true;
  gpu.mig_devices = {{.slot = 0, .uuid = "MIG-aa11", .profile = "3g.40gb"},
                     {.slot = 1, .uuid = "MIG-bb22", .profile = "3g.40gb"}};
  machine_.nvml.available = true;
  machine_.nvml.gpus = {gpu};
  const auto devices = accelerators(machine_);
  const auto found = select_device(devices, "mig-BB22");
  ASSERT_THAT(found, HasValue(::testing::Field(&Accelerator::mig, "MIG-bb22")));
  EXPECT_EQ(found->address, "0000:ba:00.0");
  const Binding b = plan_binding(machine_, *found, cpus("0-223"), {}, {});
  EXPECT_EQ(units::format_cpulist(b.cpus), "56-111,168-223");
  ASSERT_GE(b.env.size(), 2U);
  EXPECT_EQ(b.env[1].value, "MIG-bb22");
  EXPECT_THAT(b.env[1].reason, HasSubstr("a MIG instance of GPU6 at 0000:ba:00.0"));
}

TEST_F(DgxTest, AGpuOnTheSecondSocketGetsThatSocketsCpusMemoryAndNic) {
  const Binding b = plan_binding(machine_, devices_[5], cpus("0-223"), {}, {.nic = true});
  EXPECT_EQ(units::format_cpulist(b.cpus), "56-111,168-223");
  EXPECT_EQ(b.memory_node, 1);
  EXPECT_EQ(b.nic, "mlx5_5:1");
  std::vector<std::string> names;
  for (const EnvVar& v : b.env) {
    names.push_back(v.name + "=" + v.value);
  }
  EXPECT_THAT(names, ElementsAre("CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=5",
                                 "OMP_NUM_THREADS=112", "NCCL_IB_HCA==mlx5_5:1",
                                 "UCX_NET_DEVICES=mlx5_5:1"));
  EXPECT_THAT(b.notes, IsEmpty());
}

// mpirun -np 2 binds each rank to a core by default: the launcher's narrower mask stays.
TEST_F(DgxTest, ANarrowerInheritedMaskIsKeptAndSaid) {
  const Binding b = plan_binding(machine_, devices_[0], cpus("2"), {}, {});
  EXPECT_EQ(units::format_cpulist(b.cpus), "2");
  EXPECT_THAT(b.notes, ElementsAre("the inherited CPU mask (2) is narrower than GPU0's CPUs "
                                   "(0-55,112-167): kept"));
}

TEST_F(DgxTest, AMaskOnTheOtherSocketIsKeptAsItIs) {
  const Binding b = plan_binding(machine_, devices_[0], cpus("60-63"), {}, {});
  EXPECT_THAT(b.cpus, IsEmpty());
  ASSERT_EQ(b.notes.size(), 1U);
  EXPECT_THAT(b.notes[0], HasSubstr("the inherited CPU mask (60-63) holds none of GPU0's CPUs"));
  EXPECT_EQ(b.memory_node, 0) << "memory still follows the GPU";
}

TEST_F(DgxTest, ALaunchersVisibleDevicesAndThreadsAreReportedNotSilentlyReplaced) {
  const Binding b = plan_binding(machine_, devices_[1], cpus("0-223"),
                                 {{"CUDA_VISIBLE_DEVICES", "0,1"}, {"OMP_NUM_THREADS", "4"}}, {});
  EXPECT_THAT(b.notes, ElementsAre(HasSubstr("CUDA_VISIBLE_DEVICES was '0,1' before acco exec: "
                                             "replaced by '1'"),
                                   "OMP_NUM_THREADS=4 was set before acco exec: kept"));
  for (const EnvVar& v : b.env) {
    EXPECT_NE(v.name, "OMP_NUM_THREADS");
  }
}

TEST_F(DgxTest, BindNoneSetsOnlyTheEnvironment) {
  const Binding b = plan_binding(machine_, devices_[1], cpus("0-223"), {}, {.bind = false});
  EXPECT_THAT(b.cpus, IsEmpty());
  EXPECT_EQ(b.memory_node, -1);
  EXPECT_THAT(b.notes, ElementsAre("--bind none: CPUs and memory left as inherited"));
  ASSERT_EQ(b.env.size(), 2U);
}

TEST_F(DgxTest, RanksTakeDevicesInTurnAndSharingIsSaid) {
  std::string note;
  EXPECT_THAT(device_for_rank(devices_, {3, 8, "LOCAL_RANK"}, note), HasValue(devices_[3]));
  EXPECT_EQ(note, "");
  EXPECT_THAT(device_for_rank(devices_, {9, 16, "LOCAL_RANK"}, note), HasValue(devices_[1]));
  EXPECT_EQ(note,
            "16 ranks on this node share 8 GPU(s): rank 9 takes GPU1 (local rank mod 8), which "
            "runs ranks 1, 9");
  EXPECT_THAT(device_for_rank({}, {0, 1, "LOCAL_RANK"}, note), StatusIs(Errc::kNotFound));
}

// acco exec's flags as a request: each bad value or combination named, then the device chosen
// by --device or by the launcher's local rank.
TEST(ExecRequestTest, BadValuesAndCombinationsAreNamed) {
  const auto message = [](const ExecRequest& r) {
    auto s = check_request(r);
    EXPECT_THAT(s, StatusIs(Errc::kInvalidArgument));
    return s ? std::string() : s.error().message;
  };
  EXPECT_EQ(message({.device = "0", .bind = "near"}), "--bind: 'near' is not one of auto, none");
  EXPECT_EQ(message({.local_rank = "3"}), "--local-rank: '3' is not auto");
  EXPECT_EQ(message({.device = "0", .report = "yaml"}),
            "--report: 'yaml' is not one of text, json, none");
  EXPECT_EQ(message({.dry_run = true}), "exec: give --device or --local-rank auto (one of them)");
  EXPECT_EQ(message({.device = "0"}),
            "exec: the command to run is required after -- (or give --dry-run)");
  EXPECT_EQ(message({.device = "0", .check = true}),
            "exec: --check looks at this process as it is; it takes no --device, --local-rank or "
            "command");
  EXPECT_THAT(check_request({.check = true}), IsOk());
  EXPECT_THAT(check_request({.device = "0", .dry_run = true}), IsOk());
}

TEST_F(DgxTest, ARequestTakesItsDeviceByNameOrByTheLaunchersLocalRank) {
  const auto by_name = plan_request(machine_, {}, cpus("0-223"), {.device = "5", .dry_run = true});
  ASSERT_THAT(by_name, IsOk());
  EXPECT_EQ(to_json(*by_name)["device"]["pci"], "0000:ab:00.0");
  const Environment launched = {{"LOCAL_RANK", "9"}, {"LOCAL_WORLD_SIZE", "16"}};
  const auto by_rank =
      plan_request(machine_, launched, cpus("0-223"), {.local_rank = "auto", .dry_run = true});
  ASSERT_THAT(by_rank, IsOk());
  EXPECT_EQ(to_json(*by_rank)["device"]["pci"], std::string(acco::testing::kDgxH100Gpus[1]));
  ASSERT_FALSE(by_rank->notes.empty());
  EXPECT_THAT(by_rank->notes.front(), HasSubstr("16 ranks on this node share 8 GPU(s)"));
  EXPECT_THAT(plan_request(machine_, {}, cpus("0-223"), {.local_rank = "auto", .dry_run = true}),
              StatusIs(Errc::kInvalidArgument, HasSubstr("exec: ")));
  EXPECT_THAT(plan_request(machine_, {}, cpus("0-223"), {.device = "8", .dry_run = true}),
              StatusIs(Errc::kNotFound, HasSubstr("exec: --device 8: no such GPU")));
}

TEST_F(DgxTest, JsonAndTextSayTheSameBinding) {
  const Binding b = plan_binding(machine_, devices_[5], cpus("0-223"), {}, {.nic = true});
  const auto j = to_json(b);
  EXPECT_EQ(j["schema"], "acco.exec-binding/1");
  EXPECT_EQ(j["device"]["pci"], "0000:ab:00.0");
  EXPECT_EQ(j["cpus"], "56-111,168-223");
  EXPECT_EQ(j["memory_node"], 1);
  EXPECT_EQ(j["nic"], "mlx5_5:1");
  EXPECT_EQ(j["env"].size(), 5U);
  const std::string text = report::render_text(binding_report(b));
  EXPECT_THAT(text, HasSubstr("acco exec: GPU5 0000:ab:00.0"));
  EXPECT_THAT(text, HasSubstr("CPUs bound:"));
  EXPECT_THAT(text, HasSubstr("56-111,168-223"));
  EXPECT_THAT(text, HasSubstr("NCCL_IB_HCA"));
}

// A VM whose GPUs say numa_node -1: nothing is known, so nothing is bound.
TEST(BindingTest, AnUnknownNumaNodeBindsNothingAndSaysWhy) {
  acco::testing::TempDir dir;
  acco::testing::write_flattened_vm(dir.path());
  const topo::Machine machine = probe_dir(dir.path());
  const auto devices = accelerators(machine);
  ASSERT_FALSE(devices.empty());
  const Binding b = plan_binding(machine, devices[0], cpus("0-7"), {}, {.nic = true});
  EXPECT_THAT(b.cpus, IsEmpty());
  EXPECT_EQ(b.memory_node, -1);
  EXPECT_THAT(b.notes[0], HasSubstr("GPU0's NUMA node is unknown"));
}

// The workstation's only NIC is on NUMA 1: a GPU on NUMA 0 still gets it, the nearest there is.
TEST(BindingTest, TheNearestNicIsTakenEvenAcrossSockets) {
  acco::testing::TempDir dir;
  acco::testing::write_workstation(dir.path());
  const topo::Machine machine = probe_dir(dir.path());
  const auto devices = accelerators(machine);
  ASSERT_EQ(devices.size(), 4U);
  const Binding b = plan_binding(machine, devices[0], cpus("0-127"), {}, {.nic = true});
  EXPECT_FALSE(b.nic.empty());
  EXPECT_EQ(b.memory_node, 0);
}

// apply_binding on this process: the CPUs it already has, so the test changes nothing.
TEST(ApplyTest, ABindingToTheCurrentMaskAppliesAndSetsTheEnvironment) {
  Binding b;
  b.cpus = current_cpus();
  ASSERT_FALSE(b.cpus.empty());
  b.env.push_back({"ACCO_EXEC_TEST_VAR", "42", "test"});
  std::vector<std::string> notes;
  ASSERT_THAT(apply_binding(b, notes), acco::testing::IsOk());
  EXPECT_EQ(current_cpus(), b.cpus);
  EXPECT_STREQ(std::getenv("ACCO_EXEC_TEST_VAR"), "42");
  ::unsetenv("ACCO_EXEC_TEST_VAR");
}

TEST(ApplyTest, CpusThatDoNotExistHereAreRefused) {
  Binding b;
  b.cpus = {1000};
  std::vector<std::string> notes;
  EXPECT_THAT(apply_binding(b, notes),
              StatusIs(Errc::kUnavailable, HasSubstr("cannot bind to CPUs 1000")));
}

}  // namespace
}  // namespace acco::exec
