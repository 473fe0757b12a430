#include <array>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "acco/bench/result.hpp"
#include "acco/core/json_reader.hpp"

namespace acco::bench {
namespace {

using core::JsonReader;
using ojson = nlohmann::ordered_json;

ojson positive_or_null(double value) {
  return value > 0 ? ojson(value) : ojson(nullptr);
}

ojson optional_or_null(const std::optional<double>& value) {
  return value ? ojson(*value) : ojson(nullptr);
}

constexpr std::array<std::string_view, 3> kStatuses = {kStatusOk, kStatusWaived, kStatusError};
constexpr std::array<std::string_view, 5> kVerdicts = {"ok", "low", "very low", "unknown",
                                                       "emulated"};
constexpr std::array<std::string_view, 3> kPairedVerdicts = {"faster", "slower",
                                                             "same within noise"};
constexpr std::array<std::string_view, 3> kTimers = {"", kTimerDeviceEvents, kTimerHostClock};

Status expect_object(const nlohmann::json& json, std::string_view what) {
  if (!json.is_object()) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: expected an object", what.empty() ? "result" : what));
  }
  return {};
}

// "2025-03-01T12:00:00Z" exactly: the history orders runs by this text.
bool is_utc_timestamp(std::string_view s) {
  constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:ddZ";
  if (s.size() != kShape.size()) {
    return false;
  }
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (kShape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != kShape[i]) {
      return false;
    }
  }
  return true;
}

Result<SweepPoint> read_sweep_point(const nlohmann::json& p, const std::string& path) {
  if (!p.is_object()) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: expected an object, got {}", path, p.dump()));
  }
  JsonReader point(p, path);
  SweepPoint sp;
  sp.bytes = point.count("bytes");
  sp.median_bytes_per_second = point.non_negative("median_bytes_per_second");
  return point.finish(sp);
}

Result<PairedRatio> read_paired_ratio(const nlohmann::json& p, const std::string& path) {
  ACCO_RETURN_IF_ERROR(expect_object(p, path));
  JsonReader in(p, path);
  PairedRatio r;
  r.rounds = static_cast<int>(std::min<std::uint64_t>(in.count("rounds"), 1U << 30));
  r.ratio = in.non_negative("ratio");
  r.low = in.non_negative("low");
  r.high = in.non_negative("high");
  r.verdict = in.one_of("verdict", kPairedVerdicts);
  return in.finish(std::move(r));
}

Result<BenchResult> read_result(const nlohmann::json& json, const std::string& prefix) {
  ACCO_RETURN_IF_ERROR(expect_object(json, prefix));
  JsonReader in(json, prefix);
  BenchResult r;
  r.case_key = in.string("case");
  r.device = in.string("device");
  r.status = in.one_of("status", kStatuses);
  r.reason = in.string("reason");
  r.bytes = in.count("bytes");
  r.median_bytes_per_second = in.non_negative("median_bytes_per_second");
  r.min_bytes_per_second = in.non_negative("min_bytes_per_second");
  r.max_bytes_per_second = in.non_negative("max_bytes_per_second");
  r.cov = in.non_negative("cov");
  // null is 0 ("unknown").
  r.peak_bytes_per_second = in.optional_non_negative("peak_bytes_per_second").value_or(0);
  r.efficiency = in.optional_non_negative("efficiency").value_or(0);
  // Absent in older documents and in runs read from the history; null when nothing says.
  if (json.contains("peak_source")) {
    r.peak_source = in.optional_string("peak_source").value_or("");
  }
  r.verdict = in.one_of("verdict", kVerdicts);
  r.strategy = in.string("strategy");
  r.timer = in.one_of("timer", kTimers);
  r.latency_seconds = in.optional_non_negative("latency_seconds");
  // Absent in older documents and in runs read from the history.
  for (auto [key, field] : {std::pair{"latency_min_seconds", &r.latency_min_seconds},
                            std::pair{"latency_max_seconds", &r.latency_max_seconds},
                            std::pair{"latency_p99_seconds", &r.latency_p99_seconds}}) {
    if (json.contains(key)) {
      *field = in.optional_non_negative(key);
    }
  }
  r.sweep = in.list<SweepPoint>("sweep", read_sweep_point);
  // Absent in older documents and in runs read from the history; null for other cases.
  if (const auto it = json.find("against_plain"); it != json.end() && !it->is_null()) {
    if (auto paired = read_paired_ratio(*it, prefix + ".against_plain")) {
      r.against_plain = std::move(*paired);
    } else {
      in.add(std::move(paired).error());
    }
  }
  return in.finish(std::move(r));
}

}  // namespace

