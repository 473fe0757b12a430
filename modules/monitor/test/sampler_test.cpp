#include "acco/monitor/sampler.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/power/simulated_device.hpp"

namespace acco::monitor {
namespace {

using ::testing::HasSubstr;

class FailingSource final : public power::SensorSource {
 public:
  [[nodiscard]] std::string name() const override { return "broken"; }
  [[nodiscard]] Result<std::vector<power::DeviceSample>> read() override {
    return fail(Errc::kDeviceError, "nvmlInit_v2: Driver Not Loaded (9)");
  }
};

class DroppingSource final : public power::SensorSource {
 public:
  [[nodiscard]] std::string name() const override { return "dropping"; }
  [[nodiscard]] Result<std::vector<power::DeviceSample>> read() override {
    power::DeviceSample s;
    s.device = "9";
    s.dropped_readings = 2;
    return std::vector<power::DeviceSample>{s};
  }
};

std::vector<std::unique_ptr<power::SensorSource>> sources(int simulated) {
  std::vector<std::unique_ptr<power::SensorSource>> out;
  out.push_back(
      std::make_unique<power::SimulatedSource>(simulated, power::SimulatedScenario::kCompute));
  out.push_back(std::make_unique<FailingSource>());
  out.push_back(std::make_unique<DroppingSource>());
  return out;
}

TEST(SamplerTest, RoundPublishesEverySourceAndCountsTheOneThatFails) {
  Sampler sampler(sources(2), nullptr, {});
  EXPECT_EQ(sampler.latest(), nullptr);
  sampler.round();
  sampler.round();
  const auto latest = sampler.latest();
  ASSERT_NE(latest, nullptr);
  EXPECT_EQ(latest->snapshot.devices.size(), 3U);
  EXPECT_EQ(latest->snapshot.stats.rounds, 2U);
  EXPECT_EQ(latest->snapshot.stats.read_errors.at("broken"), 2U);
  EXPECT_EQ(latest->snapshot.stats.last_error.at("broken"), "nvmlInit_v2: Driver Not Loaded (9)");
  EXPECT_EQ(latest->snapshot.stats.dropped_readings, 4U);
  EXPECT_THAT(latest->metrics, HasSubstr("acco_sampler_read_errors_total{source=\"broken\"} 2"));
  EXPECT_THAT(latest->metrics, HasSubstr("acco_sensor_dropped_readings_total 4"));
}

TEST(SamplerTest, ProcessCountersAreTakenOncePerRoundAndRendered) {
  SamplerOptions options;
  int calls = 0;
  options.process_counters = [&] {
    ++calls;
    analyze::RuntimeDeviceActivity d;
    d.device = "0";
    d.started = static_cast<std::uint64_t>(calls);
    d.transfers = {{"host-to-device", 100, 1}};
    return analyze::ProcessCounters{{d}};
  };
  Sampler sampler(sources(1), nullptr, options);
  sampler.round();
  sampler.round();
  EXPECT_EQ(calls, 2);
  const auto latest = sampler.latest();
  ASSERT_NE(latest, nullptr);
  ASSERT_TRUE(latest->snapshot.process.has_value());
  EXPECT_EQ(latest->snapshot.process->devices.at(0).started, 2U);
  EXPECT_THAT(latest->metrics,
              HasSubstr("acco_runtime_tasks_total{device=\"0\",state=\"started\"} 2"));
  EXPECT_THAT(latest->metrics, HasSubstr("acco_transfer_bytes_total{device=\"0\",direction="
                                         "\"host-to-device\"} 100"));
}

TEST(SamplerTest, AProcessCounterThatThrowsIsAReadErrorAndTheRoundGoesOn) {
  SamplerOptions options;
  options.process_counters = []() -> analyze::ProcessCounters { throw std::runtime_error("gone"); };
  Sampler sampler(sources(1), nullptr, options);
  sampler.round();
  const auto latest = sampler.latest();
  ASSERT_NE(latest, nullptr);
  EXPECT_FALSE(latest->snapshot.process.has_value());
  EXPECT_EQ(latest->snapshot.stats.read_errors.at("process"), 1U);
  EXPECT_EQ(latest->snapshot.stats.last_error.at("process"), "gone");
  EXPECT_EQ(latest->snapshot.devices.size(), 2U);
}

TEST(SamplerTest, HistoryKeepsTheLastRoundsInOrder) {
  SamplerOptions options;
  options.history_rounds = 3;
  Sampler sampler(sources(1), nullptr, options);
  for (int i = 0; i < 5; ++i) {
    sampler.round();
  }
  const auto all = sampler.since(0);
  ASSERT_EQ(all.size(), 3U);
  EXPECT_EQ(all.front()->snapshot.stats.rounds, 3U);
  EXPECT_EQ(all.back()->snapshot.stats.rounds, 5U);
  EXPECT_EQ(sampler.since(all.back()->snapshot.time_unix_nanos).size(), 1U);
}

TEST(SamplerTest, RunsAtItsIntervalAndStopsPromptly) {
  SamplerOptions options;
  options.interval = std::chrono::milliseconds(20);
  Sampler sampler(sources(1), nullptr, options);
  std::atomic<int> observed{0};
  sampler.add_observer([&](const Published&) { ++observed; });
  sampler.start();
  EXPECT_GE(observed.load(), 1);  // the first round is taken before start() returns
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (observed.load() < 4 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto before_stop = std::chrono::steady_clock::now();
  sampler.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before_stop, std::chrono::seconds(1));
  EXPECT_GE(observed.load(), 4);
  const int after = observed.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_EQ(observed.load(), after);  // no round after stop()
  sampler.stop();                     // idempotent
}

}  // namespace
}  // namespace acco::monitor
