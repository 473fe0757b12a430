// The runtime against injected device faults (device::with_faults on the host backend): a copy
// that fails, a device lost mid-run, an allocation that fails, a queue that stalls. No task is
// lost: each runs (elsewhere) or fails with its reason; the failed device and the moves are in
// the records and the Chrome trace.
#include "acco/device/fault_injection.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/device/host_backend.hpp"
#include "acco/sched/record.hpp"
#include "acco/sched/runtime.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::sched {
namespace {

using ::acco::testing::IsOk;
using ::testing::HasSubstr;

constexpr int kHandles = 8;
constexpr int kTasks = 40;
constexpr std::size_t kInts = 1024;

struct FaultyRun {
  std::unique_ptr<device::Backend> backend;
  std::unique_ptr<device::Device> faulty;  // device 0 with the plan's faults
  std::unique_ptr<Runtime> runtime;
  std::vector<std::vector<int>> data;
  std::vector<DataHandle> handles;
};

// Two host devices, device 0 behind `plan`; round-robin so device 0 gets its share. Without
// prefetching every copy is a demand copy, whose failure retires its device.
FaultyRun make_run(const std::string& plan, bool prefetch = true) {
  FaultyRun r;
  device::HostBackendOptions host;
  host.devices = 2;
  // A rated link: the engine measures none, so injected counts start with the runtime's own work.
  host.link = device::parse_link("pcie4x16").value();
  auto backend = device::make_host_backend(host);
  EXPECT_THAT(backend, IsOk());
  r.backend = std::move(*backend);
  auto parsed = device::parse_fault_plan(plan);
  EXPECT_THAT(parsed, IsOk());
  r.faulty = device::with_faults(*r.backend->devices()[0], *parsed);
  std::vector<DeviceSpec> specs(2);
  specs[0].device = r.faulty.get();
  specs[1].device = r.backend->devices()[1];
  RuntimeOptions options;
  options.policy = PolicyKind::kRoundRobin;
  if (!prefetch) {
    options.prefetch_depth = 0;
  }
  auto runtime = Runtime::create(std::move(specs), std::move(options));
  EXPECT_THAT(runtime, IsOk());
  r.runtime = std::move(*runtime);
  r.data.assign(kHandles, std::vector<int>(kInts, 0));
  for (auto& d : r.data) {
    auto h = r.runtime->register_data(d.data(), d.size() * sizeof(int));
    EXPECT_THAT(h, IsOk());
    r.handles.push_back(*h);
  }
  return r;
}

std::shared_ptr<const Codelet> add_one() {
  auto c = std::make_shared<Codelet>();
  c->type = "add";
  c->implementations.emplace_back("host", [](TaskContext& ctx) {
    auto* p = static_cast<int*>(ctx.data(0));
    for (std::size_t i = 0; i < ctx.bytes(0) / sizeof(int); ++i) {
      p[i] += 1;
    }
  });
  return c;
}

// kTasks tasks, each adding 1 to every int of handle i % kHandles.
void submit_all(FaultyRun& r) {
  const auto c = add_one();
  for (int i = 0; i < kTasks; ++i) {
    Task t;
    t.codelet = c;
    t.accesses = {{r.handles[static_cast<std::size_t>(i % kHandles)], Access::kReadWrite}};
    ASSERT_THAT(r.runtime->submit(std::move(t)), IsOk());
  }
}

// Every task done, every int added to kTasks / kHandles times, back on the host.
void expect_nothing_lost(FaultyRun& r) {
  ASSERT_THAT(r.runtime->wait_all(), IsOk());
  const RunRecord rec = r.runtime->records();
  ASSERT_EQ(rec.tasks.size(), static_cast<std::size_t>(kTasks));
  for (const TaskRecord& t : rec.tasks) {
    EXPECT_EQ(t.status, TaskStatus::kDone) << t.error;
  }
  for (std::size_t h = 0; h < r.handles.size(); ++h) {
    ASSERT_THAT(r.runtime->unregister(r.handles[h]), IsOk());
    EXPECT_EQ(r.data[h].front(), kTasks / kHandles) << "handle " << h;
    EXPECT_EQ(r.data[h].back(), kTasks / kHandles) << "handle " << h;
  }
}

// Device 0 failed for `why`; its tasks say they moved; the trace marks the failure.
void expect_device0_failed_and_shown(const FaultyRun& r, const std::string& why) {
  const RunRecord rec = r.runtime->records();
  ASSERT_EQ(rec.devices.size(), 2U);
  EXPECT_TRUE(rec.devices[0].failed);
  EXPECT_THAT(rec.devices[0].failure, HasSubstr(why));
  EXPECT_GE(rec.devices[0].failed_at.count(), 0);
  EXPECT_FALSE(rec.devices[1].failed);
  const auto running = std::count_if(rec.tasks.begin(), rec.tasks.end(), [](const TaskRecord& t) {
    return t.reason.find("re-placed: dev0 failed (") != std::string::npos;
  });
  EXPECT_GE(running, 1);
  // The moved count also holds the tasks that only waited in its queue.
  EXPECT_GE(rec.devices[0].moved_away, static_cast<std::size_t>(running));
  EXPECT_EQ(rec.devices[1].moved_away, 0U);
  const auto trace = chrome_trace(rec);
  const auto& events = trace["traceEvents"];
  const auto failed = std::find_if(events.begin(), events.end(), [](const auto& e) {
    return e.value("ph", "") == "i" && e.value("name", "") == "device failed";
  });
  ASSERT_NE(failed, events.end());
  EXPECT_EQ((*failed)["tid"], 0);
  EXPECT_THAT((*failed)["args"]["why"].template get<std::string>(), HasSubstr(why));
}

TEST(FaultInjectionTest, APrefetchThatFailsIsRetriedAndTheRetryIsInTheTrace) {
  FaultyRun r = make_run("copy-fails:1");
  submit_all(r);
  expect_nothing_lost(r);
  const RunRecord rec = r.runtime->records();
  EXPECT_FALSE(rec.devices[0].failed);
  const auto failed = std::find_if(rec.transfers.begin(), rec.transfers.end(),
                                   [](const TransferRecord& t) { return !t.error.empty(); });
  ASSERT_NE(failed, rec.transfers.end());
  EXPECT_TRUE(failed->prefetch);
  EXPECT_EQ(failed->to, 1);  // device 0's memory node
  EXPECT_THAT(failed->error, HasSubstr("injected fault: host 0"));
  // The same data reached device 0 afterwards.
  EXPECT_TRUE(std::any_of(rec.transfers.begin(), rec.transfers.end(), [&](const TransferRecord& t) {
    return t.error.empty() && t.handle == failed->handle && t.to == 1;
  }));
  const auto trace = chrome_trace(rec);
  const auto& events = trace["traceEvents"];
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [](const auto& e) {
    // Metadata events have no "cat": value(), not operator[] on a const document.
    return e.value("cat", "") == "transfer" && e["args"].contains("error") &&
           e.value("name", "").find("(failed)") != std::string::npos;
  }));
}

