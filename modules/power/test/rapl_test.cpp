// The RAPL source and actuator over generated sysroots in the kernel's powercap and hwmon
// layout: package zones as devices, power from the energy counter across a wrap, limits that
// read back after the actuator writes them, and each error the Actuator contract names.
#include "acco/power/rapl.hpp"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"

#include "sysroot_builder.hpp"

namespace acco::power {
namespace {

using acco::testing::IsOk;
using acco::testing::StatusIs;
using acco::testing::SysrootBuilder;
using acco::testing::TempDir;
using ::testing::AllOf;
using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;

constexpr std::int64_t kStart = 1'764'000'000'000'000'000;
constexpr std::int64_t kSecond = 1'000'000'000;
const std::string kPowercap = "sys/class/powercap/";
// intel_rapl's range of a 32-bit counter in 61 uJ units, as a Xeon reports it.
constexpr std::uint64_t kEnergyRangeUj = 262'143'328'850;

struct ZoneSpec {
  std::string name = "package-0";
  std::optional<std::uint64_t> energy_uj = 100'000'000;
  std::optional<std::uint64_t> limit_uw = 205'000'000;
  std::optional<std::uint64_t> max_power_uw = 205'000'000;
  std::optional<std::string> constraint_0_name = "long_term";
  std::string enabled = "1";
};

// One zone's files as intel_rapl writes them on Linux 6.8; a short-term constraint_1 too.
void zone(SysrootBuilder& b, const std::string& dir, const ZoneSpec& z) {
  const std::string p = kPowercap + dir + "/";
  b.file(p + "name", z.name + "\n");
  b.file(p + "enabled", z.enabled + "\n");
  b.file(p + "max_energy_range_uj", std::to_string(kEnergyRangeUj) + "\n");
  if (z.energy_uj) {
    b.file(p + "energy_uj", std::to_string(*z.energy_uj) + "\n");
  }
  if (z.constraint_0_name) {
    b.file(p + "constraint_0_name", *z.constraint_0_name + "\n");
  }
  if (z.limit_uw) {
    b.file(p + "constraint_0_power_limit_uw", std::to_string(*z.limit_uw) + "\n");
  }
  if (z.max_power_uw) {
    b.file(p + "constraint_0_max_power_uw", std::to_string(*z.max_power_uw) + "\n");
  }
  b.file(p + "constraint_0_time_window_us", "999424\n");
  b.file(p + "constraint_1_name", "short_term\n");
  b.file(p + "constraint_1_power_limit_uw", "246000000\n");
  b.file(p + "constraint_1_time_window_us", "2440\n");
}

void hwmon_sensor(SysrootBuilder& b, const std::string& dir, int n, const std::string& label,
                  int millidegrees, std::optional<int> max = {}, std::optional<int> crit = {}) {
  const std::string p = "sys/class/hwmon/" + dir + "/temp" + std::to_string(n);
  b.file(p + "_label", label + "\n");
  b.file(p + "_input", std::to_string(millidegrees) + "\n");
  if (max) {
    b.file(p + "_max", std::to_string(*max) + "\n");
  }
  if (crit) {
    b.file(p + "_crit", std::to_string(*crit) + "\n");
  }
}

// A two-socket Xeon: two packages with core and dram sub-zones, the MMIO view of package 0,
// psys, and one coretemp hwmon per package.
void intel_two_packages(SysrootBuilder& b) {
  b.file(kPowercap + "intel-rapl/enabled", "1\n");
  zone(b, "intel-rapl:0", {});
  zone(b, "intel-rapl:0:0", {.name = "core", .energy_uj = 40'000'000});
  zone(b, "intel-rapl:0:1", {.name = "dram", .energy_uj = 30'000'000});
  zone(b, "intel-rapl:1", {.name = "package-1", .energy_uj = 200'000'000, .limit_uw = 150'000'000});
  zone(b, "intel-rapl:1:0", {.name = "dram", .energy_uj = 10'000'000});
  zone(b, "intel-rapl:2", {.name = "psys", .energy_uj = 5'000'000});
  zone(b, "intel-rapl-mmio:0", {.energy_uj = 7'000'000});
  b.file("sys/class/hwmon/hwmon0/name", "nvme\n");
  hwmon_sensor(b, "hwmon0", 1, "Composite", 41000);
  b.file("sys/class/hwmon/hwmon1/name", "coretemp\n");
  hwmon_sensor(b, "hwmon1", 1, "Package id 0", 52000, 86000, 96000);
  hwmon_sensor(b, "hwmon1", 2, "Core 0", 50000, 86000, 96000);
  b.file("sys/class/hwmon/hwmon2/name", "coretemp\n");
  hwmon_sensor(b, "hwmon2", 1, "Package id 1", 48500);
}

// An EPYC: the same intel-rapl names, temperature from k10temp's Tctl with no package number.
void amd_packages(SysrootBuilder& b, int packages) {
  for (int i = 0; i < packages; ++i) {
    const std::string n = std::to_string(i);
    zone(b, "intel-rapl:" + n, {.name = "package-" + n, .max_power_uw = 280'000'000});
    const std::string hwmon = "hwmon" + n;
    b.file("sys/class/hwmon/" + hwmon + "/name", "k10temp\n");
    hwmon_sensor(b, hwmon, 1, "Tctl", 61250 + i * 1000);
    hwmon_sensor(b, hwmon, 3, "Tccd1", 55000);
  }
}

// A sysroot and a source over it with a clock the test moves.
class Machine {
 public:
  explicit Machine(const std::function<void(SysrootBuilder&)>& build)
      : builder_(dir_.path() / "root") {
    build(builder_);
    auto fs = core::make_disk_fs(builder_.root().string());
    EXPECT_TRUE(fs.has_value()) << fs.error().message;
    fs_ = std::move(fs).value();
    source_ = make_rapl_source(*fs_, [this] { return now_; });
  }

