// The doctor on a sysroot: the probe's findings, the quick bench skipped (a sysroot is not the
// live machine), and the JSON and text built from one Report.
#include "acco/doctor/doctor.hpp"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"
#include "acco/topo/json.hpp"
#include "acco/topo/probe_report.hpp"

#include "machines.hpp"

namespace acco::doctor {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Options on_sysroot(const std::string& sysroot) {
  Options o;
  o.probe.sysroot = sysroot;
  o.probe.nvml = topo::NvmlMode::kOff;
  return o;
}

TEST(DoctorTest, ASysrootIsAssessedButNotMeasured) {
  const acco::testing::TempDir dir;
  testing::DgxH100Options faults;
  faults.gpu_width_x8 = 2;
  testing::write_dgx_h100(dir.path(), faults);
  auto report = run(on_sysroot(dir.path().string()));
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_FALSE(report->live);
  EXPECT_FALSE(report->cuda.has_value());
  EXPECT_FALSE(report->measured.has_value());
  EXPECT_EQ(report->bench_note, "skipped (not the live machine)");
  // Only the probe's findings: the tune profile is a fact of the live machine.
  for (const auto& f : report->findings) {
    EXPECT_NE(f.rule, "tune-profile-missing");
  }
  bool downtrained = false;
  for (const auto& f : report->findings) {
    downtrained = downtrained || f.rule == "pcie-link-downtrained";
  }
  EXPECT_TRUE(downtrained);

  const auto j = to_json(*report);
  EXPECT_FALSE(j.contains("cuda_driver"));
  EXPECT_EQ(j["quick_bench"]["note"], "skipped (not the live machine)");
  EXPECT_TRUE(j["quick_bench"]["results"].is_array());
  EXPECT_TRUE(j["quick_bench"]["results"].empty());
  ASSERT_TRUE(j["fix_first"].is_array());
  ASSERT_FALSE(j["fix_first"].empty());
  EXPECT_LE(j["fix_first"].size(), topo::kFixFirst);
  EXPECT_EQ(j["fix_first"][0], "pcie-link-downtrained");
  // The probe's document comes first, field for field.
  const auto probe = topo::probe_json(report->machine, report->findings);
  for (const auto& [key, value] : probe.items()) {
    EXPECT_EQ(j[key], value) << key;
  }

  const auto text = report::render_text(doctor_report(*report));
  EXPECT_THAT(text, HasSubstr("Measured paths (quick bench): skipped (not the live machine)"));
  EXPECT_THAT(text, HasSubstr("pcie-link-downtrained"));
  EXPECT_THAT(text, Not(HasSubstr("CUDA driver:")));
}

TEST(DoctorTest, ASkippedBenchSaysWhy) {
  const acco::testing::TempDir dir;
  testing::write_dgx_h100(dir.path());
  auto o = on_sysroot(dir.path().string());
  o.skip_bench = "--no-bench";
  auto report = run(o);
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_EQ(report->bench_note, "skipped (--no-bench)");
  EXPECT_THAT(report::render_text(doctor_report(*report)),
              HasSubstr("Measured paths (quick bench): skipped (--no-bench)"));
}

TEST(DoctorTest, AMissingSysrootIsTheProbesError) {
  const acco::testing::TempDir dir;
  auto report = run(on_sysroot(dir.file("absent")));
  EXPECT_FALSE(report.has_value());
}

TEST(DoctorTest, TheCudaDriverReadsAsOneLineAndAsJson) {
  CudaDriver none;
  none.library = "libcuda.so.1";
  none.error = "libcuda.so.1: cannot open shared object file";
  EXPECT_EQ(cuda_driver_text(none),
            "CUDA driver: none usable (libcuda.so.1: cannot open shared object file)\n");
  EXPECT_TRUE(to_json(none)["version"].is_null());
  EXPECT_EQ(to_json(none)["error"], none.error);

  CudaDriver one;
  one.library = "libcuda.so.1";
  one.usable = true;
  one.version = 12080;
  one.cuda_version = "12.8";
  one.device_count = 1;
  EXPECT_EQ(cuda_driver_text(one),
            "CUDA driver: 12080 (supports CUDA 12.8), 1 device, libcuda.so.1\n");
  EXPECT_EQ(
      to_json(one).dump(),
      R"({"library":"libcuda.so.1","version":12080,"cuda_version":"12.8","device_count":1,"error":null})");
}

TEST(DoctorTest, OnlyTheLiveMachineIsLive) {
  topo::ProbeRequest r;
  EXPECT_TRUE(is_live(r));
  r.sysroot = "/tmp/x";
  EXPECT_FALSE(is_live(r));
  r = {};
  r.from_snapshot = "snap.json";
  EXPECT_FALSE(is_live(r));
  r = {};
  r.hwloc_xml = "m.xml";
  EXPECT_FALSE(is_live(r));
}

TEST(DoctorTest, DirectIoIsNotTriedForAnotherMachinesDataDirectory) {
  topo::ProbeRequest r;
  r.sysroot = "/tmp/x";
  r.data_dir = "/raid";
  try_direct_io(r);
  EXPECT_FALSE(r.direct_io.has_value());
  EXPECT_TRUE(r.direct_io_untried.empty());
}

TEST(DoctorTest, DirectIoIsTriedInALiveDataDirectory) {
  const acco::testing::DiskTempDir dir;
  topo::ProbeRequest r;
  r.data_dir = dir.path().string();
  try_direct_io(r);
  EXPECT_TRUE(r.direct_io.has_value() || !r.direct_io_untried.empty());
}

}  // namespace
}  // namespace acco::doctor
