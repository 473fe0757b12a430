#include <array>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "acco/bench/result.hpp"

namespace acco::bench {
namespace {

using ojson = nlohmann::ordered_json;

ojson positive_or_null(double value) {
  return value > 0 ? ojson(value) : ojson(nullptr);
}

constexpr std::array<std::string_view, 3> kStatuses = {kStatusOk, kStatusWaived, kStatusError};
constexpr std::array<std::string_view, 4> kVerdicts = {"ok", "low", "very low", "unknown"};
constexpr std::array<std::string_view, 3> kTimers = {"", kTimerDeviceEvents, kTimerHostClock};

// Reads fields of one JSON object and keeps the first problem, so a reader states every field
// once and checks status() at the end. Paths in messages are "results[2].cov".
class Reader {
 public:
  Reader(const nlohmann::json& object, std::string prefix)
      : object_(object), prefix_(std::move(prefix)) {}

  std::string string(std::string_view key) {
    const auto* v = find(key);
    if (v == nullptr) {
      return {};
    }
    if (!v->is_string()) {
      bad(key, "expected a string", *v);
      return {};
    }
    return v->get<std::string>();
  }

  template <std::size_t N>
  std::string one_of(std::string_view key, const std::array<std::string_view, N>& allowed) {
    auto s = string(key);
    if (error_ || std::find(allowed.begin(), allowed.end(), s) != allowed.end()) {
      return s;
    }
    std::string list;
    for (const auto a : allowed) {
      list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", a);
    }
    bad(key, fmt::format("expected one of {}", list), nlohmann::json(s));
    return {};
  }

  double non_negative(std::string_view key) {
    const auto* v = find(key);
    return v == nullptr ? 0 : number(key, *v);
  }

  // null is 0 ("unknown").
  double non_negative_or_null(std::string_view key) {
    const auto* v = find(key);
    return v == nullptr || v->is_null() ? 0 : number(key, *v);
  }

  std::optional<double> optional_non_negative(std::string_view key) {
    const auto* v = find(key);
    if (v == nullptr || v->is_null()) {
      return std::nullopt;
    }
    return number(key, *v);
  }

  std::uint64_t count(std::string_view key) {
    const auto* v = find(key);
    if (v == nullptr) {
      return 0;
    }
    if (v->is_number_unsigned()) {
      return v->get<std::uint64_t>();
    }
    if (v->is_number_integer() && v->get<std::int64_t>() >= 0) {
      return static_cast<std::uint64_t>(v->get<std::int64_t>());
    }
    bad(key, "expected a non-negative integer", *v);
    return 0;
  }

  const nlohmann::json* typed(std::string_view key, bool want_array) {
    const auto* v = find(key);
    if (v != nullptr && (want_array ? !v->is_array() : !v->is_object())) {
      bad(key, want_array ? "expected an array" : "expected an object", *v);
      return nullptr;
    }
    return v;
  }

  [[nodiscard]] std::string path(std::string_view key) const {
    return prefix_.empty() ? std::string(key) : fmt::format("{}.{}", prefix_, key);
  }
  void set_error(Error error) {
    if (!error_) {
      error_ = std::move(error);
    }
  }
  [[nodiscard]] Status status() const {
    if (error_) {
      return tl::unexpected(*error_);
    }
    return {};
  }

 private:
  const nlohmann::json* find(std::string_view key) {
    if (error_) {
      return nullptr;
    }
    const auto it = object_.find(key);
    if (it == object_.end()) {
      set_error(Error{Errc::kInvalidArgument, fmt::format("{}: missing", path(key))});
      return nullptr;
    }
    return &*it;
  }

  double number(std::string_view key, const nlohmann::json& v) {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
      bad(key, "expected a non-negative number", v);
      return 0;
    }
    return v.get<double>();
  }

