#include "acco/tune/search.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "acco/core/stats.hpp"
#include "acco/core/units.hpp"

namespace acco::tune {
namespace {

using std::chrono::steady_clock;

double median_of(std::vector<double> v) {
  if (v.empty()) {
    return 0;
  }
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double spread_of(const std::vector<double>& v) {
  const double m = median_of(v);
  if (v.empty() || m <= 0) {
    return 0;
  }
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return (*hi - *lo) / m;
}

std::string describe(const xfer::Profile& p) {
  return fmt::format("chunk {} slots {} queues {} threads {}", units::format_bytes(p.chunk_bytes),
                     p.slots, p.queues, p.host_copy_threads);
}

// One path's search, sharing the run's deadlines.
class PathSearch {
 public:
  PathSearch(const Target& target, const SearchOptions& o, const Measure& measure,
             const Clock& clock, const StopRequested& stop, const Progress& progress)
      : target_(target),
        o_(o),
        measure_(measure),
        clock_(clock),
        stop_(stop),
        progress_(progress) {}

  bool stopped() const { return stop_ && stop_(); }

  // The rate of `profile`, recorded as a candidate; 0 when the measurement failed.
  double rate(const xfer::Profile& profile, PathTuning& out) {
    auto seconds = measure_(target_, profile, o_.bytes);
    const double r = seconds && *seconds > 0 ? static_cast<double>(o_.bytes) / *seconds : 0.0;
    out.candidates.push_back({profile, r});
    return r;
  }

  template <typename T>
  bool sweep_axis(const std::vector<T>& values, T xfer::Profile::*member, xfer::Profile& best,
                  double& best_rate, steady_clock::time_point search_end, PathTuning& out) {
    const T start = best.*member;
    for (const T v : values) {
      if (v == start) {
        continue;  // measured already
      }
      if (stopped() || clock_() >= search_end) {
        return false;
      }
      xfer::Profile p = best;
      p.*member = v;
      const double r = rate(p, out);
      if (r > best_rate) {
        best = p;
        best_rate = r;
      }
    }
    return true;
  }

  Status run(steady_clock::time_point search_end, steady_clock::time_point end, PathTuning& out,
             bool& exhausted) {
    out.device = target_.device;
    out.path = target_.path;
    const xfer::Profile defaults;
    auto d = measure_(target_, defaults, o_.bytes);
    if (!d) {
      return tl::unexpected(std::move(d.error()).with_context(
          fmt::format("{} {}: the defaults", target_.device, target_.path)));
    }
    xfer::Profile best = defaults;
    double best_rate = *d > 0 ? static_cast<double>(o_.bytes) / *d : 0.0;
    out.candidates.push_back({defaults, best_rate});
    // host_copy_threads 0 (the engine's own choice) is the default; the axis tries fixed counts.
    const bool complete =
        sweep_axis(o_.space.chunk_bytes, &xfer::Profile::chunk_bytes, best, best_rate, search_end,
                   out) &&
        sweep_axis(o_.space.slots, &xfer::Profile::slots, best, best_rate, search_end, out) &&
        sweep_axis(o_.space.queues, &xfer::Profile::queues, best, best_rate, search_end, out) &&
        sweep_axis(o_.space.host_copy_threads, &xfer::Profile::host_copy_threads, best, best_rate,
                   search_end, out);
    if (stopped()) {
      return {};
    }
    if (!complete) {
      exhausted = true;
      if (progress_) {
        progress_(fmt::format("acco tune: {} {}: budget spent, keeping the best so far",
                              target_.device, target_.path));
      }
    }
    out.profile = defaults;
    if (best == defaults) {
      out.confirmed = true;  // nothing to confirm: the defaults won the search
      fit(defaults, end, out);
      return {};
    }
    for (int i = 0; i < o_.confirm_repeats; ++i) {
      if (stopped() || clock_() >= end) {
        exhausted = true;
        out.default_bytes_per_second.clear();
        out.winner_bytes_per_second.clear();
        return {};  // unconfirmed: the defaults stay
      }
      // Alternating the order cancels a drift (warming caches, a neighbour's load) between them.
      const bool default_first = i % 2 == 0;
      for (int k = 0; k < 2; ++k) {
        const bool is_default = (k == 0) == default_first;
        auto s = measure_(target_, is_default ? defaults : best, o_.bytes);
        const double r = s && *s > 0 ? static_cast<double>(o_.bytes) / *s : 0.0;
        (is_default ? out.default_bytes_per_second : out.winner_bytes_per_second).push_back(r);
      }
    }
    out.confirmed = true;
    const auto v = judge(out.default_bytes_per_second, out.winner_bytes_per_second, o_.min_gain);
    out.gain = v.gain;
    out.noise = v.noise;
    out.tuned = v.keep_winner;
    if (out.tuned) {
      out.profile = best;
    }
    if (progress_) {
      progress_(fmt::format("acco tune: {} {}: {} ({:+.1f}%, noise {:.1f}%): {}", target_.device,
                            target_.path, out.tuned ? "tuned" : "defaults kept", 100 * v.gain,
                            100 * v.noise, describe(best)));
    }
    fit(out.profile, end, out);
    return {};
  }

  void fit(const xfer::Profile& profile, steady_clock::time_point end, PathTuning& out) {
    for (const auto bytes : o_.fit_bytes) {
      if (stopped() || clock_() >= end) {
        return;
      }
      if (auto s = measure_(target_, profile, bytes); s) {
        out.fit_points.push_back({bytes, *s});
      }
    }
    if (auto f = fit_latency_bandwidth(out.fit_points); f) {
      out.fit = *f;
    }
  }

 private:
  const Target& target_;
  const SearchOptions& o_;
  const Measure& measure_;
  const Clock& clock_;
  const StopRequested& stop_;
  const Progress& progress_;
};

}  // namespace

Verdict judge(const std::vector<double>& default_rates, const std::vector<double>& winner_rates,
              double min_gain) {
  Verdict v;
  const double d = median_of(default_rates);
  const double w = median_of(winner_rates);
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
    PathSearch ps(targets[static_cast<std::size_t>(i)], options, measure, clock, stop, progress);
    ACCO_RETURN_IF_ERROR(ps.run(search_end, std::min(path_end, end), p, outcome.budget_exhausted));
    if (ps.stopped()) {
      outcome.interrupted = true;
      return outcome;
    }
    outcome.paths.push_back(std::move(p));
  }
  return outcome;
}

}  // namespace acco::tune
