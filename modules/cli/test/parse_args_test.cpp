#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/cli/app.hpp"
#include "acco/device/cuda_backend.hpp"
#include "acco/testing/matchers.hpp"

#include "command_spec.hpp"
#include "machine_flags.hpp"
#include "schedule_command.hpp"

namespace acco::cli {
namespace {

using ::acco::testing::HasValue;
using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::Not;

Getenv env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(DurationFlagTest, ServeRecordAndPowerRunShareOnePositiveDuration) {
  EXPECT_THAT(duration_flag("20s", "20s"), HasValue(std::chrono::duration<double>(20.0)));
  EXPECT_THAT(duration_flag("1.5m", "2m"), HasValue(std::chrono::duration<double>(90.0)));
  for (const char* bad : {"", "0s", "-1s", "soon"}) {
    EXPECT_THAT(duration_flag(bad, "10m"),
                StatusIs(Errc::kUsage, "--duration: '" + std::string(bad) +
                                           "' is not a positive duration (e.g. 10m)"))
        << bad;
  }
}

TEST(ParseArgsTest, ProbeDefaultsToLiveRootAndText) {
  auto o = parse_args({"probe"}, env_of({}));
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->command, "probe");
  EXPECT_EQ(o->invocation.format, Format::kText);
  EXPECT_EQ(o->invocation.settings.get("sysroot"), "/");
  EXPECT_NE(o->runner, nullptr);
}

TEST(ParseArgsTest, FlagBeatsEnvironmentForSysroot) {
  // Directories that exist: a sysroot that does not is refused here (66, for every command).
  auto o = parse_args({"probe", "--sysroot", "/usr"}, env_of({{"ACCO_SYSROOT", "/etc"}}));
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->invocation.settings.get("sysroot"), "/usr");
  auto e = parse_args({"probe"}, env_of({{"ACCO_SYSROOT", "/etc"}}));
  ASSERT_THAT(e, IsOk());
  EXPECT_EQ(e->invocation.settings.get("sysroot"), "/etc");
  EXPECT_THAT(parse_args({"bench", "--sysroot", "/nonexistent/acco"}, env_of({})),
              StatusIs(Errc::kNotFound, HasSubstr("--sysroot '/nonexistent/acco': no such")));
}

TEST(ParseArgsTest, FailOnAcceptsWarningAndCriticalOnly) {
  EXPECT_THAT(parse_args({"probe", "--fail-on", "critical"}, env_of({})), IsOk());
  const core::Settings settings = parse_args({"probe"}, env_of({}))->invocation.settings;
  MachineFlags critical;
  critical.fail_on = "critical";
  EXPECT_THAT(machine_options(critical, settings),
              HasValue(Field(&MachineOptions::fail_on, topo::Severity::kCritical)));
  EXPECT_THAT(machine_options(MachineFlags{}, settings),
              HasValue(Field(&MachineOptions::fail_on, std::nullopt)));
  auto bad = parse_args({"probe", "--fail-on", "sometimes"}, env_of({}));
  EXPECT_THAT(bad, StatusIs(Errc::kUsage, HasSubstr("--fail-on")));
  EXPECT_THAT(parse_args({"probe", "--fail-on", "info"}, env_of({})), Not(IsOk()));
}

TEST(ParseArgsTest, UnknownFlagIsAnError) {
  auto o = parse_args({"probe", "--colour"}, env_of({}));
  EXPECT_THAT(o, StatusIs(Errc::kUsage));
}

TEST(ParseArgsTest, FromAndSnapshotCannotBeCombined) {
  EXPECT_THAT(parse_args({"probe", "--from", "a.json", "--snapshot", "b.json"}, env_of({})),
              StatusIs(Errc::kUsage, HasSubstr("--snapshot")));
  EXPECT_THAT(parse_args({"probe", "--from", "a.json", "--sysroot", "/usr"}, env_of({})),
              StatusIs(Errc::kUsage, HasSubstr("--sysroot")));
}

TEST(ParseArgsTest, BadNvmlModeIsRejected) {
  EXPECT_THAT(parse_args({"doctor", "--nvml", "maybe"}, env_of({})),
              StatusIs(Errc::kUsage, HasSubstr("auto, on, off")));
}

