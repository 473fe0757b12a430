#include "acco/sched/runtime.hpp"

#include <atomic>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/device/host_backend.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::sched {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;

using ::testing::HasSubstr;

struct Fixture {
  std::unique_ptr<device::Backend> backend;
  std::unique_ptr<Runtime> runtime;
};

Fixture make(int devices, RuntimeOptions options = {}, std::uint64_t budget = 0,
             std::vector<std::string> kinds = {}) {
  device::HostBackendOptions host;
  host.devices = devices;
  auto backend = device::make_host_backend(host);
  EXPECT_THAT(backend, IsOk());
  std::vector<DeviceSpec> specs;
  for (device::Device* d : (*backend)->devices()) {
    DeviceSpec spec;
    spec.device = d;
    spec.memory_budget_bytes = budget;
    if (!kinds.empty()) {
      spec.kind = kinds[specs.size()];
    }
    specs.push_back(spec);
  }
  auto runtime = Runtime::create(std::move(specs), std::move(options));
  EXPECT_THAT(runtime, IsOk());
  return {std::move(*backend), std::move(*runtime)};
}

std::shared_ptr<const Codelet> codelet(std::string type, Implementation fn,
                                       std::vector<std::string> kinds = {"host"}) {
  auto c = std::make_shared<Codelet>();
  c->type = std::move(type);
  for (auto& k : kinds) {
    c->implementations.emplace_back(k, fn);
  }
  return c;
}

// Adds `value` to every int of its one RW access.
Implementation add(int value) {
  return [value](TaskContext& ctx) {
    auto* p = static_cast<int*>(ctx.data(0));
    for (std::size_t i = 0; i < ctx.bytes(0) / sizeof(int); ++i) {
      p[i] += value;
    }
  };
}

// Registers each vector as one datum; the handles of those that registered, in order.
std::vector<DataHandle> register_all(Runtime& runtime, std::vector<std::vector<int>>& data) {
  std::vector<DataHandle> handles;
  for (auto& d : data) {
    auto h = runtime.register_data(d.data(), d.size() * sizeof(int));
    EXPECT_THAT(h, IsOk());
    if (h) {
      handles.push_back(*h);
    }
  }
  return handles;
}

TEST(RuntimeTest, CreateRejectsNoDevicesAndNullDevices) {
  auto none = Runtime::create({});
  ASSERT_THAT(none, StatusIs(Errc::kInvalidArgument));
  auto null = Runtime::create({DeviceSpec{}});
  ASSERT_FALSE(null.has_value());
  EXPECT_THAT(null.error().message, HasSubstr("device 0 is null"));
}

TEST(RuntimeTest, EveryIndependentTaskRunsExactlyOnceUnderEveryPolicy) {
  for (PolicyKind policy : all_policies()) {
    RuntimeOptions options;
    options.policy = policy;
    Fixture f = make(3, options);
    std::vector<std::atomic<int>> runs(200);
    for (std::size_t i = 0; i < runs.size(); ++i) {
      Task t;
      t.codelet = codelet("empty", [&runs, i](TaskContext&) { runs[i].fetch_add(1); });
      ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
    }
    ASSERT_THAT(f.runtime->wait_all(), IsOk()) << to_string(policy);
    for (auto& r : runs) {
      EXPECT_EQ(r.load(), 1) << to_string(policy);
    }
    const RunRecord rec = f.runtime->records();
    EXPECT_EQ(rec.tasks.size(), runs.size());
    EXPECT_EQ(rec.tasks_held, runs.size());  // records kept: nothing is dropped
    EXPECT_EQ(rec.policy, to_string(policy));
  }
}

TEST(RuntimeTest, AReadWriteChainRunsInOrderAcrossDevicesAndWritesBack) {
  for (PolicyKind policy : {PolicyKind::kRoundRobin, PolicyKind::kDmda, PolicyKind::kEager,
                            PolicyKind::kWorkStealing}) {
    RuntimeOptions options;
    options.policy = policy;
    Fixture f = make(3, options);
    std::vector<int> data(1024, 0);
    auto h = f.runtime->register_data(data.data(), data.size() * sizeof(int));
    ASSERT_THAT(h, IsOk());
    // Each task checks it sees the previous value, then adds one.
    std::atomic<int> order_errors{0};
    for (int i = 0; i < 50; ++i) {
      Task t;
      t.codelet = codelet("step", [i, &order_errors](TaskContext& ctx) {
        auto* p = static_cast<int*>(ctx.data(0));
        if (p[0] != i || p[1023] != i) {
          order_errors.fetch_add(1);
        }
        for (int k = 0; k < 1024; ++k) {
          p[k] += 1;
        }
      });
      t.accesses = {{*h, Access::kReadWrite}};
      ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
    }
    ASSERT_THAT(f.runtime->wait_all(), IsOk());
    EXPECT_EQ(order_errors.load(), 0) << to_string(policy);
    ASSERT_THAT(f.runtime->unregister(*h), IsOk());
    EXPECT_EQ(data[0], 50);
    EXPECT_EQ(data[1023], 50);
  }
}

TEST(RuntimeTest, ReadersSeeTheLastWriteAndTheNextWriterWaitsForThem) {
  RuntimeOptions options;
  options.policy = PolicyKind::kRoundRobin;
  Fixture f = make(4, options);
  std::vector<int> data(256, 7);
  auto h = f.runtime->register_data(data.data(), data.size() * sizeof(int));
  ASSERT_THAT(h, IsOk());
  std::atomic<int> wrong{0};
  Task write;
  write.codelet = codelet("write", [](TaskContext& ctx) {
    std::memset(ctx.data(0), 0, ctx.bytes(0));
    static_cast<int*>(ctx.data(0))[0] = 42;
  });
  write.accesses = {{*h, Access::kWrite}};
  ASSERT_THAT(f.runtime->submit(write), IsOk());
  for (int i = 0; i < 8; ++i) {
    Task read;
    read.codelet = codelet("read", [&wrong](TaskContext& ctx) {
      if (static_cast<int*>(ctx.data(0))[0] != 42) {
        wrong.fetch_add(1);
      }
    });
    read.accesses = {{*h, Access::kRead}};
    ASSERT_THAT(f.runtime->submit(std::move(read)), IsOk());
  }
  Task rewrite;
  rewrite.codelet =
      codelet("write", [](TaskContext& ctx) { static_cast<int*>(ctx.data(0))[0] = 43; });
  rewrite.accesses = {{*h, Access::kReadWrite}};
  ASSERT_THAT(f.runtime->submit(rewrite), IsOk());
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  EXPECT_EQ(wrong.load(), 0);
  ASSERT_THAT(f.runtime->write_back(*h), IsOk());
  EXPECT_EQ(data[0], 43);
  EXPECT_EQ(data[1], 0);
  const RunRecord rec = f.runtime->records();
  EXPECT_FALSE(rec.links.empty());
  std::uint64_t moved = 0;
  for (const LinkRecord& l : rec.links) {
    moved += l.bytes;
  }
  EXPECT_GT(moved, 0U);
}

