#include "acco/tune/tune_profile.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/report/document.hpp"
#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"
#include "acco/tune/profile_report.hpp"

namespace acco::tune {
namespace {

using ::acco::testing::TempDir;

namespace stdfs = std::filesystem;
using ::acco::testing::slurp;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;

TuneProfile sample() {
  TuneProfile p;
  p.fingerprint = "box-0123456789abcdef";
  p.created = "2026-12-02T00:00:00Z";
  p.backend = "host";
  p.link = "25GB/s";
  p.bytes = 64 << 20;
  p.budget_seconds = 60;
  PathTuning t;
  t.device = "host:0";
  t.path = "h2d_pageable";
  t.profile.chunk_bytes = 1 << 20;
  t.profile.host_copy_threads = 2;
  t.tuned = true;
  t.confirmed = true;
  t.default_bytes_per_second = {1e9, 1.1e9, 1.05e9};
  t.winner_bytes_per_second = {2e9, 2.1e9, 2.05e9};
  t.noise = 0.05;
  t.gain = 0.95;
  t.fit = LatencyBandwidth{1e-5, 2e9};
  t.fit_points = {{1 << 20, 5e-4}, {4 << 20, 2e-3}};
  t.candidates = {{transfer::Profile{}, 1e9}, {t.profile, 2e9}};
  p.paths.push_back(t);
  PathTuning d = t;
  d.path = "d2h_pinned";
  d.profile = {};
  d.tuned = false;
  d.fit.reset();
  p.paths.push_back(d);
  return p;
}

TuneProfile sample_with_reader() {
  TuneProfile p = sample();
  ReaderTuning r;
  r.file = "/data/shard0";
  r.bytes = 64 << 20;
  r.options.block_bytes = 4 << 20;
  r.options.depth = 4;
  r.options.threads = 2;
  r.tuned = true;
  r.confirmed = true;
  r.default_bytes_per_second = {1e9, 1.02e9, 1.01e9};
  r.winner_bytes_per_second = {1.5e9, 1.52e9, 1.49e9};
  r.noise = 0.02;
  r.gain = 0.49;
  r.candidates = {{io::ReaderOptions{}, 1e9}, {r.options, 1.5e9}};
  p.reader = r;
  return p;
}

TEST(TuneProfileTest, JsonRoundTripKeepsEveryField) {
  const auto p = sample();
  const auto j = to_json(p);
  EXPECT_EQ(j["schema"], kTuneProfileSchema);
  auto back = tune_profile_from_json(nlohmann::json::parse(j.dump()));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, p);
}

TEST(TuneProfileTest, ReaderSectionRoundTripsAndIsAbsentWithoutOne) {
  const auto p = sample_with_reader();
  const auto j = to_json(p);
  ASSERT_TRUE(j.contains("reader"));
  EXPECT_EQ(j["reader"]["options"],
            nlohmann::json({{"block_bytes", 4 << 20}, {"depth", 4}, {"threads", 2}}));
  auto back = tune_profile_from_json(nlohmann::json::parse(j.dump()));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, p);
  EXPECT_FALSE(to_json(sample()).contains("reader"));
  EXPECT_FALSE(tune_profile_from_json(to_json(sample())).value().reader.has_value());
}

TEST(TuneProfileTest, FusionEntriesRoundTripOnePerLinkClass) {
  auto p = sample();
  EXPECT_FALSE(to_json(p).contains("fusion"));
  set_fusion(p, {"intra-node", 2, 1e-6, 5e9, 64 << 10, "2026-12-03T08:00:00Z"});
  set_fusion(p, {"inter-node", 4, 3e-5, 1e9, 512 << 10, "2026-12-03T08:01:00Z"});
  set_fusion(p, {"intra-node", 4, 2e-6, 6e9, 128 << 10, "2026-12-03T08:02:00Z"});  // replaces
  ASSERT_EQ(p.fusion.size(), 2U);
  ASSERT_NE(find_fusion(p, "intra-node"), nullptr);
  EXPECT_EQ(find_fusion(p, "intra-node")->threshold_bytes, 128U << 10);
  EXPECT_EQ(find_fusion(p, "inter-node")->ranks, 4);
  EXPECT_EQ(find_fusion(p, "nvlink"), nullptr);
  auto back = tune_profile_from_json(nlohmann::json::parse(to_json(p).dump()));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, p);
  auto bad = to_json(p);
  bad["fusion"][1]["link_class"] = "pcie";
  auto refused = tune_profile_from_json(bad);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, ::testing::HasSubstr("fusion[1].link_class"));
}