TEST(ParseArgsTest, NoSubcommandPrintsHelp) {
  auto o = parse_args({}, env_of({}));
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->command, "help");
  EXPECT_NE(o->help_text.find("probe"), std::string::npos);
}

TEST(ParseArgsTest, UsageErrorExitsWith64) {
  const auto outcome = run_command_line({"probe", "--nope"}, env_of({}));
  EXPECT_EQ(outcome.exit_code, kExitUsage);
  EXPECT_EQ(outcome.err.rfind("acco: ", 0), 0U);
  EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1);
}

TEST(ParseArgsTest, MissingSysrootExitsWith66AndOneLine) {
  const auto outcome = run_command_line({"probe", "--sysroot", "/does/not/exist"}, env_of({}));
  EXPECT_EQ(outcome.exit_code, kExitNoInput);
  EXPECT_NE(outcome.err.find("/does/not/exist"), std::string::npos);
  EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1);
}

TEST(ParseArgsTest, ScheduleDefaultsAreCholeskyOnFourHostGpusUnderDmda) {
  auto o = parse_args({"schedule"}, env_of({}));
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->command, "schedule");
  ASSERT_NE(o->as<ScheduleCommand>(), nullptr);
  const auto& s = o->as<ScheduleCommand>()->options();
  EXPECT_EQ(s.experiment.spec.kind, sched::WorkloadKind::kCholesky);
  EXPECT_EQ(s.experiment.spec.tiles, 8);
  EXPECT_EQ(s.experiment.spec.tasks, 1000);
  EXPECT_EQ(s.experiment.spec.kernels, "sirocco");
  EXPECT_EQ(s.experiment.spec.time_scale, 1);
  EXPECT_FALSE(s.devices.cuda);
  EXPECT_EQ(s.devices.host_devices, 4);
  EXPECT_TRUE(s.devices.kinds.empty());
  EXPECT_TRUE(s.devices.speeds.empty());
  EXPECT_EQ(s.devices.link.name, "pcie3x16");
  EXPECT_EQ(s.devices.memory_bytes, 0U);
  EXPECT_EQ(s.experiment.policies, std::vector<sched::PolicyKind>{sched::PolicyKind::kDmda});
  EXPECT_EQ(s.experiment.calibration_runs, 1);
  EXPECT_FALSE(s.experiment.sorted_decision);
  EXPECT_EQ(s.experiment.models, "");
  EXPECT_EQ(s.trace, "");
  EXPECT_EQ(o->invocation.format, Format::kText);
}

TEST(ParseArgsTest, ScheduleTakesEveryFlag) {
  auto o = parse_args({"schedule",    "--workload",
                       "random",      "--tiles",
                       "3",           "--tasks",
                       "50",          "--seed",
                       "7",           "--skew",
                       "8",           "--ccr",
                       "0.5",         "--alpha",
                       "2",           "--out-degree",
                       "4",           "--beta",
                       "1.5",         "--kernels",
                       "mirage",      "--time-scale",
                       "0.01",        "--devices",
                       "host:3",      "--kinds",
                       "cpu,gpu,gpu", "--speeds",
                       "1,2,8",       "--link",
                       "25GB/s,2us",  "--memory",
                       "512MiB",      "--policy",
                       "eager,heft",  "--calibrate",
                       "2",           "--sorted-decision",
                       "--models",    "m.json",
                       "--trace",     "t.json",
                       "--json",      "--tile-bytes",
                       "64KiB",       "--task-bytes",
                       "2MiB"},
                      env_of({}));
  ASSERT_THAT(o, IsOk());
  ASSERT_NE(o->as<ScheduleCommand>(), nullptr);
  const auto& s = o->as<ScheduleCommand>()->options();
  EXPECT_EQ(s.experiment.spec.kind, sched::WorkloadKind::kRandom);
  EXPECT_EQ(s.experiment.spec.tiles, 3);
  EXPECT_EQ(s.experiment.spec.tasks, 50);
  EXPECT_EQ(s.experiment.spec.seed, 7U);
  EXPECT_EQ(s.experiment.spec.skew, 8);
  EXPECT_EQ(s.experiment.spec.ccr, 0.5);
  EXPECT_EQ(s.experiment.spec.alpha, 2);
  EXPECT_EQ(s.experiment.spec.out_degree, 4);
  EXPECT_EQ(s.experiment.spec.beta, 1.5);
  EXPECT_EQ(s.experiment.spec.kernels, "mirage");
  EXPECT_EQ(s.experiment.spec.time_scale, 0.01);
  EXPECT_EQ(s.devices.host_devices, 3);
  EXPECT_EQ(s.devices.kinds, (std::vector<std::string>{"cpu", "gpu", "gpu"}));
  EXPECT_EQ(s.devices.speeds, (std::vector<double>{1, 2, 8}));
  EXPECT_EQ(s.devices.link.name, "25GB/s,2us");
  EXPECT_EQ(s.devices.memory_bytes, 512U << 20);
  EXPECT_EQ(s.experiment.spec.tile_bytes, 64U << 10);
  EXPECT_EQ(s.experiment.spec.task_bytes, 2U << 20);
  EXPECT_EQ(s.experiment.policies,
            (std::vector<sched::PolicyKind>{sched::PolicyKind::kEager, sched::PolicyKind::kHeft}));
  EXPECT_EQ(s.experiment.calibration_runs, 2);
  EXPECT_TRUE(s.experiment.sorted_decision);
  EXPECT_EQ(s.experiment.models, "m.json");
  EXPECT_EQ(s.trace, "t.json");
  EXPECT_EQ(o->invocation.format, Format::kJson);
}

