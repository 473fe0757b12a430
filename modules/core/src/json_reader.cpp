#include "acco/core/json_reader.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace acco::core {
namespace {

constexpr NumberRange kNonNegative{0, std::numeric_limits<double>::max()};
constexpr std::string_view kNonNegativeNumber = "expected a non-negative number";

}  // namespace

JsonReader::JsonReader(const nlohmann::json& value, std::string path, JsonReaderOptions options)
    : path_(std::move(path)), options_(options) {
  if (value.is_object()) {
    object_ = &value;
  } else {
    error_ = Error{Errc::kInvalidArgument, path_.empty()
                                               ? std::string(options_.not_object)
                                               : fmt::format("{}: {}", path_, options_.not_object)};
  }
}

std::string JsonReader::string(std::string_view key) {
  return read_string(field(key), key).value_or(std::string());
}

std::optional<std::string> JsonReader::optional_string(std::string_view key) {
  return read_string(optional_field(key), key);
}

std::string JsonReader::non_empty_string(std::string_view key) {
  const auto* v = field(key);
  if (v == nullptr) {
    return {};
  }
  if (!v->is_string() || v->get_ref<const std::string&>().empty()) {
    bad_type(key, "expected a non-empty string", *v);
    return {};
  }
  return v->get<std::string>();
}

std::string JsonReader::one_of(std::string_view key, std::span<const std::string_view> allowed) {
  return read_one_of(field(key), key, allowed).value_or(std::string());
}

std::optional<std::string> JsonReader::optional_one_of(std::string_view key,
                                                       std::span<const std::string_view> allowed) {
  return read_one_of(optional_field(key), key, allowed);
}

double JsonReader::number(std::string_view key, NumberRange range, std::string_view expected) {
  return read_number(field(key), key, range, expected).value_or(0);
}

std::optional<double> JsonReader::optional_number(std::string_view key, NumberRange range,
                                                  std::string_view expected) {
  return read_number(optional_field(key), key, range, expected);
}

double JsonReader::non_negative(std::string_view key) {
  return number(key, kNonNegative, kNonNegativeNumber);
}

std::optional<double> JsonReader::optional_non_negative(std::string_view key) {
  return optional_number(key, kNonNegative, kNonNegativeNumber);
}

std::int64_t JsonReader::integer(std::string_view key, IntRange range, std::string_view expected) {
  return read_integer(field(key), key, range, expected).value_or(0);
}

std::optional<std::int64_t> JsonReader::optional_integer(std::string_view key, IntRange range,
                                                         std::string_view expected) {
  return read_integer(optional_field(key), key, range, expected);
}

std::uint64_t JsonReader::count(std::string_view key) {
  return read_count(field(key), key).value_or(0);
}

std::optional<std::uint64_t> JsonReader::optional_count(std::string_view key) {
  return read_count(optional_field(key), key);
}

std::string JsonReader::scalar_text(std::string_view key) {
  const auto* v = field(key);
  if (v == nullptr) {
    return {};
  }
  if (v->is_string()) {
    return v->get<std::string>();
  }
  if (v->is_number() || v->is_boolean()) {
    return v->dump();
  }
  bad_type(key, "expected a string, number or boolean", *v);
  return {};
}

bool JsonReader::boolean(std::string_view key) {
  return read_boolean(field(key), key).value_or(false);
}

std::optional<bool> JsonReader::optional_boolean(std::string_view key) {
  return read_boolean(optional_field(key), key);
}

const nlohmann::json* JsonReader::object(std::string_view key) {
  return read_typed(field(key), key, false);
}

const nlohmann::json* JsonReader::optional_object(std::string_view key) {
  return read_typed(optional_field(key), key, false);
}

const nlohmann::json* JsonReader::array(std::string_view key) {
  return read_typed(field(key), key, true);
}

const nlohmann::json* JsonReader::optional_array(std::string_view key) {
  return read_typed(optional_field(key), key, true);
}

void JsonReader::problem(std::string_view key, std::string_view text) {
  if (!error_) {
    error_ = Error{Errc::kInvalidArgument, fmt::format("{}: {}", path(key), text)};
  }
}

void JsonReader::add(Error error) {
  if (!error_) {
    error_ = std::move(error);
  }
}

void JsonReader::add(const Status& status) {
  if (!status.has_value()) {
    add(status.error());
  }
}

const nlohmann::json* JsonReader::field(std::string_view key) {
  if (error_) {
    return nullptr;
  }
  const auto it = object_->find(key);
  if (it == object_->end() || (options_.absent_means_null && it->is_null())) {
    problem(key, "missing");
    return nullptr;
  }
  return &*it;
}

const nlohmann::json* JsonReader::optional_field(std::string_view key) {
  if (error_) {
    return nullptr;
  }
  const auto it = object_->find(key);
  if (it == object_->end()) {
    if (!options_.absent_means_null) {
      problem(key, "missing");
    }
    return nullptr;
  }
  return it->is_null() ? nullptr : &*it;
}

