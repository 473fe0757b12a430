// Saved Prometheus text-format scrapes -> Snapshots: dcgm-exporter's DCGM_FI_* series (DCGM's
// units: MHz, MiB, %, mJ) and acco's own series as metrics.cpp writes them (base units).
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/analyze/recorded_readers.hpp"
#include "acco/core/units.hpp"

#include "recorded_common.hpp"

namespace acco::analyze {
namespace {

using Labels = std::map<std::string, std::string>;

struct Sample {
  std::string name;
  Labels labels;
  double value = 0;
  std::string_view value_text;
  std::optional<std::int64_t> timestamp_ms;
};

bool name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool name_char(char c) {
  return name_start(c) || (c >= '0' && c <= '9');
}

class LineParser {
 public:
  explicit LineParser(std::string_view line) : line_(line) {}

  void skip_blanks() {
    while (i_ < line_.size() && (line_[i_] == ' ' || line_[i_] == '\t')) {
      ++i_;
    }
  }
  [[nodiscard]] bool at_end() const { return i_ >= line_.size(); }
  [[nodiscard]] std::string_view rest() const { return line_.substr(i_); }

  // [a-zA-Z_:][a-zA-Z0-9_:]* for metric names; labels may not hold colons.
  std::string_view name(bool colons = true) {
    const std::size_t start = i_;
    while (i_ < line_.size() && name_char(line_[i_]) && (colons || line_[i_] != ':') &&
           (i_ > start || (line_[i_] < '0' || line_[i_] > '9'))) {
      ++i_;
    }
    return line_.substr(start, i_ - start);
  }

  std::string_view token() {
    const std::size_t start = i_;
    while (i_ < line_.size() && line_[i_] != ' ' && line_[i_] != '\t') {
      ++i_;
    }
    return line_.substr(start, i_ - start);
  }

  Result<Labels> labels() {
    Labels out;
    ++i_;  // '{'
    while (true) {
      skip_blanks();
      if (i_ < line_.size() && line_[i_] == '}') {
        ++i_;
        return out;
      }
      const std::string label(name(false));
      if (label.empty()) {
        return error(fmt::format("expected a label name or '}}' at column {}", i_ + 1));
      }
      skip_blanks();
      if (i_ >= line_.size() || line_[i_] != '=') {
        return error(fmt::format("expected '=' after label name '{}'", label));
      }
      ++i_;
      skip_blanks();
      if (i_ >= line_.size() || line_[i_] != '"') {
        return error(fmt::format("expected '\"' to open the value of label '{}'", label));
      }
      ++i_;
      std::string value;
      bool closed = false;
      while (i_ < line_.size()) {
        const char c = line_[i_++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c == '\\') {
          if (i_ >= line_.size()) {
            break;
          }
          const char e = line_[i_++];
          if (e == 'n') {
            value.push_back('\n');
          } else if (e == '\\' || e == '"') {
            value.push_back(e);
          } else {
            return error(fmt::format("label '{}': unknown escape '\\{}' (only \\\\, \\\" and \\n)",
                                     label, e));
          }
          continue;
        }
        value.push_back(c);
      }
      if (!closed) {
        return error(fmt::format("label '{}': value is not closed by '\"'", label));
      }
      if (!out.emplace(label, std::move(value)).second) {
        return error(fmt::format("label '{}' appears twice", label));
      }
      skip_blanks();
      if (i_ < line_.size() && line_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < line_.size() && line_[i_] == '}') {
        ++i_;
        return out;
      }
      return error(fmt::format("expected ',' or '}}' after the value of label '{}'", label));
    }
  }

  [[nodiscard]] bool peek(char c) const { return i_ < line_.size() && line_[i_] == c; }
  [[nodiscard]] bool peek_blank() const {
    return i_ < line_.size() && (line_[i_] == ' ' || line_[i_] == '\t');
  }

 private:
  static tl::unexpected<Error> error(std::string message) {
    return fail(Errc::kInvalidArgument, std::move(message));
  }

