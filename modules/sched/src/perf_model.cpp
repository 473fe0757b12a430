#include "acco/sched/perf_model.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <span>
#include <utility>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/core/file.hpp"
#include "acco/core/json.hpp"
#include "acco/core/json_reader.hpp"
#include "acco/core/stats.hpp"

namespace acco::sched {
namespace {

using core::stats::median_in_place;

constexpr std::string_view kSchema = "acco.perfmodel/1";

// Scale factor that makes the median absolute deviation a consistent estimator of the standard
// deviation for normally distributed samples (1 / Phi^-1(3/4)).
constexpr double kMadToSigma = 1.4826;

// Working space for medians, per thread: the runtime computes one per batch of samples and per
// prediction, and a vector allocated each time cost more than the median itself.
std::vector<double>& scratch() {
  thread_local std::vector<double> values;
  return values;
}

double median_of(const std::vector<std::int64_t>& samples) {
  std::vector<double>& values = scratch();
  values.assign(samples.begin(), samples.end());
  return median_in_place(values);
}

// The window's median and how far from it a sample may lie. MAD is 0 when most samples are
// identical, so the floor keeps ordinary jitter from counting as outliers.
struct Spread {
  double median = 0;
  double allowed = 0;
  bool is_outlier(std::int64_t x) const {
    return std::abs(static_cast<double>(x) - median) > allowed;
  }
};

Spread spread_of(const std::vector<std::int64_t>& window, const ModelOptions& options) {
  const double median = median_of(window);
  std::vector<double>& deviations = scratch();
  deviations.clear();
  for (const auto s : window) {
    deviations.push_back(std::abs(static_cast<double>(s) - median));
  }
  const double mad = median_in_place(deviations);
  return {median,
          std::max(options.outlier_mads * kMadToSigma * mad, options.outlier_floor * median)};
}

void keep_newest(std::vector<std::int64_t>& samples, std::size_t n) {
  if (samples.size() > n) {
    samples.erase(samples.begin(), samples.end() - static_cast<std::ptrdiff_t>(n));
  }
}

std::chrono::nanoseconds rounded_median(const std::vector<std::int64_t>& samples) {
  return std::chrono::nanoseconds(std::llround(median_of(samples)));
}

// Entry messages name the field but not its value: "perfmodel entry 3: samples_ns: ...".
constexpr core::JsonReaderOptions kEntryWording{.show_value = false};

std::vector<std::int64_t> sample_times(core::JsonReader& read) {
  constexpr std::string_view kKey = "samples_ns";
  constexpr std::string_view kExpected = "expected an array of non-negative integers";
  const auto* v = read.field(kKey);
  if (v == nullptr) {
    return {};
  }
  if (!v->is_array()) {
    read.problem(kKey, kExpected);
    return {};
  }
  std::vector<std::int64_t> out;
  out.reserve(v->size());
  for (const auto& item : *v) {
    const auto value = core::JsonReader::int64_of(item);
    if (!value || *value < 0) {
      read.problem(kKey, kExpected);
      return {};
    }
    // Medians are taken in double: beyond 2^53 ns (104 days) samples would not round-trip.
    if (*value > (std::int64_t{1} << 53)) {
      read.problem(kKey, "expected sample times of at most 2^53 ns");
      return {};
    }
    out.push_back(*value);
  }
  return out;
}

Result<std::pair<ModelKey, ModelEntry>> entry_from_json(const nlohmann::json& j,
                                                        std::size_t index) {
  constexpr std::int64_t kMaxSizeClass = 63;  // size_class() of a 64-bit byte count
  core::JsonReader read(j, "", kEntryWording);
  ModelKey key;
  key.type = read.non_empty_string("type");
  key.device = read.non_empty_string("device");
  key.size_class = static_cast<int>(
      read.integer("size_class", {0, kMaxSizeClass}, "expected an integer from 0 to 63"));
  ModelEntry entry;
  entry.samples_ns = sample_times(read);
  entry.rejected = static_cast<std::size_t>(
      read.integer("rejected", {0, std::numeric_limits<std::int64_t>::max()},
                   "expected a non-negative integer"));
  ACCO_RETURN_IF_ERROR(read.status(), fmt::format("perfmodel entry {}", index));
  return std::pair{std::move(key), std::move(entry)};
}

}  // namespace

int size_class(std::uint64_t bytes) {
  return bytes <= 1 ? 0 : static_cast<int>(std::bit_width(bytes)) - 1;
}

std::optional<std::chrono::nanoseconds> prior_estimate(const CostHint& hint,
                                                       const DevicePeak& peak) {
  std::optional<double> seconds;
  const auto term = [&](double amount, double rate) {
    if (amount > 0 && rate > 0) {
      seconds = std::max(seconds.value_or(0), amount / rate);
    }
  };
  term(hint.flops, peak.flops_per_second);
  term(hint.bytes, peak.memory_bytes_per_second);
  if (!seconds) {
    return std::nullopt;
  }
  // A prior of more than a year is as good as "never": clamp before converting so a huge or
  // infinite hint cannot overflow the nanosecond count.
  constexpr double kMaxSeconds = 365.0 * 24 * 3600;
  return std::chrono::nanoseconds(std::llround(std::min(*seconds, kMaxSeconds) * 1e9));
}

bool PerfModels::record(const ModelKey& key, std::chrono::nanoseconds time) {
  return record_batch(key, std::span(&time, 1)) == 1;
}

std::size_t PerfModels::record_batch(const ModelKey& key,
                                     std::span<const std::chrono::nanoseconds> times) {
  ACCO_CHECK(options_.window > 0);
  auto& entry = entries_[key];
  std::optional<Spread> spread;
  std::size_t taken = 0;
  for (const std::chrono::nanoseconds time : times) {
    ACCO_CHECK(time.count() >= 0);
    const std::int64_t x = time.count();
    // Until there are enough samples to know the spread, every sample is taken.
    const bool checked = enough_samples(entry.samples_ns.size());
    if (checked && !spread) {
      spread = spread_of(entry.samples_ns, options_);
    }
    if (checked && spread->is_outlier(x)) {
      ++entry.rejected;
      ++entry.consecutive_outliers;
      entry.recent_outliers_ns.push_back(x);
      if (options_.regime_change_after == 0 ||
          entry.consecutive_outliers < options_.regime_change_after) {
        keep_newest(entry.recent_outliers_ns,
                    std::max<std::size_t>(options_.regime_change_after, 1));
        continue;
      }
      // A run of outliers this long is the device's new normal (throttling, a co-tenant), not a
      // spike: relearn from it rather than predicting the old speed for ever.
      entry.rejected -= std::min(entry.rejected, entry.recent_outliers_ns.size());
      entry.samples_ns = std::move(entry.recent_outliers_ns);
      entry.recent_outliers_ns.clear();
      entry.consecutive_outliers = 0;
      keep_newest(entry.samples_ns, options_.window);
      spread.reset();  // a new window: a new spread
      ++taken;
      continue;
    }
    entry.consecutive_outliers = 0;
    entry.recent_outliers_ns.clear();
    entry.samples_ns.push_back(x);
    keep_newest(entry.samples_ns, options_.window);
    ++taken;
  }
  return taken;
}

std::size_t PerfModels::samples(const ModelKey& key) const {
  const auto it = entries_.find(key);
  return it == entries_.end() ? 0 : it->second.samples_ns.size();
}

bool PerfModels::calibrated(const ModelKey& key) const {
  return enough_samples(samples(key));
}

std::optional<Prediction> PerfModels::predict(const ModelKey& key, const CostHint& hint,
                                              const DevicePeak& peak) const {
  const auto it = entries_.find(key);
  const std::size_t n = it == entries_.end() ? 0 : it->second.samples_ns.size();
  if (enough_samples(n)) {
    return Prediction{rounded_median(it->second.samples_ns), true, n};
  }
  if (const auto prior = prior_estimate(hint, peak)) {
    return Prediction{*prior, false, n};
  }
  if (n > 0) {
    return Prediction{rounded_median(it->second.samples_ns), false, n};
  }
  return std::nullopt;
}

nlohmann::json PerfModels::to_json() const {
  auto entries = nlohmann::json::array();
  for (const auto& [key, entry] : entries_) {
    entries.push_back({{"type", key.type},
                       {"device", key.device},
                       {"size_class", key.size_class},
                       {"samples_ns", entry.samples_ns},
                       {"rejected", entry.rejected}});
  }
  return {{"schema", kSchema}, {"entries", std::move(entries)}};
}

Result<PerfModels> PerfModels::from_json(const nlohmann::json& json, ModelOptions options) {
  if (!json.is_object()) {
    return fail(Errc::kInvalidArgument, "expected a JSON object (an acco.perfmodel document)");
  }
  const auto schema = json.find("schema");
  if (schema == json.end() || !schema->is_string() || schema->get<std::string>() != kSchema) {
    return fail(Errc::kInvalidArgument,
                fmt::format("schema: expected {}, got {}", kSchema,
                            schema == json.end() ? "nothing" : schema->dump()));
  }
  const auto entries = json.find("entries");
  if (entries == json.end() || !entries->is_array()) {
    return fail(Errc::kInvalidArgument, "entries: expected an array");
  }
  PerfModels models(options);
  for (std::size_t i = 0; i < entries->size(); ++i) {
    ACCO_ASSIGN_OR_RETURN(auto parsed, entry_from_json((*entries)[i], i));
    auto& [key, entry] = parsed;
    // A file written with a larger window keeps its newest samples.
    keep_newest(entry.samples_ns, options.window);
    if (!models.entries_.emplace(std::move(key), std::move(entry)).second) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("perfmodel entry {}: duplicate of an earlier entry with the same "
                              "type, device and size_class",
                              i));
    }
  }
  return models;
}

Status PerfModels::save(const std::filesystem::path& path) const {
  return core::write_file_atomic(path.string(), to_json().dump(2) + "\n");
}

Result<PerfModels> PerfModels::load(const std::filesystem::path& path, ModelOptions options) {
  auto text = core::read_text_file(path.string());
  if (!text) {
    if (text.error().code == Errc::kNotFound) {
      return PerfModels(options);
    }
    return tl::unexpected(std::move(text.error()));
  }
  ACCO_ASSIGN_OR_RETURN(const auto json, core::parse_json(*text, path.string()));
  ACCO_ASSIGN_OR_RETURN(auto models, from_json(json, options), path.string());
  return models;
}

}  // namespace acco::sched
