#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/device/host_backend.hpp"
#include "acco/sched/runtime.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::sched {
namespace {

using ::acco::testing::IsOk;

struct Fixture {
  std::unique_ptr<device::Backend> backend;
  std::unique_ptr<Runtime> runtime;
};

Fixture make(int devices, PolicyKind policy = PolicyKind::kDmda) {
  device::HostBackendOptions host;
  host.devices = devices;
  auto backend = device::make_host_backend(host);
  EXPECT_THAT(backend, IsOk());
  std::vector<DeviceSpec> specs;
  for (device::Device* d : (*backend)->devices()) {
    DeviceSpec spec;
    spec.device = d;
    specs.push_back(spec);
  }
  RuntimeOptions options;
  options.policy = policy;
  auto runtime = Runtime::create(std::move(specs), std::move(options));
  EXPECT_THAT(runtime, IsOk());
  return {std::move(*backend), std::move(*runtime)};
}

std::shared_ptr<const Codelet> codelet(std::string type, Implementation fn) {
  auto c = std::make_shared<Codelet>();
  c->type = std::move(type);
  c->implementations.emplace_back("host", std::move(fn));
  return c;
}

// Sums over every device.
RuntimeDeviceCounters total(const RuntimeCounters& counters) {
  RuntimeDeviceCounters sum;
  for (const RuntimeDeviceCounters& d : counters.devices) {
    sum.queued += d.queued;
    sum.running += d.running;
    sum.started += d.started;
    sum.finished += d.finished;
    sum.failed += d.failed;
    sum.task_seconds += d.task_seconds;
    sum.queue_wait_seconds += d.queue_wait_seconds;
    sum.transfers += d.transfers;
  }
  return sum;
}

TEST(RuntimeCountersTest, ANewRuntimeHasOneIdleEntryPerDevice) {
  Fixture f = make(3);
  const RuntimeCounters c = f.runtime->counters();
  ASSERT_EQ(c.devices.size(), 3U);
  for (std::size_t i = 0; i < c.devices.size(); ++i) {
    EXPECT_EQ(c.devices[i].device, static_cast<int>(i));
    EXPECT_FALSE(c.devices[i].name.empty());
    EXPECT_EQ(c.devices[i].started, 0U);
    EXPECT_EQ(c.devices[i].queued, 0U);
    EXPECT_EQ(c.devices[i].transfers, transfer::EngineCounters{});
  }
}

TEST(RuntimeCountersTest, EveryTaskIsStartedAndFinishedAndItsDataCountedByTheEngines) {
  Fixture f = make(3);
  constexpr std::size_t kTasks = 60;
  std::vector<std::vector<int>> data(kTasks, std::vector<int>(1024, 1));
  std::vector<DataHandle> handles;
  for (auto& d : data) {
    auto h = f.runtime->register_data(d.data(), d.size() * sizeof(int));
    ASSERT_THAT(h, IsOk());
    handles.push_back(*h);
  }
  const auto work = codelet("double", [](TaskContext& ctx) {
    auto* p = static_cast<int*>(ctx.data(0));
    for (std::size_t i = 0; i < ctx.bytes(0) / sizeof(int); ++i) {
      p[i] *= 2;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  });
  for (DataHandle h : handles) {
    Task t;
    t.codelet = work;
    t.accesses = {{h, Access::kReadWrite}};
    ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
  }
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  for (DataHandle h : handles) {
    ASSERT_THAT(f.runtime->write_back(h), IsOk());
  }

  const RuntimeCounters c = f.runtime->counters();
  const RuntimeDeviceCounters sum = total(c);
  EXPECT_EQ(sum.started, kTasks);
  EXPECT_EQ(sum.finished, kTasks);
  EXPECT_EQ(sum.failed, 0U);
  EXPECT_EQ(sum.running, 0U);
  EXPECT_EQ(sum.queued, 0U);
  EXPECT_GE(sum.task_seconds, static_cast<double>(kTasks) * 200e-6);
  EXPECT_GE(sum.queue_wait_seconds, 0.0);
  // Each datum went to a device through its engine (write_back copies with the device itself).
  EXPECT_EQ(sum.transfers.host_to_device.bytes, kTasks * 1024 * sizeof(int));
  EXPECT_EQ(sum.transfers.host_to_device.copies, kTasks);
  // The per-device split agrees with the run record.
  const RunRecord record = f.runtime->records();
  for (const DeviceRecord& d : record.devices) {
    EXPECT_EQ(c.devices[static_cast<std::size_t>(d.device)].finished, d.tasks);
  }
  // Totals since the start: reset_records leaves them.
  f.runtime->reset_records();
  EXPECT_EQ(total(f.runtime->counters()).finished, kTasks);
}

TEST(RuntimeCountersTest, ATaskThatThrowsIsCountedAsFailed) {
  Fixture f = make(2);
  for (int i = 0; i < 4; ++i) {
    Task t;
    t.codelet = codelet("bad", [](TaskContext&) { throw std::runtime_error("no"); });
    ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
  }
  EXPECT_FALSE(f.runtime->wait_all().has_value());
  const RuntimeDeviceCounters sum = total(f.runtime->counters());
  EXPECT_EQ(sum.started, 4U);
  EXPECT_EQ(sum.failed, 4U);
  EXPECT_EQ(sum.finished, 0U);
  EXPECT_EQ(sum.running, 0U);
}

TEST(RuntimeCountersTest, QueueDepthAndRunningTasksAreLive) {
  Fixture f = make(1);
  std::atomic<bool> release{false};
  Task blocker;
  blocker.codelet = codelet("block", [&](TaskContext&) {
    while (!release.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  ASSERT_THAT(f.runtime->submit(std::move(blocker)), IsOk());
  constexpr std::size_t kQueued = 5;
  for (std::size_t i = 0; i < kQueued; ++i) {
    Task t;
    t.codelet = codelet("empty", [](TaskContext&) {});
    ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  RuntimeDeviceCounters now;
  do {
    now = f.runtime->counters().devices.at(0);
  } while ((now.running != 1 || now.queued != kQueued) &&
           std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(now.running, 1U);
  EXPECT_EQ(now.queued, kQueued);
  EXPECT_EQ(now.started, 1U);
  constexpr auto kHeld = std::chrono::milliseconds(30);
  std::this_thread::sleep_for(kHeld);
  release = true;
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  now = f.runtime->counters().devices.at(0);
  EXPECT_EQ(now.running, 0U);
  EXPECT_EQ(now.queued, 0U);
  EXPECT_EQ(now.finished, kQueued + 1);
  // The queued tasks each waited for the blocker to end.
  EXPECT_GE(now.queue_wait_seconds,
            static_cast<double>(kQueued) * std::chrono::duration<double>(kHeld).count());
  EXPECT_GE(now.task_seconds, std::chrono::duration<double>(kHeld).count());
}

// Under ThreadSanitizer this is the check that the counters are read under the right locks.
TEST(RuntimeCountersTest, CountersMayBePolledFromAnotherThreadDuringARun) {
  for (const PolicyKind policy :
       {PolicyKind::kDmda, PolicyKind::kEager, PolicyKind::kWorkStealing}) {
    Fixture f = make(3, policy);
    std::vector<std::vector<int>> data(8, std::vector<int>(4096, 0));
    std::vector<DataHandle> handles;
    for (auto& d : data) {
      auto h = f.runtime->register_data(d.data(), d.size() * sizeof(int));
      ASSERT_THAT(h, IsOk());
      handles.push_back(*h);
    }
    std::atomic<bool> done{false};
    std::atomic<std::uint64_t> polls{0};
    bool monotonic = true;
    std::thread poller([&] {
      std::uint64_t last_started = 0;
      std::uint64_t last_bytes = 0;
      while (!done.load()) {
        const RuntimeDeviceCounters sum = total(f.runtime->counters());
        monotonic = monotonic && sum.started >= last_started && sum.transfers.bytes() >= last_bytes;
        last_started = sum.started;
        last_bytes = sum.transfers.bytes();
        ++polls;
      }
    });
    // The poller has read the counters once before any work starts: on a loaded machine it might
    // otherwise first run after the last task.
    while (polls.load() == 0) {
      std::this_thread::yield();
    }
    const auto inc = codelet("inc", [](TaskContext& ctx) { ++*static_cast<int*>(ctx.data(0)); });
    constexpr int kTasks = 300;
    for (int i = 0; i < kTasks; ++i) {
      Task t;
      t.codelet = inc;
      t.accesses = {{handles[static_cast<std::size_t>(i) % handles.size()], Access::kReadWrite}};
      ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
    }
    ASSERT_THAT(f.runtime->wait_all(), IsOk());
    done = true;
    poller.join();
    EXPECT_TRUE(monotonic) << to_string(policy);
    EXPECT_GT(polls.load(), 0U);
    EXPECT_EQ(total(f.runtime->counters()).finished, static_cast<std::uint64_t>(kTasks))
        << to_string(policy);
  }
}

}  // namespace
}  // namespace acco::sched