ojson to_json(const SweepPoint& point) {
  return {{"bytes", point.bytes}, {"median_bytes_per_second", point.median_bytes_per_second}};
}

ojson to_json(const BenchResult& r) {
  ojson sweep = ojson::array();
  for (const auto& p : r.sweep) {
    sweep.push_back(to_json(p));
  }
  return {{"case", r.case_key},
          {"device", r.device},
          {"status", r.status},
          {"reason", r.reason},
          {"bytes", r.bytes},
          {"median_bytes_per_second", r.median_bytes_per_second},
          {"min_bytes_per_second", r.min_bytes_per_second},
          {"max_bytes_per_second", r.max_bytes_per_second},
          {"cov", r.cov},
          {"peak_bytes_per_second", positive_or_null(r.peak_bytes_per_second)},
          {"efficiency", positive_or_null(r.efficiency)},
          {"peak_source", r.peak_source.empty() ? ojson(nullptr) : ojson(r.peak_source)},
          {"verdict", r.verdict},
          {"strategy", r.strategy},
          {"timer", r.timer},
          {"latency_seconds", optional_or_null(r.latency_seconds)},
          {"latency_min_seconds", optional_or_null(r.latency_min_seconds)},
          {"latency_max_seconds", optional_or_null(r.latency_max_seconds)},
          {"latency_p99_seconds", optional_or_null(r.latency_p99_seconds)},
          {"sweep", std::move(sweep)},
          {"against_plain", r.against_plain ? ojson{{"rounds", r.against_plain->rounds},
                                                    {"ratio", r.against_plain->ratio},
                                                    {"low", r.against_plain->low},
                                                    {"high", r.against_plain->high},
                                                    {"verdict", r.against_plain->verdict}}
                                            : ojson(nullptr)}};
}

ojson to_json(const BenchRun& run) {
  ojson results = ojson::array();
  for (const auto& r : run.results) {
    results.push_back(to_json(r));
  }
  return {{"schema", run.schema},
          {"created", run.created},
          {"host", run.host},
          {"fingerprint", run.fingerprint},
          {"machine", ojson(run.machine)},
          {"results", std::move(results)}};
}

Result<BenchResult> result_from_json(const nlohmann::json& json) {
  return read_result(json, "");
}

Result<BenchRun> run_from_json(const nlohmann::json& json) {
  if (!json.is_object()) {
    return fail(Errc::kInvalidArgument, "expected a JSON object (an acco.bench document)");
  }
  JsonReader in(json, "");
  BenchRun run;
  run.schema = in.string("schema");
  ACCO_RETURN_IF_ERROR(in.status());
  if (run.schema != kBenchSchema) {
    return fail(Errc::kInvalidArgument,
                fmt::format("schema: expected \"{}\", got \"{}\"", kBenchSchema, run.schema));
  }
  run.created = in.string("created");
  if (in.ok() && !is_utc_timestamp(run.created)) {
    in.problem("created", fmt::format("expected a UTC time like 2025-03-01T12:00:00Z, got \"{}\"",
                                      run.created));
  }
  run.host = in.string("host");
  run.fingerprint = in.string("fingerprint");
  if (const auto* machine = in.object("machine"); machine != nullptr) {
    run.machine = *machine;
  }
  const auto* results = in.array("results");
  ACCO_RETURN_IF_ERROR(in.status());
  for (std::size_t i = 0; i < results->size(); ++i) {
    ACCO_ASSIGN_OR_RETURN(auto r, read_result((*results)[i], fmt::format("results[{}]", i)));
    run.results.push_back(std::move(r));
  }
  return run;
}

}  // namespace acco::bench