TEST(TuneProfileTest, ReaderOptionsComeFromTheReaderSection) {
  EXPECT_FALSE(reader_options(sample()).has_value());
  const auto o = reader_options(sample_with_reader());
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->block_bytes, std::size_t{4} << 20);
  EXPECT_EQ(o->depth, 4);
  EXPECT_EQ(o->threads, 2);
  EXPECT_EQ(o->engine, io::ReaderOptions{}.engine);  // what is not tuned keeps its default
}

TEST(TuneProfileTest, BadReaderFieldsAreNamedWithTheirPath) {
  const auto j = to_json(sample_with_reader());
  const auto error_for = [&](const auto& change) {
    auto bad = j;
    change(bad);
    auto r = tune_profile_from_json(bad);
    return r ? std::string("accepted") : r.error().message;
  };
  EXPECT_THAT(error_for([](auto& b) { b["reader"]["options"]["depth"] = 0; }),
              HasSubstr("reader.options.depth"));
  EXPECT_THAT(error_for([](auto& b) { b["reader"]["options"]["block_bytes"] = 5000; }),
              HasSubstr("reader.options: block size 5000"));
  EXPECT_THAT(error_for([](auto& b) { b["reader"]["options"].erase("threads"); }),
              HasSubstr("reader.options.threads: missing"));
  EXPECT_THAT(error_for([](auto& b) { b["reader"]["file"] = ""; }), HasSubstr("reader.file"));
  EXPECT_THAT(error_for([](auto& b) { b["reader"]["candidates"][1]["bytes_per_second"] = -1; }),
              HasSubstr("reader.candidates[1].bytes_per_second"));
  EXPECT_THAT(error_for([](auto& b) { b["reader"] = 3; }), HasSubstr("reader"));
  EXPECT_THAT(error_for([](auto& b) { b["reader"].erase("tuned"); }),
              HasSubstr("reader.tuned: missing"));
}

TEST(TuneProfileTest, WrongSchemaIsNamed) {
  auto j = to_json(sample());
  j["schema"] = "acco.tune-profile/9";
  EXPECT_THAT(tune_profile_from_json(j), StatusIs(Errc::kInvalidArgument, HasSubstr("schema")));
}

TEST(TuneProfileTest, BadEngineFieldIsNamedWithItsPath) {
  auto j = to_json(sample());
  j["paths"][1]["profile"]["slots"] = 0;
  EXPECT_THAT(tune_profile_from_json(j),
              StatusIs(Errc::kInvalidArgument, HasSubstr("paths[1].profile: profile: slots")));
}

TEST(TuneProfileTest, UnknownPathIsNamed) {
  auto j = to_json(sample());
  j["paths"][0]["path"] = "h2d_sideways";
  EXPECT_THAT(tune_profile_from_json(j),
              StatusIs(Errc::kInvalidArgument, HasSubstr("h2d_sideways")));
}

TEST(TuneProfileTest, MissingFingerprintIsNamed) {
  auto j = to_json(sample());
  j.erase("fingerprint");
  EXPECT_THAT(tune_profile_from_json(j),
              StatusIs(Errc::kInvalidArgument, HasSubstr("fingerprint")));
}

TEST(TuneProfileTest, NegativeRateIsNamed) {
  auto j = to_json(sample());
  j["paths"][0]["candidates"][1]["bytes_per_second"] = -1;
  EXPECT_THAT(tune_profile_from_json(j),
              StatusIs(Errc::kInvalidArgument, HasSubstr("candidates[1].bytes_per_second")));
}

TEST(TuneProfileTest, SaveThenLoadGivesTheSameProfile) {
  TempDir dir;
  const auto path = dir.file("p.json");
  ASSERT_TRUE(save_tune_profile(path, sample()).has_value());
  auto back = load_tune_profile(path);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, sample());
}

