#include "acco/monitor/thermal_experiment.hpp"

#include <chrono>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/device/host_backend.hpp"
#include "acco/monitor/schedule_run.hpp"
#include "acco/sched/experiment_report.hpp"
#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::monitor {
namespace {

using ::acco::testing::HasValue;
using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::StartsWith;

sched::ExperimentDevices rig_devices(int count) {
  sched::ExperimentDevices d;
  device::HostBackendOptions host;
  host.devices = count;
  auto backend = device::make_host_backend(host);
  EXPECT_THAT(backend, IsOk());
  d.backend = std::move(*backend);
  d.devices = d.backend->devices();
  d.models.assign(d.devices.size(), sched::DeviceModel{});
  return d;
}

// Every eager and dmda run of a 3x3 tiled Cholesky, with the firmware alone and with the thermal
// governor, on two devices of which the second is poorly cooled.
ThermalExperimentOptions two_by_two() {
  ThermalExperimentOptions o;
  o.experiment.spec.tiles = 3;
  o.experiment.policies = {sched::PolicyKind::kEager, sched::PolicyKind::kDmda};
  o.experiment.calibration_runs = 0;
  o.time_scale = 1000;
  o.cooling = {1, 2};
  power::GovernorOptions thermal;
  EXPECT_THAT(power::parse_governor_mode("thermal", thermal), IsOk());
  o.governors = {{"off", std::nullopt}, {"thermal", thermal}};
  return o;
}

sched::Workload thermal_workload(const ThermalExperimentOptions& o,
                                 const sched::ExperimentDevices& d) {
  auto w = sched::make_workload(o.experiment.spec, d.models);
  EXPECT_THAT(w, IsOk());
  return w.value_or(sched::Workload{});
}

TEST(RunThermalExperiment, EveryPolicyRunsOncePerGovernorSettingInThatOrder) {
  const auto devices = rig_devices(2);
  const auto o = two_by_two();
  std::vector<std::string> lines;
  auto t = run_thermal_experiment(thermal_workload(o, devices), devices, o,
                                  [&](std::string_view line) { lines.emplace_back(line); });
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->runs.size(), 4U);
  ASSERT_EQ(t->experiment.runs.size(), 4U);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < t->runs.size(); ++i) {
    names.push_back(t->runs[i].outcome.policy);
    EXPECT_EQ(t->experiment.runs[i].policy, t->runs[i].outcome.policy);
    EXPECT_EQ(t->runs[i].devices.size(), 2U);
    EXPECT_EQ(t->runs[i].governor.has_value(), i % 2 == 1);
  }
  EXPECT_THAT(names, ElementsAre("eager/off", "eager/thermal", "dmda/off", "dmda/thermal"));
  ASSERT_EQ(lines.size(), 4U);
  EXPECT_EQ(lines[0], "[1/4] eager/off: 10 task(s), 0 calibration run(s), thermal x1000");
  EXPECT_THAT(lines[3], StartsWith("[4/4] dmda/thermal: "));
  EXPECT_EQ(t->time_scale, 1000);
}

TEST(RunThermalExperiment, ABadScaleIsAnErrorNamingTheRun) {
  const auto devices = rig_devices(1);
  auto o = two_by_two();
  o.cooling = {1};
  o.time_scale = -1;
  auto t = run_thermal_experiment(thermal_workload(o, devices), devices, o);
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().code, Errc::kInvalidArgument);
  EXPECT_THAT(t.error().message, StartsWith("eager/off: "));
}

TEST(ThermalSummary, ThroughputAndEnergyAreOverTheSimulatedClock) {
  ThermalOutcome t;
  t.simulated_seconds = 4;
  t.tasks_run = 10;
  t.devices.resize(2);
  t.devices[0].energy_joules = 30;
  t.devices[1].energy_joules = 10;
  const ThermalSummary s = summarize(t);
  EXPECT_DOUBLE_EQ(s.tasks_per_second, 2.5);
  EXPECT_DOUBLE_EQ(s.joules, 40);
  EXPECT_DOUBLE_EQ(s.joules_per_task, 4);
  const ThermalOutcome nothing_run;
  EXPECT_EQ(summarize(nothing_run).tasks_per_second, 0);
}

