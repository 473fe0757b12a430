// The command-line renderers on a small tree built by hand: no parser, no acco commands.
#include "acco/report/command_line.hpp"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace acco::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

FlagInfo flag(std::vector<std::string> names, std::string value_name, ValueKind kind,
              std::vector<std::string> values = {}) {
  FlagInfo f;
  f.names = std::move(names);
  f.value_name = std::move(value_name);
  f.help = "help for " + f.names.back();
  f.values = std::move(values);
  f.kind = kind;
  return f;
}

CommandInfo tree() {
  CommandInfo run{
      "run", "run it", {flag({"--mode"}, "MODE", ValueKind::kChoice, {"a", "b"})}, {}, {}};
  CommandInfo stop{"stop", "stop it", {flag({"--out"}, "FILE", ValueKind::kFile)}, {}, {}};
  CommandInfo power{"power", "the governor", {}, {}, {run, stop}};
  FlagInfo env_flag = flag({"-d", "--dir"}, "DIR", ValueKind::kDirectory);
  env_flag.env = "ACCO_DIR";
  CommandInfo top{"top", "watch-the devices", {env_flag}, {}, {}};
  return CommandInfo{
      "acco", "the tool", {flag({"--version"}, "", ValueKind::kNone)}, {}, {power, top}};
}

TEST(CommandPaths, NameEveryCommandDepthFirstInOrder) {
  const CommandInfo root = tree();
  std::vector<std::string> words;
  for (const CommandPath& path : command_paths(root)) {
    words.push_back(path.words);
  }
  EXPECT_EQ(words, (std::vector<std::string>{"acco", "acco power", "acco power run",
                                             "acco power stop", "acco top"}));
}

TEST(Completion, OffersEachFlagsValuesFilesAndDirectories) {
  const CommandInfo root = tree();
  const std::string bash = bash_completion(root, "9.9");
  EXPECT_THAT(bash, HasSubstr("(acco 9.9)"));
  EXPECT_THAT(bash, HasSubstr("'acco power run --mode') _acco_reply_words 'a b' \"$3\" ;;"));
  EXPECT_THAT(bash, HasSubstr("'acco power stop --out') _acco_reply_files \"$3\" ;;"));
  EXPECT_THAT(bash, HasSubstr("'acco top -d') _acco_reply_directories \"$3\" ;;"));
  const std::string zsh = zsh_completion(root, "9.9");
  EXPECT_THAT(zsh, HasSubstr("_acco_power_run() {"));
  EXPECT_THAT(zsh, HasSubstr("--mode='[help for --mode]:MODE:(a b)'"));
  EXPECT_THAT(zsh, HasSubstr("'(-d --dir)'{-d+,--dir=}'[help for --dir]:DIR:_files -/'"));
}

TEST(ManPage, EscapesDashesAndListsTheEnvironmentAndExitStatuses) {
  ManPageText text;
  text.version = "9.9";
  text.description = "the tool";
  text.environment = {{"ACCO_X", "the x", ""}};
  text.exit_statuses = {{0, "fine"}, {64, "usage-error"}};
  const std::string page = man_page(tree(), text);
  EXPECT_THAT(page, HasSubstr(".TH ACCO 1 \"\" \"acco 9.9\""));
  EXPECT_THAT(page, HasSubstr(".SS \"acco power run [OPTIONS]\"\nrun it\n"));
  EXPECT_THAT(page, HasSubstr("\\fB\\-\\-mode\\fR \\fIMODE\\fR"));
  EXPECT_THAT(page, HasSubstr(".B ACCO_X\nthe x (default empty)\n"));
  EXPECT_THAT(page, HasSubstr(".B ACCO_DIR\nwhat \\fB\\-d\\fR, \\fB\\-\\-dir\\fR"));
  EXPECT_THAT(page, HasSubstr(".B 64\nusage-error\n"));  // a dash inside a word stays one
  EXPECT_THAT(page, HasSubstr(".BR acco\\-power (1),"));

  const std::string power = command_page(tree().commands.front(), text);
  EXPECT_THAT(power, HasSubstr(".TH ACCO\\-POWER 1"));
  EXPECT_THAT(power, HasSubstr("The governor."));
  EXPECT_THAT(power, HasSubstr(".SS \"acco power stop [OPTIONS]\""));
  EXPECT_THAT(power, Not(HasSubstr("acco top")));
}

}  // namespace
}  // namespace acco::report
