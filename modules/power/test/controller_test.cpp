#include "acco/power/controller.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "acco/core/json.hpp"

namespace acco::power {
namespace {

// A device the actuator changes and the samples report, like a driver keeping the limit.
struct FakeGpu {
  double limit = 700;
  bool locked = false;
};

class FakeActuator final : public Actuator {
 public:
  std::map<std::string, FakeGpu> gpus;
  std::map<std::string, Errc> refuse;  // by uuid
  std::vector<std::string> calls;
  std::filesystem::path watch;           // a file read at each set_power_limit, when named
  std::vector<std::string> seen_at_set;  // what it held then

  [[nodiscard]] std::string name() const override { return "fake"; }
  [[nodiscard]] Status set_power_limit(const std::string& uuid, double watts) override {
    calls.push_back(fmt("limit", uuid, watts));
    if (!watch.empty()) {
      std::ifstream in(watch);
      seen_at_set.emplace_back(std::istreambuf_iterator<char>(in),
                               std::istreambuf_iterator<char>());
    }
    if (auto r = refused(uuid)) {
      return *r;
    }
    if (watts < 200 || watts > 700) {
      return fail(Errc::kInvalidArgument, "out of range");
    }
    gpus[uuid].limit = watts;
    return {};
  }
  [[nodiscard]] Status lock_sm_clocks(const std::string& uuid, double /*min*/,
                                      double max) override {
    calls.push_back(fmt("lock", uuid, max));
    if (auto r = refused(uuid)) {
      return *r;
    }
    gpus[uuid].locked = true;
    return {};
  }
  [[nodiscard]] Status unlock_sm_clocks(const std::string& uuid) override {
    calls.push_back(fmt("unlock", uuid, 0));
    gpus[uuid].locked = false;
    return {};
  }

  [[nodiscard]] std::vector<DeviceSample> samples() const {
    std::vector<DeviceSample> out;
    for (const auto& [uuid, g] : gpus) {
      DeviceSample s;
      s.uuid = uuid;
      s.device = uuid.substr(4);
      s.power_limit_requested_watts = g.limit;
      s.power_limit_enforced_watts = g.limit;
      out.push_back(s);
    }
    return out;
  }

