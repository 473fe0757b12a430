// Performance models: how long a task type takes on one device instance for one size class,
// learnt from measured run times with robust statistics (median of a window, outliers rejected
// by median absolute deviation, a regime change accepted after several outliers in a row), with
// a prior from the task's cost hint and the device's peak before calibration. Persisted as JSON
// (`acco.perfmodel/1`) so a second run starts calibrated. Per device *instance*, so one slow or
// hot GPU shows up as such (StarPU #50).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "acco/core/result.hpp"

namespace acco::sched {

// Size classes are powers of two of the bytes a task touches: class k holds [2^k, 2^(k+1)).
// 0 bytes is class 0.
[[nodiscard]] int size_class(std::uint64_t bytes);

struct ModelKey {
  std::string type;    // task type name
  std::string device;  // device instance id: "host:0", "cuda:0000:18:00.0"
  int size_class = 0;
  // clang-tidy 14 takes the defaulted comparison's 0 for a null pointer.
  auto operator<=>(const ModelKey&) const = default;  // NOLINT(modernize-use-nullptr)
};

struct CostHint {
  double flops = 0;  // floating-point operations; 0 = unknown
  double bytes = 0;  // bytes the kernel reads and writes in device memory; 0 = unknown
  bool operator==(const CostHint&) const = default;
};

// What a device can do at best, for the roofline prior.
struct DevicePeak {
  double flops_per_second = 0;         // 0 = unknown
  double memory_bytes_per_second = 0;  // 0 = unknown
  bool operator==(const DevicePeak&) const = default;
};

// Roofline prior: max(flops / peak flops, bytes / peak bandwidth) over the terms both known;
// nullopt when none is.
[[nodiscard]] std::optional<std::chrono::nanoseconds> prior_estimate(const CostHint& hint,
                                                                     const DevicePeak& peak);

struct ModelOptions {
  std::size_t window = 32;           // samples kept per key, >= 1 (newest replace oldest)
  std::size_t calibrated_after = 3;  // samples before the model is trusted over the prior
  double outlier_mads = 5;           // |x - median| > this x 1.4826 x MAD is an outlier
  // ...but never reject within this fraction of the median (MAD can be 0 for identical samples).
  double outlier_floor = 0.25;
  std::size_t regime_change_after = 3;  // consecutive outliers that replace the window; 0 = never
  bool operator==(const ModelOptions&) const = default;
};

struct Prediction {
  std::chrono::nanoseconds time{0};
  bool calibrated = false;  // from a calibrated window (else the prior, or too few samples)
  std::size_t samples = 0;
};

struct ModelEntry {
  std::vector<std::int64_t> samples_ns;  // the window, oldest first
  std::size_t rejected = 0;              // outliers not taken (lifetime)
  // The current run of outliers, oldest first: it becomes the window when it reaches
  // `regime_change_after`. Neither is persisted.
  std::size_t consecutive_outliers = 0;
  std::vector<std::int64_t> recent_outliers_ns;
  bool operator==(const ModelEntry&) const = default;
};

// Thread-compatible value type: the runtime guards it with its own lock.
class PerfModels {
 public:
  explicit PerfModels(ModelOptions options = {}) : options_(options) {}

  // Records one measured run time (>= 0; a negative time is a bug). Returns false when it was
  // rejected as an outlier; the outlier that completes a regime change is taken (true), and the
  // outliers it adopts no longer count as rejected.
  bool record(const ModelKey& key, std::chrono::nanoseconds time);
  // Records several run times of one key, in order; returns how many were taken. Each is judged
  // against the window's median and spread as they were at the start of the batch (or at the
  // last regime change within it), which costs one median per batch instead of one per sample;
  // a batch of one is exactly record().
  std::size_t record_batch(const ModelKey& key, std::span<const std::chrono::nanoseconds> times);
  // The median of the window once calibrated; otherwise the prior when known, else the median
  // of the few samples there are (both with calibrated = false); nullopt when none of these.
  [[nodiscard]] std::optional<Prediction> predict(const ModelKey& key, const CostHint& hint,
                                                  const DevicePeak& peak) const;
  // Whether `key` has enough samples for predict() to answer from them (calibrated = true).
  [[nodiscard]] bool calibrated(const ModelKey& key) const;
  [[nodiscard]] const std::map<ModelKey, ModelEntry>& entries() const { return entries_; }
  [[nodiscard]] const ModelOptions& options() const { return options_; }

  [[nodiscard]] nlohmann::json to_json() const;  // {"schema":"acco.perfmodel/1","entries":[...]}
  // kInvalidArgument naming the field for a wrong schema, a missing field or a negative sample.
  [[nodiscard]] static Result<PerfModels> from_json(const nlohmann::json& json,
                                                    ModelOptions options = {});
  // Atomic write (temp file + rename); kInvalidArgument/kNotFound/kUnavailable with the path.
  [[nodiscard]] Status save(const std::filesystem::path& path) const;
  // A missing file is an empty model set, not an error; an unreadable or malformed one is.
  [[nodiscard]] static Result<PerfModels> load(const std::filesystem::path& path,
                                               ModelOptions options = {});

 private:
  [[nodiscard]] std::size_t samples(const ModelKey& key) const;
  [[nodiscard]] bool enough_samples(std::size_t n) const {
    return n > 0 && n >= options_.calibrated_after;
  }

  ModelOptions options_;
  std::map<ModelKey, ModelEntry> entries_;
};

}  // namespace acco::sched