  std::string_view line_;
  std::size_t i_ = 0;
};

// Go's strconv.ParseFloat, which Prometheus uses: NaN, Inf, +Inf, -Inf in any case.
std::optional<double> parse_value(std::string_view text) {
  std::string lower;
  for (const char c : text) {
    lower.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  if (lower == "nan") {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (lower == "inf" || lower == "+inf" || lower == "infinity" || lower == "+infinity") {
    return std::numeric_limits<double>::infinity();
  }
  if (lower == "-inf" || lower == "-infinity") {
    return -std::numeric_limits<double>::infinity();
  }
  if (text.starts_with('+')) {
    text.remove_prefix(1);
  }
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return std::nullopt;
  }
  return v;
}

// Unix milliseconds up to the year 2255, so that nanoseconds fit an int64.
constexpr std::int64_t kMaxUnixMillis = 9'000'000'000'000;

Result<Sample> parse_sample(std::string_view line) {
  LineParser p(line);
  Sample s;
  s.name = std::string(p.name());
  if (s.name.empty()) {
    return fail(Errc::kInvalidArgument,
                fmt::format("expected a metric name, got '{}'", units::excerpt(line)));
  }
  bool blank = p.peek_blank();
  p.skip_blanks();
  if (p.peek('{')) {
    ACCO_ASSIGN_OR_RETURN(s.labels, p.labels());
    blank = p.peek_blank();
  }
  if (!blank || p.at_end()) {
    return fail(Errc::kInvalidArgument,
                p.at_end() ? fmt::format("{}: no value", s.name)
                           : fmt::format("{}: unexpected '{}' after the name", s.name,
                                         units::excerpt(p.rest().substr(0, 1))));
  }
  p.skip_blanks();
  s.value_text = p.token();
  const auto value = parse_value(s.value_text);
  if (!value) {
    return fail(Errc::kInvalidArgument, fmt::format("{}: cannot parse '{}' as a value", s.name,
                                                    units::excerpt(s.value_text)));
  }
  s.value = *value;
  p.skip_blanks();
  if (!p.at_end()) {
    const std::string_view ts = p.token();
    const auto t = units::parse_int(ts);
    if (!t || *t < 0 || *t > kMaxUnixMillis) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("{}: cannot parse '{}' as a timestamp in unix milliseconds", s.name,
                              units::excerpt(ts)));
    }
    s.timestamp_ms = *t;
    p.skip_blanks();
    if (!p.at_end()) {
      return fail(Errc::kInvalidArgument, fmt::format("{}: unexpected '{}' after the timestamp",
                                                      s.name, units::excerpt(p.rest())));
    }
  }
  return s;
}

// "# HELP name text", "# TYPE name type", "# acco-scrape <unix-ms>"; other comments say nothing.
struct Comment {
  std::optional<std::int64_t> scrape_ms;
};

Result<Comment> parse_comment(std::string_view line) {
  LineParser p(line.substr(1));
  p.skip_blanks();
  const std::string_view keyword = p.token();
  if (keyword != "HELP" && keyword != "TYPE" && keyword != "acco-scrape") {
    return Comment{};
  }
  p.skip_blanks();
  if (keyword == "acco-scrape") {
    const std::string_view ms = p.token();
    const auto v = units::parse_int(ms);
    p.skip_blanks();
    if (!v || !p.at_end() || *v < 0 || *v > kMaxUnixMillis) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("# acco-scrape: expected unix milliseconds, got '{}{}'",
                              units::excerpt(ms), units::excerpt(p.rest())));
    }
    return Comment{*v};
  }
  const std::string_view name = p.name();
  if (name.empty() || !(p.at_end() || p.peek_blank())) {
    return fail(Errc::kInvalidArgument, fmt::format("# {}: expected a metric name", keyword));
  }
  if (keyword == "TYPE") {
    p.skip_blanks();
    const std::string_view type = p.token();
    p.skip_blanks();
    static const std::set<std::string_view> types = {"counter", "gauge", "histogram", "summary",
                                                     "untyped"};
    if (!types.contains(type) || !p.at_end()) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("# TYPE {}: unknown type '{}'", name, units::excerpt(type)));
    }
  }
  return Comment{};
}