TEST(ParseArgsTest, ScheduleOneKindOrSpeedAppliesToEveryDevice) {
  auto o = parse_args({"schedule", "--devices", "host:2", "--kinds", "cpu", "--speeds", "3"},
                      env_of({}));
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->as<ScheduleCommand>()->options().devices.kinds, std::vector<std::string>{"cpu"});
  EXPECT_EQ(o->as<ScheduleCommand>()->options().devices.speeds, std::vector<double>{3});
}

TEST(ParseArgsTest, SchedulePolicyAllIsEveryPolicyInOrder) {
  auto o = parse_args({"schedule", "--policy", "all"}, env_of({}));
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->as<ScheduleCommand>()->options().experiment.policies, sched::all_policies());
  EXPECT_EQ(o->as<ScheduleCommand>()->options().experiment.policies.size(), 6U);
}

TEST(ParseArgsTest, ScheduleDevicesCudaAndPlainHost) {
  auto cuda = parse_args({"schedule", "--devices", "cuda", "--speeds", "1,2"}, env_of({}));
  ASSERT_THAT(cuda, IsOk());
  EXPECT_TRUE(cuda->as<ScheduleCommand>()->options().devices.cuda);
  auto host = parse_args({"schedule", "--devices", "host"}, env_of({}));
  ASSERT_THAT(host, IsOk());
  EXPECT_FALSE(host->as<ScheduleCommand>()->options().devices.cuda);
  EXPECT_EQ(host->as<ScheduleCommand>()->options().devices.host_devices, 4);
}

struct BadSchedule {
  std::vector<std::string> args;
  std::string flag;  // the error must name it
};

class ScheduleBadValueTest : public ::testing::TestWithParam<BadSchedule> {};

TEST_P(ScheduleBadValueTest, IsAOneLineUsageErrorNamingTheFlag) {
  std::vector<std::string> args = {"schedule"};
  args.insert(args.end(), GetParam().args.begin(), GetParam().args.end());
  auto o = parse_args(args, env_of({}));
  ASSERT_THAT(o, StatusIs(Errc::kUsage, HasSubstr(GetParam().flag)));
  EXPECT_EQ(o.error().message.find('\n'), std::string::npos) << o.error().message;
  const auto outcome = run_command_line(args, env_of({}));
  EXPECT_EQ(outcome.exit_code, kExitUsage);
  EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << outcome.err;
}