 private:
  static std::string fmt(const std::string& what, const std::string& uuid, double v) {
    return what + " " + uuid + " " + std::to_string(static_cast<int>(v));
  }
  [[nodiscard]] std::optional<Status> refused(const std::string& uuid) const {
    if (const auto it = refuse.find(uuid); it != refuse.end()) {
      return fail(it->second, "refused by the fake");
    }
    return std::nullopt;
  }
};

class ControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("acco_controller_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    state_ = dir_ / "governor-state.json";
    fake_.gpus["GPU-0"] = {};
    fake_.gpus["GPU-1"] = {};
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ControllerOptions allowed() const {
    ControllerOptions o;
    o.allow_control = true;
    o.state_file = state_;
    return o;
  }

  static Action limit(const std::string& uuid, double watts) {
    Action a;
    a.uuid = uuid;
    a.device = uuid.substr(4);
    a.kind = ActionKind::kSetPowerLimit;
    a.value = watts;
    return a;
  }

  std::filesystem::path dir_;
  std::filesystem::path state_;
  FakeActuator fake_;
};

TEST_F(ControllerTest, ADryRunAppliesNothingAndWritesNoStateFile) {
  ControllerOptions o = allowed();
  o.allow_control = false;
  Controller c(&fake_, o);
  std::vector<Action> actions = {limit("GPU-0", 300)};
  c.apply(actions, fake_.samples());
  EXPECT_FALSE(actions[0].applied);
  EXPECT_TRUE(actions[0].error.empty());
  EXPECT_TRUE(fake_.calls.empty());
  EXPECT_FALSE(std::filesystem::exists(state_));
  EXPECT_EQ(c.counts().at(ActionKind::kSetPowerLimit), 1U);
}

TEST_F(ControllerTest, TheOriginalLimitIsWrittenBeforeTheFirstChangeAndRestoredAtExit) {
  Controller c(&fake_, allowed());
  std::vector<Action> actions = {limit("GPU-0", 300)};
  c.apply(actions, fake_.samples());
  ASSERT_TRUE(actions[0].applied) << actions[0].error;
  EXPECT_EQ(fake_.gpus["GPU-0"].limit, 300);
  auto saved = read_state_file(state_);
  ASSERT_TRUE(saved.has_value());
  ASSERT_EQ(saved->size(), 1U);
  EXPECT_EQ(saved->at(0).original_limit_watts, 700);
  EXPECT_EQ(saved->at(0).set_limit_watts, 300);

  const auto restored = c.restore_all(1);
  ASSERT_EQ(restored.size(), 1U);
  EXPECT_TRUE(restored[0].applied);
  EXPECT_EQ(fake_.gpus["GPU-0"].limit, 700);
  EXPECT_FALSE(std::filesystem::exists(state_)) << "removed once everything is back";
}

TEST_F(ControllerTest, TheNextStartRestoresWhatACrashedRunLeft) {
  {
    Controller crashed(&fake_, allowed());
    std::vector<Action> actions = {limit("GPU-0", 250), limit("GPU-1", 400)};
    crashed.apply(actions, fake_.samples());
    // No restore_all: the process died.
  }
  ASSERT_TRUE(std::filesystem::exists(state_));
  Controller next(&fake_, allowed());
  auto recovered = next.recover(fake_.samples(), 0);
  ASSERT_TRUE(recovered.has_value()) << recovered.error().message;
  ASSERT_EQ(recovered->size(), 2U);
  for (const Action& a : *recovered) {
    EXPECT_EQ(a.kind, ActionKind::kRestore);
    EXPECT_TRUE(a.applied) << a.error;
  }
  EXPECT_EQ(fake_.gpus["GPU-0"].limit, 700);
  EXPECT_EQ(fake_.gpus["GPU-1"].limit, 700);
  EXPECT_FALSE(std::filesystem::exists(state_));
}

// A kill inside set_power_limit: the state file is what it held when the driver was called.
TEST_F(ControllerTest, AKillAfterTheDriverTookTheLimitIsRestoredByTheNextStart) {
  fake_.watch = state_;
  {
    Controller crashed(&fake_, allowed());
    std::vector<Action> actions = {limit("GPU-0", 250)};
    crashed.apply(actions, fake_.samples());
  }
  ASSERT_EQ(fake_.seen_at_set.size(), 1U);
  std::ofstream(state_) << fake_.seen_at_set[0];
  ASSERT_EQ(fake_.gpus["GPU-0"].limit, 250);
  Controller next(&fake_, allowed());
  auto recovered = next.recover(fake_.samples(), 0);
  ASSERT_TRUE(recovered.has_value()) << recovered.error().message;
  ASSERT_EQ(recovered->size(), 1U);
  EXPECT_EQ(recovered->at(0).kind, ActionKind::kRestore) << recovered->at(0).reason;
  EXPECT_TRUE(recovered->at(0).applied);
  EXPECT_EQ(fake_.gpus["GPU-0"].limit, 700);
  EXPECT_FALSE(std::filesystem::exists(state_));
}

TEST_F(ControllerTest, AKillBeforeTheDriverTookTheLimitLeavesNothingToRestore) {
  fake_.watch = state_;
  {
    Controller crashed(&fake_, allowed());
    std::vector<Action> actions = {limit("GPU-0", 250)};
    crashed.apply(actions, fake_.samples());
  }
  ASSERT_EQ(fake_.seen_at_set.size(), 1U);
  std::ofstream(state_) << fake_.seen_at_set[0];
  fake_.gpus["GPU-0"].limit = 700;  // the driver never had 250 W
  Controller next(&fake_, allowed());
  auto recovered = next.recover(fake_.samples(), 0);
  ASSERT_TRUE(recovered.has_value()) << recovered.error().message;
  ASSERT_EQ(recovered->size(), 1U);
  EXPECT_EQ(recovered->at(0).kind, ActionKind::kLog);
  EXPECT_NE(recovered->at(0).reason.find("already has its original 700 W"), std::string::npos)
      << recovered->at(0).reason;
  EXPECT_EQ(fake_.calls.size(), 1U) << "nothing set again";
  EXPECT_FALSE(std::filesystem::exists(state_));
}

TEST_F(ControllerTest, RecoveryLeavesALimitSomeoneChangedSinceTheCrash) {
  {
    Controller crashed(&fake_, allowed());
    std::vector<Action> actions = {limit("GPU-0", 250)};
    crashed.apply(actions, fake_.samples());
  }
  fake_.gpus["GPU-0"].limit = 500;  // the operator, with nvidia-smi -pl
  Controller next(&fake_, allowed());
  auto recovered = next.recover(fake_.samples(), 0);
  ASSERT_TRUE(recovered.has_value());
  ASSERT_EQ(recovered->size(), 1U);
  EXPECT_EQ(recovered->at(0).kind, ActionKind::kLog);
  EXPECT_NE(recovered->at(0).reason.find("changed by someone else"), std::string::npos);
  EXPECT_EQ(fake_.gpus["GPU-0"].limit, 500);
}

TEST_F(ControllerTest, ADeviceWhoseLimitChangedOutsideAccoIsLeftAlone) {
  Controller c(&fake_, allowed());
  std::vector<Action> first = {limit("GPU-0", 300)};
  c.apply(first, fake_.samples());
  fake_.gpus["GPU-0"].limit = 450;
  std::vector<Action> next = {limit("GPU-0", 280), limit("GPU-1", 600)};
  c.apply(next, fake_.samples());
  EXPECT_FALSE(next[0].applied);
  EXPECT_NE(next[0].error.find("changed from 300 W to 450 W outside acco"), std::string::npos)
      << next[0].error;
  EXPECT_TRUE(next[1].applied) << "the other device goes on";
  EXPECT_EQ(fake_.gpus["GPU-0"].limit, 450);
  EXPECT_TRUE(c.hands_off().contains("GPU-0"));
  (void)c.restore_all(1);
  EXPECT_EQ(fake_.gpus["GPU-0"].limit, 450) << "never restored over the operator's value";
  EXPECT_EQ(fake_.gpus["GPU-1"].limit, 700);
}

TEST_F(ControllerTest, NoPermissionIsLoggedOnceAndTheOtherDevicesGoOn) {
  fake_.refuse["GPU-0"] = Errc::kUnavailable;
  Controller c(&fake_, allowed());
  std::vector<Action> actions = {limit("GPU-0", 300), limit("GPU-1", 300)};
  c.apply(actions, fake_.samples());
  EXPECT_FALSE(actions[0].applied);
  EXPECT_NE(actions[0].error.find("refused"), std::string::npos);
  EXPECT_TRUE(actions[1].applied);
  std::vector<Action> again = {limit("GPU-0", 290)};
  const auto calls = fake_.calls.size();
  c.apply(again, fake_.samples());
  EXPECT_EQ(fake_.calls.size(), calls) << "not asked again";
}

TEST_F(ControllerTest, AnOutOfRangeLimitFailsThatActionOnly) {
  Controller c(&fake_, allowed());
  std::vector<Action> actions = {limit("GPU-0", 900), limit("GPU-0", 300)};
  c.apply(actions, fake_.samples());
  EXPECT_FALSE(actions[0].applied);
  EXPECT_EQ(actions[0].error, "out of range");
  EXPECT_TRUE(actions[1].applied) << actions[1].error;
}

TEST_F(ControllerTest, SeveralChangesInOneStepAreNotMistakenForAnOutsideChange) {
  Controller c(&fake_, allowed());
  std::vector<Action> actions = {limit("GPU-0", 300), limit("GPU-0", 250)};
  c.apply(actions, fake_.samples());
  EXPECT_TRUE(actions[1].applied) << actions[1].error;
  EXPECT_EQ(fake_.gpus["GPU-0"].limit, 250);
}

TEST_F(ControllerTest, LockedClocksAreRecordedBeforeTheLockAndUnlockedOnRestore) {
  Controller c(&fake_, allowed());
  Action lock;
  lock.uuid = "GPU-0";
  lock.kind = ActionKind::kLockClocks;
  lock.value = 990e6;
  std::vector<Action> actions = {lock};
  c.apply(actions, fake_.samples());
  ASSERT_TRUE(actions[0].applied) << actions[0].error;
  auto saved = read_state_file(state_);
  ASSERT_TRUE(saved.has_value());
  EXPECT_TRUE(saved->at(0).clocks_locked);
  (void)c.restore_all(1);
  EXPECT_FALSE(fake_.gpus["GPU-0"].locked);
}

TEST_F(ControllerTest, SchedulerActionsGoToTheCallbackEvenInADryRun) {
  std::vector<std::string> seen;
  ControllerOptions o;
  o.scheduler = [&](const Action& a) {
    seen.push_back(std::string(to_string(a.kind)) + " " + a.device);
    return Status{};
  };
  Controller c(&fake_, o);
  Action w;
  w.uuid = "GPU-1";
  w.device = "1";
  w.kind = ActionKind::kSetWeight;
  w.value = 0.5;
  std::vector<Action> actions = {w};
  c.apply(actions, fake_.samples());
  EXPECT_TRUE(actions[0].applied);
  EXPECT_EQ(seen, std::vector<std::string>{"set_weight 1"});
}

TEST_F(ControllerTest, AStateFileThatIsNotOneIsAnErrorAndNothingChanges) {
  { std::ofstream(state_) << "{\"schema\": \"something/else\"}"; }
  Controller c(&fake_, allowed());
  auto recovered = c.recover(fake_.samples(), 0);
  ASSERT_FALSE(recovered.has_value());
  EXPECT_EQ(recovered.error().code, Errc::kInvalidArgument);
  EXPECT_EQ(recovered.error().message,
            "governor state file " + state_.string() +
                ": not a governor state file (expected acco.governor-state/1)");
  EXPECT_TRUE(fake_.calls.empty());
}

// A field of another type made nlohmann throw (exit 70, found by a robustness sweep).
TEST_F(ControllerTest, AStateFileWithAFieldOfTheWrongTypeIsAnError) {
  for (const char* text :
       {"{\"schema\": 5, \"devices\": []}",
        "{\"schema\": \"acco.governor-state/1\", \"devices\": [{\"uuid\": \"GPU-0\", "
        "\"original_limit_watts\": 700, \"set_limit_watts\": 300, \"clocks_locked\": \"s\"}]}"}) {
    { std::ofstream(state_) << text; }
    const auto saved = read_state_file(state_);
    ASSERT_FALSE(saved.has_value()) << text;
    EXPECT_EQ(saved.error().code, Errc::kInvalidArgument);
    EXPECT_THAT(saved.error().message, ::testing::HasSubstr("a field has the wrong type"));
  }
}

}  // namespace
}  // namespace acco::power