// DCGM's "no value" encodings (dcgmlib/dcgm_structs.h): BLANK, NOT_FOUND, NOT_SUPPORTED and
// NOT_PERMISSIONED for int64 (0x7ffffffffffffff0..3), int32 (0x7ffffff0..3) and fp64
// (2^47..2^47+3), and NVML's 0xFFFFFFFF that older exporters pass through.
bool dcgm_sentinel(std::string_view text, double value) {
  if (!std::isfinite(value)) {
    return true;
  }
  std::uint64_t u = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), u);
  if (ec == std::errc() && ptr == text.data() + text.size()) {
    if ((u >= 0x7ffffffffffffff0ULL && u <= 0x7ffffffffffffff3ULL) ||
        (u >= 0x7ffffff0ULL && u <= 0x7ffffff3ULL) || u == 0xffffffffULL) {
      return true;
    }
  }
  constexpr double kFp64Blank = 140737488355328.0;
  if (value >= kFp64Blank && value <= kFp64Blank + 3 && value == std::floor(value)) {
    return true;
  }
  return value >= 9.2233720368547758e18;  // the int64 sentinels once printed as floats
}

// A DCGM field read into a double of DeviceSample: the raw value times `scale`, raw in [lo, hi].
struct DcgmDouble {
  std::optional<double> power::DeviceSample::*member;
  double scale;
  double lo;
  double hi;
};
struct DcgmCount {
  std::optional<std::uint64_t> power::DeviceSample::*member;
  double scale;
  double hi;
};
struct DcgmInt {
  std::optional<int> power::DeviceSample::*member;
  int hi;
};

using DS = power::DeviceSample;