TEST(ThermalExperimentJson, IsTheScheduleDocumentWithAThermalSectionPerRun) {
  const auto devices = rig_devices(2);
  const auto o = two_by_two();
  auto t = run_thermal_experiment(thermal_workload(o, devices), devices, o);
  ASSERT_THAT(t, IsOk());
  const nlohmann::json j = to_json(*t);
  EXPECT_EQ(j["schema"], sched::kScheduleSchema);
  EXPECT_EQ(j["policy"], "eager/off");
  ASSERT_EQ(j["runs"].size(), 4U);
  EXPECT_EQ(j["thermal"]["time_scale"], 1000.0);
  ASSERT_EQ(j["thermal"]["runs"].size(), 4U);
  EXPECT_EQ(j["thermal"]["runs"][1]["policy"], "eager/thermal");
  EXPECT_FALSE(j["thermal"]["runs"][0].contains("governor"));
  EXPECT_EQ(j["thermal"]["runs"][1]["governor"]["mode"], "thermal");
  EXPECT_EQ(j["thermal"]["runs"][0]["devices"].size(), 2U);
  EXPECT_GT(j["thermal"]["runs"][0]["energy_joules"].get<double>(), 0);
  // Without thermal runs the document is the plain experiment's.
  ThermalExperiment plain;
  plain.experiment = t->experiment;
  EXPECT_FALSE(to_json(plain).contains("thermal"));
}

TEST(ThermalSettingsText, CoolingFactorsAreBoundedAndTheWholeListIsNamed) {
  EXPECT_THAT(parse_cooling("1,2,0.1,100"), HasValue(ElementsAre(1, 2, 0.1, 100)));
  for (const char* bad : {"0", "1,200", "1,x", "2w", "nan", "inf", "1e400"}) {
    EXPECT_THAT(parse_cooling(bad),
                StatusIs(Errc::kInvalidArgument,
                         "'" + std::string(bad) +
                             "' is not factors from 0.1 to 100, one per device or one for all"))
        << bad;
  }
}

TEST(ThermalSettingsText, GovernorSettingsRunOnceEachInOrder) {
  auto settings = parse_governor_settings("off,cap:200,thermal");
  ASSERT_THAT(settings, IsOk());
  ASSERT_EQ(settings->size(), 3U);
  EXPECT_EQ((*settings)[0].first, "off");
  EXPECT_FALSE((*settings)[0].second.has_value());
  ASSERT_TRUE((*settings)[1].second.has_value());
  EXPECT_EQ((*settings)[1].second->mode, power::GovernorMode::kCap);
  EXPECT_EQ((*settings)[1].second->cap_watts, 200);
  EXPECT_EQ((*settings)[2].second->mode, power::GovernorMode::kThermal);
  EXPECT_THAT(parse_governor_settings("off,thermal,off"),
              StatusIs(Errc::kInvalidArgument, "'off' is given twice (each setting runs once)"));
  EXPECT_THAT(parse_governor_settings("turbo"),
              StatusIs(Errc::kInvalidArgument, ::testing::EndsWith(" or off")));
  EXPECT_THAT(parse_governor_settings("thermal,"),
              StatusIs(Errc::kInvalidArgument,
                       "governor mode '': expected thermal, energy or "
                       "cap:W (watts > 0) or off"));
}

TEST(RunSchedule, OnTheDevicesAsTheyAreItIsThePlainExperiment) {
  const auto devices = rig_devices(2);
  ScheduleRunOptions o;
  o.experiment = two_by_two().experiment;
  int observed = 0;
  o.experiment.observe = [&](sched::Runtime*) { ++observed; };
  auto run = run_schedule(thermal_workload(two_by_two(), devices), devices, o);
  ASSERT_THAT(run, IsOk());
  EXPECT_TRUE(run->plain.has_value());
  EXPECT_FALSE(run->thermal.has_value());
  ASSERT_EQ(run->experiment().runs.size(), 2U);
  EXPECT_EQ(run->experiment().runs[1].policy, "dmda");
  EXPECT_GT(observed, 0);  // without a server, the caller's observer is kept
  EXPECT_FALSE(to_json(*run).contains("thermal"));
  EXPECT_EQ(report::render_text(schedule_report(*run)),
            report::render_text(sched::experiment_report(*run->plain)));
  EXPECT_EQ(failure_lines(*run), "");  // every task ran
  // --trace: the first policy's run, and the line that says so.
  const acco::testing::TempDir dir;
  const std::string trace = (dir.path() / "trace.json").string();
  EXPECT_EQ(write_schedule_trace(*run, trace).value_or(""),
            "acco: trace of eager written to " + trace + "\n");
  EXPECT_THAT(acco::testing::slurp(trace), ::testing::HasSubstr("traceEvents"));
  EXPECT_THAT(write_schedule_trace(*run, (dir.path() / "no" / "t.json").string()),
              StatusIs(Errc::kCannotWrite));
  ScheduleSetup files;
  files.trace = (dir.path() / "no" / "t.json").string();
  EXPECT_THAT(check_schedule_files(files), StatusIs(Errc::kCannotWrite));
  files.trace = trace;
  files.experiment.models = (dir.path() / "models.json").string();
  std::ofstream(files.experiment.models) << "{";
  EXPECT_THAT(check_schedule_files(files), StatusIs(Errc::kInvalidArgument));
}