  SysrootBuilder& builder() { return builder_; }
  [[nodiscard]] std::filesystem::path path(const std::string& relative) const {
    return builder_.root() / relative;
  }
  [[nodiscard]] std::string root() const { return builder_.root().string(); }
  void advance(std::int64_t nanos) { now_ += nanos; }
  SensorSource& source() { return *source_; }

  std::vector<DeviceSample> read() {
    auto r = source_->read();
    EXPECT_THAT(r, IsOk());
    return r.value_or(std::vector<DeviceSample>{});
  }

  [[nodiscard]] std::string content(const std::string& relative) const {
    return acco::testing::slurp(path(relative));
  }

 private:
  TempDir dir_;
  SysrootBuilder builder_;
  std::unique_ptr<core::Fs> fs_;
  std::int64_t now_ = kStart;
  std::unique_ptr<SensorSource> source_;
};

TEST(RaplSourceTest, EachTopLevelPackageZoneIsOneDeviceAndSubZonesPsysAndMmioAreNot) {
  Machine m(intel_two_packages);
  EXPECT_EQ(m.source().name(), "rapl");
  const auto samples = m.read();
  ASSERT_EQ(samples.size(), 2U);
  EXPECT_THAT(samples, ElementsAre(AllOf(Field(&DeviceSample::device, "package-0"),
                                         Field(&DeviceSample::uuid, "intel-rapl:0"),
                                         Field(&DeviceSample::model, "RAPL package"),
                                         Field(&DeviceSample::source, "rapl"),
                                         Field(&DeviceSample::time_unix_nanos, kStart)),
                                   AllOf(Field(&DeviceSample::device, "package-1"),
                                         Field(&DeviceSample::uuid, "intel-rapl:1"))));
}

TEST(RaplSourceTest, EnergyIsJoulesAndLimitsAreWattsFromTheLongTermConstraint) {
  Machine m(intel_two_packages);
  const auto samples = m.read();
  ASSERT_EQ(samples.size(), 2U);
  const auto& p0 = samples[0];
  EXPECT_THAT(p0.energy_joules, Optional(DoubleEq(100.0)));
  EXPECT_THAT(p0.power_limit_requested_watts, Optional(DoubleEq(205.0)));
  EXPECT_THAT(p0.power_limit_enforced_watts, Optional(DoubleEq(205.0)));
  EXPECT_THAT(p0.power_limit_max_watts, Optional(DoubleEq(205.0)));
  EXPECT_THAT(p0.power_limit_min_watts, Optional(DoubleEq(205.0 * kRaplFloorShareOfMax)));
  EXPECT_THAT(p0.power_limit_default_watts, Optional(DoubleEq(205.0)));
  EXPECT_EQ(p0.dropped_readings, 0);
  EXPECT_THAT(samples[1].energy_joules, Optional(DoubleEq(200.0)));
  EXPECT_THAT(samples[1].power_limit_requested_watts, Optional(DoubleEq(150.0)));
}

TEST(RaplSourceTest, ZonesAreInNumericOrderSoIntelRapl10FollowsIntelRapl2) {
  Machine m([](SysrootBuilder& b) {
    for (const int n : {10, 2, 1, 0}) {
      zone(b, "intel-rapl:" + std::to_string(n), {.name = "package-" + std::to_string(n)});
    }
  });
  const auto samples = m.read();
  std::vector<std::string> uuids;
  for (const auto& s : samples) {
    uuids.push_back(s.uuid);
  }
  EXPECT_THAT(uuids, ElementsAre("intel-rapl:0", "intel-rapl:1", "intel-rapl:2", "intel-rapl:10"));
}

TEST(RaplSourceTest, CoretempPackageIdNIsTheTemperatureOfPackageNWithItsThresholds) {
  Machine m(intel_two_packages);
  const auto samples = m.read();
  ASSERT_EQ(samples.size(), 2U);
  EXPECT_THAT(samples[0].temperature_gpu_celsius, Optional(DoubleEq(52.0)));
  EXPECT_THAT(samples[0].threshold_gpu_max_celsius, Optional(DoubleEq(86.0)));
  EXPECT_THAT(samples[0].threshold_slowdown_celsius, Optional(DoubleEq(96.0)));
  EXPECT_THAT(samples[1].temperature_gpu_celsius, Optional(DoubleEq(48.5)));
  EXPECT_EQ(samples[1].threshold_gpu_max_celsius, std::nullopt);
  EXPECT_EQ(samples[1].threshold_slowdown_celsius, std::nullopt);
}

TEST(RaplSourceTest, TheFirstReadHasNoPowerAndTheNextIsTheEnergyDeltaOverTheTimeDelta) {
  Machine m(intel_two_packages);
  const auto first = m.read();
  ASSERT_EQ(first.size(), 2U);
  EXPECT_EQ(first[0].power_watts, std::nullopt);
  EXPECT_EQ(first[1].power_watts, std::nullopt);
  m.builder().file(kPowercap + "intel-rapl:0/energy_uj", "500000000\n");
  m.builder().file(kPowercap + "intel-rapl:1/energy_uj", "250000000\n");
  m.advance(2 * kSecond);
  const auto second = m.read();
  ASSERT_EQ(second.size(), 2U);
  EXPECT_THAT(second[0].power_watts, Optional(DoubleEq(200.0)));
  EXPECT_THAT(second[1].power_watts, Optional(DoubleEq(25.0)));
  EXPECT_THAT(second[0].energy_joules, Optional(DoubleEq(500.0)));
}

TEST(RaplSourceTest, ACounterThatWentBackWrappedOnceAtMaxEnergyRange) {
  Machine m([](SysrootBuilder& b) { zone(b, "intel-rapl:0", {.energy_uj = 262'143'000'000}); });
  ASSERT_EQ(m.read().size(), 1U);
  // 328'850 uJ to the top of the range and 671'150 uJ after it: 1 J in half a second.
  m.builder().file(kPowercap + "intel-rapl:0/energy_uj", "671150\n");
  m.advance(kSecond / 2);
  const auto samples = m.read();
  ASSERT_EQ(samples.size(), 1U);
  EXPECT_THAT(samples[0].power_watts, Optional(DoubleEq(2.0)));
  EXPECT_THAT(samples[0].energy_joules, Optional(DoubleEq(0.67115)));
}

TEST(RaplSourceTest, ACounterThatWentBackWithoutAKnownRangeGivesNoPower) {
  Machine m([](SysrootBuilder& b) {
    zone(b, "intel-rapl:0", {.energy_uj = 262'143'000'000});
    b.remove(kPowercap + "intel-rapl:0/max_energy_range_uj");
  });
  ASSERT_EQ(m.read().size(), 1U);
  m.builder().file(kPowercap + "intel-rapl:0/energy_uj", "671150\n");
  m.advance(kSecond);
  const auto samples = m.read();
  ASSERT_EQ(samples.size(), 1U);
  EXPECT_EQ(samples[0].power_watts, std::nullopt);
  EXPECT_THAT(samples[0].energy_joules, Optional(DoubleEq(0.67115)));
}

TEST(RaplSourceTest, AReadAtTheSameInstantGivesNoPower) {
  Machine m([](SysrootBuilder& b) { zone(b, "intel-rapl:0", {}); });
  ASSERT_EQ(m.read().size(), 1U);
  m.builder().file(kPowercap + "intel-rapl:0/energy_uj", "200000000\n");
  const auto samples = m.read();
  ASSERT_EQ(samples.size(), 1U);
  EXPECT_EQ(samples[0].power_watts, std::nullopt);
}

// Since Linux 5.10 energy_uj is mode 0400. Root reads a mode-0400 file anyway, so the test makes
// the read fail the way any unprivileged reader sees it fail: the path cannot be read as a file.
TEST(RaplSourceTest, AZoneWhoseEnergyCannotBeReadStillGivesItsLimits) {
  Machine m([](SysrootBuilder& b) {
    zone(b, "intel-rapl:0", {.energy_uj = std::nullopt});
    std::filesystem::create_directory(b.root() / kPowercap / "intel-rapl:0/energy_uj");
  });
  for (int read = 0; read < 2; ++read) {
    const auto samples = m.read();
    ASSERT_EQ(samples.size(), 1U);
    EXPECT_EQ(samples[0].energy_joules, std::nullopt);
    EXPECT_EQ(samples[0].power_watts, std::nullopt);
    EXPECT_THAT(samples[0].power_limit_requested_watts, Optional(DoubleEq(205.0)));
    EXPECT_THAT(samples[0].power_limit_max_watts, Optional(DoubleEq(205.0)));
    EXPECT_EQ(samples[0].dropped_readings, 0);
    m.advance(kSecond);
  }
}

TEST(RaplSourceTest, AFileThatHoldsNoNumberIsLeftOutAndCountedAsDropped) {
  Machine m([](SysrootBuilder& b) {
    zone(b, "intel-rapl:0", {});
    b.file(kPowercap + "intel-rapl:0/energy_uj", "lots\n");
  });
  const auto samples = m.read();
  ASSERT_EQ(samples.size(), 1U);
  EXPECT_EQ(samples[0].energy_joules, std::nullopt);
  EXPECT_EQ(samples[0].dropped_readings, 1);
  EXPECT_THAT(samples[0].power_limit_requested_watts, Optional(DoubleEq(205.0)));
}

TEST(RaplSourceTest, AZeroMaximumIsUnknownSoThereIsNoMaximumAndNoFloor) {
  Machine m([](SysrootBuilder& b) { zone(b, "intel-rapl:0", {.max_power_uw = 0}); });
  const auto samples = m.read();
  ASSERT_EQ(samples.size(), 1U);
  EXPECT_EQ(samples[0].power_limit_max_watts, std::nullopt);
  EXPECT_EQ(samples[0].power_limit_min_watts, std::nullopt);
  EXPECT_THAT(samples[0].power_limit_requested_watts, Optional(DoubleEq(205.0)));
}

TEST(RaplSourceTest, AConstraintZeroThatIsNotLongTermGivesNoLimit) {
  Machine m(
      [](SysrootBuilder& b) { zone(b, "intel-rapl:0", {.constraint_0_name = "short_term"}); });
  const auto samples = m.read();
  ASSERT_EQ(samples.size(), 1U);
  EXPECT_EQ(samples[0].power_limit_requested_watts, std::nullopt);
  EXPECT_EQ(samples[0].power_limit_enforced_watts, std::nullopt);
  EXPECT_EQ(samples[0].power_limit_max_watts, std::nullopt);
  EXPECT_EQ(samples[0].power_limit_default_watts, std::nullopt);
  EXPECT_THAT(samples[0].energy_joules, Optional(DoubleEq(100.0)));
}

TEST(RaplSourceTest, AConstraintWithoutANameIsTakenAsLongTermAsOnOldKernels) {
  Machine m(
      [](SysrootBuilder& b) { zone(b, "intel-rapl:0", {.constraint_0_name = std::nullopt}); });
  const auto samples = m.read();
  ASSERT_EQ(samples.size(), 1U);
  EXPECT_THAT(samples[0].power_limit_requested_watts, Optional(DoubleEq(205.0)));
}

TEST(RaplSourceTest, ADisabledZoneHasARequestedLimitButNoEnforcedOne) {
  Machine m([](SysrootBuilder& b) { zone(b, "intel-rapl:0", {.enabled = "0"}); });
  const auto samples = m.read();
  ASSERT_EQ(samples.size(), 1U);
  EXPECT_THAT(samples[0].power_limit_requested_watts, Optional(DoubleEq(205.0)));
  EXPECT_EQ(samples[0].power_limit_enforced_watts, std::nullopt);
}

TEST(RaplSourceTest, TheDefaultLimitIsTheLimitSeenAtTheFirstReadEvenAfterItChanges) {
  Machine m([](SysrootBuilder& b) { zone(b, "intel-rapl:0", {}); });
  ASSERT_EQ(m.read().size(), 1U);
  m.builder().file(kPowercap + "intel-rapl:0/constraint_0_power_limit_uw", "120000000\n");
  m.advance(kSecond);
  const auto samples = m.read();
  ASSERT_EQ(samples.size(), 1U);
  EXPECT_THAT(samples[0].power_limit_requested_watts, Optional(DoubleEq(120.0)));
  EXPECT_THAT(samples[0].power_limit_default_watts, Optional(DoubleEq(205.0)));
}

TEST(RaplSourceTest, AmdK10tempTctlIsPackageZerosTemperatureOnAOneSocketMachine) {
  Machine m([](SysrootBuilder& b) { amd_packages(b, 1); });
  const auto samples = m.read();
  ASSERT_EQ(samples.size(), 1U);
  EXPECT_EQ(samples[0].device, "package-0");
  EXPECT_THAT(samples[0].temperature_gpu_celsius, Optional(DoubleEq(61.25)));
  EXPECT_THAT(samples[0].power_limit_max_watts, Optional(DoubleEq(280.0)));
  EXPECT_THAT(samples[0].power_limit_min_watts, Optional(DoubleEq(70.0)));
}

TEST(RaplSourceTest, AmdK10tempGivesNoTemperatureWhenThereAreTwoPackages) {
  Machine m([](SysrootBuilder& b) { amd_packages(b, 2); });
  const auto samples = m.read();
  ASSERT_EQ(samples.size(), 2U);
  EXPECT_EQ(samples[0].temperature_gpu_celsius, std::nullopt);
  EXPECT_EQ(samples[1].temperature_gpu_celsius, std::nullopt);
}

TEST(RaplSourceTest, AnOldK10tempWithoutLabelsHasTctlAsTemp1) {
  Machine m([](SysrootBuilder& b) {
    zone(b, "intel-rapl:0", {});
    b.file("sys/class/hwmon/hwmon0/name", "k10temp\n");
    b.file("sys/class/hwmon/hwmon0/temp1_input", "47000\n");
    b.file("sys/class/hwmon/hwmon0/temp1_max", "70000\n");
  });
  const auto samples = m.read();
  ASSERT_EQ(samples.size(), 1U);
  EXPECT_THAT(samples[0].temperature_gpu_celsius, Optional(DoubleEq(47.0)));
  EXPECT_THAT(samples[0].threshold_gpu_max_celsius, Optional(DoubleEq(70.0)));
}

TEST(RaplSourceTest, AMachineWithoutPowercapHasNoDevices) {
  Machine m([](SysrootBuilder& b) { b.file("sys/class/hwmon/hwmon0/name", "coretemp\n"); });
  EXPECT_THAT(m.read(), IsEmpty());
}

TEST(RaplSourceTest, APowercapDirectoryThatCannotBeListedFailsTheRead) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "running as root, which lists a mode-0000 directory anyway";
  }
  Machine m([](SysrootBuilder& b) {
    zone(b, "intel-rapl:0", {});
    std::filesystem::permissions(b.root() / kPowercap, std::filesystem::perms::none);
  });
  EXPECT_THAT(m.source().read(), StatusIs(Errc::kUnavailable, HasSubstr("rapl")));
  std::filesystem::permissions(m.path(kPowercap), std::filesystem::perms::owner_all);
}

// The actuator writes into the same sysroot the source reads.
class RaplActuatorTest : public ::testing::Test {
 protected:
  RaplActuatorTest()
      : machine_(intel_two_packages), actuator_(make_rapl_actuator(machine_.root())) {}

  [[nodiscard]] std::string limit_file(const std::string& zone) const {
    return machine_.content(kPowercap + zone + "/constraint_0_power_limit_uw");
  }

  Machine machine_;
  std::unique_ptr<Actuator> actuator_;
};

TEST_F(RaplActuatorTest, ItsNameIsRapl) {
  EXPECT_EQ(actuator_->name(), "rapl");
}

TEST_F(RaplActuatorTest, ALimitWrittenInWattsReadsBackThroughTheSourceInWatts) {
  EXPECT_THAT(actuator_->set_power_limit("intel-rapl:1", 120.5), IsOk());
  EXPECT_EQ(limit_file("intel-rapl:1"), "120500000\n");
  const auto samples = machine_.read();
  ASSERT_EQ(samples.size(), 2U);
  EXPECT_THAT(samples[1].power_limit_requested_watts, Optional(DoubleEq(120.5)));
  EXPECT_THAT(samples[1].power_limit_enforced_watts, Optional(DoubleEq(120.5)));
  EXPECT_THAT(samples[0].power_limit_requested_watts, Optional(DoubleEq(205.0)));
}

TEST_F(RaplActuatorTest, TheLimitsAtTheFloorAndAtTheMaximumAreAccepted) {
  EXPECT_THAT(actuator_->set_power_limit("intel-rapl:0", 205.0 * kRaplFloorShareOfMax), IsOk());
  EXPECT_EQ(limit_file("intel-rapl:0"), "51250000\n");
  EXPECT_THAT(actuator_->set_power_limit("intel-rapl:0", 205.0), IsOk());
  EXPECT_EQ(limit_file("intel-rapl:0"), "205000000\n");
}

TEST_F(RaplActuatorTest, RestoringTheDefaultTheSourceReportedPutsBackTheLimitFoundAtStart) {
  const auto before = machine_.read();
  ASSERT_EQ(before.size(), 2U);
  ASSERT_THAT(actuator_->set_power_limit("intel-rapl:0", 100.0), IsOk());
  machine_.advance(kSecond);
  const auto lowered = machine_.read();
  ASSERT_EQ(lowered.size(), 2U);
  ASSERT_TRUE(lowered[0].power_limit_default_watts.has_value());
  EXPECT_THAT(actuator_->set_power_limit("intel-rapl:0", *lowered[0].power_limit_default_watts),
              IsOk());
  EXPECT_EQ(limit_file("intel-rapl:0"), "205000000\n");
}

TEST_F(RaplActuatorTest, AnUnknownZoneIsNotFound) {
  EXPECT_THAT(actuator_->set_power_limit("intel-rapl:7", 100.0),
              StatusIs(Errc::kNotFound, HasSubstr("intel-rapl:7")));
}

TEST_F(RaplActuatorTest, SubZonesPsysAndPathsThatLeaveThePowercapDirectoryAreNotFound) {
  for (const char* uuid : {"intel-rapl:0:0", "intel-rapl:2", "intel-rapl-mmio:0",
                           "intel-rapl:0/../intel-rapl:1", "../../..", "", "GPU-0"}) {
    EXPECT_THAT(actuator_->set_power_limit(uuid, 100.0), StatusIs(Errc::kNotFound)) << uuid;
  }
  EXPECT_EQ(limit_file("intel-rapl:0:0"), "205000000\n");
}

TEST_F(RaplActuatorTest, ALimitBelowTheFloorOrAboveTheMaximumIsRejectedAndNothingIsWritten) {
  for (const double watts : {51.0, 205.5, 0.0, -10.0, std::nan(""), HUGE_VAL}) {
    EXPECT_THAT(actuator_->set_power_limit("intel-rapl:0", watts),
                StatusIs(Errc::kInvalidArgument, AllOf(HasSubstr("intel-rapl:0"),
                                                       HasSubstr("constraint_0_power_limit_uw"))))
        << watts;
  }
  EXPECT_EQ(limit_file("intel-rapl:0"), "205000000\n");
}

TEST_F(RaplActuatorTest, AZoneWithoutAMaximumCannotBeBoundedAndIsUnsupported) {
  machine_.builder().remove(kPowercap + "intel-rapl:0/constraint_0_max_power_uw");
  EXPECT_THAT(actuator_->set_power_limit("intel-rapl:0", 100.0),
              StatusIs(Errc::kUnsupported, HasSubstr("constraint_0_max_power_uw")));
  machine_.builder().file(kPowercap + "intel-rapl:0/constraint_0_max_power_uw", "0\n");
  EXPECT_THAT(actuator_->set_power_limit("intel-rapl:0", 100.0),
              StatusIs(Errc::kUnsupported, HasSubstr("constraint_0_max_power_uw")));
}

TEST_F(RaplActuatorTest, AConstraintZeroThatIsNotLongTermIsUnsupported) {
  machine_.builder().file(kPowercap + "intel-rapl:0/constraint_0_name", "short_term\n");
  EXPECT_THAT(actuator_->set_power_limit("intel-rapl:0", 100.0),
              StatusIs(Errc::kUnsupported, HasSubstr("constraint_0_name")));
  EXPECT_EQ(limit_file("intel-rapl:0"), "205000000\n");
}

TEST_F(RaplActuatorTest, AZoneWithoutALimitFileIsUnsupported) {
  machine_.builder().remove(kPowercap + "intel-rapl:0/constraint_0_power_limit_uw");
  EXPECT_THAT(actuator_->set_power_limit("intel-rapl:0", 100.0),
              StatusIs(Errc::kUnsupported, HasSubstr("constraint_0_power_limit_uw")));
  EXPECT_FALSE(std::filesystem::exists(
      machine_.path(kPowercap + "intel-rapl:0/constraint_0_power_limit_uw")));
}

TEST_F(RaplActuatorTest, ALimitFileThatIsNotWritableIsUnavailable) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "running as root, which writes a mode-0444 file anyway (CAP_DAC_OVERRIDE)";
  }
  std::filesystem::permissions(
      machine_.path(kPowercap + "intel-rapl:0/constraint_0_power_limit_uw"),
      std::filesystem::perms::owner_read | std::filesystem::perms::group_read |
          std::filesystem::perms::others_read);
  EXPECT_THAT(actuator_->set_power_limit("intel-rapl:0", 100.0),
              StatusIs(Errc::kUnavailable,
                       AllOf(HasSubstr("intel-rapl:0"), HasSubstr("constraint_0_power_limit_uw"),
                             HasSubstr("not root"))));
}

// A write that fails for any reader, root included: the attribute is a directory (EISDIR).
void make_limit_unwritable(Machine& m, const std::string& zone) {
  const std::string file = kPowercap + zone + "/constraint_0_power_limit_uw";
  m.builder().remove(file);
  std::filesystem::create_directory(m.path(file));
}

TEST_F(RaplActuatorTest, ADisabledZoneThatRefusesTheWriteIsUnavailable) {
  machine_.builder().file(kPowercap + "intel-rapl:0/enabled", "0\n");
  make_limit_unwritable(machine_, "intel-rapl:0");
  EXPECT_THAT(actuator_->set_power_limit("intel-rapl:0", 100.0),
              StatusIs(Errc::kUnavailable,
                       AllOf(HasSubstr("intel-rapl:0"), HasSubstr("constraint_0_power_limit_uw"),
                             HasSubstr("enabled = 0"))));
}

TEST_F(RaplActuatorTest, AnyOtherFailedWriteIsADeviceError) {
  make_limit_unwritable(machine_, "intel-rapl:0");
  EXPECT_THAT(actuator_->set_power_limit("intel-rapl:0", 100.0),
              StatusIs(Errc::kDeviceError,
                       AllOf(HasSubstr("intel-rapl:0"), HasSubstr("constraint_0_power_limit_uw"))));
}

TEST_F(RaplActuatorTest, ADisabledZoneThatTakesTheWriteIsNotAnError) {
  machine_.builder().file(kPowercap + "intel-rapl:0/enabled", "0\n");
  EXPECT_THAT(actuator_->set_power_limit("intel-rapl:0", 100.0), IsOk());
  EXPECT_EQ(limit_file("intel-rapl:0"), "100000000\n");
}

TEST_F(RaplActuatorTest, SmClocksAreUnsupportedBecauseRaplZonesHaveNone) {
  EXPECT_THAT(actuator_->lock_sm_clocks("intel-rapl:0", 1e9, 2e9),
              StatusIs(Errc::kUnsupported, HasSubstr("RAPL zones have no SM clocks")));
  EXPECT_THAT(actuator_->unlock_sm_clocks("intel-rapl:0"),
              StatusIs(Errc::kUnsupported, HasSubstr("RAPL zones have no SM clocks")));
}

}  // namespace
}  // namespace acco::power
