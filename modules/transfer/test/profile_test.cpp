#include "acco/transfer/profile.hpp"

#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/core/file.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::transfer {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

Profile unusual_profile() {
  Profile p;
  p.chunk_bytes = 1 << 20;
  p.slots = 3;
  p.queues = 4;
  p.host_copy_threads = 5;
  p.batch_below_bytes = 12345;
  p.split_above_bytes = 1 << 28;
  p.zero_copy_below_bytes = 0;
  p.register_after_uses = 7;
  p.stage_pageable = false;
  return p;
}

void expect_invalid(const nlohmann::json& j, const std::string& field) {
  const auto profile = profile_from_json(j);
  EXPECT_THAT(profile, StatusIs(Errc::kInvalidArgument, HasSubstr(field))) << j.dump();
}

TEST(ProfileTest, DefaultsStagePageableMemoryExceptWhereDmasAreHostMemcpys) {
  device::DeviceInfo gpu;
  gpu.backend = "cuda";
  EXPECT_EQ(default_profile(gpu), Profile{});
  device::DeviceInfo emulated;
  emulated.backend = "host";
  Profile expected;
  expected.stage_pageable = false;
  EXPECT_EQ(default_profile(emulated), expected);
}

TEST(ProfileTest, DefaultsAreValid) {
  EXPECT_THAT(validate(Profile{}), IsOk());
}

TEST(ProfileTest, JsonRoundTripKeepsEveryField) {
  const Profile p = unusual_profile();
  const nlohmann::json j = to_json(p);
  EXPECT_EQ(j.at("schema"), kProfileSchema);
  EXPECT_EQ(j.at("chunk_bytes"), 1 << 20);
  const auto back = profile_from_json(j);
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(*back, p);
}

TEST(ProfileTest, MissingFieldsKeepTheirDefaults) {
  const auto p = profile_from_json(nlohmann::json{{"slots", 2}});
  ASSERT_THAT(p, IsOk());
  Profile expected;
  expected.slots = 2;
  EXPECT_EQ(*p, expected);
}

TEST(ProfileTest, SaveThenLoadGivesTheSameProfile) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("acco_transfer_profile_" +
                    std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "profile.json").string();
  ASSERT_THAT(save_profile(path, unusual_profile()), IsOk());
  const auto loaded = load_profile(path);
  ASSERT_THAT(loaded, IsOk());
  EXPECT_EQ(*loaded, unusual_profile());
  std::filesystem::remove_all(dir);
}

TEST(ProfileTest, UnknownFieldIsRejectedByName) {
  expect_invalid({{"chunk_size", 4096}}, "chunk_size");
}

TEST(ProfileTest, WrongTypeNamesTheField) {
  expect_invalid({{"slots", "four"}}, "slots");
  expect_invalid({{"chunk_bytes", 1.5}}, "chunk_bytes");
  expect_invalid({{"queues", true}}, "queues");
  expect_invalid({{"stage_pageable", 1}}, "stage_pageable");
}

TEST(ProfileTest, NegativeValueNamesTheField) {
  expect_invalid({{"batch_below_bytes", -1}}, "batch_below_bytes");
  expect_invalid({{"register_after_uses", -3}}, "register_after_uses");
}

TEST(ProfileTest, OutOfRangeValueNamesTheField) {
  expect_invalid({{"slots", 0}}, "slots");
  expect_invalid({{"queues", 17}}, "queues");
  expect_invalid({{"chunk_bytes", 100}}, "chunk_bytes");
  expect_invalid({{"host_copy_threads", 65}}, "host_copy_threads");
  expect_invalid({{"zero_copy_below_bytes", std::uint64_t{1} << 40}}, "zero_copy_below_bytes");
}

TEST(ProfileTest, WrongSchemaIsRejected) {
  expect_invalid({{"schema", "acco.xfer-profile/99"}}, "schema");
}

TEST(ProfileTest, NonObjectIsRejected) {
  expect_invalid(nlohmann::json::array({1, 2}), "object");
}

TEST(ProfileTest, ValidateNamesTheFirstBadField) {
  Profile p;
  p.queues = 0;
  const Status status = validate(p);
  ASSERT_THAT(status, StatusIs(Errc::kInvalidArgument, HasSubstr("queues")));
}

TEST(ProfileTest, LoadingAMissingFileIsNotFound) {
  const auto p = load_profile("/nonexistent/acco/profile.json");
  ASSERT_THAT(p, StatusIs(Errc::kNotFound));
}

TEST(ProfileTest, LoadingABadFileNamesThePathAndTheField) {
  const auto dir = std::filesystem::temp_directory_path() / "acco_transfer_profile_bad";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "bad.json").string();
  ASSERT_THAT(core::write_file_atomic(path, R"({"slots": "many"})"), IsOk());
  const auto p = load_profile(path);
  ASSERT_THAT(p, StatusIs(Errc::kInvalidArgument, AllOf(HasSubstr(path), HasSubstr("slots"))));
  std::filesystem::remove_all(dir);
}

TEST(ProfileTest, SavingAnInvalidProfileIsRejected) {
  Profile p;
  p.slots = -1;
  const Status status = save_profile("/tmp/acco_never_written.json", p);
  ASSERT_THAT(status, StatusIs(Errc::kInvalidArgument));
  EXPECT_FALSE(std::filesystem::exists("/tmp/acco_never_written.json"));
}

}  // namespace
}  // namespace acco::transfer