TEST(RuntimeTest, AThrowingTaskFailsItsDependantsAndLeavesIndependentWorkRunning) {
  Fixture f = make(2);
  std::vector<int> a(16, 0);
  std::vector<int> b(16, 0);
  auto ha = f.runtime->register_data(a.data(), a.size() * sizeof(int));
  auto hb = f.runtime->register_data(b.data(), b.size() * sizeof(int));
  ASSERT_TRUE(ha && hb);
  Task boom;
  boom.codelet = codelet("boom", [](TaskContext&) { throw std::runtime_error("kernel exploded"); });
  boom.name = "boom";
  boom.accesses = {{*ha, Access::kReadWrite}};
  auto boom_id = f.runtime->submit(boom);
  Task after;
  after.codelet = codelet("add", add(1));
  after.name = "after-boom";
  after.accesses = {{*ha, Access::kReadWrite}};
  auto after_id = f.runtime->submit(after);
  Task independent;
  independent.codelet = codelet("add", add(5));
  independent.accesses = {{*hb, Access::kReadWrite}};
  ASSERT_TRUE(boom_id && after_id && f.runtime->submit(independent));
  auto status = f.runtime->wait_all();
  ASSERT_FALSE(status.has_value());
  EXPECT_THAT(status.error().message, HasSubstr("2 tasks failed"));
  EXPECT_THAT(status.error().message, HasSubstr("kernel exploded"));
  EXPECT_THAT(status.error().message,
              HasSubstr(fmt::format("dependency task {} failed", *boom_id)));
  ASSERT_EQ(f.runtime->failures().size(), 2U);
  ASSERT_THAT(f.runtime->write_back(*hb), IsOk());
  EXPECT_EQ(b[0], 5);
  auto lost = f.runtime->write_back(*ha);
  ASSERT_FALSE(lost.has_value());
  EXPECT_THAT(lost.error().message, HasSubstr("failed"));
  // A second wait_all reports nothing new.
  EXPECT_THAT(f.runtime->wait_all(), IsOk());
}

TEST(RuntimeTest, AFailedReaderDoesNotFailTheNextWriter) {
  Fixture f = make(2);
  std::vector<int> data(16, 0);
  auto h = f.runtime->register_data(data.data(), data.size() * sizeof(int));
  ASSERT_THAT(h, IsOk());
  Task reader;
  reader.codelet = codelet("read", [](TaskContext&) { throw std::runtime_error("bad read"); });
  reader.accesses = {{*h, Access::kRead}};
  ASSERT_THAT(f.runtime->submit(reader), IsOk());
  Task writer;  // ordered after the reader (write after read), but the data is intact
  writer.codelet = codelet("add", add(3));
  writer.accesses = {{*h, Access::kReadWrite}};
  ASSERT_THAT(f.runtime->submit(writer), IsOk());
  auto status = f.runtime->wait_all();
  ASSERT_FALSE(status.has_value());
  EXPECT_THAT(status.error().message, HasSubstr("1 task failed"));
  ASSERT_THAT(f.runtime->write_back(*h), IsOk());
  EXPECT_EQ(data[0], 3);
}

