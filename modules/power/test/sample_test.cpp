#include "acco/power/sample.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace acco::power {
namespace {

TEST(SampleTest, ClockEventNamesCoverEachBitOnceInBitOrder) {
  std::uint64_t previous = 0;
  std::set<std::string> names;
  for (const auto& e : clock_event_names()) {
    EXPECT_GT(e.bit, previous);
    EXPECT_EQ(e.bit & (e.bit - 1), 0U) << e.name;  // one bit each
    previous = e.bit;
    EXPECT_TRUE(names.insert(e.name).second) << e.name;
  }
  EXPECT_EQ(names.size(), 9U);
}

}  // namespace
}  // namespace acco::power