  void bad(std::string_view key, std::string_view expected, const nlohmann::json& got) {
    // dump() writes NaN and infinities as null, which would hide what was wrong.
    std::string shown = got.is_number_float() && !std::isfinite(got.get<double>())
                            ? fmt::format("{}", got.get<double>())
                            : got.dump();
    if (shown.size() > 40) {
      shown = shown.substr(0, 37) + "...";
    }
    set_error(
        Error{Errc::kInvalidArgument, fmt::format("{}: {}, got {}", path(key), expected, shown)});
  }

  const nlohmann::json& object_;
  std::string prefix_;
  std::optional<Error> error_;
};

Status expect_object(const nlohmann::json& json, std::string_view what) {
  if (!json.is_object()) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: expected an object", what.empty() ? "result" : what));
  }
  return {};
}

// "2025-03-01T12:00:00Z" exactly: the history orders runs by this text.
bool is_utc_timestamp(std::string_view s) {
  constexpr std::string_view shape = "dddd-dd-ddTdd:dd:ddZ";
  if (s.size() != shape.size()) {
    return false;
  }
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i]) {
      return false;
    }
  }
  return true;
}

Result<BenchResult> read_result(const nlohmann::json& json, const std::string& prefix) {
  if (auto s = expect_object(json, prefix); !s) {
    return tl::unexpected(s.error());
  }
  Reader in(json, prefix);
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
  r.peak_bytes_per_second = in.non_negative_or_null("peak_bytes_per_second");
  r.efficiency = in.non_negative_or_null("efficiency");
  r.verdict = in.one_of("verdict", kVerdicts);
  r.strategy = in.string("strategy");
  r.timer = in.one_of("timer", kTimers);
  r.latency_seconds = in.optional_non_negative("latency_seconds");
  if (const auto* sweep = in.typed("sweep", true); sweep != nullptr) {
    for (std::size_t i = 0; i < sweep->size(); ++i) {
      const auto point_path = fmt::format("{}[{}]", in.path("sweep"), i);
      if (const auto& p = (*sweep)[i]; !p.is_object()) {
        in.set_error(Error{Errc::kInvalidArgument,
                           fmt::format("{}: expected an object, got {}", point_path, p.dump())});
      } else {
        Reader point(p, point_path);
        SweepPoint sp;
        sp.bytes = point.count("bytes");
        sp.median_bytes_per_second = point.non_negative("median_bytes_per_second");
        if (auto s = point.status(); !s) {
          in.set_error(s.error());
        }
        r.sweep.push_back(sp);
      }
    }
  }
  if (auto s = in.status(); !s) {
    return tl::unexpected(s.error());
  }
  return r;
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
          {"verdict", r.verdict},
          {"strategy", r.strategy},
          {"timer", r.timer},
          {"latency_seconds", r.latency_seconds ? ojson(*r.latency_seconds) : ojson(nullptr)},
          {"sweep", std::move(sweep)}};
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
  Reader in(json, "");
  BenchRun run;
  run.schema = in.string("schema");
  if (auto s = in.status(); !s) {
    return tl::unexpected(s.error());
  }
  if (run.schema != kBenchSchema) {
    return fail(Errc::kInvalidArgument,
                fmt::format("schema: expected \"{}\", got \"{}\"", kBenchSchema, run.schema));
  }
  run.created = in.string("created");
  if (in.status() && !is_utc_timestamp(run.created)) {
    in.set_error(Error{Errc::kInvalidArgument,
                       fmt::format("created: expected a UTC time like 2025-03-01T12:00:00Z, "
                                   "got \"{}\"",
                                   run.created)});
  }
  run.host = in.string("host");
  run.fingerprint = in.string("fingerprint");
  if (const auto* machine = in.typed("machine", false); machine != nullptr) {
    run.machine = *machine;
  }
  const auto* results = in.typed("results", true);
  if (auto s = in.status(); !s) {
    return tl::unexpected(s.error());
  }
  for (std::size_t i = 0; i < results->size(); ++i) {
    auto r = read_result((*results)[i], fmt::format("results[{}]", i));
    if (!r) {
      return tl::unexpected(r.error());
    }
    run.results.push_back(std::move(*r));
  }
  return run;
}

}  // namespace acco::bench
