#include "acco/analyze/recording.hpp"

#include <cctype>
#include <cmath>
#include <ctime>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/analyze/json.hpp"
#include "acco/analyze/recorded_readers.hpp"
#include "acco/core/file.hpp"
#include "acco/core/units.hpp"

namespace acco::analyze {
namespace {

std::string_view first_line(std::string_view text) {
  while (!text.empty() && (text.front() == '\n' || text.front() == '\r' || text.front() == ' ')) {
    text.remove_prefix(1);
  }
  return text.substr(0, text.find('\n'));
}

Result<Recording> parse_jsonl(std::string_view text, const std::string& name) {
  Recording r;
  r.format = "acco-jsonl";
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto end = text.find('\n', pos);
    const bool last = end == std::string_view::npos;
    const auto line = units::trim(text.substr(pos, last ? std::string_view::npos : end - pos));
    pos = last ? text.size() : end + 1;
    ++line_no;
    if (line.empty()) {
      continue;
    }
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      // A recording cut off by kill -9 ends in half a line; anything else is a broken file.
      // A file of that half line alone holds nothing to analyze.
      const bool rest_empty = units::trim(text.substr(pos)).empty();
      if ((last || rest_empty) && !r.rounds.empty()) {
        r.notes.push_back(fmt::format("{}:{}: skipped a cut-off last line", name, line_no));
        break;
      }
      return fail(Errc::kInvalidArgument,
                  fmt::format("{}:{}: not a JSON object (expected one snapshot per line, as acco "
                              "record writes)",
                              name, line_no));
    }
    auto s = snapshot_from_json(j);
    if (!s) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("{}:{}: {}", name, line_no, s.error().message));
    }
    r.rounds.push_back(std::move(*s));
  }
  return r;
}

// A Prometheus scrape starts with a comment (# HELP, # TYPE, # acco-scrape) or a sample line:
// a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) then '{' or a blank. An nvidia-smi log starts with its
// header, whose first field is followed by ',' or has a dot ("temperature.gpu", "power.draw
// [W]"), or with a row, which starts with a date, a number or a GPU's name and has commas.
// (A long line says nothing, and labels have commas.)
bool prometheus_sample(std::string_view head) {
  const auto name_char = [](char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && c >= '0' && c <= '9');
  };
  std::size_t i = 0;
  while (i < head.size() && name_char(head[i], i == 0)) {
    ++i;
  }
  if (i == 0 || i >= head.size()) {
    return false;
  }
  // "name{labels} value"; "name value" has no comma, unlike a noheader row that starts with a
  // GPU's name ("NVIDIA H100 80GB HBM3, ...").
  return head[i] == '{' ||
         ((head[i] == ' ' || head[i] == '\t') && head.find(',') == std::string_view::npos);
}

}  // namespace

Result<Recording> parse_recording(std::string_view text, const std::string& name,
                                  const RecordingOptions& options) {
  const auto head = first_line(text);
  if (head.empty()) {
    return fail(Errc::kInvalidArgument, fmt::format("{}: the file is empty", name));
  }
  if (head.front() == '{') {
    // A Chrome trace is one document, often spread over many lines; a recording is one
    // snapshot per line.
    if (text.find("\"traceEvents\"") != std::string_view::npos) {
      auto whole = nlohmann::json::parse(text, nullptr, false);
      if (!whole.is_discarded() && whole.is_object() && whole.contains("traceEvents")) {
        Recording r;
        r.format = "chrome-trace";
        r.trace = std::move(whole);
        return r;
      }
      if (whole.is_discarded() && head.size() == units::trim(text).size()) {
        return fail(Errc::kInvalidArgument,
                    fmt::format("{}: a Chrome trace that is not valid JSON (cut off?)", name));
      }
    }
    return parse_jsonl(text, name);
  }
  if (head.starts_with("<?xml") || head.starts_with("<!DOCTYPE nvidia_smi_log") ||
      head.starts_with("<nvidia_smi_log")) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: nvidia-smi -q -x XML is not read; save the text report "
                            "(nvidia-smi -q) or a --query-gpu CSV log instead",
                            name));
  }
  // dmon's header starts with '#' like a Prometheus comment; -q's lines look like nothing else.
  if (looks_like_nvidia_smi_dmon(text)) {
    return read_nvidia_smi_dmon(text, name, options.interval_seconds);
  }
  if (looks_like_nvidia_smi_query(text)) {
    return read_nvidia_smi_query(text, name);
  }
  const bool prometheus = head.front() == '#' || prometheus_sample(head);
  Recording r;
  std::vector<std::string> warnings;
  Result<std::vector<Snapshot>> rounds =
      prometheus ? read_prometheus_scrapes(text, name, warnings, r.instances)
                 : read_nvidia_smi_csv(text, name, warnings);
  if (!rounds) {
    return tl::unexpected(std::move(rounds).error());
  }
  r.format = prometheus ? "prometheus" : "nvidia-smi-csv";
  r.rounds = std::move(*rounds);
  r.notes = std::move(warnings);
  // Both readers number rounds from 0 when the file has no times; nvidia-smi's own times are
  // local, of a zone it does not print.
  if (!r.rounds.empty() && r.rounds.front().time_unix_nanos == 0) {
    r.time_base = TimeBase::kNone;
  } else if (!prometheus) {
    r.time_base = TimeBase::kLocalUnknownZone;
  }
  return r;
}