TEST(RuntimeTest, ShortTasksWhoseDataIsHereRunInBatchesWithTheSameResults) {
  // One device held by a gate task while the queue fills: the short, calibrated tasks behind it
  // run several per lock hand-off. Chains on eight data, independent counters, and a task that
  // throws in the middle of a batch must all come out as they would one at a time.
  Fixture f = make(1);
  std::vector<std::vector<int>> data(8, std::vector<int>(16, 0));
  data[7].resize(17, 0);  // its step throws on seeing 20
  const std::vector<DataHandle> handles = register_all(*f.runtime, data);
  ASSERT_EQ(handles.size(), data.size());
  auto step = codelet("step", [](TaskContext& ctx) {
    if (ctx.bytes(0) == 17 * sizeof(int) && static_cast<int*>(ctx.data(0))[0] == 20) {
      throw std::runtime_error("batch boom");
    }
    add(1)(ctx);
  });
  std::atomic<int> counted{0};
  auto count = codelet("count", [&counted](TaskContext&) { counted.fetch_add(1); });
  const auto submit_step = [&](std::size_t h) {
    Task t;
    t.codelet = step;
    t.accesses = {{handles[h], Access::kReadWrite}};
    return f.runtime->submit(std::move(t)).has_value();
  };
  const auto submit_count = [&] {
    Task t;
    t.codelet = count;
    return f.runtime->submit(std::move(t)).has_value();
  };
  // Calibration: two runs per datum (their replicas are now on the device), five counters.
  for (std::size_t i = 0; i < 16; ++i) {
    ASSERT_TRUE(submit_step(i % 8));
  }
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(submit_count());
  }
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  f.runtime->reset_records();

  std::atomic<bool> open{false};
  Task gate;
  gate.codelet = codelet("gate", [&open](TaskContext&) {
    while (!open.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  ASSERT_THAT(f.runtime->submit(std::move(gate)), IsOk());
  for (int round = 0; round < 30; ++round) {
    for (std::size_t h = 0; h < 8; ++h) {
      ASSERT_TRUE(submit_step(h));
    }
    for (int i = 0; i < 4; ++i) {
      ASSERT_TRUE(submit_count());
    }
  }
  open.store(true);
  auto status = f.runtime->wait_all();
  ASSERT_FALSE(status.has_value());
  // Datum 7 goes 2 -> 20 in 18 steps; the 19th throws and the 11 after it fail as dependants.
  EXPECT_THAT(status.error().message, HasSubstr("12 tasks failed"));
  EXPECT_THAT(status.error().message, HasSubstr("batch boom"));
  EXPECT_EQ(counted.load(), 5 + 120);
  for (std::size_t h = 0; h < 7; ++h) {
    ASSERT_THAT(f.runtime->write_back(handles[h]), IsOk());
    EXPECT_EQ(data[h][0], 32) << h;
    EXPECT_EQ(data[h][15], 32) << h;
  }
  const RunRecord rec = f.runtime->records();
  ASSERT_EQ(rec.devices.size(), 1U);
  EXPECT_GT(rec.devices[0].batched, 0U);
  EXPECT_LE(rec.devices[0].batched, rec.devices[0].tasks);
  EXPECT_GT(rec.devices[0].overhead.count(), 0);
}

// The same step as add(1), submitted to the device's queue and run there after the
// implementation has returned, as a GPU kernel is. `in_flight` counts tasks launched and not
// finished; `most` keeps its largest value seen at a launch.
Implementation add_on_queue(std::atomic<int>& in_flight, std::atomic<int>& most,
                            std::chrono::microseconds hold = std::chrono::microseconds(0)) {
  return [&in_flight, &most, hold](TaskContext& ctx) {
    auto* p = static_cast<int*>(ctx.data(0));
    const std::size_t n = ctx.bytes(0) / sizeof(int);
    const int now = in_flight.fetch_add(1) + 1;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    Status launched = ctx.queue().host_task([p, n, hold, &in_flight] {
      std::this_thread::sleep_for(hold);
      for (std::size_t i = 0; i < n; ++i) {
        p[i] += 1;
      }
      in_flight.fetch_sub(1);
    });
    if (!launched) {
      throw std::runtime_error(launched.error().message);
    }
  };
}

TEST(RuntimeTest, AsynchronousTasksRunOnTheDeviceQueueInOrderOneLaunchedBehindTheOther) {
  // One device; a gate task (asynchronous too) holds its queue while 40 steps on 4 data queue
  // up behind it: each is launched while the one before runs, never more than two at a time,
  // and the results are those of running them one by one.
  Fixture f = make(1);
  std::vector<std::vector<int>> data(4, std::vector<int>(256, 0));
  const std::vector<DataHandle> handles = register_all(*f.runtime, data);
  ASSERT_EQ(handles.size(), data.size());
  std::atomic<int> in_flight{0};
  std::atomic<int> most{0};
  auto step = codelet("step", add_on_queue(in_flight, most, std::chrono::microseconds(200)));
  std::atomic<bool> open{false};
  Task gate;
  gate.codelet = codelet("gate", [&open](TaskContext& ctx) {
    ASSERT_TRUE(ctx.queue()
                    .host_task([&open] {
                      while (!open.load()) {
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                      }
                    })
                    .has_value());
  });
  ASSERT_THAT(f.runtime->submit(std::move(gate)), IsOk());
  for (int round = 0; round < 10; ++round) {
    for (DataHandle h : handles) {
      Task t;
      t.codelet = step;
      t.accesses = {{h, Access::kReadWrite}};
      ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
    }
  }
  open.store(true);
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  EXPECT_EQ(in_flight.load(), 0);
  EXPECT_EQ(most.load(), 2);  // launched behind the running one: the pipeline's depth
  for (std::size_t i = 0; i < handles.size(); ++i) {
    ASSERT_THAT(f.runtime->unregister(handles[i]), IsOk());
    EXPECT_EQ(data[i][0], 10) << i;
    EXPECT_EQ(data[i][255], 10) << i;
  }
  // Run times are the queue's: each step holds it at least 200 us, and they do not overlap.
  const RunRecord rec = f.runtime->records();
  ASSERT_EQ(rec.tasks.size(), 41U);
  std::vector<TaskRecord> steps(rec.tasks.begin() + 1, rec.tasks.end());
  std::sort(steps.begin(), steps.end(),
            [](const TaskRecord& a, const TaskRecord& b) { return a.started < b.started; });
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_GE(steps[i].finished - steps[i].started, std::chrono::microseconds(200)) << i;
    if (i > 0) {
      EXPECT_GE(steps[i].started, steps[i - 1].finished) << i;
    }
  }
}

// One device and asynchronous tasks, each on a datum holding its id: the work it submits to
// the device's queue holds the queue for 200 ms (id 1) or 1 ms and notes the order the work
// ran in. Task 1 runs once first, so the codelet is known to be asynchronous and its time is
// measured (200 ms), as the launch rules need.
struct LaunchOrder {
  Fixture f = make(1);
  std::vector<int> ids = {1, 2, 3};
  std::vector<DataHandle> handles;
  std::mutex mu;
  std::vector<int> order;
  std::shared_ptr<const Codelet> hold;

  LaunchOrder() {
    for (int& id : ids) {
      auto h = f.runtime->register_data(&id, sizeof(id));
      EXPECT_THAT(h, IsOk());
      handles.push_back(*h);
    }
    hold = codelet("hold", [this](TaskContext& ctx) {
      const int id = *static_cast<const int*>(ctx.data(0));
      ASSERT_TRUE(ctx.queue()
                      .host_task([this, id] {
                        {
                          const std::lock_guard<std::mutex> guard(mu);
                          order.push_back(id);
                        }
                        std::this_thread::sleep_for(std::chrono::milliseconds(id == 1 ? 200 : 1));
                      })
                      .has_value());
    });
    submit(1, Access::kRead, 0);
    EXPECT_THAT(f.runtime->wait_all(), IsOk());
    order.clear();
  }
  TaskId submit(int id, Access mode, int priority, std::vector<TaskId> depends_on = {}) {
    Task t;
    t.codelet = hold;
    t.accesses = {{handles[static_cast<std::size_t>(id - 1)], mode}};
    t.priority = priority;
    t.depends_on = std::move(depends_on);
    auto submitted = f.runtime->submit(std::move(t));
    EXPECT_THAT(submitted, IsOk());
    return submitted.value_or(0);
  }
  // Until the work of the first task has started on the device (at most 10 s).
  bool started() {
    for (int i = 0; i < 10000; ++i) {
      {
        const std::lock_guard<std::mutex> guard(mu);
        if (!order.empty()) {
          return true;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }
  std::vector<int> finish() {
    EXPECT_THAT(f.runtime->wait_all(), IsOk());
    for (DataHandle h : handles) {
      EXPECT_THAT(f.runtime->unregister(h), IsOk());
    }
    return order;
  }
};

TEST(RuntimeTest, ATaskIsLaunchedBehindTheRunningOneOnlyNearItsEndSoPriorityStillCounts) {
  // While task 1 runs, a low-priority task (2) waits behind it and a high-priority one (3) is
  // pushed once task 1's work has started: the next task is launched only shortly before the
  // running work's expected end, by when task 3 heads the queue, so 3 runs before 2.
  // (Launched at once, 2 would have gone first.)
  LaunchOrder run;
  run.submit(1, Access::kRead, 0);
  run.submit(2, Access::kRead, 0);
  ASSERT_TRUE(run.started());
  run.submit(3, Access::kRead, 10);
  EXPECT_EQ(run.finish(), (std::vector<int>{1, 3, 2}));
}

TEST(RuntimeTest, NothingIsLaunchedAheadOfATaskThatTheRunningOneReleasesWithHigherPriority) {
  // Task 1 runs; a high-priority task that writes its datum, and names it as a dependency too
  // (two edges from one task), waits for it (reading id 1 there, it holds the queue 200 ms
  // too), and a low-priority task (2) is queued. Launched behind task 1, task 2 would delay the
  // released one by its whole run: it waits for task 1 to complete instead, and the released
  // task goes first.
  LaunchOrder run;
  const TaskId first = run.submit(1, Access::kRead, 0);
  run.submit(1, Access::kReadWrite, 10, {first});
  run.submit(2, Access::kRead, 0);
  EXPECT_EQ(run.finish(), (std::vector<int>{1, 1, 2}));
}

TEST(RuntimeTest, AContextsQueueIsOnlyForTheRunningImplementation) {
  // An implementation that keeps its context and asks for the queue after returning gets a
  // clear error, not another task's queue.
  Fixture f = make(1);
  TaskContext* kept = nullptr;
  Task t;
  t.codelet = codelet("keep", [&kept](TaskContext& ctx) { kept = &ctx; });
  ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  ASSERT_NE(kept, nullptr);
  try {
    (void)kept->queue();
    ADD_FAILURE() << "queue() outside a running implementation returned";
  } catch (const DeviceFailure& e) {
    EXPECT_THAT(e.what(), HasSubstr("belongs to no running task"));
  }
}

TEST(RuntimeTest, AsynchronousChainsAcrossDevicesSeeEveryWriteInOrder) {
  // Tasks short enough to be batched too: every policy, three devices, RW chains that move
  // between devices; a task that finds the wrong value counts an error.
  for (PolicyKind policy : {PolicyKind::kRoundRobin, PolicyKind::kDmda, PolicyKind::kEager,
                            PolicyKind::kWorkStealing}) {
    Fixture f = make(3, [&] {
      RuntimeOptions o;
      o.policy = policy;
      return o;
    }());
    std::vector<std::vector<int>> data(3, std::vector<int>(64, 0));
    const std::vector<DataHandle> handles = register_all(*f.runtime, data);
    ASSERT_EQ(handles.size(), data.size());
    std::atomic<int> order_errors{0};
    for (int i = 0; i < 60; ++i) {
      Task t;
      t.codelet = codelet("step", [i, &order_errors](TaskContext& ctx) {
        auto* p = static_cast<int*>(ctx.data(0));
        const auto* q = static_cast<const int*>(ctx.data(1));
        (void)ctx.queue().host_task([p, q, i, &order_errors] {
          if (p[0] != i / 3 || p[63] != i / 3 || q[0] > i / 3 + 1) {
            order_errors.fetch_add(1);
          }
          for (int k = 0; k < 64; ++k) {
            p[k] += 1;
          }
        });
      });
      t.accesses = {{handles[static_cast<std::size_t>(i % 3)], Access::kReadWrite},
                    {handles[static_cast<std::size_t>((i + 1) % 3)], Access::kRead}};
      ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
    }
    ASSERT_THAT(f.runtime->wait_all(), IsOk()) << to_string(policy);
    EXPECT_EQ(order_errors.load(), 0) << to_string(policy);
    for (std::size_t i = 0; i < handles.size(); ++i) {
      ASSERT_THAT(f.runtime->unregister(handles[i]), IsOk());
      EXPECT_EQ(data[i][0], 20) << to_string(policy);
      EXPECT_EQ(data[i][63], 20) << to_string(policy);
    }
  }
}

TEST(RuntimeTest, WhatAnAsynchronousTaskThrowsFailsItAndItsDependantsOnly) {
  // The failing task's queue keeps running the task launched behind it, which succeeds.
  Fixture f = make(1);
  std::vector<std::vector<int>> data(2, std::vector<int>(16, 0));
  const std::vector<DataHandle> handles = register_all(*f.runtime, data);
  ASSERT_EQ(handles.size(), 2U);
  const DataHandle ha = handles[0];
  const DataHandle hb = handles[1];
  const std::vector<int>& b = data[1];
  std::atomic<int> in_flight{0};
  std::atomic<int> most{0};
  auto step = codelet("step", add_on_queue(in_flight, most));
  Task warm;  // the codelet is known to be asynchronous before the rest is submitted
  warm.codelet = step;
  warm.accesses = {{hb, Access::kReadWrite}};
  ASSERT_THAT(f.runtime->submit(warm), IsOk());
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  Task boom;
  boom.codelet = codelet("boom", [](TaskContext& ctx) {
    (void)ctx.queue().host_task([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      throw std::runtime_error("kernel exploded on the queue");
    });
  });
  boom.accesses = {{ha, Access::kReadWrite}};
  auto boom_id = f.runtime->submit(boom);
  Task after;
  after.codelet = step;
  after.accesses = {{ha, Access::kReadWrite}};
  ASSERT_TRUE(boom_id && f.runtime->submit(after));
  for (int i = 0; i < 5; ++i) {
    ASSERT_THAT(f.runtime->submit(warm), IsOk());
  }
  auto status = f.runtime->wait_all();
  ASSERT_FALSE(status.has_value());
  EXPECT_THAT(status.error().message, HasSubstr("2 tasks failed"));
  EXPECT_THAT(status.error().message, HasSubstr("kernel exploded on the queue"));
  EXPECT_THAT(status.error().message,
              HasSubstr(fmt::format("dependency task {} failed", *boom_id)));
  ASSERT_THAT(f.runtime->write_back(hb), IsOk());
  EXPECT_EQ(b[0], 6);
  EXPECT_FALSE(f.runtime->records().devices[0].failed);
}

// Runs one "add 1" task on each of `n` fresh 4-KiB data, then unregisters them (their device
// buffers are dropped). Returns false if a result is wrong.
bool round_of_adds(Runtime& runtime, std::size_t n, std::size_t ints) {
  std::vector<std::vector<int>> data(n, std::vector<int>(ints, 7));
  const std::vector<DataHandle> handles = register_all(runtime, data);
  if (handles.size() != n) {
    return false;
  }
  auto adder = codelet("add", add(1));
  for (DataHandle h : handles) {
    Task t;
    t.codelet = adder;
    t.accesses = {{h, Access::kReadWrite}};
    EXPECT_THAT(runtime.submit(std::move(t)), IsOk());
  }
  EXPECT_THAT(runtime.wait_all(), IsOk());
  bool right = true;
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_THAT(runtime.unregister(handles[i]), IsOk());
    right = right && data[i].front() == 8 && data[i].back() == 8;
  }
  return right;
}

TEST(RuntimeTest, DroppedReplicaBuffersAreReusedWithinTheCacheAndTheBudget) {
  constexpr std::size_t kInts = 1024;  // 4 KiB
  {
    Fixture f = make(1);
    ASSERT_TRUE(round_of_adds(*f.runtime, 4, kInts));
    ASSERT_TRUE(round_of_adds(*f.runtime, 4, kInts));  // the same sizes: all four reused
    const DeviceRecord d = f.runtime->records().devices[0];
    EXPECT_EQ(d.buffers_allocated, 4U);
    EXPECT_EQ(d.buffers_reused, 4U);
  }
  {
    RuntimeOptions options;
    options.buffer_cache_bytes = 0;  // no cache: every buffer is freed and allocated again
    Fixture f = make(1, options);
    ASSERT_TRUE(round_of_adds(*f.runtime, 4, kInts));
    ASSERT_TRUE(round_of_adds(*f.runtime, 4, kInts));
    const DeviceRecord d = f.runtime->records().devices[0];
    EXPECT_EQ(d.buffers_allocated, 8U);
    EXPECT_EQ(d.buffers_reused, 0U);
  }
  {
    // A 16-KiB device: four cached 4-KiB buffers fill it. Two 8-KiB data then need new buffers,
    // and the cached ones give way (freed) rather than the data being refused or evicted.
    Fixture f = make(1, {}, 16 * 1024);
    ASSERT_TRUE(round_of_adds(*f.runtime, 4, kInts));
    ASSERT_TRUE(round_of_adds(*f.runtime, 2, 2 * kInts));
    const DeviceRecord d = f.runtime->records().devices[0];
    EXPECT_EQ(d.buffers_allocated, 6U);
    EXPECT_EQ(d.buffers_reused, 0U);
    // Back to 4 KiB: nothing of that size is cached any more; the two 8-KiB ones make room.
    ASSERT_TRUE(round_of_adds(*f.runtime, 4, kInts));
    EXPECT_EQ(f.runtime->records().devices[0].buffers_allocated, 10U);
  }
}

TEST(RuntimeTest, WithoutRecordsAStreamStaysBoundedAndRecycledTasksStartClean) {
  // Records off and no wait_all: a submit that starts a new chunk of the task table drops the
  // settled tasks before it. Their slots are reused; a reused slot must not keep anything of the
  // task before (its error, its dependants, a failed dependency).
  RuntimeOptions options;
  options.keep_task_records = false;
  Fixture f = make(2, options);
  std::vector<int> data(4, 0);
  auto h = f.runtime->register_data(data.data(), data.size() * sizeof(int));
  ASSERT_THAT(h, IsOk());
  auto adder = codelet("add", add(1));
  auto boom = codelet("boom", [](TaskContext&) { throw std::runtime_error("recycled boom"); });
  auto empty = codelet("empty", [](TaskContext&) {});
  constexpr int kFirst = 2048;  // two chunks
  for (int i = 0; i < kFirst; ++i) {
    Task t;
    switch (i % 4) {
      case 0:
        t.codelet = adder;
        t.accesses = {{*h, Access::kReadWrite}};
        break;
      case 1:
        t.codelet = boom;
        break;
      case 2:
        t.codelet = empty;
        t.depends_on = {static_cast<TaskId>(i - 1)};  // fails: its dependency did
        break;
      default:
        t.codelet = empty;
        break;
    }
    ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
  }
  // Until every one of them has settled (run or failed), without wait_all.
  const auto all_settled = [&] {
    std::size_t ran = 0;
    for (const DeviceRecord& d : f.runtime->records().devices) {
      ran += d.tasks;
    }
    return ran == 3 * kFirst / 4 && f.runtime->failures().size() == kFirst / 2;
  };
  for (int i = 0; i < 10'000 && !all_settled(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(all_settled());
  // Settled, yet held: only a submit that starts a chunk drops them.
  EXPECT_GT(f.runtime->records().tasks_held, 1U);
  Task next;
  next.codelet = adder;
  next.accesses = {{*h, Access::kReadWrite}};
  auto next_id = f.runtime->submit(std::move(next));
  ASSERT_THAT(next_id, IsOk());
  EXPECT_EQ(*next_id, static_cast<TaskId>(kFirst));
  EXPECT_LE(f.runtime->records().tasks_held, 1U);  // only the one just submitted
  auto first = f.runtime->wait_all();
  ASSERT_FALSE(first.has_value());
  EXPECT_THAT(first.error().message, HasSubstr(fmt::format("{} tasks failed", kFirst / 2)));

  // The recycled slots run a plain chain: nothing fails, nothing is lost.
  constexpr int kSecond = 3000;
  for (int i = 0; i < kSecond; ++i) {
    Task t;
    t.codelet = adder;
    t.accesses = {{*h, Access::kReadWrite}};
    ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
  }
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  ASSERT_THAT(f.runtime->write_back(*h), IsOk());
  EXPECT_EQ(data[0], kFirst / 4 + 1 + kSecond);
  EXPECT_EQ(data[3], kFirst / 4 + 1 + kSecond);
  EXPECT_EQ(f.runtime->failures().size(), static_cast<std::size_t>(kFirst / 2));
  EXPECT_EQ(f.runtime->records().tasks_held, 0U);
}

TEST(RuntimeTest, WithoutRecordsSettledTasksAreDroppedYetStillOrderAndReportFailures) {
  // Records off: the runtime forgets settled tasks (a long run holds only unsettled work). Ids
  // keep counting, dependencies on forgotten tasks resolve by their outcome, and failures of
  // forgotten tasks are still reported.
  RuntimeOptions options;
  options.keep_task_records = false;
  Fixture f = make(2, options);
  std::vector<int> data(16, 0);
  auto h = f.runtime->register_data(data.data(), data.size() * sizeof(int));
  ASSERT_THAT(h, IsOk());
  for (int i = 0; i < 500; ++i) {
    Task t;
    t.codelet = codelet("add", add(1));
    t.accesses = {{*h, Access::kReadWrite}};
    ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
  }
  Task boom;
  boom.codelet = codelet("boom", [](TaskContext&) { throw std::runtime_error("forgotten boom"); });
  boom.name = "boom";
  auto boom_id = f.runtime->submit(std::move(boom));
  ASSERT_THAT(boom_id, IsOk());
  EXPECT_EQ(*boom_id, 500U);
  auto first = f.runtime->wait_all();
  ASSERT_FALSE(first.has_value());
  EXPECT_THAT(first.error().message, HasSubstr("forgotten boom"));
  ASSERT_THAT(f.runtime->write_back(*h), IsOk());
  EXPECT_EQ(data[0], 500);
  EXPECT_EQ(data[15], 500);
  EXPECT_EQ(f.runtime->records().tasks_held, 0U);

  // Both are long settled (and dropped): one dependant fails, the other runs.
  Task after_boom;
  after_boom.codelet = codelet("add", add(1));
  after_boom.depends_on = {*boom_id};
  after_boom.accesses = {{*h, Access::kReadWrite}};
  auto failed_id = f.runtime->submit(std::move(after_boom));
  std::atomic<int> ran{0};
  Task after_ok;
  after_ok.codelet = codelet("count", [&ran](TaskContext&) { ran.fetch_add(1); });
  after_ok.depends_on = {0, 499};
  auto ok_id = f.runtime->submit(std::move(after_ok));
  ASSERT_TRUE(failed_id && ok_id);
  EXPECT_EQ(*ok_id, 502U);
  auto second = f.runtime->wait_all();
  ASSERT_FALSE(second.has_value());
  EXPECT_THAT(second.error().message,
              HasSubstr(fmt::format("dependency task {} failed", *boom_id)));
  EXPECT_EQ(ran.load(), 1);
  const auto failures = f.runtime->failures();
  ASSERT_EQ(failures.size(), 2U);
  EXPECT_EQ(failures[0].task, *boom_id);
  EXPECT_EQ(failures[0].name, "boom");
  EXPECT_EQ(failures[1].task, *failed_id);
  // Datum h's last writer failed: write_back says so, even though that task is forgotten too.
  for (int i = 0; i < 50; ++i) {
    Task t;
    t.codelet = codelet("empty", [](TaskContext&) {});
    ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
  }
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  auto lost = f.runtime->write_back(*h);
  ASSERT_FALSE(lost.has_value());
  EXPECT_THAT(lost.error().message, HasSubstr(fmt::format("last writer, task {}", *failed_id)));
  auto why = f.runtime->explain(*ok_id);
  ASSERT_FALSE(why.has_value());
  EXPECT_THAT(why.error().message, HasSubstr("not kept"));
}

TEST(RuntimeTest, SubmitRejectsBadTasksWithOneLineErrors) {
  Fixture f = make(2, {}, 1 << 20);
  Task none;
  auto r = f.runtime->submit(none);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("no codelet"));

  Task wrong_kind;
  wrong_kind.codelet = codelet("fpga-only", add(1), {"fpga"});
  r = f.runtime->submit(wrong_kind);
  ASSERT_THAT(r, StatusIs(Errc::kUnsupported));
  EXPECT_THAT(r.error().message, HasSubstr("no implementation for any available device"));
  EXPECT_THAT(r.error().message, HasSubstr("fpga"));

  Task unknown_data;
  unknown_data.codelet = codelet("x", add(1));
  unknown_data.accesses = {{DataHandle{99}, Access::kRead}};
  r = f.runtime->submit(unknown_data);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("data 99 is not registered"));

  Task self;
  self.codelet = codelet("x", add(1));
  self.depends_on = {0};
  r = f.runtime->submit(self);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("cannot depend on itself or a later task"));

  std::vector<char> big(2 << 20);
  auto h = f.runtime->register_data(big.data(), big.size());
  ASSERT_THAT(h, IsOk());
  Task too_big;
  too_big.codelet = codelet("x", [](TaskContext&) {});
  too_big.accesses = {{*h, Access::kRead}};
  r = f.runtime->submit(too_big);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("larger than the memory budget of every device"));

  auto overlap = f.runtime->register_data(big.data() + 10, 10);
  ASSERT_FALSE(overlap.has_value());
  EXPECT_THAT(overlap.error().message, HasSubstr("overlaps"));
  EXPECT_FALSE(f.runtime->register_data(nullptr, 10).has_value());
  EXPECT_FALSE(f.runtime->write_back(DataHandle{42}).has_value());
  EXPECT_THAT(f.runtime->wait_all(), IsOk());
}

