// A bench session: the run goes to its history and is compared with the last like it; a
// report that cannot be written fails the session but keeps the measurements; a stopped session
// saves nothing.
#include "acco/bench/session.hpp"

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/bench/report.hpp"
#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::bench {
namespace {

using ::acco::testing::IsOk;
using ::testing::HasSubstr;

SessionOptions one_case(const std::filesystem::path& dir) {
  SessionOptions o;
  o.run.backend = BackendChoice::kHost;
  o.run.host.devices = 1;
  o.run.host.link = device::parse_link("pcie4x16").value();
  o.run.patterns = {"host_memcpy"};
  o.run.defaults.bytes = 1 << 20;
  o.run.defaults.reps = 2;
  o.run.defaults.warmup = 1;
  o.history = (dir / "history.sqlite").string();
  o.compare = true;
  return o;
}

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = (std::filesystem::temp_directory_path() / "acco-session-XXXXXX").string();
    ASSERT_NE(::mkdtemp(name.data()), nullptr);
    dir_ = name;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(SessionTest, TheSecondRunIsComparedWithTheFirst) {
  const auto o = one_case(dir_);
  auto first = run_session(o, nullptr, {});
  ASSERT_THAT(first, IsOk());
  EXPECT_FALSE(first->interrupted);
  EXPECT_FALSE(first->failure.has_value());
  EXPECT_FALSE(first->had_previous);
  EXPECT_EQ(first->failed_cases, 0U);
  auto second = run_session(o, nullptr, {});
  ASSERT_THAT(second, IsOk());
  EXPECT_TRUE(second->had_previous);
  ASSERT_EQ(second->comparisons.size(), 1U);
  EXPECT_EQ(second->comparisons.front().case_key, "host_memcpy");
}

TEST_F(SessionTest, AReportThatCannotBeWrittenFailsButKeepsTheRun) {
  auto o = one_case(dir_);
  o.html = (dir_ / "missing" / "report.html").string();
  auto s = run_session(o, nullptr, {});
  ASSERT_THAT(s, IsOk());
  ASSERT_TRUE(s->failure.has_value());
  EXPECT_EQ(s->failure->code, Errc::kCannotWrite);
  EXPECT_THAT(s->notes, HasSubstr("acco: --html: "));
  EXPECT_EQ(s->run.results.size(), 1U);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "history.sqlite"));
}

TEST_F(SessionTest, AStoppedSessionSavesNothing) {
  auto o = one_case(dir_);
  o.html = (dir_ / "report.html").string();
  o.run.stop = [] { return true; };
  auto s = run_session(o, nullptr, {});
  ASSERT_THAT(s, IsOk());
  EXPECT_TRUE(s->interrupted);
  EXPECT_FALSE(s->compared);
  EXPECT_EQ(s->notes,
            "acco: bench interrupted; 0 result(s) finished, shown below, not saved to the history "
            "nor to --html\n");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "history.sqlite"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "report.html"));
  EXPECT_FALSE(to_json(*s).contains("comparisons"));
  EXPECT_EQ(report::render_text(session_report(*s)), report::render_text(run_report(s->run)));
}

TEST_F(SessionTest, AComparedSessionCarriesItsComparisonAndAStorageRunNamesItsReader) {
  auto o = one_case(dir_);
  o.compare = true;
  o.run.defaults.reader_options = io::ReaderOptions{};
  auto s = run_session(o, nullptr, {});
  ASSERT_THAT(s, IsOk());
  EXPECT_TRUE(s->compared);
  EXPECT_EQ(reader_note(o.run), "");  // the reader's line is for the storage suite only
  o.run.suite = "storage";
  EXPECT_THAT(reader_note(o.run), HasSubstr("acco: storage reader from the tune profile: block "));
  EXPECT_TRUE(to_json(*s)["comparisons"].is_array());
}

TEST(CreateTestFileTest, WritesOnceAndSaysSo) {
  const acco::testing::TempDir dir;
  const auto path = (dir.path() / "data.bin").string();
  EXPECT_EQ(create_test_file("", 4096).value(), "");
  EXPECT_EQ(create_test_file(path, 4096).value(),
            "acco: wrote 4.00 KiB of test data to " + path + "\n");
  EXPECT_EQ(create_test_file(path, 4096).value(), "");  // already there, large enough
}

}  // namespace
}  // namespace acco::bench