const std::map<std::string_view, DcgmDouble>& dcgm_doubles() {
  static const std::map<std::string_view, DcgmDouble> fields = {
      {"DCGM_FI_DEV_GPU_TEMP", {&DS::temperature_gpu_celsius, 1, -60, 250}},
      {"DCGM_FI_DEV_MEMORY_TEMP", {&DS::temperature_memory_celsius, 1, -60, 250}},
      {"DCGM_FI_DEV_SLOWDOWN_TEMP", {&DS::threshold_slowdown_celsius, 1, -60, 250}},
      {"DCGM_FI_DEV_SHUTDOWN_TEMP", {&DS::threshold_shutdown_celsius, 1, -60, 250}},
      {"DCGM_FI_DEV_GPU_MAX_OP_TEMP", {&DS::threshold_gpu_max_celsius, 1, -60, 250}},
      {"DCGM_FI_DEV_MEM_MAX_OP_TEMP", {&DS::threshold_memory_max_celsius, 1, -60, 250}},
      {"DCGM_FI_DEV_POWER_USAGE", {&DS::power_watts, 1, 0, 1e5}},
      {"DCGM_FI_DEV_POWER_MGMT_LIMIT", {&DS::power_limit_requested_watts, 1, 0, 1e5}},
      {"DCGM_FI_DEV_POWER_MGMT_LIMIT_MIN", {&DS::power_limit_min_watts, 1, 0, 1e5}},
      {"DCGM_FI_DEV_POWER_MGMT_LIMIT_MAX", {&DS::power_limit_max_watts, 1, 0, 1e5}},
      {"DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF", {&DS::power_limit_default_watts, 1, 0, 1e5}},
      {"DCGM_FI_DEV_ENFORCED_POWER_LIMIT", {&DS::power_limit_enforced_watts, 1, 0, 1e5}},
      {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", {&DS::energy_joules, 1e-3, 0, 1e17}},
      {"DCGM_FI_DEV_SM_CLOCK", {&DS::sm_clock_hertz, 1e6, 0, 1e5}},
      {"DCGM_FI_DEV_MEM_CLOCK", {&DS::memory_clock_hertz, 1e6, 0, 1e5}},
      {"DCGM_FI_DEV_MAX_SM_CLOCK", {&DS::sm_clock_max_hertz, 1e6, 0, 1e5}},
      {"DCGM_FI_DEV_MAX_MEM_CLOCK", {&DS::memory_clock_max_hertz, 1e6, 0, 1e5}},
      {"DCGM_FI_DEV_GPU_UTIL", {&DS::utilization_ratio, 0.01, 0, 100}},
      {"DCGM_FI_DEV_MEM_COPY_UTIL", {&DS::memory_utilization_ratio, 0.01, 0, 100}},
      {"DCGM_FI_PROF_PCIE_TX_BYTES", {&DS::pcie_tx_bytes_per_second, 1, 0, 1e13}},
      {"DCGM_FI_PROF_PCIE_RX_BYTES", {&DS::pcie_rx_bytes_per_second, 1, 0, 1e13}},
  };
  return fields;
}

const std::map<std::string_view, DcgmCount>& dcgm_counts() {
  static const std::map<std::string_view, DcgmCount> fields = {
      {"DCGM_FI_DEV_FB_USED", {&DS::memory_used_bytes, 1048576.0, 1e9}},
      {"DCGM_FI_DEV_FB_FREE", {&DS::memory_free_bytes, 1048576.0, 1e9}},
      {"DCGM_FI_DEV_FB_TOTAL", {&DS::memory_total_bytes, 1048576.0, 1e9}},
      {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", {&DS::pcie_replays, 1, 1e18}},
      {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", {&DS::clock_event_reasons, 1, 1e18}},
      {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", {&DS::clock_event_reasons, 1, 1e18}},
  };
  return fields;
}

const std::map<std::string_view, DcgmInt>& dcgm_ints() {
  static const std::map<std::string_view, DcgmInt> fields = {
      {"DCGM_FI_DEV_PCIE_LINK_GEN", {&DS::pcie_gen_current, 16}},
      {"DCGM_FI_DEV_PCIE_LINK_WIDTH", {&DS::pcie_width_current, 64}},
  };
  return fields;
}

// One device within one scrape. acco's values overwrite DCGM's; DCGM's never overwrite.
struct DeviceEntry {
  power::DeviceSample sample;
  std::map<int, power::NvlinkSample> links;
  bool acco = false;
};

template <typename T, typename V>
void put(std::optional<T>& field, V value, bool from_acco) {
  if (from_acco || !field) {
    field = static_cast<T>(value);
  }
}

struct Scrape {
  bool started = false;
  std::optional<std::int64_t> marker_ms;
  std::optional<std::int64_t> sample_ms;
  std::optional<std::int64_t> acco_nanos;
  std::set<std::string> series;
  std::map<std::string, DeviceEntry> devices;
  SamplerStats stats;
};

std::string series_key(const Sample& s) {
  std::string key = s.name;
  for (const auto& [k, v] : s.labels) {
    key += fmt::format("\x1f{}\x1e{}", k, v);
  }
  return key;
}

std::string label(const Labels& labels, const std::string& name) {
  const auto it = labels.find(name);
  return it == labels.end() ? "" : detail::stored_text(it->second);
}

// Sets the field whose key is the value of label `name`; other values are ignored (true).
bool by_label(const Sample& s, const char* name,
              std::initializer_list<std::pair<const char*, std::optional<double>*>> fields) {
  const std::string value = label(s.labels, name);
  for (const auto& [key, field] : fields) {
    if (value == key) {
      *field = s.value;
    }
  }
  return true;
}

bool set_count(const Sample& s, std::optional<std::uint64_t>& field) {
  field = static_cast<std::uint64_t>(std::llround(s.value));
  return true;
}

bool set_small(const Sample& s, std::optional<int>& field) {
  field = static_cast<int>(std::lround(s.value));
  return true;
}

// No GPU draws more than 10 kW: such a reading is dropped and counted. A power limit of 0 W (or
// less, or past 10 kW) is no limit set: absent.
void bound_power(power::DeviceSample& x) {
  if (x.power_watts && !(*x.power_watts >= 0 && *x.power_watts <= detail::kMaxGpuWatts)) {
    x.power_watts.reset();
    ++x.dropped_readings;
  }
  for (auto* limit :
       {&x.power_limit_enforced_watts, &x.power_limit_requested_watts, &x.power_limit_default_watts,
        &x.power_limit_min_watts, &x.power_limit_max_watts}) {
    if (*limit && !(**limit > 0 && **limit <= detail::kMaxGpuWatts)) {
      limit->reset();
    }
  }
}

bool set_double(const Sample& s, std::optional<double>& field) {
  field = s.value;
  return true;
}

// A utilization outside 0-1 is no reading NVML gives: dropped and counted, as the sensor does.
bool set_ratio(const Sample& s, std::optional<double>& field, power::DeviceSample& x) {
  if (s.value < 0 || s.value > 1) {
    ++x.dropped_readings;
  } else {
    field = s.value;
  }
  return true;
}

bool read_acco_thermal_power(const Sample& s, power::DeviceSample& x) {
  const std::string& n = s.name;
  if (n == "acco_gpu_up") {
    return true;  // 0 exactly when lost or suspended, which have series of their own
  }
  if (n == "acco_gpu_lost" || n == "acco_gpu_suspended") {
    (n == "acco_gpu_lost" ? x.lost : x.suspended) = s.value != 0;
    return true;
  }
  if (n == "acco_gpu_temperature_celsius") {
    return by_label(
        s, "sensor",
        {{"gpu", &x.temperature_gpu_celsius}, {"memory", &x.temperature_memory_celsius}});
  }
  if (n == "acco_gpu_temperature_threshold_celsius") {
    return by_label(s, "kind",
                    {{"gpu_max", &x.threshold_gpu_max_celsius},
                     {"slowdown", &x.threshold_slowdown_celsius},
                     {"shutdown", &x.threshold_shutdown_celsius},
                     {"memory_max", &x.threshold_memory_max_celsius}});
  }
  if (n == "acco_gpu_thermal_margin_celsius") {
    return set_double(s, x.thermal_margin_celsius);
  }
  if (n == "acco_gpu_power_watts") {
    return set_double(s, x.power_watts);
  }
  if (n == "acco_gpu_power_limit_watts") {
    return by_label(s, "kind",
                    {{"enforced", &x.power_limit_enforced_watts},
                     {"requested", &x.power_limit_requested_watts},
                     {"default", &x.power_limit_default_watts},
                     {"min", &x.power_limit_min_watts},
                     {"max", &x.power_limit_max_watts}});
  }
  if (n == "acco_gpu_energy_joules_total") {
    return set_double(s, x.energy_joules);
  }
  return false;
}

bool read_acco_clocks_memory(const Sample& s, power::DeviceSample& x) {
  const std::string& n = s.name;
  if (n == "acco_gpu_clock_hertz") {
    return by_label(s, "clock", {{"sm", &x.sm_clock_hertz}, {"memory", &x.memory_clock_hertz}});
  }
  if (n == "acco_gpu_clock_max_hertz") {
    return by_label(s, "clock",
                    {{"sm", &x.sm_clock_max_hertz}, {"memory", &x.memory_clock_max_hertz}});
  }
  if (n == "acco_gpu_performance_state") {
    return set_small(s, x.pstate);
  }
  if (n == "acco_gpu_utilization_ratio") {
    return set_ratio(s, x.utilization_ratio, x);
  }
  if (n == "acco_gpu_memory_utilization_ratio") {
    return set_ratio(s, x.memory_utilization_ratio, x);
  }
  if (n == "acco_gpu_memory_bytes") {
    const std::string state = label(s.labels, "state");
    if (state == "total") {
      return set_count(s, x.memory_total_bytes);
    }
    if (state == "used") {
      return set_count(s, x.memory_used_bytes);
    }
    return state != "free" || set_count(s, x.memory_free_bytes);
  }
  if (n == "acco_gpu_clock_event_active") {
    const std::string reason = label(s.labels, "reason");
    for (const auto& e : power::clock_event_names()) {
      if (reason == e.name) {
        x.clock_event_reasons = x.clock_event_reasons.value_or(0) | (s.value != 0 ? e.bit : 0);
      }
    }
    return true;
  }
  if (n == "acco_gpu_throttle_seconds_total") {
    x.throttle_seconds[label(s.labels, "reason")] = s.value;
    return true;
  }
  return false;
}

bool read_acco_pcie(const Sample& s, power::DeviceSample& x) {
  const std::string& n = s.name;
  if (n == "acco_pcie_throughput_bytes_per_second") {
    return by_label(s, "direction",
                    {{"rx", &x.pcie_rx_bytes_per_second}, {"tx", &x.pcie_tx_bytes_per_second}});
  }
  if (n == "acco_pcie_replays_total") {
    return set_count(s, x.pcie_replays);
  }
  if (n != "acco_pcie_link_generation" && n != "acco_pcie_link_width_lanes") {
    return false;
  }
  const bool gen = n == "acco_pcie_link_generation";
  const std::string state = label(s.labels, "state");
  if (state == "current") {
    return set_small(s, gen ? x.pcie_gen_current : x.pcie_width_current);
  }
  return state != "max" || set_small(s, gen ? x.pcie_gen_max : x.pcie_width_max);
}

bool read_acco_nvlink(const Sample& s, DeviceEntry& d) {
  const std::string& n = s.name;
  if (!n.starts_with("acco_nvlink_")) {
    return false;
  }
  int link = 0;
  const std::string text = label(s.labels, "link");
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), link);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return false;
  }
  auto& nv = d.links[link];
  nv.link = link;
  if (n == "acco_nvlink_link_up") {
    nv.up = s.value != 0;
    return true;
  }
  if (n == "acco_nvlink_link_speed_bytes_per_second") {
    return set_double(s, nv.speed_bytes_per_second);
  }
  if (n == "acco_nvlink_bytes_total") {
    return set_count(s, label(s.labels, "direction") == "tx" ? nv.tx_bytes : nv.rx_bytes);
  }
  return false;
}

class Reader {
 public:
  Reader(const std::string& file, std::vector<std::string>& warnings)
      : file_(file), warnings_(warnings) {}

  void marker(std::int64_t ms) {
    flush();
    scrape_.started = true;
    scrape_.marker_ms = ms;
  }

  void add(const Sample& s) {
    const std::string key = series_key(s);
    if (scrape_.series.contains(key) ||
        (s.timestamp_ms && scrape_.sample_ms && *s.timestamp_ms != *scrape_.sample_ms)) {
      flush();
    }
    scrape_.started = true;
    scrape_.series.insert(key);
    if (s.timestamp_ms && !scrape_.sample_ms) {
      scrape_.sample_ms = s.timestamp_ms;
    }
    if (s.name.starts_with("DCGM_")) {
      add_dcgm(s);
    } else if (s.name.starts_with("acco_")) {
      add_acco(s);
    }
  }

  std::vector<Snapshot> finish() {
    flush();
    detail::sort_by_time(out_);
    return std::move(out_);
  }

  // "1 (1g.10gb): graphics engine active 87% (mean of 12 readings), 4096 of 9984 MiB used".
  [[nodiscard]] std::map<std::string, std::vector<std::string>> instances() const {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& [gpu, by_id] : instances_) {
      std::vector<std::pair<std::string, const Instance*>> sorted;
      for (const auto& [id, instance] : by_id) {
        sorted.emplace_back(id, &instance);
      }
      detail::sort_by_number(sorted);
      for (const auto& [id, instance] : sorted) {
        std::string text = id;
        if (!instance->profile.empty()) {
          text += " (" + instance->profile + ")";
        }
        std::vector<std::string> read;
        if (instance->engine_active_samples > 0) {
          read.push_back(fmt::format(
              "graphics engine active {} (mean of {} reading(s))",
              units::format_percent(instance->engine_active_sum / instance->engine_active_samples),
              instance->engine_active_samples));
        }
        if (instance->used_mib) {
          read.push_back(instance->total_mib
                             ? fmt::format("{:.0f} of {:.0f} MiB used (last)", *instance->used_mib,
                                           *instance->total_mib)
                             : fmt::format("{:.0f} MiB used (last)", *instance->used_mib));
        }
        out[gpu].push_back(read.empty() ? text
                                        : text + ": " + fmt::format("{}", fmt::join(read, ", ")));
      }
    }
    return out;
  }

 private:
  DeviceEntry* device(const Sample& s, const char* index_label) {
    const std::string index = label(s.labels, index_label);
    if (index.empty()) {
      detail::warn_once(warnings_, fmt::format("{}: {} without a {} label is not read", file_,
                                               s.name, index_label));
      return nullptr;
    }
    auto& d = scrape_.devices[index];
    d.sample.device = index;
    return &d;
  }

  // A MIG instance's series (GPU_I_ID set): engine activity and memory are the instance's and
  // stay with it; every other field is the physical GPU's, the same in each instance's series.
  // true when the series was the instance's alone.
  bool add_instance(const Sample& s) {
    const std::string id = label(s.labels, "GPU_I_ID");
    const std::string gpu = label(s.labels, "gpu");
    if (id.empty() || gpu.empty()) {
      return false;
    }
    auto& instance = instances_[gpu][id];
    if (instance.profile.empty()) {
      instance.profile = label(s.labels, "GPU_I_PROFILE");
    }
    const bool valid = !dcgm_sentinel(s.value_text, s.value);
    if (s.name == "DCGM_FI_PROF_GR_ENGINE_ACTIVE") {
      if (valid && s.value >= 0 && s.value <= 1) {
        instance.engine_active_sum += s.value;
        ++instance.engine_active_samples;
      }
      return true;
    }
    if (s.name == "DCGM_FI_DEV_FB_USED" || s.name == "DCGM_FI_DEV_FB_TOTAL") {
      if (valid && s.value >= 0) {
        (s.name == "DCGM_FI_DEV_FB_USED" ? instance.used_mib : instance.total_mib) = s.value;
      }
      return true;
    }
    return s.name.starts_with("DCGM_FI_PROF_") || s.name == "DCGM_FI_DEV_FB_FREE";
  }

  static void fill_dcgm_identity(const Sample& s, power::DeviceSample& sample) {
    fill(sample.uuid, label(s.labels, "UUID"));
    fill(sample.pci_bus_id, detail::sysfs_pci_bus_id(label(s.labels, "pci_bus_id")));
    fill(sample.model, label(s.labels, "modelName"));
    if (sample.source.empty()) {
      sample.source = "dcgm-exporter";
    }
  }

  void add_dcgm(const Sample& s) {
    if (add_instance(s)) {
      // The physical GPU exists even when the exporter sends only its instances' series: its
      // own readings stay unknown, the instances are listed under it.
      if (DeviceEntry* d = device(s, "gpu"); d != nullptr) {
        fill_dcgm_identity(s, d->sample);
      }
      return;
    }
    const auto* as_double = dcgm_doubles().contains(s.name) ? &dcgm_doubles().at(s.name) : nullptr;
    const auto* as_count = dcgm_counts().contains(s.name) ? &dcgm_counts().at(s.name) : nullptr;
    const auto* as_int = dcgm_ints().contains(s.name) ? &dcgm_ints().at(s.name) : nullptr;
    if (as_double == nullptr && as_count == nullptr && as_int == nullptr) {
      detail::warn_once(warnings_, fmt::format("{}: {} is not read", file_, s.name));
      return;
    }
    DeviceEntry* d = device(s, "gpu");
    if (d == nullptr) {
      return;
    }
    auto& sample = d->sample;
    fill_dcgm_identity(s, sample);
    const double v = s.value;
    const bool sentinel = dcgm_sentinel(s.value_text, v);
    if (as_double != nullptr) {
      if (sentinel || v < as_double->lo || v > as_double->hi) {
        ++sample.dropped_readings;
        return;
      }
      put(sample.*(as_double->member), v * as_double->scale, false);
    } else if (as_count != nullptr) {
      if (sentinel || v < 0 || v > as_count->hi) {
        ++sample.dropped_readings;
        return;
      }
      put(sample.*(as_count->member), std::llround(v * as_count->scale), false);
    } else {
      if (sentinel || v < 0 || v > as_int->hi) {
        ++sample.dropped_readings;
        return;
      }
      put(sample.*(as_int->member), std::lround(v), false);
    }
  }

  void add_acco(const Sample& s) {
    if (add_self(s)) {
      return;
    }
    if (!s.name.starts_with("acco_gpu_") && !s.name.starts_with("acco_pcie_") &&
        !s.name.starts_with("acco_nvlink_")) {
      return;  // host and link-derived series: not a device reading
    }
    DeviceEntry* d = device(s, "device");
    if (d == nullptr) {
      return;
    }
    auto& sample = d->sample;
    sample.uuid = label(s.labels, "uuid");
    sample.pci_bus_id = detail::sysfs_pci_bus_id(label(s.labels, "pci_bus_id"));
    sample.model = label(s.labels, "model");
    sample.source = "acco";
    d->acco = true;
    if (!std::isfinite(s.value)) {
      ++sample.dropped_readings;
      return;
    }
    if (!read_acco(s, *d)) {
      detail::warn_once(warnings_, fmt::format("{}: {} is not read", file_, s.name));
    }
  }

  // acco's device series as metrics.cpp's add_device writes them; false for one it does not.
  static bool read_acco(const Sample& s, DeviceEntry& d) {
    return read_acco_thermal_power(s, d.sample) || read_acco_clocks_memory(s, d.sample) ||
           read_acco_pcie(s, d.sample) || read_acco_nvlink(s, d);
  }
  // acco's own counters (add_self in metrics.cpp); false for any other series.
  bool add_self(const Sample& s) {
    auto& st = scrape_.stats;
    const double v = s.value;
    if (s.name == "acco_snapshot_timestamp_seconds") {
      // A double holds unix nanoseconds only to 256 ns; the printed decimal has them all.
      const std::string text(s.value_text);
      const long double seconds = std::strtold(text.c_str(), nullptr);
      if (std::isfinite(v) && v >= 0 && v <= 9e9) {  // beyond, the nanoseconds overflow
        scrape_.acco_nanos = std::llround(seconds * 1e9L);
      }
    } else if (s.name == "acco_sampler_rounds_total") {
      st.rounds = static_cast<std::uint64_t>(std::llround(v));
    } else if (s.name == "acco_sampler_read_errors_total") {
      st.read_errors[label(s.labels, "source")] = static_cast<std::uint64_t>(std::llround(v));
    } else if (s.name == "acco_sensor_dropped_readings_total") {
      st.dropped_readings = static_cast<std::uint64_t>(std::llround(v));
    } else if (s.name == "acco_sampler_round_seconds") {
      st.last_round_seconds = v;
    } else if (s.name == "acco_sampler_cpu_seconds_total") {
      st.cpu_seconds = v;
    } else if (s.name == "acco_sampler_interval_seconds") {
      st.interval_seconds = v;
    } else {
      return s.name == "acco_build_info";
    }
    return true;
  }

  static void fill(std::string& field, const std::string& value) {
    if (field.empty()) {
      field = value;
    }
  }

  void flush() {
    if (!scrape_.started) {
      scrape_ = Scrape{};
      return;
    }
    Snapshot snap;
    if (scrape_.marker_ms) {
      snap.time_unix_nanos = *scrape_.marker_ms * 1'000'000;
    } else if (scrape_.sample_ms) {
      snap.time_unix_nanos = *scrape_.sample_ms * 1'000'000;
    } else if (scrape_.acco_nanos) {
      snap.time_unix_nanos = *scrape_.acco_nanos;
    } else {
      snap.time_unix_nanos = previous_ ? *previous_ + 1'000'000'000 : 0;
    }
    previous_ = snap.time_unix_nanos;
    snap.stats = scrape_.stats;
    for (auto& [index, entry] : scrape_.devices) {
      auto& sample = entry.sample;
      sample.time_unix_nanos = snap.time_unix_nanos;
      for (auto& [link, nv] : entry.links) {
        sample.nvlinks.push_back(nv);
      }
      bound_power(sample);
      snap.devices.push_back(std::move(sample));
    }
    detail::sort_devices(snap.devices);
    out_.push_back(std::move(snap));
    scrape_ = Scrape{};
  }

  struct Instance {
    std::string profile;
    double engine_active_sum = 0;
    int engine_active_samples = 0;
    std::optional<double> used_mib;
    std::optional<double> total_mib;
  };

  const std::string& file_;
  std::vector<std::string>& warnings_;
  std::map<std::string, std::map<std::string, Instance>> instances_;  // gpu -> GPU_I_ID -> it
  Scrape scrape_;
  std::optional<std::int64_t> previous_;
  std::vector<Snapshot> out_;
};

}  // namespace