INSTANTIATE_TEST_SUITE_P(
    Values, ScheduleBadValueTest,
    ::testing::Values(
        BadSchedule{{"--workload", "qr"}, "--workload"}, BadSchedule{{"--tiles", "0"}, "--tiles"},
        BadSchedule{{"--tiles", "101"}, "--tiles"}, BadSchedule{{"--tiles", "many"}, "--tiles"},
        BadSchedule{{"--tasks", "0"}, "--tasks"}, BadSchedule{{"--seed", "x"}, "--seed"},
        BadSchedule{{"--skew", "0.5"}, "--skew"}, BadSchedule{{"--ccr", "-1"}, "--ccr"},
        BadSchedule{{"--alpha", "0"}, "--alpha"},
        BadSchedule{{"--out-degree", "0"}, "--out-degree"}, BadSchedule{{"--beta", "2"}, "--beta"},
        BadSchedule{{"--kernels", "fast"}, "--kernels"},
        BadSchedule{{"--time-scale", "0"}, "--time-scale"},
        BadSchedule{{"--time-scale", "inf"}, "--time-scale"},
        BadSchedule{{"--devices", "host:0"}, "--devices"},
        BadSchedule{{"--devices", "host:65"}, "--devices"},
        BadSchedule{{"--devices", "tpu"}, "--devices"},
        BadSchedule{{"--kinds", "cpu,gpu"}, "--kinds"}, BadSchedule{{"--kinds", "fpga"}, "--kinds"},
        BadSchedule{{"--devices", "cuda", "--kinds", "gpu"}, "--kinds"},
        BadSchedule{{"--speeds", "1,2,3"}, "--speeds"}, BadSchedule{{"--speeds", "0"}, "--speeds"},
        BadSchedule{{"--speeds", "1,-2,1,1"}, "--speeds"},
        BadSchedule{{"--speeds", "fast"}, "--speeds"},
        BadSchedule{{"--speeds", "1e-308"}, "--speeds"},  // was a crash (infinite costs)
        BadSchedule{{"--speeds", "1e4"}, "--speeds"},
        BadSchedule{{"--time-scale", "1e300"}, "--time-scale"},
        BadSchedule{{"--skew", "1e308"}, "--skew"}, BadSchedule{{"--ccr", "1e300"}, "--ccr"},
        BadSchedule{{"--alpha", "1e300"}, "--alpha"}, BadSchedule{{"--link", "pcie9x99"}, "--link"},
        BadSchedule{{"--devices", "cuda", "--link", "pcie4x16"}, "--link"},
        BadSchedule{{"--memory", "lots"}, "--memory"},
        BadSchedule{{"--tile-bytes", "big"}, "--tile-bytes"},
        BadSchedule{{"--tile-bytes", "2TiB"}, "--tile-bytes"},
        BadSchedule{{"--task-bytes", "0"}, "--task-bytes"},
        BadSchedule{{"--memory", "0"}, "--memory"}, BadSchedule{{"--policy", "fifo"}, "--policy"},
        BadSchedule{{"--policy", "dmda,dmda"}, "--policy"},
        BadSchedule{{"--policy", "all,dmda"}, "--policy"},
        BadSchedule{{"--calibrate", "-1"}, "--calibrate"},
        BadSchedule{{"--calibrate", "101"}, "--calibrate"}));

// An empty value used to read as the flag not given (a robustness sweep: `bench --collective ""`
// ran the whole transfer suite, `serve --duration ""` ran for ever).
TEST(ParseArgsTest, AnEmptyValueIsAUsageErrorNamingTheFlag) {
  EXPECT_THAT(parse_args({"bench", "--collective", ""}, env_of({})),
              StatusIs(Errc::kUsage, HasSubstr("--collective: empty value")));
  EXPECT_THAT(parse_args({"serve", "--duration="}, env_of({})),
              StatusIs(Errc::kUsage, HasSubstr("--duration: empty value")));
  EXPECT_THAT(parse_args({"probe", "--from", ""}, env_of({})),
              StatusIs(Errc::kUsage, HasSubstr("--from: empty value")));
}

TEST(ParseArgsTest, BenchFlagsAreCheckedWhereTheyAreParsed) {
  EXPECT_THAT(parse_args({"bench", "--backend", "quantum"}, env_of({})),
              StatusIs(Errc::kUsage, "--backend: 'quantum' is not one of auto, host, cuda"));
  EXPECT_THAT(parse_args({"bench", "--cases", "nothing*"}, env_of({})),
              StatusIs(Errc::kUsage, "--cases: no case matches (see acco bench --list)"));
  EXPECT_THAT(parse_args({"bench", "--bytes", "1KiB"}, env_of({})),
              StatusIs(Errc::kUsage, HasSubstr("--bytes")));
  EXPECT_THAT(parse_args({"bench", "--link", "pcie9x99"}, env_of({})),
              StatusIs(Errc::kUsage, HasSubstr("--link")));
  // --list needs none of the measurement's flags.
  EXPECT_THAT(parse_args({"bench", "--list", "--bytes", "1KiB"}, env_of({})), IsOk());
}

