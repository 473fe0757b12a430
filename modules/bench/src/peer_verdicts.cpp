#include "acco/bench/peer_verdicts.hpp"

#include <fmt/format.h>

#include "acco/bench/expectations.hpp"
#include "acco/core/units.hpp"

namespace acco::bench {
namespace {

constexpr std::string_view kStorageReadPrefix = "storage_read_";

bool measured_storage_read(const BenchResult& r) {
  return r.case_key.rfind(kStorageReadPrefix, 0) == 0 && r.status == kStatusOk;
}

std::string fio_verdict(const PeerRatio& p) {
  // The ratio with its noise band; spreads that overlap are no win and no loss.
  if (p.within_noise) {
    return "same within noise";
  }
  return p.ratio >= kFioOkRatio ? "ok" : "below fio";
}

}  // namespace

PeerVerdicts peer_verdicts(const BenchRun& run) {
  PeerVerdicts out;
  for (const auto& r : run.results) {
    if (!measured_storage_read(r)) {
      continue;
    }
    if (!out.peak) {
      out.peak = StoragePeak{r.peak_bytes_per_second, r.peak_source,
                             expectation(PathKind::kStorageRead).ok_at_least};
    }
    const std::string twin = "fio_read_" + r.case_key.substr(kStorageReadPrefix.size());
    for (const auto& f : run.results) {
      if (f.case_key == twin && f.status == kStatusOk && f.median_bytes_per_second > 0) {
        const PeerRatio p = peer_ratio(r, f);
        out.fio.push_back(
            {r.case_key, r.median_bytes_per_second, f.median_bytes_per_second, p, fio_verdict(p)});
      }
    }
  }
  const BenchResult* ours = nullptr;
  const BenchResult* naive = nullptr;
  for (const auto& r : run.results) {
    if (r.status == kStatusOk && r.case_key == "storage_h2d") {
      ours = &r;
    } else if (r.status == kStatusOk && r.case_key == "storage_h2d_naive") {
      naive = &r;
    }
  }
  if (ours != nullptr && naive != nullptr && naive->median_bytes_per_second > 0) {
    out.naive =
        NaiveVerdict{ours->median_bytes_per_second, naive->median_bytes_per_second,
                     ours->median_bytes_per_second / naive->median_bytes_per_second,
                     ours->median_bytes_per_second >= kNaiveOkRatio * naive->median_bytes_per_second
                         ? "ok"
                         : "below 1.5x"};
  }
  return out;
}

void add_peer_verdicts(report::Document& doc, const PeerVerdicts& v) {
  if (v.empty()) {
    return;
  }
  doc.add(report::Heading{
      "acco against its peers (median rates; in brackets the ratio's band from both sides' min "
      "and max):"});
  if (v.peak) {
    if (v.peak->bytes_per_second > 0) {
      doc.add(report::Note{fmt::format("peak {} ({}): verdicts against it, ok from {:.0f} %",
                                       units::format_rate(v.peak->bytes_per_second), v.peak->source,
                                       100 * v.peak->ok_at_least)});
    } else {
      doc.add(report::Note{
          fmt::format("no peak ({}): verdicts only against fio",
                      v.peak->source.empty() ? std::string("unknown") : v.peak->source)});
    }
  }
  for (const FioVerdict& f : v.fio) {
    doc.add(report::Note{fmt::format("{:<28} {:>12} vs fio {:>12}  {:.2f}x ({:.2f}-{:.2f})  {}",
                                     f.case_key, units::format_rate(f.bytes_per_second),
                                     units::format_rate(f.fio_bytes_per_second), f.ratio.ratio,
                                     f.ratio.low, f.ratio.high, f.verdict)});
  }
  if (v.naive) {
    doc.add(report::Note{fmt::format("{:<28} {:>12} vs naive {:>10}  {:.2f}x  {}", "storage_h2d",
                                     units::format_rate(v.naive->bytes_per_second),
                                     units::format_rate(v.naive->naive_bytes_per_second),
                                     v.naive->ratio, v.naive->verdict)});
  }
}

}  // namespace acco::bench