TEST(RuntimeTest, SubmitGraphRejectsCyclesAndHonoursForwardEdges) {
  Fixture f = make(2);
  std::vector<Task> cycle(3);
  for (auto& t : cycle) {
    t.codelet = codelet("x", [](TaskContext&) {});
  }
  cycle[0].after = {2};
  cycle[1].after = {0};
  cycle[2].after = {1};
  auto r = f.runtime->submit_graph(cycle);
  ASSERT_THAT(r, StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(r.error().message, HasSubstr("cycle"));

  std::mutex mu;
  std::vector<int> order;
  std::vector<Task> graph(3);
  for (int i = 0; i < 3; ++i) {
    graph[static_cast<std::size_t>(i)].codelet = codelet("x", [&, i](TaskContext&) {
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(i);
    });
  }
  graph[0].after = {2};  // 1 -> 2 -> 0
  graph[2].after = {1};
  auto ids = f.runtime->submit_graph(graph);
  ASSERT_THAT(ids, IsOk());
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  EXPECT_EQ(order, (std::vector<int>{1, 2, 0}));
}

TEST(RuntimeTest, ADeviceThatFailsHasItsTasksRunElsewhere) {
  // The failure thrown by the implementation itself, or by the work it submitted to the
  // device's queue (asynchronous tasks, launched one behind the other).
  for (const bool async : {false, true}) {
    RuntimeOptions options;
    options.policy = PolicyKind::kRoundRobin;
    Fixture f = make(2, options);
    std::atomic<int> done{0};
    std::atomic<bool> failed_once{false};
    auto c = codelet("work", [&, async](TaskContext& ctx) {
      const bool fail = ctx.device() == 0 && !failed_once.exchange(true);
      const auto work = [fail, &done] {
        if (fail) {
          throw DeviceFailure("uncorrectable ECC error");
        }
        done.fetch_add(1);
      };
      if (async) {
        (void)ctx.queue().host_task(work);
      } else {
        work();
      }
    });
    for (int i = 0; i < 20; ++i) {
      Task t;
      t.codelet = c;
      ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
    }
    ASSERT_THAT(f.runtime->wait_all(), IsOk());
    // An asynchronous task launched behind the failing one may have run on the failed device
    // too: what it wrote there is lost with the device, so it runs again elsewhere (at most
    // one: the pipeline is two deep).
    EXPECT_GE(done.load(), 20);
    EXPECT_LE(done.load(), async ? 21 : 20);
    const RunRecord rec = f.runtime->records();
    EXPECT_TRUE(rec.devices[0].failed);
    EXPECT_FALSE(rec.devices[1].failed);
    ASSERT_EQ(rec.tasks.size(), 20U);
    for (const TaskRecord& t : rec.tasks) {
      EXPECT_EQ(t.status, TaskStatus::kDone);
      EXPECT_EQ(t.device, 1);
    }
    // Nothing new goes to the failed device.
    Task later;
    later.codelet = c;
    auto id = f.runtime->submit(later);
    ASSERT_THAT(id, IsOk());
    ASSERT_THAT(f.runtime->wait_all(), IsOk());
    EXPECT_EQ(f.runtime->records().tasks.back().device, 1);
  }
}

TEST(RuntimeTest, DataWhoseOnlyCopyDiedWithADeviceFailsItsReadersClearly) {
  RuntimeOptions options;
  options.policy = PolicyKind::kRoundRobin;
  Fixture f = make(2, options, 0, {"a", "b"});
  std::vector<int> data(64, 0);
  auto h = f.runtime->register_data(data.data(), data.size() * sizeof(int));
  ASSERT_THAT(h, IsOk());
  Task produce;  // only device 0 (kind a) can produce it
  produce.codelet = codelet("produce", add(1), {"a"});
  produce.accesses = {{*h, Access::kReadWrite}};
  ASSERT_THAT(f.runtime->submit(produce), IsOk());
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  Task die;  // then device 0 dies running something else
  die.codelet =
      codelet("die", [](TaskContext&) { throw DeviceFailure("fell off the bus"); }, {"a"});
  ASSERT_THAT(f.runtime->submit(die), IsOk());
  auto status = f.runtime->wait_all();
  ASSERT_FALSE(status.has_value());
  EXPECT_THAT(status.error().message, HasSubstr("no device left"));
  Task consume;
  consume.codelet = codelet("consume", add(1), {"b"});
  consume.accesses = {{*h, Access::kRead}};
  ASSERT_THAT(f.runtime->submit(consume), IsOk());
  status = f.runtime->wait_all();
  ASSERT_FALSE(status.has_value());
  EXPECT_THAT(status.error().message, HasSubstr("only valid copy was on dev0"));
  EXPECT_THAT(status.error().message, HasSubstr("fell off the bus"));
}

TEST(RuntimeTest, ATightMemoryBudgetEvictsAndStillComputesEverything) {
  RuntimeOptions options;
  options.policy = PolicyKind::kRoundRobin;
  constexpr std::size_t kInts = 64 * 1024;                        // 256 KiB per handle
  Fixture f = make(2, options, 3 * kInts * sizeof(int) / 2 * 2);  // room for 3 handles
  std::vector<std::vector<int>> data(8, std::vector<int>(kInts, 0));
  const std::vector<DataHandle> handles = register_all(*f.runtime, data);
  ASSERT_EQ(handles.size(), data.size());
  // Each round touches every handle (one RW task each, 2 handles per task for pressure).
  for (int round = 0; round < 4; ++round) {
    for (std::size_t i = 0; i < handles.size(); ++i) {
      Task t;
      t.codelet = codelet("pair", [](TaskContext& ctx) {
        auto* a = static_cast<int*>(ctx.data(0));
        const auto* b = static_cast<const int*>(ctx.data(1));
        for (std::size_t k = 0; k < ctx.bytes(0) / sizeof(int); ++k) {
          a[k] += 1 + 0 * b[k];
        }
      });
      t.accesses = {{handles[i], Access::kReadWrite},
                    {handles[(i + 1) % handles.size()], Access::kRead}};
      ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
    }
  }
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  for (std::size_t i = 0; i < handles.size(); ++i) {
    ASSERT_THAT(f.runtime->unregister(handles[i]), IsOk());
    EXPECT_EQ(data[i][0], 4);
    EXPECT_EQ(data[i][kInts - 1], 4);
  }
  const RunRecord rec = f.runtime->records();
  EXPECT_TRUE(std::any_of(rec.transfers.begin(), rec.transfers.end(),
                          [](const TransferRecord& t) { return t.eviction; }));
}

TEST(RuntimeTest, ADrainedDeviceGetsNoNewTasksAndWeightsAreValidated) {
  Fixture f = make(3);
  ASSERT_THAT(f.runtime->set_drained(1, true), IsOk());
  for (int i = 0; i < 60; ++i) {
    Task t;
    t.codelet = codelet("x", [](TaskContext&) {});
    ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
  }
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  for (const TaskRecord& t : f.runtime->records().tasks) {
    EXPECT_NE(t.device, 1);
  }
  EXPECT_FALSE(f.runtime->set_drained(7, true).has_value());
  EXPECT_FALSE(f.runtime->set_weight(0, 0).has_value());
  EXPECT_FALSE(f.runtime->set_weight(0, 1.5).has_value());
  EXPECT_THAT(f.runtime->set_weight(0, 0.5), IsOk());
}

TEST(RuntimeTest, TasksWaitWhileEveryCapableDeviceIsDrainedAndRunWhenOneReturns) {
  Fixture f = make(1);
  ASSERT_THAT(f.runtime->set_drained(0, true), IsOk());
  std::atomic<int> ran{0};
  Task t;
  t.codelet = codelet("x", [&](TaskContext&) { ran.fetch_add(1); });
  ASSERT_THAT(f.runtime->submit(t), IsOk());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(ran.load(), 0);
  ASSERT_THAT(f.runtime->set_drained(0, false), IsOk());
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  EXPECT_EQ(ran.load(), 1);
}

TEST(RuntimeTest, DestroyingTheRuntimeWithEveryDeviceDrainedFailsParkedTasksInsteadOfHanging) {
  Fixture f = make(2);
  ASSERT_THAT(f.runtime->set_drained(0, true), IsOk());
  ASSERT_THAT(f.runtime->set_drained(1, true), IsOk());
  std::atomic<int> ran{0};
  Task t;
  t.codelet = codelet("x", [&](TaskContext&) { ran.fetch_add(1); });
  ASSERT_THAT(f.runtime->submit(t), IsOk());
  ASSERT_THAT(f.runtime->submit(t), IsOk());
  f.runtime.reset();  // returns: the parked tasks fail
  EXPECT_EQ(ran.load(), 0);
}

TEST(RuntimeTest, ADeviceNotAcceptingGetsNoNewTasksAndItsWaitingTasksRunWhenItAcceptsAgain) {
  Fixture f = make(2);
  ASSERT_THAT(f.runtime->set_accepting(1, false), IsOk());
  for (int i = 0; i < 40; ++i) {
    Task t;
    t.codelet = codelet("x", [](TaskContext&) {});
    ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
  }
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  for (const TaskRecord& t : f.runtime->records().tasks) {
    EXPECT_NE(t.device, 1);
  }
  // Neither device accepting: a task waits, and runs once one accepts again.
  ASSERT_THAT(f.runtime->set_accepting(0, false), IsOk());
  std::atomic<int> ran{0};
  Task t;
  t.codelet = codelet("y", [&](TaskContext&) { ran.fetch_add(1); });
  ASSERT_THAT(f.runtime->submit(t), IsOk());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(ran.load(), 0);
  ASSERT_THAT(f.runtime->set_accepting(1, true), IsOk());
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  EXPECT_EQ(ran.load(), 1);
  EXPECT_FALSE(f.runtime->set_accepting(5, true).has_value());
}

TEST(RuntimeTest, LowHeadroomSteersNewWorkAwayWithoutChangingTheModels) {
  Fixture f = make(2);
  auto busy = codelet(
      "busy", [](TaskContext&) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); });
  const auto run = [&](int tasks) {
    for (int i = 0; i < tasks; ++i) {
      Task t;
      t.codelet = busy;
      ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
    }
    ASSERT_THAT(f.runtime->wait_all(), IsOk());
  };
  run(20);  // calibrate both devices
  f.runtime->reset_records();
  ASSERT_THAT(f.runtime->set_headroom(1, 0.05), IsOk());
  run(40);
  int on_hot = 0;
  for (const TaskRecord& t : f.runtime->records().tasks) {
    on_hot += t.device == 1 ? 1 : 0;
  }
  EXPECT_LT(on_hot, 10) << "a device with 5 % headroom looks 20x slower to dmda";
  EXPECT_FALSE(f.runtime->set_headroom(0, 0).has_value());
  EXPECT_FALSE(f.runtime->set_headroom(0, 1.5).has_value());
  EXPECT_FALSE(f.runtime->set_headroom(3, 0.5).has_value());
}

