// `acco tune` against its target, side by side in one run on the host backend with an emulated
// link (25 GB/s by default):
//  (a) tune: the search of acco tune with a budget, as the command runs it;
//  (b) defaults against the tuned profile on every path (h2d/d2h, pageable/pinned), measured by
//      acco bench's own *_engine cases in interleaved rounds (defaults first in odd rounds, tuned
//      first in even ones), the median of the rounds' medians kept;
//  (c) with the tuned profile, every *_engine case against its *_plain counterpart, from the
//      same rounds.
// Prints tables and writes JSON ("acco.tune-bench/1"). Not a test: timing on a shared machine.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "acco/bench/runner.hpp"
#include "acco/core/json.hpp"
#include "acco/core/units.hpp"
#include "acco/dev/host_backend.hpp"
#include "acco/tune/tune_run.hpp"

namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kSchema = "acco.tune-bench/1";

struct Options {
  std::string link = "25GB/s";
  std::string budget = "60s";
  std::string bytes = "64MiB";
  int rounds = 3;
  std::string json;
};

double median(std::vector<double> v) {
  if (v.empty()) {
    return 0;
  }
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// case key -> the rounds' median rates.
using Rates = std::map<std::string, std::vector<double>>;

bool measure_round(const acco::bench::RunOptions& options, Rates& into) {
  auto run = acco::bench::run_benchmarks(options, nullptr, {});
  if (!run) {
    fmt::print(stderr, "tune bench: {}\n", run.error().message);
    return false;
  }
  for (const auto& r : run->results) {
    if (r.status == acco::bench::kStatusOk) {
      into[r.case_key].push_back(r.median_bytes_per_second);
    }
  }
  return true;
}

int tune_bench(int argc, char** argv) {
  Options o;
  CLI::App app{"acco tune bench: the tuned profile against the defaults and the plain paths"};
  app.add_option("--link", o.link, "the emulated host-device link (25GB/s)");
  app.add_option("--budget", o.budget, "acco tune's budget (60s)");
  app.add_option("--bytes", o.bytes, "copy size of the search and the cases (64MiB)");
  app.add_option("--rounds", o.rounds, "interleaved rounds of defaults and tuned (3)");
  app.add_option("--json", o.json, "write results here");
  CLI11_PARSE(app, argc, argv);

  const auto link = acco::dev::parse_link(o.link);
  const auto budget = acco::units::parse_duration(o.budget);
  const auto bytes = acco::units::parse_bytes(o.bytes);
  if (!link || !budget || !bytes || o.rounds < 1) {
    fmt::print(stderr, "tune bench: bad --link, --budget, --bytes or --rounds\n");
    return 64;
  }
  acco::tune::TuneOptions t;
  t.backend = acco::bench::BackendChoice::kHost;
  t.host.link = *link;
  t.search.bytes = *bytes;
  t.search.budget =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(*budget));
  fmt::print("(a) acco tune on the host backend, emulated {} link, budget {}, copies of {}\n",
             o.link, o.budget, acco::units::format_bytes(*bytes));
  const auto t0 = std::chrono::steady_clock::now();
  auto tuned = acco::tune::run_tune(
      t, nullptr, {}, [](std::string_view line) { fmt::print(stderr, "{}\n", line); });
  if (!tuned) {
    fmt::print(stderr, "tune bench: {}\n", tuned.error().message);
    return 70;
  }
  const double tune_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("  took {:.1f} s{}\n", tune_seconds,
             tuned->profile.budget_exhausted ? " (budget spent, best so far kept)" : "");

  acco::bench::RunOptions base;
  base.backend = acco::bench::BackendChoice::kHost;
  base.host.link = *link;
  base.patterns = {"h2d_*_plain", "h2d_*_engine", "d2h_*_plain", "d2h_*_engine"};
  base.defaults.bytes = *bytes;
  base.defaults.reps = 5;
  base.defaults.copies_per_sample = 2;
  auto opened = acco::bench::open_backend(base.backend, base.host);
  if (!opened) {
    fmt::print(stderr, "tune bench: {}\n", opened.error().message);
    return 70;
  }
  base.opened = opened->backend;
  acco::bench::RunOptions with_tuned = base;
  with_tuned.defaults.path_profiles = acco::tune::engine_profiles(tuned->profile);

  Rates defaults;
  Rates tuned_rates;
  for (int r = 0; r < o.rounds; ++r) {
    const bool defaults_first = r % 2 == 0;
    for (int k = 0; k < 2; ++k) {
      const bool is_default = (k == 0) == defaults_first;
      if (!measure_round(is_default ? base : with_tuned, is_default ? defaults : tuned_rates)) {
        return 70;
      }
    }
  }

  Json out = {{"schema", kSchema},
              {"link", o.link},
              {"budget", o.budget},
              {"bytes", *bytes},
              {"rounds", o.rounds},
              {"tune_seconds", tune_seconds},
              {"profile", acco::tune::to_json(tuned->profile)}};
  fmt::print("\n(b) defaults against the tuned profile, *_engine cases, median of {} rounds\n",
             o.rounds);
  fmt::print("  {:<14} {:>12} {:>12} {:>8}  {}\n", "path", "defaults", "tuned", "ratio", "choice");
  Json paths = Json::array();
  for (const auto path : acco::tune::kPaths) {
    const auto key = std::string(path) + "_engine";
    const double d = median(defaults[key]);
    const double w = median(tuned_rates[key]);
    const auto* p = tuned->profile.paths.empty()
                        ? nullptr
                        : tuned->profile.find(tuned->profile.paths.front().device, path);
    const std::string choice = p == nullptr ? "-" : p->tuned ? "tuned" : "defaults";
    fmt::print("  {:<14} {:>12} {:>12} {:>8.3f}  {}\n", path, acco::units::format_rate(d),
               acco::units::format_rate(w), d > 0 ? w / d : 0.0, choice);
    paths.push_back({{"path", path},
                     {"choice", choice},
                     {"defaults_bytes_per_second", defaults[key]},
                     {"tuned_bytes_per_second", tuned_rates[key]},
                     {"ratio", d > 0 ? w / d : 0.0}});
  }
  out["paths"] = paths;

  fmt::print("\n(c) with the tuned profile: *_engine against *_plain, median of {} rounds\n",
             o.rounds);
  fmt::print("  {:<16} {:>12} {:>12} {:>8}\n", "path", "plain", "engine", "ratio");
  Json cases = Json::array();
  for (const auto& [key, engine_rates] : tuned_rates) {
    if (!key.ends_with("_engine")) {
      continue;
    }
    const auto path = key.substr(0, key.size() - std::string_view("_engine").size());
    const auto& plain_rates = tuned_rates[path + "_plain"];
    const double plain = median(plain_rates);
    const double engine = median(engine_rates);
    fmt::print("  {:<16} {:>12} {:>12} {:>8.3f}\n", path, acco::units::format_rate(plain),
               acco::units::format_rate(engine), plain > 0 ? engine / plain : 0.0);
    cases.push_back({{"path", path},
                     {"plain_bytes_per_second", plain_rates},
                     {"engine_bytes_per_second", engine_rates},
                     {"ratio", plain > 0 ? engine / plain : 0.0}});
  }
  out["engine_vs_plain"] = cases;
  if (!o.json.empty()) {
    if (auto s = acco::core::write_file_atomic(o.json, out.dump(2) + "\n"); !s) {
      fmt::print(stderr, "tune bench: {}\n", s.error().message);
      return 73;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // CLI11, fmt and nlohmann::json throw; a benchmark reports and stops.
  try {
    return tune_bench(argc, argv);
  } catch (const std::exception& e) {
    std::fputs("tune bench: ", stderr);
    std::fputs(e.what(), stderr);
    std::fputs("\n", stderr);
    return 70;
  } catch (...) {
    std::fputs("tune bench: unknown exception\n", stderr);
    return 70;
  }
}