Result<std::vector<Snapshot>> read_prometheus_scrapes(
    std::string_view text, const std::string& name_for_errors, std::vector<std::string>& warnings,
    std::map<std::string, std::vector<std::string>>& instances) {
  Reader reader(name_for_errors, warnings);
  ACCO_RETURN_IF_ERROR(
      detail::for_each_line(text, [&](std::string_view line, std::size_t number) -> Status {
        const std::string_view trimmed = units::trim(line);
        if (trimmed.empty()) {
          return {};
        }
        if (trimmed.front() == '#') {
          ACCO_ASSIGN_OR_RETURN(const Comment c, parse_comment(trimmed),
                                fmt::format("{}:{}", name_for_errors, number));
          if (c.scrape_ms) {
            reader.marker(*c.scrape_ms);
          }
          return {};
        }
        ACCO_ASSIGN_OR_RETURN(const Sample s, parse_sample(trimmed),
                              fmt::format("{}:{}", name_for_errors, number));
        reader.add(s);
        return {};
      }));
  auto rounds = reader.finish();
  instances = reader.instances();
  return rounds;
}

Result<std::vector<Snapshot>> read_prometheus_scrapes(std::string_view text,
                                                      const std::string& name_for_errors,
                                                      std::vector<std::string>& warnings) {
  std::map<std::string, std::vector<std::string>> instances;
  return read_prometheus_scrapes(text, name_for_errors, warnings, instances);
}

Result<std::vector<Snapshot>> read_prometheus_scrapes(std::string_view text,
                                                      const std::string& name_for_errors) {
  std::vector<std::string> warnings;
  return read_prometheus_scrapes(text, name_for_errors, warnings);
}

}  // namespace acco::analyze
