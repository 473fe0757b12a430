#include "acco/monitor/event_log.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "acco/testing/matchers.hpp"

namespace acco::monitor {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;

constexpr std::int64_t kLoggedAt = 1'764'600'000'000'000'000;

TEST(EventLogTest, KeepsRecentEventsAndWritesJsonLines) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("acco_events_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "events.jsonl";
  auto log = EventLog::open({.path = path.string(), .keep = 2});
  ASSERT_THAT(log, IsOk());
  for (int i = 0; i < 3; ++i) {
    analyze::Event e;
    e.time_unix_nanos = kLoggedAt + i;
    e.level = "info";
    e.event = "device_found";
    e.message = std::to_string(i);
    (*log)->add(e);
  }
  EXPECT_EQ((*log)->size(), 2U);
  const auto recent = (*log)->since(kLoggedAt + 2);
  EXPECT_THAT(recent, HasSubstr("\"message\":\"2\""));
  EXPECT_THAT(recent, ::testing::Not(HasSubstr("\"message\":\"1\"")));
  (*log)->flush();
  std::ifstream in(path);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    EXPECT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded()) << line;
    ++lines;
  }
  EXPECT_EQ(lines, 3);  // the file keeps everything; memory keeps the last two
  std::filesystem::remove_all(dir);
}

// A daemon killed while it wrote a line left it without its newline: the next start's first
// event goes on a line of its own, not glued to the cut one.
TEST(EventLogTest, ALineCutByAKillIsEndedBeforeTheNextStartWrites) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("acco_events_cut_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "events.jsonl";
  std::ofstream(path) << "{\"event\":\"serve_started\"}\n{\"event\":\"device_fo";
  {
    auto log = EventLog::open({.path = path.string()});
    ASSERT_THAT(log, IsOk());
    analyze::Event e;
    e.time_unix_nanos = kLoggedAt;
    e.level = "info";
    e.event = "serve_started";
    (*log)->add(e);
  }
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[1], "{\"event\":\"device_fo");
  EXPECT_FALSE(nlohmann::json::parse(lines[2], nullptr, false).is_discarded()) << lines[2];
  // A whole file is left as it is.
  { ASSERT_THAT(EventLog::open({.path = path.string()}), IsOk()); }
  std::ifstream again(path);
  EXPECT_EQ(
      std::count(std::istreambuf_iterator<char>(again), std::istreambuf_iterator<char>(), '\n'), 3);
  std::filesystem::remove_all(dir);
}

TEST(EventLogTest, UnwritablePathIsCannotWrite) {
  const auto r = EventLog::open({.path = "/proc/acco-no-such-dir/events.jsonl"});
  ASSERT_THAT(r, StatusIs(Errc::kCannotWrite));
  EXPECT_THAT(r.error().message, HasSubstr("cannot open the event log /proc/acco-no-such-dir"));
}

// spdlog's sink would make the directory (a robustness sweep: `serve --log /nonexist/l.jsonl`
// created /nonexist); a missing one is refused as for every other output.
TEST(EventLogTest, AMissingDirectoryIsCannotWriteAndIsNotMade) {
  const auto dir = std::filesystem::temp_directory_path() / "acco-events-missing-dir";
  std::filesystem::remove_all(dir);
  const auto r = EventLog::open({.path = (dir / "events.jsonl").string()});
  ASSERT_THAT(r, StatusIs(Errc::kCannotWrite));
  EXPECT_THAT(r.error().message, HasSubstr("does not exist"));
  EXPECT_FALSE(std::filesystem::exists(dir));
}

// A named pipe no one reads held spdlog's open() for ever (`serve --log FIFO` never started, and
// SIGTERM could not stop it). A pipe with a reader, or a device (/dev/stdout), is written.
TEST(EventLogTest, APipeThatNoOneReadsIsRefusedNotOpened) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("acco-events-fifo-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto pipe = dir / "events.jsonl";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  const auto r = EventLog::open({.path = pipe.string()});
  ASSERT_THAT(r, StatusIs(Errc::kCannotWrite));
  EXPECT_THAT(r.error().message, HasSubstr("a pipe that no one reads"));
  EXPECT_TRUE(std::filesystem::is_fifo(pipe));
  const int reader = ::open(pipe.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  EXPECT_THAT(EventLog::open({.path = pipe.string()}), IsOk());
  ::close(reader);
  EXPECT_THAT(EventLog::open({.path = "/dev/null"}), IsOk());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace acco::monitor
