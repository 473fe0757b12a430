#include "acco/tune/search.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "acco/core/stats.hpp"
#include "acco/core/units.hpp"

namespace acco::tune {
namespace {

using std::chrono::steady_clock;
using TimePoint = steady_clock::time_point;

double spread_of(const std::vector<double>& v) {
  const double m = median_rate(v);
  if (v.empty() || m <= 0) {
    return 0;
  }
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return (*hi - *lo) / m;
}

double rate_of(const Result<double>& seconds, std::uint64_t bytes) {
  return seconds && *seconds > 0 ? static_cast<double>(bytes) / *seconds : 0.0;
}

bool is_pageable_path(std::string_view path) {
  return path.ends_with("_pageable");
}

// The settings that matter on `what`'s path: stage_pageable only on pageable paths (pinned,
// registered and mapped memory is never staged, whatever the profile says).
std::string describe(const transfer::Profile& p, std::string_view what) {
  if (!p.stage_pageable && is_pageable_path(what)) {
    return fmt::format("pageable unstaged (plain path) queues {}", p.queues);
  }
  return fmt::format("chunk {} slots {} queues {} threads {}", units::format_bytes(p.chunk_bytes),
                     p.slots, p.queues, p.host_copy_threads);
}

// Unstaged copies use no staging: a candidate that is unstaged and changes a staging setting
// would measure the same thing again.
bool stages_or_keeps_staging_defaults(const transfer::Profile& p) {
  const transfer::Profile d{};
  return p.stage_pageable || (p.chunk_bytes == d.chunk_bytes && p.slots == d.slots &&
                              p.host_copy_threads == d.host_copy_threads);
}

std::string describe(const io::ReaderOptions& o, std::string_view /*what*/) {
  return fmt::format("block {} depth {} threads {}", units::format_bytes(o.block_bytes), o.depth,
                     o.threads);
}

// One axis of the descent: the variants of the best so far that it tries, in order.
template <typename Config>
using Axis = std::function<std::vector<Config>(const Config& best)>;

template <typename Config, typename T>
Axis<Config> axis(const std::vector<T>& values, T Config::*member) {
  return [&values, member](const Config& best) {
    std::vector<Config> out;
    for (const T v : values) {
      if (v != best.*member) {  // the best's own value is measured already
        Config c = best;
        c.*member = v;
        out.push_back(c);
      }
    }
    return out;
  };
}

// What is tuned, independent of whether it is an engine path or the reader.
template <typename Config>
struct Problem {
  std::vector<Axis<Config>> axes;
  std::function<Result<double>(const Config&)> seconds;  // one measurement of `bytes`
  std::uint64_t bytes = 0;
  std::function<bool(const Config&)> allowed;  // empty: every candidate is measured
  Config defaults{};  // where the search starts and what a winner must beat
};

template <typename Config>
struct Choice {
  Config best{};  // the search's fastest
  std::vector<std::pair<Config, double>> candidates;
  bool search_complete = true;
  bool confirm_cut = false;  // the confirmation could not run to its end: the defaults stay
  bool confirmed = false;
  std::vector<double> default_rates;
  std::vector<double> winner_rates;
  Verdict verdict;
};

// One pass of coordinate descent from the defaults until `search_end`, then the interleaved
// confirmation until `end`. The defaults' measurement error is returned as it is.
template <typename Config>
Result<Choice<Config>> descend(const Problem<Config>& problem, const SearchOptions& o,
                               const Clock& clock, const StopRequested& stop, TimePoint search_end,
                               TimePoint end) {
  const auto stopped = [&] { return stop && stop(); };
  const Config& defaults = problem.defaults;
  auto first = problem.seconds(defaults);
  if (!first) {
    return tl::unexpected(std::move(first.error()));
  }
  Choice<Config> c;
  c.best = defaults;
  double best_rate = rate_of(first, problem.bytes);
  c.candidates.emplace_back(defaults, best_rate);
  for (const auto& sweep : problem.axes) {
    for (const Config& candidate : sweep(c.best)) {
      if (problem.allowed && !problem.allowed(candidate)) {
        continue;
      }
      if (stopped() || clock() >= search_end) {
        c.search_complete = false;
        break;
      }
      const double r = rate_of(problem.seconds(candidate), problem.bytes);
      c.candidates.emplace_back(candidate, r);
      if (r > best_rate) {
        c.best = candidate;
        best_rate = r;
      }
    }
    if (!c.search_complete) {
      break;
    }
  }
  if (stopped()) {
    return c;
  }
  if (c.best == defaults) {
    c.confirmed = true;  // nothing to confirm: the defaults won the search
    return c;
  }
  for (int i = 0; i < o.confirm_repeats; ++i) {
    if (stopped() || clock() >= end) {
      c.confirm_cut = true;
      c.default_rates.clear();
      c.winner_rates.clear();
      return c;
    }
    // Alternating the order cancels a drift (warming caches, a neighbour's load) between them.
    const bool default_first = i % 2 == 0;
    for (int k = 0; k < 2; ++k) {
      const bool is_default = (k == 0) == default_first;
      const double r = rate_of(problem.seconds(is_default ? defaults : c.best), problem.bytes);
      (is_default ? c.default_rates : c.winner_rates).push_back(r);
    }
  }
  c.confirmed = true;
  c.verdict = judge(c.default_rates, c.winner_rates, o.min_gain);
  return c;
}

// Copies a choice into a PathTuning or ReaderTuning (the same field names), `chosen` being the
// member that holds what is used: the winner when kept, else the defaults.
template <typename Tuning, typename Config>
void record(const Choice<Config>& c, const Config& defaults, Config Tuning::*chosen, Tuning& out) {
  for (const auto& [config, rate] : c.candidates) {
    out.candidates.push_back({config, rate});
  }
  out.confirmed = c.confirmed;
  out.default_bytes_per_second = c.default_rates;
  out.winner_bytes_per_second = c.winner_rates;
  out.gain = c.verdict.gain;
  out.noise = c.verdict.noise;
  out.tuned = c.verdict.keep_winner;
  out.*chosen = out.tuned ? c.best : defaults;
}

template <typename Config>
void report(const Progress& progress, const std::string& what, const Choice<Config>& c) {
  if (!progress) {
    return;
  }
  if (!c.search_complete) {
    progress(fmt::format("acco tune: {}: budget spent, keeping the best so far", what));
  }
  if (c.confirmed && !c.winner_rates.empty()) {
    progress(fmt::format("acco tune: {}: {} ({:+.1f}%, noise {:.1f}%): {}", what,
                         c.verdict.keep_winner ? "tuned" : "defaults kept", 100 * c.verdict.gain,
                         100 * c.verdict.noise, describe(c.best, what)));
  }
}

// The chosen profile of a path timed at each of fit_bytes, and the alpha/beta fit of them.
void fit(const Target& target, const SearchOptions& o, const Measure& measure, const Clock& clock,
         const StopRequested& stop, TimePoint end, PathTuning& out) {
  for (const auto bytes : o.fit_bytes) {
    if ((stop && stop()) || clock() >= end) {
      return;
    }
    if (auto s = measure(target, out.profile, bytes); s) {
      out.fit_points.push_back({bytes, *s});
    }
  }
  if (auto f = fit_latency_bandwidth(out.fit_points); f) {
    out.fit = *f;
  }
}

Status tune_path(const Target& target, const SearchOptions& o, const Measure& measure,
                 const Clock& clock, const StopRequested& stop, const Progress& progress,
                 TimePoint search_end, TimePoint end, PathTuning& out, bool& exhausted) {
  out.device = target.device;
  out.path = target.path;
  Problem<transfer::Profile> problem;
  // host_copy_threads 0 (the engine's own choice) is the default; the axis tries fixed counts.
  if (is_pageable_path(target.path) && !o.space.stage_pageable.empty()) {
    problem.axes.push_back(axis(o.space.stage_pageable, &transfer::Profile::stage_pageable));
    problem.allowed = stages_or_keeps_staging_defaults;
  }
  problem.axes.push_back(axis(o.space.chunk_bytes, &transfer::Profile::chunk_bytes));
  problem.axes.push_back(axis(o.space.slots, &transfer::Profile::slots));
  problem.axes.push_back(axis(o.space.queues, &transfer::Profile::queues));
  problem.axes.push_back(axis(o.space.host_copy_threads, &transfer::Profile::host_copy_threads));
  problem.seconds = [&](const transfer::Profile& p) { return measure(target, p, o.bytes); };
  problem.bytes = o.bytes;
  problem.defaults = target.defaults;
  const std::string what = fmt::format("{} {}", target.device, target.path);
  auto c = descend(problem, o, clock, stop, search_end, end);
  if (!c) {
    return tl::unexpected(std::move(c.error()).with_context(what + ": the defaults"));
  }
  if (stop && stop()) {
    return {};
  }
  exhausted = exhausted || !c->search_complete || c->confirm_cut;
  report(progress, what, *c);
  record(*c, problem.defaults, &PathTuning::profile, out);
  if (!c->confirm_cut) {
    fit(target, o, measure, clock, stop, end, out);
  }
  return {};
}

}  // namespace

double median_rate(const std::vector<double>& rates) {
  return rates.empty() ? 0 : core::stats::median(rates);
}

Verdict judge(const std::vector<double>& default_rates, const std::vector<double>& winner_rates,
              double min_gain) {
  Verdict v;
  const double d = median_rate(default_rates);
  const double w = median_rate(winner_rates);
  if (d <= 0 || w <= 0) {
    return v;
  }
  v.gain = w / d - 1;
  v.noise = std::max({min_gain, spread_of(default_rates), spread_of(winner_rates)});
  // Both: a median gain beyond the spread, and no overlap of the series (every winner repeat
  // faster than every default one). On a loaded machine one fast repeat of the winner widens
  // its spread and still lifts the median; the overlap test catches that.
  const double slowest_winner = *std::min_element(winner_rates.begin(), winner_rates.end());
  const double fastest_default = *std::max_element(default_rates.begin(), default_rates.end());
  v.keep_winner = v.gain > v.noise && slowest_winner > fastest_default;
  return v;
}

Result<SearchOutcome> search(const std::vector<Target>& targets, const SearchOptions& options,
                             const Measure& measure, const Clock& clock, const StopRequested& stop,
                             const Progress& progress) {
  if (targets.empty()) {
    return fail(Errc::kInvalidArgument, "tune: nothing to tune (no device)");
  }
  const auto& s = options.space;
  if (s.chunk_bytes.empty() || s.slots.empty() || s.queues.empty() || s.host_copy_threads.empty()) {
    return fail(Errc::kInvalidArgument, "tune: every axis of the search needs a value");
  }
  SearchOutcome outcome;
  const auto start = clock();
  const auto end = start + options.budget;
  const auto search_budget = std::chrono::duration_cast<std::chrono::nanoseconds>(
      options.budget * (1 - options.confirm_share));
  // Each path gets an equal slice of the search share, and a path that finishes early leaves its
  // remainder to the next; confirmation and fit share what is left of the whole budget, so a
  // path never eats another's confirmation.
  const auto n = static_cast<std::int64_t>(targets.size());
  for (std::int64_t i = 0; i < n; ++i) {
    const auto search_end = start + search_budget * (i + 1) / n;
    const auto path_end = start + search_budget + (options.budget - search_budget) * (i + 1) / n;
    PathTuning p;
    ACCO_RETURN_IF_ERROR(tune_path(targets[static_cast<std::size_t>(i)], options, measure, clock,
                                   stop, progress, search_end, std::min(path_end, end), p,
                                   outcome.budget_exhausted));
    if (stop && stop()) {
      outcome.interrupted = true;
      return outcome;
    }
    outcome.paths.push_back(std::move(p));
  }
  return outcome;
}

Result<ReaderSearchOutcome> search_reader(const ReaderTarget& target, const SearchOptions& options,
                                          const ReaderMeasure& measure, const Clock& clock,
                                          const StopRequested& stop, const Progress& progress) {
  if (target.file.empty()) {
    return fail(Errc::kInvalidArgument, "tune: the reader needs a file");
  }
  if (target.bytes < 4096) {
    return fail(Errc::kInvalidArgument,
                fmt::format("tune: {}: {} bytes to read, expected at least 4096", target.file,
                            target.bytes));
  }
  const auto& s = options.reader_space;
  if (s.block_bytes.empty() || s.depth.empty() || s.threads.empty()) {
    return fail(Errc::kInvalidArgument, "tune: every axis of the reader's search needs a value");
  }
  Problem<io::ReaderOptions> problem;
  problem.axes = {axis(s.block_bytes, &io::ReaderOptions::block_bytes),
                  axis(s.depth, &io::ReaderOptions::depth),
                  axis(s.threads, &io::ReaderOptions::threads)};
  problem.seconds = [&](const io::ReaderOptions& o) { return measure(o, target.bytes); };
  problem.bytes = target.bytes;
  problem.allowed = [&s](const io::ReaderOptions& o) {
    const std::size_t staging =
        o.block_bytes * static_cast<std::size_t>(o.depth) * static_cast<std::size_t>(o.threads);
    return staging <= s.max_staging_bytes && io::validate(o).has_value();
  };
  const auto start = clock();
  const auto search_end = start + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      options.budget * (1 - options.confirm_share));
  const std::string what = "reader on " + target.file;
  auto c = descend(problem, options, clock, stop, search_end, start + options.budget);
  if (!c) {
    return tl::unexpected(std::move(c.error()).with_context(what + ": the defaults"));
  }
  ReaderSearchOutcome outcome;
  if (stop && stop()) {
    outcome.interrupted = true;
    return outcome;
  }
  outcome.budget_exhausted = !c->search_complete || c->confirm_cut;
  report(progress, what, *c);
  outcome.reader.file = target.file;
  outcome.reader.bytes = target.bytes;
  record(*c, problem.defaults, &ReaderTuning::options, outcome.reader);
  return outcome;
}

}  // namespace acco::tune
