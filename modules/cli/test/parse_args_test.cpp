#include <map>

#include <gtest/gtest.h>

#include "acco/cli/app.hpp"

namespace acco::cli {
namespace {

Getenv env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(ParseArgsTest, ProbeDefaultsToLiveRootAndText) {
  auto o = parse_args({"probe"}, env_of({}));
  ASSERT_TRUE(o.has_value()) << o.error().message;
  EXPECT_EQ(o->command, Command::kProbe);
  EXPECT_EQ(o->format, Format::kText);
  EXPECT_EQ(o->settings.get("sysroot"), "/");
  EXPECT_FALSE(o->fail_on.has_value());
}

TEST(ParseArgsTest, FlagBeatsEnvironmentForSysroot) {
  auto o = parse_args({"probe", "--sysroot", "/flag"}, env_of({{"ACCO_SYSROOT", "/env"}}));
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->settings.get("sysroot"), "/flag");
  auto e = parse_args({"probe"}, env_of({{"ACCO_SYSROOT", "/env"}}));
  EXPECT_EQ(e->settings.get("sysroot"), "/env");
}

TEST(ParseArgsTest, FailOnAcceptsWarningAndCriticalOnly) {
  EXPECT_EQ(parse_args({"probe", "--fail-on", "critical"}, env_of({}))->fail_on,
            topo::Severity::kCritical);
  auto bad = parse_args({"probe", "--fail-on", "sometimes"}, env_of({}));
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("--fail-on"), std::string::npos);
  EXPECT_FALSE(parse_args({"probe", "--fail-on", "info"}, env_of({})).has_value());
}

TEST(ParseArgsTest, UnknownFlagIsAnError) {
  auto o = parse_args({"probe", "--colour"}, env_of({}));
  ASSERT_FALSE(o.has_value());
  EXPECT_EQ(o.error().code, Errc::kInvalidArgument);
}

TEST(ParseArgsTest, FromAndSnapshotCannotBeCombined) {
  EXPECT_FALSE(
      parse_args({"probe", "--from", "a.json", "--snapshot", "b.json"}, env_of({})).has_value());
  EXPECT_FALSE(
      parse_args({"probe", "--from", "a.json", "--sysroot", "/x"}, env_of({})).has_value());
}

TEST(ParseArgsTest, BadNvmlModeIsRejected) {
  auto o = parse_args({"doctor", "--nvml", "maybe"}, env_of({}));
  ASSERT_FALSE(o.has_value());
  EXPECT_NE(o.error().message.find("auto, on, off"), std::string::npos);
}

TEST(ParseArgsTest, NoSubcommandPrintsHelp) {
  auto o = parse_args({}, env_of({}));
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->command, Command::kHelp);
  EXPECT_NE(o->help_text.find("probe"), std::string::npos);
}

TEST(ParseArgsTest, UsageErrorExitsWith64) {
  const auto outcome = main_outcome({"probe", "--nope"}, env_of({}));
  EXPECT_EQ(outcome.exit_code, kExitUsage);
  EXPECT_EQ(outcome.err.rfind("acco: ", 0), 0U);
  EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1);
}

TEST(ParseArgsTest, MissingSysrootExitsWith66AndOneLine) {
  const auto outcome = main_outcome({"probe", "--sysroot", "/does/not/exist"}, env_of({}));
  EXPECT_EQ(outcome.exit_code, kExitNoInput);
  EXPECT_NE(outcome.err.find("/does/not/exist"), std::string::npos);
  EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1);
}

}  // namespace
}  // namespace acco::cli
