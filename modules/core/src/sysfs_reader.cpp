#include "acco/core/sysfs_reader.hpp"

#include <charconv>
#include <utility>

#include <fmt/format.h>

#include "acco/core/units.hpp"

namespace acco::core {
namespace {

// Issues quote what they saw; a long or binary file is cut to its first line, at most this long.
constexpr std::size_t kExcerptChars = 60;

std::string excerpt(std::string_view text) {
  text = units::trim(text);
  text = text.substr(0, text.find('\n'));
  if (text.size() > kExcerptChars) {
    return units::escape(text.substr(0, kExcerptChars)) + "...";
  }
  return units::escape(text);
}

}  // namespace

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  const auto t = units::trim(text);
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size()) {
    return std::nullopt;
  }
  return value;
}

std::optional<std::string> SysfsReader::read(const std::string& path) {
  auto r = fs_.read_file(path);
  if (!r) {
    if (r.error().code != Errc::kNotFound) {
      issue(path, r.error().message);
    }
    return std::nullopt;
  }
  return std::move(*r);
}

std::optional<std::string> SysfsReader::read_if_permitted(const std::string& path) {
  auto r = fs_.read_file(path);
  if (!r) {
    if (r.error().code != Errc::kNotFound && r.error().code != Errc::kUnavailable) {
      issue(path, r.error().message);
    }
    return std::nullopt;
  }
  return std::move(*r);
}

std::optional<std::string> SysfsReader::read_attribute(const std::string& path) {
  auto r = read(path);
  if (r && r->empty()) {
    issue(path, "the file is empty");
    return std::nullopt;
  }
  return r;
}

std::optional<std::string> SysfsReader::text(const std::string& path) {
  auto r = read_attribute(path);
  if (!r) {
    return std::nullopt;
  }
  return std::string(units::trim(*r));
}

std::optional<std::int64_t> SysfsReader::integer(const std::string& path, int base) {
  auto t = text(path);
  if (!t) {
    return std::nullopt;
  }
  auto v = units::parse_int(*t, base);
  if (!v) {
    issue(path, v.error().message);
    return std::nullopt;
  }
  return *v;
}

std::optional<std::uint64_t> SysfsReader::counter(const std::string& path) {
  const auto text = read(path);
  if (!text) {
    return std::nullopt;
  }
  const auto value = parse_u64(*text);
  if (!value) {
    malformed(path, "an unsigned integer", *text);
  }
  return value;
}

std::vector<std::string> SysfsReader::list(const std::string& path) {
  auto r = fs_.list_dir(path);
  if (!r) {
    if (r.error().code != Errc::kNotFound) {
      issue(path, r.error().message);
    }
    return {};
  }
  return std::move(*r);
}

std::string SysfsReader::link_name(const std::string& path) {
  auto r = fs_.read_link(path);
  if (!r) {
    return {};
  }
  const auto pos = r->find_last_of('/');
  return pos == std::string::npos ? *r : r->substr(pos + 1);
}

void SysfsReader::issue(const std::string& path, std::string problem) {
  issues_.push_back({path, std::move(problem)});
}

void SysfsReader::malformed(const std::string& path, std::string_view expected,
                            std::string_view got) {
  issue(path, fmt::format("{}: expected {}, got '{}'", path, expected, excerpt(got)));
}

}  // namespace acco::core
