#include "acco/exec/check.hpp"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/core/fs.hpp"
#include "acco/report/document.hpp"
#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"
#include "acco/topo/probe.hpp"

#include "machines.hpp"
#include "sysroot_builder.hpp"

namespace acco::exec {
namespace {

using ::acco::testing::HasValue;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

ProcessMasks masks(const char* cpus, const char* mems) {
  return {units::parse_cpulist(cpus).value(), units::parse_cpulist(mems).value()};
}

const CheckItem& item(const BindingCheck& check, const std::string& name) {
  for (const CheckItem& i : check.items) {
    if (i.name == name) {
      return i;
    }
  }
  static const CheckItem kNone;
  ADD_FAILURE() << name;
  return kNone;
}

class CheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    acco::testing::write_dgx_h100(dir_.path());
    topo::ProbeRequest request;
    request.sysroot = dir_.path().string();
    request.nvml = topo::NvmlMode::kOff;
    auto r = topo::probe(request);
    ASSERT_TRUE(r.has_value());
    machine_ = r->machine;
  }
  acco::testing::TempDir dir_;
  topo::Machine machine_;
};

TEST_F(CheckTest, ARankBoundToItsGpusSocketHasNothingToFixButTheContainerLimits) {
  const auto check = check_binding(machine_, masks("56-111", "1"),
                                   {{"CUDA_VISIBLE_DEVICES", "5"},
                                    {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
                                    {"NCCL_IB_HCA", "=mlx5_5:1"}});
  ASSERT_TRUE(check.device.has_value());
  EXPECT_EQ(check.device->address, "0000:ab:00.0");
  EXPECT_THAT(item(check, "GPU").problem, IsEmpty());
  EXPECT_THAT(item(check, "CPUs").problem, IsEmpty());
  EXPECT_EQ(item(check, "CPUs").value, "56-111 (NUMA node 1)");
  EXPECT_THAT(item(check, "memory nodes").problem, IsEmpty());
  EXPECT_THAT(item(check, "NIC").problem, IsEmpty());
  EXPECT_THAT(item(check, "NIC").value, HasSubstr("mlx5_5:1 (the active RDMA port nearest GPU5"));
}

TEST_F(CheckTest, CpusOnTheOtherSocketOrAcrossBothAreProblemsWithTheirFix) {
  const Environment env{{"CUDA_VISIBLE_DEVICES", "0"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}};
  const auto far = check_binding(machine_, masks("56-60", "0-1"), env);
  EXPECT_THAT(item(far, "CPUs").problem, HasSubstr("none of them is on GPU0's NUMA node 0"));
  EXPECT_THAT(item(far, "CPUs").fix, HasSubstr("acco exec --device 0 -- CMD"));
  const auto spread = check_binding(machine_, masks("0-223", "0-1"), env);
  EXPECT_THAT(item(spread, "CPUs").problem,
              HasSubstr("not bound: they span NUMA nodes 0,1, and GPU0 is on node 0"));
  EXPECT_EQ(item(spread, "CPUs").fix, "acco exec --device 0 -- CMD (binds to CPUs 0-55,112-167)");
  const auto fenced = check_binding(machine_, masks("0-55", "1"), env);
  EXPECT_THAT(item(fenced, "memory nodes").problem, HasSubstr("leaves out GPU0's NUMA node 0"));
}

TEST_F(CheckTest, AnIndexWithoutPciOrderAndAllGpusForEveryRankAreProblems) {
  const auto index = check_binding(machine_, masks("0-55", "0"), {{"CUDA_VISIBLE_DEVICES", "0"}});
  EXPECT_THAT(item(index, "GPU").problem, HasSubstr("CUDA_DEVICE_ORDER is not PCI_BUS_ID"));
  const auto ranks =
      check_binding(machine_, masks("0-55", "0"),
                    {{"OMPI_COMM_WORLD_LOCAL_RANK", "2"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}});
  EXPECT_THAT(item(ranks, "GPU").problem, HasSubstr("every rank sees all 8 GPUs"));
  EXPECT_EQ(ranks.device->index, 2);
  const auto wrong = check_binding(machine_, masks("0-55", "0"), {{"CUDA_VISIBLE_DEVICES", "9"}});
  EXPECT_THAT(item(wrong, "GPU").problem, HasSubstr("--device 9: no such GPU"));
  EXPECT_FALSE(wrong.device.has_value());
}

TEST_F(CheckTest, AnNcclIbHcaThatLeavesOutTheNearestPortIsAProblem) {
  const Environment base{{"CUDA_VISIBLE_DEVICES", "5"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}};
  for (const char* bad : {"=mlx5_0:1", "mlx5_1", "^mlx5_5"}) {
    Environment env = base;
    env["NCCL_IB_HCA"] = bad;
    EXPECT_THAT(item(check_binding(machine_, masks("56-111", "1"), env), "NIC").problem,
                HasSubstr("leaves out mlx5_5:1, the port nearest GPU5"))
        << bad;
  }
  for (const char* good : {"mlx5", "mlx5_5:1,mlx5_4:1", "^mlx5_0"}) {
    Environment env = base;
    env["NCCL_IB_HCA"] = good;
    EXPECT_THAT(item(check_binding(machine_, masks("56-111", "1"), env), "NIC").problem, IsEmpty())
        << good;
  }
}

TEST(CheckLimitsTest, ASmallShmAndLimitedMemlockOnAnRdmaMachineAreProblems) {
  topo::Machine m;
  m.limits.shm_bytes = 64ULL << 20;
  m.limits.shm_evidence = "size=65536k";
  m.limits.memlock_unlimited = false;
  m.limits.memlock_bytes = 8ULL << 20;
  topo::IbPort port;
  port.device = "mlx5_0";
  port.state = 4;
  m.ib_ports.push_back(port);
  const auto check = check_binding(m, std::nullopt, {});
  EXPECT_THAT(item(check, "/dev/shm").problem, HasSubstr("below 1 GiB"));
  EXPECT_THAT(item(check, "/dev/shm").fix, HasSubstr("--shm-size=1g"));
  EXPECT_THAT(item(check, "locked memory").fix, HasSubstr("--ulimit memlock=-1:-1"));
  EXPECT_EQ(item(check, "CPUs").value, "unknown (/proc/self/status has no Cpus_allowed_list)");
  EXPECT_EQ(check.problems(), 2);
  m.ib_ports.clear();
  m.limits.shm_bytes = 8ULL << 30;
  EXPECT_EQ(check_binding(m, std::nullopt, {}).problems(), 0) << "no RDMA: memlock does not matter";
  const auto j = to_json(check);
  EXPECT_EQ(j["schema"], "acco.exec-check/1");
  EXPECT_EQ(j["problems"], 2);
  EXPECT_EQ(j["items"].size(), 6U);
  const std::string text = report::render_text(check_report(check));
  EXPECT_THAT(text, HasSubstr("2 to fix"));
  EXPECT_THAT(text, HasSubstr("FIX  /dev/shm"));
}

TEST(ProcessMasksTest, StatusLinesAreReadAndABadOneIsNamed) {
  acco::testing::TempDir dir;
  acco::testing::SysrootBuilder b(dir.path());
  b.file("proc/self/status",
         "Name:\tacco\nCpus_allowed:\tff\nCpus_allowed_list:\t0-3,8\nMems_allowed_list:\t0\n");
  auto fs = core::make_disk_fs(dir.path().string()).value();
  EXPECT_THAT(read_process_masks(*fs), HasValue(masks("0-3,8", "0")));
  b.file("proc/self/status", "Cpus_allowed_list:\tlots\n");
  EXPECT_THAT(read_process_masks(*fs),
              StatusIs(Errc::kInvalidArgument,
                       "/proc/self/status: Cpus_allowed_list 'lots' is not a list like 0-3,8"));
  b.remove("proc/self/status");
  EXPECT_THAT(read_process_masks(*fs), StatusIs(Errc::kNotFound));
}

}  // namespace
}  // namespace acco::exec
