// Typed reading of one JSON object for every acco document (bench runs, perf models, NVML
// snapshots, transfer profiles): each field is stated once, the first problem is kept, and every
// message names the field by its path ("results[2].cov: expected a non-negative number, got -1").
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "acco/core/result.hpp"

namespace acco::core {

// How a value outside its range or set is worded; each document keeps the wording it had.
enum class RangeWording {
  kExpected,       // the accessor's "expected ..." text, then ", got <value>" when shown
  kIsOutside,      // "16 is outside 0..15", "'MAYBE' is not one of OK, NS"
  kMustBeBetween,  // "must be between 1 and 64, got 0"
};

struct JsonReaderOptions {
  // Appends ", got <value>" to a wrong type (and to a range problem worded kExpected).
  bool show_value = true;
  // A shown value longer than this is cut to this many characters ending in "..."; 0: no limit.
  std::size_t max_value_chars = 40;
  // Keys may be left out and read as null: required fields call both absent and null "missing",
  // optional ones read both as nullopt. Otherwise every key must be present and only null is
  // "unknown".
  bool absent_means_null = false;
  RangeWording range = RangeWording::kExpected;
  // Keys appear quoted in messages ("'sysroot': ..."), as the settings file words them.
  bool quote_keys = false;
  // The problem when the value read is not an object; documents that say what they expect keep
  // their wording ("expected a JSON object of setting: value").
  std::string_view not_object = "expected an object";
};

struct IntRange {
  std::int64_t min = std::numeric_limits<std::int64_t>::min();
  std::int64_t max = std::numeric_limits<std::int64_t>::max();
};

struct NumberRange {
  double min = -std::numeric_limits<double>::max();
  double max = std::numeric_limits<double>::max();
};

// Reads the fields of one JSON object. Each accessor returns the field's value, or a default (0,
// "", nullopt, nullptr) once there is a problem: the first problem is kept, later reads are
// skipped, so a reader states every field and checks status() once at the end. Messages are
// "<path>.<key>: <problem>", or "<key>: <problem>" when the path is empty; a caller adds context
// such as "profile: " with Error::with_context. Every problem the reader finds is
// Errc::kInvalidArgument; add() keeps whatever code it is given.
//
// Required accessors (`string`, `integer`, ...) report an absent key as "<key>: missing";
// `optional_*` accessors return nullopt for null (and for an absent key under absent_means_null).
// The reader refers to `value`, which must outlive it. Not thread-safe; cheap to construct.
class JsonReader {
 public:
  // A `value` that is not an object is the first problem: "<path>: expected an object" (or the
  // options' not_object wording).
  JsonReader(const nlohmann::json& value, std::string path, JsonReaderOptions options = {});

  // A string: "expected a string".
  std::string string(std::string_view key);
  std::optional<std::string> optional_string(std::string_view key);
  // A string that is not empty: "expected a non-empty string" for both.
  std::string non_empty_string(std::string_view key);
  // One of `allowed`: "expected one of \"ok\", \"error\"" (or "'x' is not one of ok, error").
  std::string one_of(std::string_view key, std::span<const std::string_view> allowed);
  std::optional<std::string> optional_one_of(std::string_view key,
                                             std::span<const std::string_view> allowed);

  // A finite number in `range`; `expected` words a wrong type or a non-finite value, and a value
  // out of range when the wording is kExpected.
  double number(std::string_view key, NumberRange range, std::string_view expected);
  std::optional<double> optional_number(std::string_view key, NumberRange range,
                                        std::string_view expected);
  // A finite number >= 0: "expected a non-negative number".
  double non_negative(std::string_view key);
  std::optional<double> optional_non_negative(std::string_view key);

  // An integer (no fraction) in `range`: `expected` words a wrong type, and a value out of range
  // when the wording is kExpected.
  std::int64_t integer(std::string_view key, IntRange range,
                       std::string_view expected = "expected an integer");
  std::optional<std::int64_t> optional_integer(std::string_view key, IntRange range,
                                               std::string_view expected = "expected an integer");
  // An integer >= 0 up to 2^64 - 1: "expected a non-negative integer".
  std::uint64_t count(std::string_view key);
  std::optional<std::uint64_t> optional_count(std::string_view key);

  // A string as it is, or a number or boolean as its JSON text ("8", "1.5", "true"): "expected a
  // string, number or boolean".
  std::string scalar_text(std::string_view key);

  // true or false: "expected true or false".
  bool boolean(std::string_view key);
  std::optional<bool> optional_boolean(std::string_view key);

