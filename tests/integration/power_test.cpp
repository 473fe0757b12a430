// `acco power status`, `acco power run`, `acco serve --governor` and `acco schedule
// --simulate-thermal` run as a user would: simulated devices, and GPUs through the fake
// libnvidia-ml whose limits persist across processes (ACCO_FAKE_NVML_STATE) like a driver's, so
// restore at exit, on SIGTERM and after kill -9 are checked for real. JSON conforms to
// docs/schemas/power-*.schema.json; bad input is one line with its exit code.
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "acco/testing/files.hpp"
#include "acco/testing/json_schema.hpp"

#include "daemon.hpp"
#include "run_acco.hpp"
#include "sysroot_builder.hpp"

namespace acco::testing {
namespace {

namespace stdfs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

// The fake's two H100s (tests/data/nvml/telemetry.json: GPU 0 requested 650 W of [200, 700])
// with a state file of their own, as a driver keeps limits between processes.
class FakeGpus {
 public:
  explicit FakeGpus(const std::function<void(json&)>& edit = {}) {
    json config =
        json::parse(slurp(stdfs::path(ACCO_SOURCE_DIR) / "tests/data/nvml/telemetry.json"));
    if (edit) {
      edit(config);
    }
    std::ofstream(dir_.path() / "config.json") << config.dump();
  }
  [[nodiscard]] std::string env() const {
    return "ACCO_NVML_LIBRARY=" + std::string(ACCO_FAKE_NVML_PATH) +
           " ACCO_FAKE_NVML_CONFIG=" + (dir_.path() / "config.json").string() +
           " ACCO_FAKE_NVML_STATE=" + fake_state().string();
  }
  [[nodiscard]] stdfs::path fake_state() const { return dir_.path() / "fake-driver-state.json"; }
  [[nodiscard]] stdfs::path governor_state() const { return dir_.path() / "governor-state.json"; }
  // GPU `index`'s limit as the "driver" holds it, milliwatts; 0 before anything was set.
  [[nodiscard]] long long limit_mw(int index) const {
    if (!stdfs::exists(fake_state())) {
      return 0;
    }
    const auto j = json::parse(slurp(fake_state()), nullptr, false);
    const auto& g = j["gpus"]["GPU-8d1c3f2e-5a4b-4c6d-9e0f-1a2b3c4d5e0" + std::to_string(index)];
    return g.is_object() ? g.value("power_limit_mw", 0LL) : 0;
  }
  [[nodiscard]] long long gpu0_limit_mw() const { return limit_mw(0); }
  [[nodiscard]] std::string flags() const {
    return "--nvml on --state-file " + governor_state().string();
  }

