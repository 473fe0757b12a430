#include "acco/device/trace_range.hpp"

#include <cstdlib>
#include <string>
#include <utility>

#include <gtest/gtest.h>

namespace acco::device {
namespace {

// The only test of this executable that calls tracing(), which decides once: it names an
// injection library that does not exist, so with NVTX built the ranges really are pushed and
// popped, and NVTX, finding no library to load, turns its calls into no-ops.
TEST(TraceRangeTest, RangesOpenNestAndCloseWithoutAProfiler) {
  ASSERT_EQ(setenv("NVTX_INJECTION64_PATH", "/nonexistent/libacco-no-profiler.so", 1), 0);
  EXPECT_EQ(tracing(), trace_ranges_built());

  int formatted = 0;
  {
    const TraceRange task("acco task potrf #0");
    EXPECT_EQ(task.open(), tracing());
    TraceRange copy = TraceRange::lazy([&] {
      ++formatted;
      return std::string("acco copy host-to-device 4 MiB pipelined");
    });
    EXPECT_EQ(copy.open(), tracing());
    TraceRange moved(std::move(copy));
    EXPECT_FALSE(copy.open());  // NOLINT(bugprone-use-after-move): moved-from is closed
    EXPECT_EQ(moved.open(), tracing());
    moved.close();
    EXPECT_FALSE(moved.open());
    moved.close();  // idempotent
  }
  EXPECT_EQ(formatted, tracing() ? 1 : 0);
  const TraceRange closed;
  EXPECT_FALSE(closed.open());
}

}  // namespace
}  // namespace acco::device
