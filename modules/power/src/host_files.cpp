#include "host_files.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "acco/core/units.hpp"

namespace acco::power::detail {
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

std::optional<std::string> HostFiles::read(const std::string& path) {
  auto r = fs_.read_file(path);
  if (!r) {
    if (r.error().code != Errc::kNotFound) {
      issues_.push_back(r.error().message);
    }
    return std::nullopt;
  }
  return std::move(*r);
}

std::optional<std::string> HostFiles::read_if_permitted(const std::string& path) {
  auto r = fs_.read_file(path);
  if (!r) {
    if (r.error().code != Errc::kNotFound && r.error().code != Errc::kUnavailable) {
      issues_.push_back(r.error().message);
    }
    return std::nullopt;
  }
  return std::move(*r);
}

std::vector<std::string> HostFiles::list(const std::string& path) {
  auto r = fs_.list_dir(path);
  if (!r) {
    if (r.error().code != Errc::kNotFound) {
      issues_.push_back(r.error().message);
    }
    return {};
  }
  return std::move(*r);
}

std::optional<std::uint64_t> HostFiles::counter(const std::string& path) {
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

void HostFiles::malformed(const std::string& path, std::string_view expected,
                          std::string_view got) {
  issues_.push_back(fmt::format("{}: expected {}, got '{}'", path, expected, excerpt(got)));
}

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  const auto t = units::trim(text);
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size()) {
    return std::nullopt;
  }
  return value;
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos < line.size()) {
    const auto start = line.find_first_not_of(" \t", pos);
    if (start == std::string_view::npos) {
      break;
    }
    const auto end = std::min(line.find_first_of(" \t", start), line.size());
    out.push_back(line.substr(start, end - start));
    pos = end;
  }
  return out;
}

std::vector<std::string_view> lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const auto end = text.find('\n');
    out.push_back(text.substr(0, end));
    if (end == std::string_view::npos) {
      break;
    }
    text.remove_prefix(end + 1);
  }
  return out;
}

std::optional<int> numbered(std::string_view name, std::string_view prefix) {
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) {
    return std::nullopt;
  }
  const auto digits = name.substr(prefix.size());
  if (std::isdigit(static_cast<unsigned char>(digits.front())) == 0) {
    return std::nullopt;
  }
  int value = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) {
    return std::nullopt;
  }
  return value;
}

}  // namespace acco::power::detail
