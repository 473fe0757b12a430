// A served task runtime's counters: the runtimes that ended add up with the live one, whose
// gauges alone are shown.
#include "acco/monitor/runtime_server.hpp"

#include <vector>

#include <gtest/gtest.h>

namespace acco::monitor {
namespace {

sched::RuntimeDeviceCounters device(std::size_t queued, std::uint64_t started, double seconds,
                                    std::uint64_t h2d_bytes) {
  sched::RuntimeDeviceCounters c;
  c.queued = queued;
  c.running = queued;
  c.started = started;
  c.finished = started;
  c.task_seconds = seconds;
  c.transfers.host_to_device.bytes = h2d_bytes;
  c.transfers.host_to_device.copies = 1;
  return c;
}

TEST(RuntimeServerTest, EndedRuntimesAddUpWithTheLiveOneWhoseGaugesAreShown) {
  const std::vector<sched::RuntimeDeviceCounters> retired = {device(0, 10, 1.5, 100)};
  sched::RuntimeCounters live;
  live.devices = {device(3, 4, 0.5, 50), device(2, 1, 0.25, 7)};
  const analyze::ProcessCounters c = process_counters(retired, &live);
  ASSERT_EQ(c.devices.size(), 2U);
  EXPECT_EQ(c.devices[0].device, "0");
  EXPECT_EQ(c.devices[0].queued, 3U);
  EXPECT_EQ(c.devices[0].running, 3U);
  EXPECT_EQ(c.devices[0].started, 14U);
  EXPECT_DOUBLE_EQ(c.devices[0].task_seconds, 2.0);
  ASSERT_EQ(c.devices[0].transfers.size(), 4U);
  EXPECT_EQ(c.devices[0].transfers[0].direction, "host-to-device");
  EXPECT_EQ(c.devices[0].transfers[0].bytes, 150U);
  EXPECT_EQ(c.devices[0].transfers[0].copies, 2U);
  EXPECT_EQ(c.devices[1].device, "1");
  EXPECT_EQ(c.devices[1].started, 1U);
  EXPECT_EQ(c.devices[1].transfers[0].bytes, 7U);
}

TEST(RuntimeServerTest, BetweenRuntimesOnlyTheTotalsRemain) {
  const std::vector<sched::RuntimeDeviceCounters> retired = {device(5, 10, 1.5, 100)};
  const analyze::ProcessCounters c = process_counters(retired, nullptr);
  ASSERT_EQ(c.devices.size(), 1U);
  EXPECT_EQ(c.devices[0].started, 10U);
  EXPECT_EQ(c.devices[0].transfers[0].bytes, 100U);
}

}  // namespace
}  // namespace acco::monitor