TEST(RunSchedule, OnTheRigEveryPolicyRunsPerGovernorSettingWithTheGivenExperiment) {
  const auto devices = rig_devices(2);
  ScheduleRunOptions o;
  o.experiment = two_by_two().experiment;
  o.experiment.policies = {sched::PolicyKind::kDmda};
  o.thermal = two_by_two();  // its own experiment (eager and dmda) is replaced
  auto run = run_schedule(thermal_workload(two_by_two(), devices), devices, o);
  ASSERT_THAT(run, IsOk());
  ASSERT_TRUE(run->thermal.has_value());
  EXPECT_FALSE(run->plain.has_value());
  std::vector<std::string> names;
  for (const auto& r : run->experiment().runs) {
    names.push_back(r.policy);
  }
  EXPECT_THAT(names, ElementsAre("dmda/off", "dmda/thermal"));
  EXPECT_TRUE(to_json(*run).contains("thermal"));
  EXPECT_EQ(report::render_text(schedule_report(*run)),
            report::render_text(thermal_experiment_report(*run->thermal)));
}

TEST(RunSchedule, AFailedRunIsTheError) {
  const auto devices = rig_devices(1);
  ScheduleRunOptions o;
  o.experiment = two_by_two().experiment;
  o.thermal = two_by_two();
  o.thermal->cooling = {1};
  o.thermal->time_scale = -1;
  EXPECT_THAT(run_schedule(thermal_workload(two_by_two(), devices), devices, o),
              StatusIs(Errc::kInvalidArgument, StartsWith("eager/off: ")));
}

}  // namespace
}  // namespace acco::monitor

namespace acco::monitor {
namespace {

TEST(ThermalRequestTest, TheFlagsBecomeTheOptionsForTheDevicesGiven) {
  sched::DeviceSetup host;
  host.host_devices = 2;
  auto t = thermal_options({.scale = 120, .cooling = "1,2", .governor = "off,cap:300"}, host);
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_DOUBLE_EQ(t->time_scale, 120);
  EXPECT_EQ(t->cooling, (std::vector<double>{1, 2}));
  EXPECT_EQ(t->governors.size(), 2U);
  const auto message = [&host](const ThermalRequest& r) {
    auto o = thermal_options(r, host);
    EXPECT_FALSE(o.has_value());
    return o ? std::string() : o.error().message;
  };
  EXPECT_EQ(message({.scale = 0.5}), "--thermal-scale: '0.5' is not a factor from 1 to 10000");
  EXPECT_EQ(message({.cooling = "1,2,3"}).rfind("--cooling: ", 0), 0U);
  EXPECT_EQ(message({.governor = "off,off"}).rfind("--governor: ", 0), 0U);
  sched::DeviceSetup cuda;
  cuda.cuda = true;
  EXPECT_FALSE(thermal_options({}, cuda).has_value());
}

TEST(ScheduleRequestTest, TheOneNodeFlagsBecomeTheSetupAndABadOneIsNamed) {
  ScheduleRequest r;
  r.policy = "eager,heft";
  r.calibrate = 0;
  r.serve = "127.0.0.1:0";
  r.serve_interval = "50ms";
  r.simulate_thermal = true;
  auto s = schedule_setup(r);
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(s->experiment.policies,
            (std::vector<sched::PolicyKind>{sched::PolicyKind::kEager, sched::PolicyKind::kHeft}));
  EXPECT_EQ(s->experiment.calibration_runs, 0);
  ASSERT_TRUE(s->serve.has_value());
  EXPECT_EQ(s->serve->server.host, "127.0.0.1");
  EXPECT_EQ(s->serve->interval, std::chrono::milliseconds(50));
  ASSERT_TRUE(s->thermal.has_value());
  EXPECT_FALSE(schedule_setup({}).value().serve.has_value());
  const auto message = [](const ScheduleRequest& bad) {
    auto o = schedule_setup(bad);
    EXPECT_THAT(o, StatusIs(Errc::kInvalidArgument));
    return o ? std::string() : o.error().message;
  };
  EXPECT_EQ(message({.calibrate = 101}), "--calibrate: '101' is not between 0 and 100");
  EXPECT_EQ(message({.serve = "nowhere:port"}),
            "--serve: 'nowhere:port' is not HOST:PORT (e.g. 127.0.0.1:9477 or 0.0.0.0:9477)");
  EXPECT_EQ(message({.policy = "fifo"}).rfind("--policy: ", 0), 0U);
  EXPECT_EQ(message({.serve_interval = "1ms"}).rfind("--serve-interval: ", 0), 0U);
}

}  // namespace
}  // namespace acco::monitor
