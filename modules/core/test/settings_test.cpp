#include "acco/core/settings.hpp"

#include <filesystem>
#include <fstream>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::core {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;

Settings make() {
  Settings s;
  s.define("sysroot", "/", "root of /sys and /proc");
  s.define("nvml-library", "libnvidia-ml.so.1", "NVML to load");
  return s;
}

TEST(SettingsTest, EnvNameIsUpperSnakeWithPrefix) {
  EXPECT_EQ(env_name("nvml-library"), "ACCO_NVML_LIBRARY");
}

TEST(SettingsTest, PrecedenceIsDefaultFileEnvFlagWhateverTheOrder) {
  auto s = make();
  ASSERT_THAT(s.set("sysroot", "/flag", SetBy::kFlag), IsOk());
  std::map<std::string, std::string> env{{"ACCO_SYSROOT", "/env"}};
  s.load_env([&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  ASSERT_THAT(s.set("sysroot", "/file", SetBy::kFile), IsOk());
  EXPECT_EQ(s.get("sysroot"), "/flag");
  EXPECT_EQ(s.find("sysroot")->set_by, SetBy::kFlag);
  EXPECT_EQ(s.get("nvml-library"), "libnvidia-ml.so.1");
  EXPECT_EQ(s.find("nvml-library")->set_by, SetBy::kDefault);
}

TEST(SettingsTest, UnknownKeyIsInvalidArgument) {
  auto s = make();
  EXPECT_THAT(s.set("colour", "red", SetBy::kFlag), StatusIs(Errc::kInvalidArgument));
}

TEST(SettingsTest, LoadsJsonConfigFileAndRejectsBadOnes) {
  const acco::testing::TempDir scratch;
  const auto& dir = scratch.path();
  const auto good = (dir / "acco_settings_good.json").string();
  const auto bad = (dir / "acco_settings_bad.json").string();
  const auto unknown = (dir / "acco_settings_unknown.json").string();
  std::ofstream(good) << R"({"sysroot": "/srv/machine"})";
  std::ofstream(bad) << R"({"sysroot": )";
  std::ofstream(unknown) << R"({"colour": "red"})";
  auto s = make();
  ASSERT_THAT(s.load_file(good), IsOk());
  EXPECT_EQ(s.get("sysroot"), "/srv/machine");
  EXPECT_EQ(s.find("sysroot")->set_by, SetBy::kFile);
  EXPECT_THAT(s.load_file(bad), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(s.load_file(unknown), StatusIs(Errc::kInvalidArgument, HasSubstr("colour")));
  EXPECT_THAT(s.load_file((dir / "acco_missing.json").string()), StatusIs(Errc::kNotFound));
}

// The config file's messages, pinned word for word on malformed documents.
TEST(SettingsTest, MalformedConfigFilesAreNamedWordForWord) {
  const acco::testing::TempDir scratch;
  const auto path = scratch.file("acco_settings_malformed.json");
  const auto load = [&](const char* text, Settings& s) {
    std::ofstream(path) << text;
    return s.load_file(path);
  };
  const auto message_of = [&](const char* text) {
    auto s = make();
    const Status status = load(text, s);
    EXPECT_THAT(status, StatusIs(Errc::kInvalidArgument)) << text;
    return status.has_value() ? std::string() : status.error().message;
  };
  const std::string prefix = "config file " + path + ": ";
  EXPECT_EQ(message_of("[1, 2]"), prefix + "expected a JSON object of setting: value");
  EXPECT_EQ(message_of(R"("sysroot")"), prefix + "expected a JSON object of setting: value");
  EXPECT_EQ(message_of(R"({"sysroot": [1]})"),
            prefix + "'sysroot': expected a string, number or boolean");
  EXPECT_EQ(message_of(R"({"sysroot": null})"),
            prefix + "'sysroot': expected a string, number or boolean");
  EXPECT_EQ(message_of(R"({"sysroot": {"a": 1}})"),
            prefix + "'sysroot': expected a string, number or boolean");
  EXPECT_EQ(message_of(R"({"colour": "red"})"), prefix + "unknown setting 'colour'");
  // Members are read in key order: the first bad one is reported.
  EXPECT_EQ(message_of(R"({"sysroot": "/", "a": [1], "colour": 1})"),
            prefix + "'a': expected a string, number or boolean");
  EXPECT_EQ(message_of(R"({"nvml-library": 1, "colour": []})"),
            prefix + "'colour': expected a string, number or boolean");

  auto s = make();
  ASSERT_THAT(load(R"({"sysroot": 1.5, "nvml-library": true})", s), IsOk());
  EXPECT_EQ(s.get("sysroot"), "1.5");
  EXPECT_EQ(s.get("nvml-library"), "true");
  ASSERT_THAT(load("{}", s), IsOk());
}

}  // namespace
}  // namespace acco::core