TEST(FaultInjectionTest, ADemandCopyThatFailsRetiresTheDeviceAndItsTasksRunElsewhere) {
  FaultyRun r = make_run("copy-fails:1", false);
  submit_all(r);
  expect_nothing_lost(r);
  expect_device0_failed_and_shown(r, "injected fault: host 0");
  expect_device0_failed_and_shown(r, "copy 1 failed");
}

TEST(FaultInjectionTest, ADeviceLostMidRunHasItsWorkRunElsewhere) {
  // Read-only inputs: what the lost device computed is not needed after it is gone.
  FaultyRun r = make_run("lost-after:1", false);
  std::atomic<int> ran{0};
  auto c = std::make_shared<Codelet>();
  c->type = "read";
  c->implementations.emplace_back("host", [&ran](TaskContext& ctx) {
    const auto* p = static_cast<const int*>(ctx.data(0));
    ran += p[0] == 0 ? 1 : 0;
  });
  for (int i = 0; i < kTasks; ++i) {
    Task t;
    t.codelet = c;
    t.accesses = {{r.handles[static_cast<std::size_t>(i % kHandles)], Access::kRead}};
    ASSERT_THAT(r.runtime->submit(std::move(t)), IsOk());
  }
  ASSERT_THAT(r.runtime->wait_all(), IsOk());
  EXPECT_EQ(ran.load(), kTasks);
  for (const TaskRecord& t : r.runtime->records().tasks) {
    EXPECT_EQ(t.status, TaskStatus::kDone) << t.error;
  }
  expect_device0_failed_and_shown(r, "the device is lost");
}