  // The nested object or array at `key`, or nullptr: "expected an object" / "expected an array".
  const nlohmann::json* object(std::string_view key);
  const nlohmann::json* optional_object(std::string_view key);
  const nlohmann::json* array(std::string_view key);
  const nlohmann::json* optional_array(std::string_view key);

  // Reads each element of the array at `key` with `read(const nlohmann::json& item, const
  // std::string& path)`, which returns Result<T> and usually builds a JsonReader of its own for
  // the element at `path` ("gpus[2]"); the first failing element's error becomes this reader's.
  template <typename T, typename ReadItem>
  std::vector<T> list(std::string_view key, ReadItem read) {
    return read_list<T>(array(key), key, read);
  }
  // As list, but an absent or null array (see `optional_*`) is empty.
  template <typename T, typename ReadItem>
  std::vector<T> optional_list(std::string_view key, ReadItem read) {
    return read_list<T>(optional_array(key), key, read);
  }

  // Records "<path>.<key>: <problem>" unless there is a problem already, for rules the accessors
  // do not know ("created: expected a UTC time like ...").
  void problem(std::string_view key, std::string_view text);
  // Keeps `error` (or `status`'s) unless there is a problem already: a nested reader's, say.
  void add(Error error);
  void add(const Status& status);

  // The raw field at `key` for a rule of the caller's own, or nullptr: `field` reports an absent
  // key as missing, `optional_field` returns nullptr for null as the `optional_*` accessors do.
  const nlohmann::json* field(std::string_view key);
  const nlohmann::json* optional_field(std::string_view key);

  // The object's keys in the order nlohmann::json keeps them (sorted), for documents whose keys
  // are data, such as the settings file; empty once there is a problem.
  [[nodiscard]] std::vector<std::string> keys() const;

  // "<path>.<key>", or `key` when the path is empty; under quote_keys "<path> '<key>'" or
  // "'<key>'".
  [[nodiscard]] std::string path(std::string_view key) const;
  // How `value` appears after "got ": JSON text (NaN and infinities spelled out, since dump()
  // writes them as null), cut to max_value_chars.
  [[nodiscard]] std::string shown(const nlohmann::json& value) const;
  [[nodiscard]] bool ok() const { return !error_.has_value(); }
  [[nodiscard]] Status status() const;
  // `value` when every read succeeded, else the first problem.
  template <typename T>
  [[nodiscard]] Result<T> finish(T value) const {
    if (error_) {
      return tl::unexpected(*error_);
    }
    return value;
  }

  // The int64 in `value` when it holds an integer that fits, else nullopt.
  [[nodiscard]] static std::optional<std::int64_t> int64_of(const nlohmann::json& value);

 private:
  void bad_type(std::string_view key, std::string_view expected, const nlohmann::json& got);
  void out_of_range(std::string_view key, std::string_view expected, const nlohmann::json& got,
                    std::string_view min, std::string_view max);
  std::optional<std::string> read_string(const nlohmann::json* v, std::string_view key);
  std::optional<std::string> read_one_of(const nlohmann::json* v, std::string_view key,
                                         std::span<const std::string_view> allowed);
  std::optional<double> read_number(const nlohmann::json* v, std::string_view key,
                                    NumberRange range, std::string_view expected);
  std::optional<std::int64_t> read_integer(const nlohmann::json* v, std::string_view key,
                                           IntRange range, std::string_view expected);
  std::optional<std::uint64_t> read_count(const nlohmann::json* v, std::string_view key);
  std::optional<bool> read_boolean(const nlohmann::json* v, std::string_view key);
  const nlohmann::json* read_typed(const nlohmann::json* v, std::string_view key, bool want_array);
  [[nodiscard]] std::string item_path(std::string_view key, std::size_t index) const;

  template <typename T, typename ReadItem>
  std::vector<T> read_list(const nlohmann::json* items, std::string_view key, ReadItem& read) {
    std::vector<T> out;
    if (items == nullptr) {
      return out;
    }
    out.reserve(items->size());
    for (std::size_t i = 0; i < items->size(); ++i) {
      Result<T> item = read((*items)[i], item_path(key, i));
      if (!item.has_value()) {
        add(std::move(item).error());
        return {};
      }
      out.push_back(std::move(*item));
    }
    return out;
  }

  const nlohmann::json* object_ = nullptr;
  std::string path_;
  JsonReaderOptions options_;
  std::optional<Error> error_;
};

}  // namespace acco::core