TEST(RuntimeTest, DmdaLearnsModelsAndExplainsItsPlacements) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("acco-sched-models-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  RuntimeOptions options;
  options.model_file = dir / "models.json";
  {
    Fixture f = make(2, options);
    std::vector<TaskId> ids;
    for (int i = 0; i < 20; ++i) {
      Task t;
      t.codelet = codelet("sleepy", [](TaskContext&) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      });
      auto id = f.runtime->submit(std::move(t));
      ASSERT_THAT(id, IsOk());
      ids.push_back(*id);
    }
    ASSERT_THAT(f.runtime->wait_all(), IsOk());
    auto why = f.runtime->explain(ids.back());
    ASSERT_THAT(why, IsOk());
    EXPECT_THAT(*why, HasSubstr("dmda"));
    EXPECT_FALSE(f.runtime->explain(999).has_value());
    EXPECT_FALSE(f.runtime->models().entries().empty());
    ASSERT_THAT(f.runtime->save_models(), IsOk());
  }
  {
    Fixture again = make(2, options);
    EXPECT_FALSE(again.runtime->models().entries().empty());
  }
  std::filesystem::remove_all(dir);
}

// Where an urgent task goes when the fast device has a queue of low-priority work: plain dmda
// (StarPU's) counts the whole queue and sends it to the slow device; the sorted decision
// (dmdasd) counts only the queued tasks that run before it and keeps it on the fast one.
int urgent_task_device(bool sorted_decision) {
  RuntimeOptions options;
  options.knobs.sorted_decision = sorted_decision;
  Fixture f = make(2, options, 0, {"fast", "slow"});
  const auto sleeper = [](int fast_ms, int slow_ms) {
    return [fast_ms, slow_ms](TaskContext& ctx) {
      std::this_thread::sleep_for(
          std::chrono::milliseconds(ctx.kind() == "fast" ? fast_ms : slow_ms));
    };
  };
  auto low = codelet("low", sleeper(5, 60), {"fast", "slow"});
  auto urgent = codelet("urgent", sleeper(2, 8), {"fast", "slow"});
  // One run of each on each device, one at a time (dmda sends a task to a device that has no
  // model for it yet): every device has a prediction for both.
  for (int i = 0; i < 2; ++i) {
    for (const auto& c : {low, urgent}) {
      Task t;
      t.codelet = c;
      EXPECT_THAT(f.runtime->submit(std::move(t)), IsOk());
      EXPECT_THAT(f.runtime->wait_all(), IsOk());
    }
  }
  f.runtime->reset_records();
  for (int i = 0; i < 4; ++i) {  // 20 ms of low-priority work, all on the fast device
    Task t;
    t.codelet = low;
    EXPECT_THAT(f.runtime->submit(std::move(t)), IsOk());
  }
  Task t;
  t.codelet = urgent;
  t.priority = 10;
  auto id = f.runtime->submit(std::move(t));
  EXPECT_THAT(id, IsOk());
  EXPECT_THAT(f.runtime->wait_all(), IsOk());
  const RunRecord rec = f.runtime->records();
  for (const TaskRecord& r : rec.tasks) {
    if (r.type == "low") {
      EXPECT_EQ(r.device, 0) << "low-priority work belongs on the fast device: " << r.reason;
    }
  }
  for (const TaskRecord& r : rec.tasks) {
    if (r.id == *id) {
      return r.device;
    }
  }
  return -1;
}

