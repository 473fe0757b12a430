// `acco rules` lists every rule a finding can name: the rule ids that any source file raises
// (outside topo's table, whose findings take their id from it) are held against topo::rules().
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/files.hpp"
#include "acco/topo/checks.hpp"

namespace acco::cli {
namespace {

namespace stdfs = std::filesystem;
using ::acco::testing::slurp;
using ::testing::Contains;

// Every rule id a source file sets by hand (`f.rule = "x"`, `.rule = "x"`, `Finding{"x", ...}`),
// with the file that sets it, from the library and application sources (tests build findings
// of made-up rules on purpose).
std::map<std::string, std::string> rule_ids_raised_in_sources() {
  static const std::regex kAssigned(R"re(\brule\s*=\s*"([^"]*)")re");
  static const std::regex kBraced(R"re(\bFinding\s*\{\s*"([^"]*)")re");
  std::map<std::string, std::string> raised;
  const stdfs::path root = ACCO_SOURCE_DIR;
  std::vector<stdfs::path> dirs = {root / "apps"};
  for (const auto& module : stdfs::directory_iterator(root / "modules")) {
    dirs.push_back(module.path() / "src");
    dirs.push_back(module.path() / "include");
  }
  for (const auto& dir : dirs) {
    if (!stdfs::is_directory(dir)) {
      continue;
    }
    for (const auto& entry : stdfs::recursive_directory_iterator(dir)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) {
        continue;
      }
      const std::string text = slurp(entry.path());
      for (const auto* pattern : {&kAssigned, &kBraced}) {
        for (std::sregex_iterator it(text.begin(), text.end(), *pattern), end; it != end; ++it) {
          raised.emplace((*it)[1].str(), stdfs::relative(entry.path(), root).string());
        }
      }
    }
  }
  return raised;
}

TEST(RulesTest, EveryRuleIdRaisedOutsideTheTableIsListed) {
  const auto raised = rule_ids_raised_in_sources();
  // The scan finds the doctor's rule, so it is not passing for finding nothing.
  ASSERT_TRUE(raised.contains("tune-profile-missing"));
  for (const auto& [id, file] : raised) {
    EXPECT_NE(topo::find_rule(id), nullptr)
        << file << " raises '" << id << "', which topo's rule table does not list";
  }
}

TEST(RulesTest, TheDoctorsTuneRuleIsListedAsInfo) {
  const auto* rule = topo::find_rule("tune-profile-missing");
  ASSERT_NE(rule, nullptr);
  EXPECT_EQ(rule->lowest, topo::Severity::kInfo);
  EXPECT_EQ(rule->highest, topo::Severity::kInfo);
  EXPECT_EQ(topo::find_rule("no-such-rule"), nullptr);
}

// docs/findings.md explains every rule acco rules lists, under a heading of its id.
TEST(RulesTest, EveryListedRuleHasItsSectionInFindingsMd) {
  const std::string doc = slurp(stdfs::path(ACCO_SOURCE_DIR) / "docs/findings.md");
  std::set<std::string> headings;
  std::istringstream lines(doc);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("## ")) {
      headings.insert(line.substr(3));
    }
  }
  for (const auto& r : topo::rules()) {
    EXPECT_THAT(headings, Contains(r.id)) << "docs/findings.md has no '## " << r.id << "'";
  }
}

}  // namespace
}  // namespace acco::cli