TEST(TuneProfileTest, FailedSaveLeavesTheOldFileAndNoTemporary) {
  TempDir dir;
  const auto path = dir.file("p.json");
  ASSERT_TRUE(save_tune_profile(path, sample()).has_value());
  const auto before = slurp(path);
  auto bad = sample();
  bad.paths[0].profile.queues = 0;  // does not validate: nothing may be written
  EXPECT_THAT(save_tune_profile(path, bad), StatusIs(Errc::kInvalidArgument, HasSubstr("queues")));
  EXPECT_EQ(slurp(path), before);
  int files = 0;
  for (const auto& e : stdfs::directory_iterator(stdfs::path(path).parent_path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST(TuneProfileTest, SaveThenLoadKeepsTheReader) {
  TempDir dir;
  const auto path = dir.file("p.json");
  ASSERT_TRUE(save_tune_profile(path, sample_with_reader()).has_value());
  auto back = load_tune_profile(path);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, sample_with_reader());
  auto bad = sample_with_reader();
  bad.reader->options.depth = 0;
  EXPECT_THAT(save_tune_profile(path, bad), StatusIs(Errc::kInvalidArgument, HasSubstr("reader")));
}

TEST(TuneProfileTest, LoadOfAMissingFileIsNotFound) {
  TempDir dir;
  EXPECT_THAT(load_tune_profile(dir.file("none.json")), StatusIs(Errc::kNotFound));
}

TEST(TuneProfileTest, DirectoryFollowsXdgStateHomeThenHome) {
  EXPECT_EQ(tune_directory("/x/state", "/home/u").value(), "/x/state/acco/tune");
  EXPECT_EQ(tune_directory("relative", "/home/u").value(), "/home/u/.local/state/acco/tune");
  EXPECT_THAT(tune_directory("", ""), StatusIs(Errc::kUnavailable));
}

TEST(TuneProfileTest, ProfilePathReplacesSlashes) {
  EXPECT_EQ(profile_path("/d", "a/b"), "/d/a_b.json");
}

TEST(TuneProfileTest, EngineProfilesAreKeyedByDeviceAndPath) {
  const auto m = engine_profiles(sample());
  ASSERT_EQ(m.size(), 2U);
  EXPECT_EQ(m.at("host:0/h2d_pageable").chunk_bytes, std::size_t{1} << 20);
}

TEST(ProfileReportTest, ShowsEachSettingBesideItsDefaultAndTheFusionThresholds) {
  auto p = sample_with_reader();
  set_fusion(p, {"intra-node", 2, 1e-6, 5e9, 64 << 10, "2026-12-03T08:00:00Z"});
  const std::string text = report::render_text(profile_report(p, "/tmp/x.json"));
  EXPECT_TRUE(text.starts_with("Tune profile /tmp/x.json\n  machine box-0123456789abcdef, "))
      << text;
  EXPECT_THAT(text, HasSubstr("  host:0 h2d_pageable tuned    yes (no) 1.00 MiB (4.00 MiB)"));
  EXPECT_THAT(text, HasSubstr("  storage reader on /data/shard0"));
  EXPECT_THAT(text,
              HasSubstr("  fusion of small allreduces, intra-node links: threshold 64.0 KiB"));
  EXPECT_TRUE(text.ends_with("medians of the interleaved confirmation\n")) << text;
  const auto j = profile_with_defaults_json(p, "/tmp/x.json");
  EXPECT_EQ(j["path"], "/tmp/x.json");
  EXPECT_TRUE(j.contains("defaults"));
  EXPECT_TRUE(j.contains("reader_defaults"));
  EXPECT_FALSE(profile_with_defaults_json(sample(), "p").contains("reader_defaults"));
}

TEST(ProfileReportTest, TheProfileToReplaceIsNoneAProfileOrARefusal) {
  const TempDir dir;
  EXPECT_EQ(profile_to_replace(dir.file("absent.json")).value(), std::nullopt);
  ASSERT_TRUE(save_tune_profile(dir.file("p.json"), sample()));
  const auto kept = profile_to_replace(dir.file("p.json"));
  ASSERT_TRUE(kept && kept->has_value());
  EXPECT_EQ(**kept, sample());
  std::ofstream(dir.file("other.json")) << "not a profile";
  EXPECT_THAT(profile_to_replace(dir.file("other.json")),
              StatusIs(Errc::kInvalidArgument, HasSubstr("; left as it is")));
  stdfs::create_directory(dir.file("d"));
  EXPECT_THAT(profile_to_replace(dir.file("d")), StatusIs(Errc::kCannotWrite));
  EXPECT_THAT(machine_profile_path(nullptr), StatusIs(Errc::kUnavailable, HasSubstr("--output")));
}

}  // namespace
}  // namespace acco::tune
