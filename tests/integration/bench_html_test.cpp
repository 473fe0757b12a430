// `acco bench --html` opened in headless Chromium: the page loads with no console error, and
// every chart in the DOM Chromium built has a title, axis labels with units and a legend.
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon.hpp"  // have
#include "run_acco.hpp"
#include "sysroot_builder.hpp"

namespace acco::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(BenchHtmlTest, EveryChartHasATitleAxesWithUnitsAndALegendInHeadlessChromium) {
  if (!have("chromium")) {
    GTEST_SKIP() << "chromium is not installed (Debian package chromium; scripts/install-deps "
                    "installs it)";
  }
  TempDir dir;
  const auto page = dir.path() / "bench.html";
  // Two runs in a history, then a third compared with them: the page has each case's trend.
  // Small buffers and two samples: every family is there, each run takes seconds, not a minute.
  const std::string bench =
      "bench --backend host --devices 2 --quick --reps 2 --bytes 4MiB "
      "--history " +
      (dir.path() / "h.sqlite").string();
  for (int i = 0; i < 2; ++i) {
    const auto earlier = acco(bench);
    ASSERT_EQ(earlier.exit_code, 0) << earlier.err;
  }
  const auto run = acco(bench + " --compare --html " + page.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;

  const std::string flags =
      "--headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
      "--user-data-dir=" +
      (dir.path() / "profile").string() +
      " --enable-logging=stderr --v=0 --virtual-time-budget=2000 ";
  const std::string dom_cmd = "timeout 120 chromium " + flags + "--dump-dom file://" +
                              page.string() + " > " + (dir.path() / "dom.html").string() + " 2> " +
                              (dir.path() / "console.txt").string();
  ASSERT_EQ(std::system(dom_cmd.c_str()), 0) << slurp(dir.path() / "console.txt");
  const std::string dom = slurp(dir.path() / "dom.html");
  const std::string console = slurp(dir.path() / "console.txt");
  EXPECT_THAT(console, Not(HasSubstr("Uncaught")));
  EXPECT_THAT(console, Not(HasSubstr("Error parsing")));

  // Each chart Chromium parsed: the <svg> elements of class "plot".
  const std::regex svg_element(R"(<svg[^>]*class="plot"[\s\S]*?</svg>)");
  const std::regex axis_with_unit(
      R"(<text class="axis"[^>]*>[^<]*\((GB/s|µs|log2 scale)[^)]*\)</text>)");
  int charts = 0;
  int trends = 0;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), svg_element);
       it != std::sregex_iterator(); ++it) {
    const std::string svg = it->str();
    ++charts;
    std::smatch title;
    ASSERT_TRUE(std::regex_search(svg, title, std::regex("<title>([^<]+)</title>")))
        << svg.substr(0, 300);
    EXPECT_THAT(svg, HasSubstr("class=\"chart-title\"")) << title[1];
    EXPECT_THAT(svg, HasSubstr("<g class=\"legend\">")) << title[1];
    EXPECT_TRUE(std::regex_search(svg, axis_with_unit)) << title[1] << ": no axis with a unit";
    if (std::string(title[1]).starts_with("Trend: ")) {
      ++trends;
      EXPECT_THAT(svg, HasSubstr("run (oldest first)"));
      EXPECT_THAT(svg, HasSubstr("<polyline")) << title[1];
    }
  }
  // Host to device, device to host, small copies, latency, P2P and two sweeps (one per device),
  // and one trend per case and device compared.
  EXPECT_GT(trends, 0) << dom.substr(0, 2000);
  EXPECT_EQ(charts, 7 + trends) << dom.substr(0, 2000);
  EXPECT_THAT(dom, HasSubstr("<h2>Trend over the history</h2>"));
}

}  // namespace
}  // namespace acco::testing