 private:
  TempDir dir_;
};

// Starts acco in the background with `env`; the pid.
pid_t start(const std::string& args, const std::string& env, const stdfs::path& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string cmd = "exec env -u ACCO_NVML -u ACCO_NVML_LIBRARY " + env + " " +
                            std::string(ACCO_BINARY) + " " + args + " >" + log.string() + " 2>&1";
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

bool wait_for(const std::function<bool()>& condition, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return condition();
}

int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(PowerCliTest, StatusOfIdleSimulatedDevicesMatchesTheGolden) {
  const auto r = acco("power status --simulate 2 --scenario idle --nvml off");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("power.status.idle.txt", r.out);
  const auto j = acco("power status --simulate 2 --scenario idle --nvml off --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  expect_conforms(j.out, "power-status.schema.json");
  const auto doc = json::parse(j.out);
  EXPECT_EQ(doc["devices"].size(), 2U);
  EXPECT_EQ(doc["devices"][0]["state"], "normal");
  EXPECT_EQ(doc["devices"][0]["power_limit_watts"]["min"], 200);
}

TEST(PowerCliTest, AFailedFanMakesTheDevicesWarmThenHotAndTheDryRunAppliesNothing) {
  const auto r = acco(
      "power run --simulate 2 --scenario thermal-throttle --duration 5m --fast --nvml off --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "power-run.schema.json");
  const auto doc = json::parse(r.out);
  EXPECT_FALSE(doc["allow_control"].get<bool>());
  EXPECT_TRUE(doc["simulated_time"].get<bool>());
  bool warm = false;
  bool limited = false;
  for (const auto& a : doc["actions"]) {
    // Without the governor's caps (a dry run) the device heats fast enough to go straight to hot.
    warm = warm || a["reason"].get<std::string>().find("normal -> ") != std::string::npos;
    if (a["kind"] == "set_power_limit") {
      limited = true;
      EXPECT_FALSE(a["applied"].get<bool>()) << a.dump();
      EXPECT_TRUE(a["numbers"].contains("temperature_celsius"));
    }
  }
  EXPECT_TRUE(warm) << r.out.substr(0, 2000);
  EXPECT_TRUE(limited);
}

TEST(PowerCliTest, EachGovernorLineInTextCarriesItsTimeOnTheGovernorsClock) {
  const auto r =
      acco("power run --simulate 1 --scenario thermal-throttle --duration 5m --fast --nvml off");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.err);
  std::string line;
  int actions = 0;
  bool later = false;
  while (std::getline(lines, line)) {
    if (line.starts_with("acco power run:")) {
      continue;
    }
    ++actions;
    // "   123.0 s  warning 0 governor_set_power_limit: normal -> draining: ..."
    const auto unit = line.find(" s  ");
    ASSERT_NE(unit, std::string::npos) << line;
    const double t = std::stod(line.substr(0, unit));
    EXPECT_GE(t, 0) << line;
    EXPECT_LE(t, 300) << line;
    later = later || t > 0;
    EXPECT_TRUE(line.find(" s  info ") == unit || line.find(" s  warning ") == unit) << line;
  }
  EXPECT_GT(actions, 0) << r.err;
  EXPECT_TRUE(later) << "the actions after the start carry their own times";
}

TEST(PowerCliTest, WithControlOnSimulatedDevicesTheLimitsAreAppliedAndRestored) {
  const auto r = acco(
      "power run --simulate 1 --scenario thermal-throttle --duration 10m --fast --nvml off "
      "--allow-control --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = json::parse(r.out);
  std::size_t applied = 0;
  for (const auto& a : doc["actions"]) {
    applied += a["kind"] == "set_power_limit" && a["applied"].get<bool>() ? 1 : 0;
  }
  EXPECT_GT(applied, 0U);
  EXPECT_EQ(doc["actions"].back()["kind"], "set_weight") << "the last word releases the scheduler";
  bool restored = false;
  for (const auto& a : doc["actions"]) {
    restored = restored || (a["kind"] == "restore" && a["applied"].get<bool>());
  }
  EXPECT_TRUE(restored);
  EXPECT_EQ(doc["status"]["devices"][0]["state"], "normal") << "finish puts it back";
}

TEST(PowerCliTest, ACapOnFakeGpusIsAppliedThenRestoredAtTheEndOfTheRun) {
  const FakeGpus gpus;
  const auto r = acco("power run " + gpus.flags() +
                          " --mode cap:300 --allow-control --duration 1s --interval 100ms --json",
                      gpus.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "power-run.schema.json");
  const auto doc = json::parse(r.out);
  bool capped = false;
  for (const auto& a : doc["actions"]) {
    capped =
        capped || (a["kind"] == "set_power_limit" && a["value"] == 300 && a["applied"].get<bool>());
  }
  EXPECT_TRUE(capped) << r.out.substr(0, 2000);
  EXPECT_EQ(gpus.gpu0_limit_mw(), 650000) << "back to the 650 W it had";
  EXPECT_FALSE(stdfs::exists(gpus.governor_state()));
}

TEST(PowerCliTest, SigtermRestoresTheLimitsBeforeExiting) {
  const FakeGpus gpus;
  TempDir io;
  const pid_t pid = start("power run " + gpus.flags() + " --mode cap:300 --allow-control",
                          gpus.env(), io.path() / "log");
  ASSERT_TRUE(wait_for([&] { return gpus.gpu0_limit_mw() == 300000; }, std::chrono::seconds(20)))
      << slurp(io.path() / "log");
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_exit(pid), 0);
  EXPECT_THAT(slurp(io.path() / "log"), HasSubstr("stopped by SIGTERM"));
  EXPECT_EQ(gpus.gpu0_limit_mw(), 650000);
}

TEST(PowerCliTest, AfterKillDashNineTheNextStartRestoresTheLimits) {
  const FakeGpus gpus;
  TempDir io;
  const pid_t pid = start("power run " + gpus.flags() + " --mode cap:300 --allow-control",
                          gpus.env(), io.path() / "log");
  // Both changed before the kill: GPU 0 to the cap, GPU 1 (in SW thermal slowdown, so hot) to its
  // 200 W minimum. The RTX 6000 already has 300 W: the governor leaves it alone.
  ASSERT_TRUE(wait_for([&] { return gpus.limit_mw(0) == 300000 && gpus.limit_mw(1) == 200000; },
                       std::chrono::seconds(20)))
      << slurp(io.path() / "log");
  ::kill(pid, SIGKILL);
  (void)wait_exit(pid);
  ASSERT_TRUE(stdfs::exists(gpus.governor_state()));
  const auto left = json::parse(slurp(gpus.governor_state()));
  EXPECT_EQ(left["schema"], "acco.governor-state/1");
  EXPECT_EQ(gpus.gpu0_limit_mw(), 300000) << "killed: nobody restored it";

  const auto status = acco("power status " + gpus.flags() + " --json", gpus.env());
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(json::parse(status.out)["unrestored"].size(), 2U);

  const auto next = acco(
      "power run " + gpus.flags() + " --allow-control --duration 300ms --interval 100ms --json",
      gpus.env());
  ASSERT_EQ(next.exit_code, 0) << next.err;
  const auto doc = json::parse(next.out);
  bool restored = false;
  for (const auto& a : doc["actions"]) {
    restored =
        restored || (a["kind"] == "restore" && a["applied"].get<bool>() &&
                     a["reason"].get<std::string>().find("previous run") != std::string::npos);
  }
  EXPECT_TRUE(restored) << next.out.substr(0, 2000);
  EXPECT_EQ(gpus.gpu0_limit_mw(), 650000);
  EXPECT_EQ(gpus.limit_mw(1), 700000);
  EXPECT_FALSE(stdfs::exists(gpus.governor_state()));
}

// kill -9 at points spread over the start, the state file's writes and the first changes (a
// fixed seed: the same points on every machine). After each, the state file is absent or whole,
// and the next run puts back every limit the killed one changed.
TEST(PowerCliTest, AKillDashNineAtAnyPointLeavesWhatTheNextRunRestores) {
  const FakeGpus gpus;
  std::mt19937 random(20261206);
  std::uniform_int_distribution<int> delay_ms(0, 1500);
  for (int i = 0; i < 8; ++i) {
    TempDir io;
    const int ms = delay_ms(random);
    const pid_t pid =
        start("power run " + gpus.flags() + " --mode cap:300 --allow-control --interval 100ms",
              gpus.env(), io.path() / "log");
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    ::kill(pid, SIGKILL);
    (void)wait_exit(pid);
    if (stdfs::exists(gpus.governor_state())) {
      const auto left = json::parse(slurp(gpus.governor_state()), nullptr, false);
      ASSERT_FALSE(left.is_discarded()) << "killed after " << ms << " ms: a cut state file";
      EXPECT_EQ(left.value("schema", ""), "acco.governor-state/1") << ms << " ms";
    }
    const auto next = acco(
        "power run " + gpus.flags() + " --allow-control --duration 300ms --interval 100ms --json",
        gpus.env());
    ASSERT_EQ(next.exit_code, 0) << "killed after " << ms << " ms: " << next.err;
    // 0: never set (the kill came first); else what the driver had before.
    EXPECT_THAT(gpus.limit_mw(0), ::testing::AnyOf(0, 650000)) << "killed after " << ms << " ms";
    EXPECT_THAT(gpus.limit_mw(1), ::testing::AnyOf(0, 700000)) << "killed after " << ms << " ms";
    EXPECT_FALSE(stdfs::exists(gpus.governor_state())) << "killed after " << ms << " ms";
  }
}

TEST(PowerCliTest, NoPermissionOnOneGpuIsLoggedAndTheOtherIsStillControlled) {
  const FakeGpus gpus([](json& config) { config["gpus"][0]["errors"] = {{"set_power_limit", 4}}; });
  const auto r =
      acco("power run " + gpus.flags() +
               " --mode cap:300 --allow-control --duration 500ms --interval 100ms --json",
           gpus.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = json::parse(r.out);
  bool refused = false;
  bool other = false;
  for (const auto& a : doc["actions"]) {
    if (a["kind"] != "set_power_limit") {
      continue;
    }
    if (a["device"] == "0") {
      refused =
          refused || a.value("error", "").find("Insufficient Permissions") != std::string::npos;
    } else {
      other = other || a["applied"].get<bool>();
    }
  }
  EXPECT_TRUE(refused) << r.out.substr(0, 3000);
  EXPECT_TRUE(other);
  EXPECT_EQ(doc["status"]["hands_off"].size(), 1U);
}

TEST(PowerCliTest, AStateFileThatIsNotOneStopsTheGovernorBeforeItChangesAnything) {
  const FakeGpus gpus;
  std::ofstream(gpus.governor_state()) << "{\"schema\": \"something else\"}";
  const auto r = acco(
      "power run " + gpus.flags() + " --mode cap:300 --allow-control --duration 300ms", gpus.env());
  EXPECT_EQ(r.exit_code, 65) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("not a governor state file (expected acco.governor-state/1)"));
  EXPECT_EQ(gpus.gpu0_limit_mw(), 0) << "nothing was set";
}

// What a previous governor left is unknown when its state file is not one: `power status`
// prints the devices and exits 65 (an empty `unrestored` said nothing was left), and `serve
// --governor --allow-control` refuses to start (it ran with the governor silently stopped).
TEST(PowerCliTest, AStateFileThatIsNotOneFailsStatusAndServe) {
  const FakeGpus gpus;
  std::ofstream(gpus.governor_state()) << "{\"schema\": 5";
  const auto status = acco("power status " + gpus.flags() + " --json", gpus.env());
  EXPECT_EQ(status.exit_code, 65) << status.err;
  expect_conforms(status.out, "power-status.schema.json");
  const auto doc = json::parse(status.out);
  EXPECT_TRUE(doc["unrestored"].is_null());
  EXPECT_THAT(
      doc["state_file_error"].get<std::string>(),
      HasSubstr("governor state file " + gpus.governor_state().string() + ": not valid JSON"));
  EXPECT_FALSE(doc["devices"].empty());  // the report is still printed
  EXPECT_EQ(std::count(status.err.begin(), status.err.end(), '\n'), 1) << status.err;
  const auto serve =
      acco("serve --listen 127.0.0.1:0 --duration 5s --governor --allow-control " + gpus.flags(),
           gpus.env());
  EXPECT_EQ(serve.exit_code, 65) << serve.err;
  EXPECT_THAT(serve.err, HasSubstr("governor state file " + gpus.governor_state().string() +
                                   ": not valid JSON"));
  EXPECT_EQ(gpus.gpu0_limit_mw(), 0) << "nothing was set";
}

TEST(PowerCliTest, RaplPackagesInASysrootAreCappedAndRestored) {
  TempDir root;
  const auto zone = root.path() / "sys/class/powercap/intel-rapl:0";
  stdfs::create_directories(zone);
  const auto put = [&](const std::string& name, const std::string& value) {
    std::ofstream(zone / name) << value << "\n";
  };
  put("name", "package-0");
  put("enabled", "1");
  put("energy_uj", "1000000");
  put("max_energy_range_uj", "262143328850");
  put("constraint_0_name", "long_term");
  put("constraint_0_power_limit_uw", "250000000");
  put("constraint_0_max_power_uw", "280000000");
  const std::string flags = "--sysroot " + root.path().string() + " --nvml off --state-file " +
                            (root.path() / "governor-state.json").string();
  const auto status = acco("power status " + flags + " --json");
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const auto doc = json::parse(status.out);
  ASSERT_EQ(doc["devices"].size(), 1U);
  EXPECT_EQ(doc["devices"][0]["source"], "rapl");
  EXPECT_EQ(doc["devices"][0]["power_limit_watts"]["enforced"], 250);

  const auto r = acco("power run " + flags +
                      " --mode cap:150 --allow-control --duration 300ms --interval 100ms --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bool capped = false;
  const auto run = json::parse(r.out);
  for (const auto& a : run["actions"]) {
    capped =
        capped || (a["kind"] == "set_power_limit" && a["value"] == 150 && a["applied"].get<bool>());
  }
  EXPECT_TRUE(capped) << r.out.substr(0, 2000);
  EXPECT_EQ(slurp(zone / "constraint_0_power_limit_uw"), "250000000\n") << "restored";
}

TEST(PowerCliTest, RunWithNoDeviceToGovernIsExit69SayingWhatWasLookedAt) {
  TempDir root;  // no powercap zones, NVML off: nothing to govern
  const auto r = acco("power run --sysroot " + root.path().string() +
                      " --nvml off --duration 300ms --interval 100ms");
  EXPECT_EQ(r.exit_code, 69) << r.err;
  EXPECT_THAT(r.err, HasSubstr("no device to govern"));
  EXPECT_THAT(r.err, HasSubstr("--simulate N governs simulated devices"));
  EXPECT_EQ(r.out, "");
}

TEST(PowerCliTest, ACapAboveEveryDevicesMaximumIsRefusedWithTheRange) {
  const auto r = acco("power run --simulate 2 --fast --duration 2s --mode cap:5000");
  EXPECT_EQ(r.exit_code, 64) << r.err;
  EXPECT_THAT(r.err, HasSubstr("acco: --mode: cap:5000 is above every device's maximum power "
                               "limit (the devices accept "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(PowerCliTest, BadFlagsAreOneLineAndExit64) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"power run --simulate 1 --mode cool",
       "--mode: governor mode 'cool': expected thermal, energy or cap:W (watts > 0)"},
      {"power run --simulate 1 --mode cap:0",
       "--mode: governor mode 'cap:0': expected thermal, energy or cap:W (watts > 0)"},
      {"power run --simulate 1 --fast",
       "--fast runs simulated devices on simulated time: give --simulate N and --duration D"},
      {"power run --simulate 1 --duration soon", "--duration: 'soon' is not a positive duration"},
      {"power run --simulate 99", "--simulate: '99' is not a device count from 0 to 64"},
      {"serve --simulate 1 --allow-control", "--allow-control requires --governor"},
      {"serve --simulate 1 --mode energy", "--mode requires --governor"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = acco(args);
    EXPECT_EQ(r.exit_code, 64) << args << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(message)) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
  EXPECT_EQ(acco("power").exit_code, 64);
  // CLI11 said only "A subcommand is required".
  auto r = acco("power");
  EXPECT_THAT(r.err, HasSubstr("power: expected a subcommand: status, run"));
  r = acco("power bogus");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.err, HasSubstr("power: 'bogus' is not one; expected a subcommand: status, run"));
}

TEST(PowerCliTest, ServeWithTheGovernorExportsItsStateAndActions) {
  Daemon d({"--simulate", "2", "--scenario", "thermal-throttle", "--listen", "127.0.0.1:0",
            "--interval", "100ms", "--governor"});
  ASSERT_GT(d.port(), 0) << d.early_stderr();
  ASSERT_TRUE(wait_for(
      [&] {
        const auto m = d.get("/metrics");
        return m &&
               m->body.find("acco_governor_actions_total{action=\"set_weight\"} 0") ==
                   std::string::npos &&
               m->body.find("acco_governor_state{") != std::string::npos;
      },
      std::chrono::seconds(20)));
  const auto m = d.get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_THAT(m->body, HasSubstr("acco_governor_info{control=\"dry-run\",mode=\"thermal\"} 1"));
  EXPECT_THAT(m->body, HasSubstr("acco_governor_weight_ratio{device=\"0\""));
  const auto events = d.get("/api/v1/events");
  ASSERT_TRUE(events);
  EXPECT_THAT(events->body, HasSubstr("\"event\":\"governor_set_weight\""));
  EXPECT_EQ(d.stop(SIGTERM).exit_code, 0);
}

TEST(PowerCliTest, ScheduleOnThermalDevicesComparesTheFirmwareWithTheGovernor) {
  const auto r = acco(
      "schedule --simulate-thermal --tiles 4 --calibrate 0 --thermal-scale 600 --cooling 1,1,1,2 "
      "--governor off,thermal --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "schedule.schema.json");
  const auto doc = json::parse(r.out);
  ASSERT_EQ(doc["thermal"]["runs"].size(), 2U);
  EXPECT_EQ(doc["thermal"]["runs"][0]["policy"], "dmda/off");
  EXPECT_FALSE(doc["thermal"]["runs"][0].contains("governor"));
  EXPECT_EQ(doc["thermal"]["runs"][1]["governor"]["mode"], "thermal");
  EXPECT_GT(doc["thermal"]["runs"][1]["energy_joules"].get<double>(), 0);
  const auto bad = acco("schedule --simulate-thermal --cooling 1,2");
  EXPECT_EQ(bad.exit_code, 64);
  EXPECT_THAT(bad.err, HasSubstr("--cooling: 2 values for 4 devices"));
}

}  // namespace
}  // namespace acco::testing
