#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/testing/matchers.hpp"
#include "acco/topo/probe.hpp"

namespace acco::topo {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;

std::string message_of(const char* text) {
  const auto r = snapshot_from_json(nlohmann::json::parse(text));
  EXPECT_THAT(r, StatusIs(Errc::kInvalidArgument)) << text;
  return r.has_value() ? std::string() : r.error().message;
}

TEST(SnapshotTest, WrittenSnapshotReadsBack) {
  Snapshot s;
  s.created = "2026-12-01T00:00:00Z";
  s.origin = "host";
  s.acco_version = "0.1.0";
  s.fs.files["/sys/a"].ok = true;
  s.fs.files["/sys/a"].value = "1\n";
  s.fs.exists["/sys"] = true;
  s.nvml.available = false;
  s.nvml.reason = "no library";
  const auto back = snapshot_from_json(nlohmann::json::parse(to_json(s).dump()));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->created, s.created);
  EXPECT_EQ(back->origin, s.origin);
  EXPECT_EQ(back->acco_version, s.acco_version);
  EXPECT_EQ(back->fs, s.fs);
  EXPECT_EQ(back->nvml.reason, "no library");
}

// Every problem names the field at fault, the snapshot's own first, then the record's.
TEST(SnapshotTest, MalformedSnapshotsAreNamedWordForWord) {
  EXPECT_EQ(message_of("[]"), "expected a JSON object (an acco snapshot)");
  EXPECT_EQ(message_of(R"({"fs": {}})"),
            "schema: must be \"acco.snapshot/1\" (is this an acco snapshot?)");
  EXPECT_EQ(message_of(R"({"schema": "acco.snapshot/2", "fs": {}})"),
            "schema: must be \"acco.snapshot/1\" (is this an acco snapshot?)");
  EXPECT_EQ(message_of(R"({"schema": "acco.snapshot/1"})"), "fs: missing");
  EXPECT_EQ(message_of(R"({"schema": "acco.snapshot/1", "fs": {}, "origin": 3})"),
            "origin: expected a string, got 3");
  EXPECT_EQ(message_of(R"({"schema": "acco.snapshot/1", "fs": {"files": 1}})"),
            "file system record: 'files': expected an object, got 1");
  EXPECT_THAT(message_of(R"({"schema": "acco.snapshot/1", "fs": {}, "nvml": {}})"),
              ::testing::StartsWith("nvml"));
  EXPECT_THAT(
      snapshot_from_json(nlohmann::json::parse(R"({"schema": "acco.snapshot/1", "fs": {}})")),
      IsOk());
}

}  // namespace
}  // namespace acco::topo
