#include "acco/bench/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "acco/core/stats.hpp"

namespace acco::bench {
namespace {

using Key = std::pair<std::string, std::string>;
using ojson = nlohmann::ordered_json;

Key key_of(const BenchResult& r) {
  return {r.case_key, r.device};
}

bool measured(const BenchResult& r) {
  return r.status == kStatusOk;
}

// The metric both sides can be compared on: the median rate when both have one, else the median
// latency when both have one. Higher-is-better tells which way is a regression.
struct Metric {
  const char* name = "median_bytes_per_second";
  double previous = 0;
  double current = 0;
  bool higher_is_better = true;
};

Metric metric_of(const BenchResult& before, const BenchResult& now) {
  if (before.median_bytes_per_second > 0 && now.median_bytes_per_second > 0) {
    return {"median_bytes_per_second", before.median_bytes_per_second, now.median_bytes_per_second,
            true};
  }
  if (before.latency_seconds && now.latency_seconds && *before.latency_seconds > 0) {
    return {"latency_seconds", *before.latency_seconds, *now.latency_seconds, false};
  }
  return {"median_bytes_per_second", before.median_bytes_per_second, now.median_bytes_per_second,
          true};
}

const char* headline_metric(const BenchResult& r) {
  return r.median_bytes_per_second <= 0 && r.latency_seconds ? "latency_seconds"
                                                             : "median_bytes_per_second";
}

double headline_value(const BenchResult& r) {
  return r.median_bytes_per_second <= 0 && r.latency_seconds ? *r.latency_seconds
                                                             : r.median_bytes_per_second;
}

}  // namespace

PeerRatio peer_ratio(const BenchResult& ours, const BenchResult& theirs) {
  PeerRatio p;
  if (ours.median_bytes_per_second <= 0 || theirs.median_bytes_per_second <= 0) {
    return p;
  }
  p.ratio = ours.median_bytes_per_second / theirs.median_bytes_per_second;
  // A result without a spread (read from an older document) is its median alone.
  const double ours_min =
      ours.min_bytes_per_second > 0 ? ours.min_bytes_per_second : ours.median_bytes_per_second;
  const double ours_max = std::max(ours.max_bytes_per_second, ours.median_bytes_per_second);
  const double theirs_min = theirs.min_bytes_per_second > 0 ? theirs.min_bytes_per_second
                                                            : theirs.median_bytes_per_second;
  const double theirs_max = std::max(theirs.max_bytes_per_second, theirs.median_bytes_per_second);
  p.low = ours_min / theirs_max;
  p.high = ours_max / theirs_min;
  p.within_noise = ours_min <= theirs_max && theirs_min <= ours_max;
  return p;
}

PairedRatio paired_ratio(std::span<const std::chrono::nanoseconds> ours,
                         std::span<const std::chrono::nanoseconds> theirs) {
  PairedRatio p;
  if (ours.empty() || ours.size() != theirs.size()) {
    return p;
  }
  std::vector<double> ratios;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    if (ours[i].count() <= 0 || theirs[i].count() <= 0) {
      return p;
    }
    // The same bytes on both sides: the rate ratio is the inverse ratio of the times.
    ratios.push_back(static_cast<double>(theirs[i].count()) / static_cast<double>(ours[i].count()));
  }
  const auto summary = core::stats::summarize(ratios);
  if (!summary) {
    return p;
  }
  // se(median) = 1.2533 sigma / sqrt(n) for normal noise; one round has no spread to judge by.
  constexpr double kMedianStdError = 1.2533;
  constexpr double kMinDifference = 0.05;
  const double n = static_cast<double>(ratios.size());
  const double band = 3 * kMedianStdError * summary->stddev / std::sqrt(n);
  p.rounds = static_cast<int>(ratios.size());
  p.ratio = summary->median;
  p.low = std::max(0.0, p.ratio - band);
  p.high = p.ratio + band;
  const double margin = std::max(band, kMinDifference);
  p.verdict = ratios.size() < 2      ? "same within noise"
              : p.ratio > 1 + margin ? "faster"
              : p.ratio < 1 - margin ? "slower"
                                     : "same within noise";
  return p;
}

const char* to_string(Change change) {
  switch (change) {
    case Change::kUnchanged:
      return "unchanged";
    case Change::kImproved:
      return "improved";
    case Change::kRegressed:
      return "regressed";
    case Change::kNew:
      return "new";
    case Change::kMissing:
      return "missing";
  }
  return "unchanged";
}

double change_threshold(double previous_cov, double current_cov) {
  return std::max(kNoiseMultiple * std::max(previous_cov, current_cov), kMinSignificantChange);
}

std::vector<Comparison> compare(const BenchRun& previous, const BenchRun& current) {
  std::map<Key, const BenchResult*> before;
  for (const auto& r : previous.results) {
    if (measured(r)) {
      before.emplace(key_of(r), &r);
    }
  }
  std::map<Key, bool> seen;
  std::vector<Comparison> out;
  for (const auto& now : current.results) {
    const auto key = key_of(now);
    if (seen.contains(key)) {
      continue;  // a duplicate key compares once, with its first result
    }
    seen[key] = true;
    const auto it = before.find(key);
    if (!measured(now)) {
      if (it != before.end()) {
        out.push_back({now.case_key, now.device, Change::kMissing, headline_metric(*it->second),
                       headline_value(*it->second), 0, 0, 0});
      }
      continue;
    }
    if (it == before.end()) {
      out.push_back({now.case_key, now.device, Change::kNew, headline_metric(now), 0,
                     headline_value(now), 0, 0});
      continue;
    }
    const auto m = metric_of(*it->second, now);
    Comparison c{now.case_key,
                 now.device,
                 Change::kUnchanged,
                 m.name,
                 m.previous,
                 m.current,
                 0,
                 change_threshold(it->second->cov, now.cov)};
    if (m.previous > 0) {
      c.relative_change = (m.current - m.previous) / m.previous;
      const double better = m.higher_is_better ? c.relative_change : -c.relative_change;
      if (better < -c.threshold) {
        c.change = Change::kRegressed;
      } else if (better > c.threshold) {
        c.change = Change::kImproved;
      }
    }
    out.push_back(std::move(c));
  }
  for (const auto& r : previous.results) {
    if (measured(r) && !seen.contains(key_of(r))) {
      seen[key_of(r)] = true;
      out.push_back(
          {r.case_key, r.device, Change::kMissing, headline_metric(r), headline_value(r), 0, 0, 0});
    }
  }
  return out;
}

nlohmann::ordered_json to_json(const std::vector<Comparison>& comparisons) {
  ojson out = ojson::array();
  for (const auto& c : comparisons) {
    out.push_back({{"case", c.case_key},
                   {"device", c.device},
                   {"change", to_string(c.change)},
                   {"metric", c.metric},
                   {"previous", c.change == Change::kNew ? ojson(nullptr) : ojson(c.previous)},
                   {"current", c.change == Change::kMissing ? ojson(nullptr) : ojson(c.current)},
                   {"relative_change", c.relative_change},
                   {"threshold", c.threshold}});
  }
  return out;
}

}  // namespace acco::bench