TEST(RuntimeTest, DmdaCountsTheWholeQueueAndTheSortedDecisionOnlyWhatRunsFirst) {
  EXPECT_EQ(urgent_task_device(false), 1);
  EXPECT_EQ(urgent_task_device(true), 0);
}

TEST(RuntimeTest, HeftFollowsThePlanMadeAtSubmit) {
  RuntimeOptions options;
  options.policy = PolicyKind::kHeft;
  Fixture f = make(2, options);
  std::vector<Task> graph(6);
  for (std::size_t i = 0; i < graph.size(); ++i) {
    graph[i].codelet = codelet("x", [](TaskContext&) {});
    if (i > 0) {
      graph[i].after = {i - 1};
    }
  }
  auto ids = f.runtime->submit_graph(graph);
  ASSERT_THAT(ids, IsOk());
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  for (TaskId id : *ids) {
    auto why = f.runtime->explain(id);
    ASSERT_THAT(why, IsOk());
    EXPECT_THAT(*why, HasSubstr("heft"));
  }
}

TEST(RuntimeTest, PlacementReasonsAreThoseOfTheDecisionEvenAfterPolicyAndKnobsChange) {
  // Reasons are formatted on request from what each decision saw: changing the policy or its
  // knobs afterwards must not change them.
  Fixture f = make(2);
  auto sleepy = codelet(
      "sleepy", [](TaskContext&) { std::this_thread::sleep_for(std::chrono::microseconds(100)); });
  std::vector<TaskId> ids;
  // Two rounds: the first calibrates both devices, the second is placed by their models.
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 24; ++i) {
      Task t;
      t.codelet = sleepy;
      auto id = f.runtime->submit(std::move(t));
      ASSERT_THAT(id, IsOk());
      ids.push_back(*id);
    }
    ASSERT_THAT(f.runtime->wait_all(), IsOk());
  }
  std::vector<std::string> before;
  for (TaskId id : ids) {
    auto why = f.runtime->explain(id);
    ASSERT_THAT(why, IsOk());
    before.push_back(*why);
  }
  f.runtime->set_policy(PolicyKind::kEager);
  PolicyKnobs knobs;
  knobs.alpha = 5;
  knobs.beta = 0;
  f.runtime->set_knobs(knobs);
  const RunRecord rec = f.runtime->records();
  ASSERT_EQ(rec.tasks.size(), ids.size());
  bool calibrated_reason = false;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto why = f.runtime->explain(ids[i]);
    ASSERT_THAT(why, IsOk());
    EXPECT_EQ(*why, before[i]);
    EXPECT_EQ(rec.tasks[i].reason, before[i]);
    EXPECT_THAT(*why, HasSubstr("dmda"));
    calibrated_reason = calibrated_reason || (why->find("ends at +") != std::string::npos &&
                                              why->find("; next best dev") != std::string::npos);
  }
  EXPECT_TRUE(calibrated_reason) << "no placement made with models on both devices";
}