Result<Recording> read_recording(const std::string& path, const RecordingOptions& options) {
  ACCO_ASSIGN_OR_RETURN(const auto text, core::read_text_file(path));
  return parse_recording(text, path, options);
}

Result<std::int64_t> parse_time(std::string_view text) {
  const auto t = units::trim(text);
  const auto bad = [&] {
    return fail(Errc::kInvalidArgument,
                fmt::format("cannot parse '{}' as a time (expected RFC 3339 such as "
                            "2026-12-01T16:25:24Z, or Unix seconds)",
                            units::excerpt(t)));
  };
  if (t.empty()) {
    return bad();
  }
  if (t.find('T') == std::string_view::npos) {
    // Digits, not a double: 1764606324.5 as a double is 256 ns off, and --since would drop the
    // sample taken at exactly that time.
    const auto dot = t.find('.');
    const auto whole = t.substr(0, dot);
    const auto fraction = dot == std::string_view::npos ? std::string_view() : t.substr(dot + 1);
    const auto digits = [](std::string_view d) {
      return d.find_first_not_of("0123456789") == std::string_view::npos;
    };
    constexpr std::int64_t kMaxUnixSeconds = 9'000'000'000;  // beyond, nanoseconds overflow
    const auto seconds = units::parse_int(whole);
    if (whole.empty() || !digits(whole) || !digits(fraction) ||
        (dot != std::string_view::npos && fraction.empty()) || !seconds ||
        *seconds > kMaxUnixSeconds) {
      return bad();
    }
    std::int64_t nanos = 0;
    std::int64_t scale = 100'000'000;
    for (std::size_t k = 0; k < fraction.size(); ++k) {
      if (k < 9) {
        nanos += (fraction[k] - '0') * scale;
        scale /= 10;
      } else if (k == 9 && fraction[k] >= '5') {
        ++nanos;  // rounded to the nearest nanosecond
      }
    }
    return static_cast<std::int64_t>(*seconds) * 1'000'000'000 + nanos;
  }
  std::tm tm{};
  int consumed = 0;
  const std::string s(t);
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,  // NOLINT
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return bad();
  }
  // timegm would normalise month 13 or hour 99 into some other date.
  if (tm.tm_year < 1970 || tm.tm_year > 2200 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
      tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60 || tm.tm_hour < 0 ||
      tm.tm_min < 0 || tm.tm_sec < 0) {
    return bad();
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::int64_t nanos = 0;
  std::size_t i = static_cast<std::size_t>(consumed);
  if (i < s.size() && s[i] == '.') {
    ++i;
    std::int64_t scale = 100'000'000;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) {
      nanos += (s[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
  }
  std::int64_t offset = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z') && i + 1 == s.size()) {
    offset = 0;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int hh = 0;
    int mm = 0;
    if (std::sscanf(s.c_str() + i + 1, "%2d:%2d", &hh, &mm) != 2 || s.size() != i + 6) {  // NOLINT
      return bad();
    }
    offset = (s[i] == '+' ? 1 : -1) * (std::int64_t{hh} * 3600 + std::int64_t{mm} * 60);
  } else {
    return bad();
  }
  const std::time_t seconds = timegm(&tm);
  if (seconds == static_cast<std::time_t>(-1)) {
    return bad();
  }
  return (static_cast<std::int64_t>(seconds) - offset) * 1'000'000'000 + nanos;
}

}  // namespace acco::analyze