// A flag that only means something beside another was accepted alone and did nothing (a
// robustness sweep: `bench --min-bytes 1MiB` ran the transfer suite).
TEST(ParseArgsTest, AFlagWithoutTheOneItBelongsToIsAUsageError) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"bench", "--min-bytes", "1MiB"}, "--min-bytes requires --collective"},
      {{"bench", "--save-fusion"}, "--save-fusion requires --collective"},
      {{"bench", "--nccl-timeout", "5s"}, "--nccl-timeout requires --collective"},
      {{"bench", "-e", "1MiB"}, "--max-bytes requires --collective"},
      {{"bench", "--collective", "allreduce", "--bytes", "1MiB"}, "--bytes excludes --collective"},
      {{"schedule", "--serve-interval", "50ms"}, "--serve-interval requires --serve"},
      {{"schedule", "--governor", "off"}, "--governor requires --simulate-thermal"},
      {{"schedule", "--cooling", "2"}, "--cooling requires --simulate-thermal"},
      {{"schedule", "--simulate-thermal", "--governor", "off,thermal,off"},
       "--governor: 'off' is given twice"},
      {{"schedule", "--dispatch", "locality"}, "--dispatch requires --distributed"},
      {{"schedule", "--distributed", "--hang-after", "3"}, "--hang-after requires --hang-rank"},
      {{"serve", "--mode", "energy"}, "--mode requires --governor"},
      {{"serve", "--state-file", "s.json"}, "--state-file requires --governor"},
  };
  for (const auto& [args, message] : cases) {
    EXPECT_THAT(parse_args(args, env_of({})), StatusIs(Errc::kUsage, HasSubstr(message)))
        << args[1];
  }
  // The same flags with what they belong to; nccl-tests' short names; --quick for a short sweep.
  EXPECT_THAT(parse_args({"bench", "--collective", "allreduce", "-b", "8", "-e", "1MiB", "-f", "4",
                          "-n", "3", "-w", "1"},
                         env_of({})),
              IsOk());
  EXPECT_THAT(parse_args({"bench", "--collective", "allreduce", "--quick"}, env_of({})), IsOk());
  EXPECT_THAT(parse_args({"serve", "--governor", "--mode", "energy"}, env_of({})), IsOk());
  EXPECT_THAT(parse_args({"power", "run", "--simulate", "1", "--mode", "energy"}, env_of({})),
              IsOk());
  EXPECT_THAT(
      parse_args({"schedule", "--simulate-thermal", "--governor", "off,cap:200"}, env_of({})),
      IsOk());
}

TEST(ExitCodeTest, EveryErrorCodeHasItsExitCode) {
  const auto code = [](Errc c) { return exit_code_for(Error{c, "x"}); };
  EXPECT_EQ(code(Errc::kUsage), kExitUsage);
  EXPECT_EQ(code(Errc::kInvalidArgument), kExitDataError);
  EXPECT_EQ(code(Errc::kNotFound), kExitNoInput);
  EXPECT_EQ(code(Errc::kUnavailable), kExitUnavailable);
  EXPECT_EQ(code(Errc::kUnsupported), kExitUnavailable);
  EXPECT_EQ(code(Errc::kDeviceError), kExitUnavailable);
  EXPECT_EQ(code(Errc::kInternal), kExitInternal);
  EXPECT_EQ(code(Errc::kCannotWrite), kExitCantCreate);
}

TEST(ParseArgsTest, ScheduleWithCudaUnavailableExits69WithOneLine) {
  // This test machine has no GPU; a machine with one runs the schedule instead.
  if (auto cuda = device::make_cuda_backend(); cuda && !(*cuda)->devices().empty()) {
    GTEST_SKIP() << "a GPU is present";
  }
  const auto outcome = run_command_line({"schedule", "--devices", "cuda"}, env_of({}));
  EXPECT_EQ(outcome.exit_code, kExitUnavailable);
  EXPECT_NE(outcome.err.find("--devices cuda"), std::string::npos) << outcome.err;
  EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << outcome.err;
}

}  // namespace
}  // namespace acco::cli
