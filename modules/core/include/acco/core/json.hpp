// JSON helpers: nlohmann::json throws, acco returns errors. Parsing and reading JSON documents
// happen here so every caller gets the same one-line messages; files themselves (reading whole,
// atomic writes) are core/file.hpp.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "acco/core/result.hpp"

namespace acco::core {

// nlohmann's message without its bracketed id: "[json.exception.type_error.302] type must be
// number, but is string" -> "type must be number, but is string".
[[nodiscard]] std::string json_message(const nlohmann::json::exception& e);

// Runs `read` (returning a Result) over a parsed document whose value() and get() throw on a
// field of another type ("pid": "x"), and turns such a throw into kInvalidArgument
// "<field> has the wrong type (<nlohmann's reason>)": `field` names it ("t.json: a field").
template <typename Read>
auto catch_type_errors(std::string_view field, Read&& read) -> decltype(read()) {
  try {
    return std::forward<Read>(read)();
  } catch (const nlohmann::json::exception& e) {
    return fail(Errc::kInvalidArgument,
                std::string(field) + " has the wrong type (" + json_message(e) + ")");
  }
}

// `j` as text (compact unless `indent` >= 0) with bytes that are not UTF-8 (a request's path, a
// name read from sysfs or a store) replaced by U+FFFD: nlohmann's plain dump() throws on them,
// which in a daemon's handler or log ends the process.
template <typename Json>
[[nodiscard]] std::string dump_replacing_invalid_utf8(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// Parses `text`; `what` names the input in the error ("snapshot.json: line 3, column 7: ...").
[[nodiscard]] Result<nlohmann::json> parse_json(std::string_view text, std::string_view what);
// Reads (read_text_file, core/file.hpp) and parses a whole file from the real file system (not
// a sysroot).
[[nodiscard]] Result<nlohmann::json> read_json_file(const std::string& path);

[[nodiscard]] Result<Errc> errc_from_string(std::string_view text);

}  // namespace acco::core