TEST(FaultInjectionTest, DataOnlyALostDeviceHeldFailsItsReadersWithTheReason) {
  // Written on device 0, then device 0 is lost before anyone copied the result: the readers
  // fail, each with why; nothing hangs and the other work finishes.
  FaultyRun r = make_run("lost-after:1", false);
  submit_all(r);
  const auto status = r.runtime->wait_all();
  for (const TaskRecord& t : r.runtime->records().tasks) {
    EXPECT_NE(t.status, TaskStatus::kPending);
    if (t.status == TaskStatus::kFailed) {
      EXPECT_THAT(t.error, ::testing::AnyOf(HasSubstr("only valid copy was on dev0"),
                                            HasSubstr("dependency task")));
    }
  }
  if (!status) {
    EXPECT_THAT(status.error().message, HasSubstr("the device is lost"));
  }
  expect_device0_failed_and_shown(r, "the device is lost");
}

TEST(FaultInjectionTest, AnAllocationThatFailsRetiresTheDeviceAndItsTasksRunElsewhere) {
  // The engine allocates twice when it starts (a probe of the device's memory, a staging slot
  // for batches); the third allocation is the runtime's first replica.
  FaultyRun r = make_run("alloc-fails:3", false);
  submit_all(r);
  expect_nothing_lost(r);
  expect_device0_failed_and_shown(r, "device allocation 3 failed (out of memory)");
}

TEST(FaultInjectionTest, AStagingBufferThatCannotBePinnedInPlaceFallsBackToPinnedMemory) {
  device::HostBackendOptions host;
  host.devices = 2;
  host.link = device::parse_link("pcie4x16").value();
  auto backend = device::make_host_backend(host);
  ASSERT_THAT(backend, IsOk());
  auto faulty = device::with_faults(*(*backend)->devices()[0],
                                    device::parse_fault_plan("host-alloc-fails:1").value());
  std::vector<DeviceSpec> specs(2);
  specs[0].device = faulty.get();
  specs[1].device = (*backend)->devices()[1];
  // The engine's staging pool pins a mapping in place first (host allocation 1, refused here),
  // then asks the device for pinned memory (2): the runtime starts and runs.
  auto runtime = Runtime::create(std::move(specs), RuntimeOptions{});
  ASSERT_THAT(runtime, IsOk());
  std::atomic<int> ran{0};
  auto c = std::make_shared<Codelet>();
  c->type = "count";
  c->implementations.emplace_back("host", [&ran](TaskContext&) { ++ran; });
  for (int i = 0; i < 10; ++i) {
    Task t;
    t.codelet = c;
    ASSERT_THAT((*runtime)->submit(std::move(t)), IsOk());
  }
  ASSERT_THAT((*runtime)->wait_all(), IsOk());
  EXPECT_EQ(ran.load(), 10);
}

TEST(FaultInjectionTest, AStallingQueueSlowsTheDeviceAndLosesNothing) {
  FaultyRun r = make_run("stall:20ms/2");
  submit_all(r);
  expect_nothing_lost(r);
  const RunRecord rec = r.runtime->records();
  EXPECT_FALSE(rec.devices[0].failed);
  EXPECT_TRUE(rec.devices[0].failure.empty());
  EXPECT_GT(rec.devices[0].tasks, 0U);
}

TEST(FaultPlanTest, ParsesEachFaultAndNamesWhatItCannotRead) {
  auto plan = device::parse_fault_plan("copy-fails:3,lost-after:10,alloc-fails:2,stall:50ms/4");
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->fail_copy, 3U);
  EXPECT_EQ(plan->lost_after_copies, 10U);
  EXPECT_EQ(plan->fail_allocation, 2U);
  EXPECT_EQ(plan->stall, std::chrono::milliseconds(50));
  EXPECT_EQ(plan->stall_every, 4U);
  EXPECT_EQ(device::to_string(*plan), "copy-fails:3,lost-after:10,alloc-fails:2,stall:50ms/4");
  EXPECT_EQ(device::parse_fault_plan(device::to_string(*plan)).value(), *plan);
  auto every = device::parse_fault_plan("stall:1s");
  ASSERT_THAT(every, IsOk());
  EXPECT_EQ(every->stall_every, 1U);
  EXPECT_THAT(device::parse_fault_plan("copy-fails:0").error().message,
              HasSubstr("'copy-fails:0': expected a count of 1 or more"));
  EXPECT_THAT(device::parse_fault_plan("explode:1").error().message,
              HasSubstr("'explode:1' is not a fault (expected copy-fails:N"));
  EXPECT_EQ(device::parse_fault_plan("host-alloc-fails:2").value().fail_host_allocation, 2U);
  EXPECT_THAT(device::parse_fault_plan("stall:2m").error().message,
              HasSubstr("expected a stall of 1ms to 60s"));
  EXPECT_FALSE(device::parse_fault_plan(""));
}

}  // namespace
}  // namespace acco::sched
