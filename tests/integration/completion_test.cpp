// `acco completion bash|zsh` and `acco man` against their goldens, and each read where it is
// used: bash loads the completion and completes commands, flags, values, files and directories;
// zsh's completion system does the same (when zsh is installed); man renders the page without a
// warning (when man is installed). ACCO_UPDATE_GOLDEN=1 rewrites the goldens.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/files.hpp"

#include "run_acco.hpp"
#include "sysroot_builder.hpp"

namespace acco::testing {
namespace {

namespace stdfs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

bool have(const std::string& program) {
  return std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

// `text` with this build's version as <VERSION>, so a release changes no golden.
std::string without_version(std::string text) {
  const Run version = acco("--version");
  std::string v = version.out.substr(std::string("acco ").size());
  v = v.substr(0, v.find('\n'));
  for (auto pos = text.find(v); pos != std::string::npos; pos = text.find(v, pos)) {
    text.replace(pos, v.size(), "<VERSION>");
  }
  return text;
}

// Runs `command` in bash; its standard output.
std::string shell_output(const std::string& command, int& status) {
  TempDir io;
  const auto out = io.path() / "out";
  status = std::system((command + " >" + out.string() + " 2>&1").c_str());
  return slurp(out);
}

TEST(CompletionTest, ScriptsAndManPageMatchTheirGoldens) {
  const auto bash = acco("completion bash");
  ASSERT_EQ(bash.exit_code, 0) << bash.err;
  expect_golden("completion.bash", without_version(bash.out));
  const auto zsh = acco("completion zsh");
  ASSERT_EQ(zsh.exit_code, 0) << zsh.err;
  expect_golden("completion.zsh", without_version(zsh.out));
  const auto man = acco("man");
  ASSERT_EQ(man.exit_code, 0) << man.err;
  expect_golden("acco.1", without_version(man.out));
  const auto power = acco("man power");
  ASSERT_EQ(power.exit_code, 0) << power.err;
  expect_golden("acco-power.1", without_version(power.out));
}

TEST(CompletionTest, EveryCommandHasItsOwnPageAndAnUnknownOneIsAUsageError) {
  const auto list = acco("man --list");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, StartsWith("probe\ndoctor\nbench\n"));
  std::istringstream names(list.out);
  for (std::string name; std::getline(names, name);) {
    const auto page = acco("man " + name);
    ASSERT_EQ(page.exit_code, 0) << name << ": " << page.err;
    EXPECT_THAT(page.out, HasSubstr("\n.SH NAME\nacco\\-" + name + " \\- ")) << name;
    EXPECT_THAT(page.out, HasSubstr("\n.SS \"acco " + name)) << name;
  }
  const auto unknown = acco("man nope");
  EXPECT_EQ(unknown.exit_code, 64);
  EXPECT_THAT(unknown.err, StartsWith("acco: man: 'nope' is not an acco command (probe, doctor, "));
}

TEST(CompletionTest, AnUnknownShellIsAUsageError) {
  const auto r = acco("completion fish");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_EQ(r.err, "acco: completion: 'fish' is not one of bash, zsh\n");
}

// bash's completion machinery is driven the way readline drives it: COMP_WORDS and COMP_CWORD
// set, the function that `complete -p acco` names called, COMPREPLY printed.
TEST(CompletionTest, BashCompletesCommandsFlagsAndTheirValues) {
  TempDir dir;
  const auto script = dir.path() / "acco.bash";
  std::ofstream(script) << acco("completion bash").out;
  stdfs::create_directories(dir.path() / "sysroots" / "dgx");
  std::ofstream(dir.path() / "run.jsonl") << "{}\n";
  const auto driver = dir.path() / "driver.bash";
  std::ofstream(driver) << R"(source "$1" || exit 1
complete -p acco
function=$(complete -p acco | sed -n 's/^complete -F \([^ ]*\) acco$/\1/p')
reply() {
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  COMP_LINE="$*"
  COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  "$function" acco "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
  echo "$*|${COMPREPLY[*]}"
}
cd "$2" || exit 1
reply acco be
reply acco bench --ba
reply acco bench --backend ''
reply acco bench --backend = c
reply acco power ''
reply acco power run --mode ''
reply acco completion ''
reply acco probe --fail-on c
reply acco probe --sysroot sysroots/
reply acco analyze ru
reply acco bench --html bench --qu
reply acco bench -b
)";
  int status = 0;
  const std::string out = shell_output("bash --norc --noprofile " + driver.string() + " " +
                                           script.string() + " " + dir.path().string(),
                                       status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_EQ(out,
            "complete -F _acco acco\n"
            "acco be|bench\n"
            "acco bench --ba|--backend\n"
            "acco bench --backend |auto host cuda\n"
            "acco bench --backend = c|cuda\n"
            "acco power |status run\n"
            "acco power run --mode |thermal energy\n"
            "acco completion |bash zsh\n"
            "acco probe --fail-on c|critical\n"
            "acco probe --sysroot sysroots/|sysroots/dgx\n"
            "acco analyze ru|run.jsonl\n"
            "acco bench --html bench --qu|--quick\n"
            "acco bench -b|-b\n");
}

TEST(CompletionTest, BashScriptPassesShellcheck) {
  if (!have("shellcheck")) {
    GTEST_SKIP() << "shellcheck is not installed (Debian: shellcheck)";
  }
  TempDir dir;
  const auto script = dir.path() / "acco.bash";
  std::ofstream(script) << acco("completion bash").out;
  int status = 0;
  const std::string out = shell_output("shellcheck -s bash " + script.string(), status);
  EXPECT_EQ(status, 0) << out;
}

TEST(CompletionTest, ZshCompletesCommandsFlagsAndTheirValues) {
  if (!have("zsh")) {
    GTEST_SKIP() << "zsh is not installed (Debian: zsh); the zsh completion is checked by its "
                    "golden only";
  }
  TempDir dir;
  std::ofstream(dir.path() / "_acco") << acco("completion zsh").out;
  int status = 0;
  const std::string syntax = shell_output("zsh -n " + (dir.path() / "_acco").string(), status);
  ASSERT_EQ(status, 0) << syntax;
  const auto complete = [&](const std::string& line) {
    int rc = 0;
    const std::string out = shell_output(
        "cd " + dir.path().string() + " && zsh -f " + ACCO_SOURCE_DIR +
            "/tests/integration/zsh_complete.zsh " + dir.path().string() + " '" + line + "'",
        rc);
    EXPECT_EQ(rc, 0) << line << ": " << out;
    return out;
  };
  EXPECT_EQ(complete("acco be"), "bench\n");
  EXPECT_EQ(complete("acco bench --ba"), "--backend\n");
  EXPECT_EQ(complete("acco bench --backend "), "auto\nhost\ncuda\n");
  EXPECT_EQ(complete("acco bench --backend=c"), "cuda\n");
  EXPECT_EQ(complete("acco power "), "status\nrun\n");
  EXPECT_EQ(complete("acco power run --mode "), "thermal\nenergy\n");
  EXPECT_EQ(complete("acco completion "), "bash\nzsh\n");
  EXPECT_EQ(complete("acco analyze _ac"), "_acco\n");
}

TEST(CompletionTest, ManRendersThePageWithoutWarnings) {
  TempDir dir;
  const auto page = dir.path() / "acco.1";
  std::ofstream(page) << acco("man").out;
  if (!have("man") && !have("groff")) {
    GTEST_SKIP() << "neither man nor groff is installed (Debian: man-db)";
  }
  // Each command's own page renders cleanly too.
  std::istringstream names(acco("man --list").out);
  for (std::string name; std::getline(names, name);) {
    const auto own = dir.path() / ("acco-" + name + ".1");
    std::ofstream(own) << acco("man " + name).out;
    int status = 0;
    const std::string warnings =
        have("groff") ? shell_output("groff -man -ww -z -Tutf8 " + own.string(), status)
                      : shell_output("LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings=all -l " +
                                         own.string() + " 2>&1 >/dev/null",
                                     status);
    EXPECT_EQ(status, 0) << name;
    EXPECT_EQ(warnings, "") << name;
  }
  if (have("man")) {
    TempDir io;
    const auto err = io.path() / "err";
    const int status =
        std::system(("LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings=all -l " + page.string() + " >" +
                     (io.path() / "out").string() + " 2>" + err.string())
                        .c_str());
    EXPECT_EQ(status, 0);
    EXPECT_EQ(slurp(err), "");
    const std::string text = slurp(io.path() / "out");
    EXPECT_THAT(text, HasSubstr("find, measure and remove the bottlenecks"));
    EXPECT_THAT(text, HasSubstr("acco power run [OPTIONS]"));
    EXPECT_THAT(text, HasSubstr("--backend NAME"));
    EXPECT_THAT(text, HasSubstr("ACCO_SYSROOT"));
  }
  if (have("groff")) {
    int status = 0;
    const std::string out = shell_output("groff -man -ww -z -Tutf8 " + page.string(), status);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(out, "");
  }
}

}  // namespace
}  // namespace acco::testing
