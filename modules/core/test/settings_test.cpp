#include "acco/core/settings.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

namespace acco::core {
namespace {

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
  ASSERT_TRUE(s.set("sysroot", "/flag", SetBy::kFlag).has_value());
  std::map<std::string, std::string> env{{"ACCO_SYSROOT", "/env"}};
  s.load_env([&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  ASSERT_TRUE(s.set("sysroot", "/file", SetBy::kFile).has_value());
  EXPECT_EQ(s.get("sysroot"), "/flag");
  EXPECT_EQ(s.find("sysroot")->set_by, SetBy::kFlag);
  EXPECT_EQ(s.get("nvml-library"), "libnvidia-ml.so.1");
  EXPECT_EQ(s.find("nvml-library")->set_by, SetBy::kDefault);
}

TEST(SettingsTest, UnknownKeyIsInvalidArgument) {
  auto s = make();
  EXPECT_EQ(s.set("colour", "red", SetBy::kFlag).error().code, Errc::kInvalidArgument);
}

TEST(SettingsTest, LoadsJsonConfigFileAndRejectsBadOnes) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto good = (dir / "acco_settings_good.json").string();
  const auto bad = (dir / "acco_settings_bad.json").string();
  const auto unknown = (dir / "acco_settings_unknown.json").string();
  std::ofstream(good) << R"({"sysroot": "/srv/machine"})";
  std::ofstream(bad) << R"({"sysroot": )";
  std::ofstream(unknown) << R"({"colour": "red"})";
  auto s = make();
  ASSERT_TRUE(s.load_file(good).has_value());
  EXPECT_EQ(s.get("sysroot"), "/srv/machine");
  EXPECT_EQ(s.find("sysroot")->set_by, SetBy::kFile);
  EXPECT_EQ(s.load_file(bad).error().code, Errc::kInvalidArgument);
  EXPECT_NE(s.load_file(unknown).error().message.find("colour"), std::string::npos);
  EXPECT_EQ(s.load_file((dir / "acco_missing.json").string()).error().code, Errc::kNotFound);
  std::remove(good.c_str());
  std::remove(bad.c_str());
  std::remove(unknown.c_str());
}

}  // namespace
}  // namespace acco::core