std::vector<std::string> JsonReader::keys() const {
  std::vector<std::string> out;
  if (error_) {
    return out;
  }
  out.reserve(object_->size());
  for (const auto& [key, value] : object_->items()) {
    out.push_back(key);
  }
  return out;
}

std::string JsonReader::path(std::string_view key) const {
  if (options_.quote_keys) {
    return path_.empty() ? fmt::format("'{}'", key) : fmt::format("{} '{}'", path_, key);
  }
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

std::string JsonReader::shown(const nlohmann::json& value) const {
  std::string text = value.is_number_float() && !std::isfinite(value.get<double>())
                         ? fmt::format("{}", value.get<double>())
                         : value.dump();
  const std::size_t max = options_.max_value_chars;
  if (max > 0 && text.size() > max) {
    text = text.substr(0, max > 3 ? max - 3 : 0) + "...";
  }
  return text;
}

Status JsonReader::status() const {
  if (error_) {
    return tl::unexpected(*error_);
  }
  return {};
}

std::optional<std::int64_t> JsonReader::int64_of(const nlohmann::json& value) {
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return static_cast<std::int64_t>(u);
    }
    return std::nullopt;
  }
  if (value.is_number_integer()) {
    return value.get<std::int64_t>();
  }
  return std::nullopt;
}

void JsonReader::bad_type(std::string_view key, std::string_view expected,
                          const nlohmann::json& got) {
  if (options_.show_value) {
    problem(key, fmt::format("{}, got {}", expected, shown(got)));
  } else {
    problem(key, expected);
  }
}

void JsonReader::out_of_range(std::string_view key, std::string_view expected,
                              const nlohmann::json& got, std::string_view min,
                              std::string_view max) {
  switch (options_.range) {
    case RangeWording::kExpected:
      bad_type(key, expected, got);
      return;
    case RangeWording::kIsOutside:
      problem(key, fmt::format("{} is outside {}..{}", shown(got), min, max));
      return;
    case RangeWording::kMustBeBetween:
      problem(key, fmt::format("must be between {} and {}, got {}", min, max, shown(got)));
      return;
  }
}

std::optional<std::string> JsonReader::read_string(const nlohmann::json* v, std::string_view key) {
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->is_string()) {
    bad_type(key, "expected a string", *v);
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<std::string> JsonReader::read_one_of(const nlohmann::json* v, std::string_view key,
                                                   std::span<const std::string_view> allowed) {
  auto s = read_string(v, key);
  if (!s || std::find(allowed.begin(), allowed.end(), *s) != allowed.end()) {
    return s;
  }
  if (options_.range == RangeWording::kIsOutside) {
    problem(key, fmt::format("'{}' is not one of {}", *s, fmt::join(allowed, ", ")));
  } else {
    std::string list;
    for (const auto a : allowed) {
      list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", a);
    }
    bad_type(key, fmt::format("expected one of {}", list), nlohmann::json(*s));
  }
  return std::nullopt;
}

std::optional<double> JsonReader::read_number(const nlohmann::json* v, std::string_view key,
                                              NumberRange range, std::string_view expected) {
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->is_number() || !std::isfinite(v->get<double>())) {
    bad_type(key, expected, *v);
    return std::nullopt;
  }
  const auto value = v->get<double>();
  if (value < range.min || value > range.max) {
    out_of_range(key, expected, *v, fmt::format("{}", range.min), fmt::format("{}", range.max));
    return std::nullopt;
  }
  return value;
}

std::optional<std::int64_t> JsonReader::read_integer(const nlohmann::json* v, std::string_view key,
                                                     IntRange range, std::string_view expected) {
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->is_number_integer()) {
    bad_type(key, expected, *v);
    return std::nullopt;
  }
  // An unsigned value beyond int64 is above every range.
  const auto value = int64_of(*v);
  if (!value || *value < range.min || *value > range.max) {
    out_of_range(key, expected, *v, fmt::format("{}", range.min), fmt::format("{}", range.max));
    return std::nullopt;
  }
  return value;
}

std::optional<std::uint64_t> JsonReader::read_count(const nlohmann::json* v, std::string_view key) {
  if (v == nullptr) {
    return std::nullopt;
  }
  if (v->is_number_unsigned()) {
    return v->get<std::uint64_t>();
  }
  if (v->is_number_integer() && v->get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(v->get<std::int64_t>());
  }
  bad_type(key, "expected a non-negative integer", *v);
  return std::nullopt;
}

std::optional<bool> JsonReader::read_boolean(const nlohmann::json* v, std::string_view key) {
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->is_boolean()) {
    bad_type(key, "expected true or false", *v);
    return std::nullopt;
  }
  return v->get<bool>();
}

const nlohmann::json* JsonReader::read_typed(const nlohmann::json* v, std::string_view key,
                                             bool want_array) {
  if (v != nullptr && (want_array ? !v->is_array() : !v->is_object())) {
    bad_type(key, want_array ? "expected an array" : "expected an object", *v);
    return nullptr;
  }
  return v;
}

std::string JsonReader::item_path(std::string_view key, std::size_t index) const {
  return fmt::format("{}[{}]", path(key), index);
}

}  // namespace acco::core