TEST(RuntimeTest, PriorPredictionsFollowEachTasksOwnCostHint) {
  // Uncalibrated predictions come from the cost hint and the device peak; they are cached per
  // hint, so tasks of one kind with different hints keep their own predictions.
  device::HostBackendOptions host;
  host.devices = 1;
  auto backend = device::make_host_backend(host);
  ASSERT_THAT(backend, IsOk());
  DeviceSpec spec;
  spec.device = (*backend)->devices()[0];
  spec.peak.flops_per_second = 1e12;
  auto runtime = Runtime::create({spec});
  ASSERT_THAT(runtime, IsOk());
  // The device is held by a gate task while two of each hint are placed, alternating, so none
  // of them can have calibrated the model (3 samples) when the others are placed.
  std::atomic<bool> open{false};
  Task gate;
  gate.codelet = codelet("gate", [&open](TaskContext&) {
    while (!open.load()) {
      std::this_thread::yield();
    }
  });
  ASSERT_THAT((*runtime)->submit(std::move(gate)), IsOk());
  auto kernel = codelet("hinted", [](TaskContext&) {});
  const double flops[] = {1e6, 4e6, 1e6, 4e6};
  for (double f : flops) {
    Task t;
    t.codelet = kernel;
    t.cost.flops = f;
    ASSERT_THAT((*runtime)->submit(std::move(t)), IsOk());
  }
  open.store(true);
  ASSERT_THAT((*runtime)->wait_all(), IsOk());
  const RunRecord rec = (*runtime)->records();
  ASSERT_EQ(rec.tasks.size(), 5U);
  EXPECT_EQ(rec.tasks[1].predicted, std::chrono::microseconds(1));
  EXPECT_EQ(rec.tasks[2].predicted, std::chrono::microseconds(4));
  EXPECT_EQ(rec.tasks[3].predicted, std::chrono::microseconds(1));
  EXPECT_EQ(rec.tasks[4].predicted, std::chrono::microseconds(4));
}

TEST(RuntimeTest, PolicyCanChangeWhileTasksAreQueued) {
  RuntimeOptions options;
  options.policy = PolicyKind::kEager;
  Fixture f = make(2, options);
  std::atomic<int> ran{0};
  auto c = codelet("x", [&](TaskContext&) { ran.fetch_add(1); });
  for (int i = 0; i < 100; ++i) {
    Task t;
    t.codelet = c;
    ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
    if (i == 50) {
      f.runtime->set_policy(PolicyKind::kDmda);
    }
  }
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  EXPECT_EQ(ran.load(), 100);
  EXPECT_EQ(f.runtime->policy(), PolicyKind::kDmda);
}

}  // namespace
}  // namespace acco::sched
