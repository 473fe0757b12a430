// JSON helpers: nlohmann::json throws, acco returns errors. Parsing, reading and writing files
// happen here so every caller gets the same one-line messages and atomic writes.
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

// A path acco opens as a database or a log of its own: absent, or (through its links) a regular
// file, or a symbolic link to a file not made yet in a directory that exists. Else
// kInvalidArgument naming what is there ("is a pipe, expected a file"; a device or a pipe would
// hold SQLite or a sink in open() or fail later with "disk I/O error"), or kNotFound for a link
// whose target's directory does not exist.
[[nodiscard]] Status check_file_or_absent(const std::string& path);

// Parses `text`; `what` names the input in the error ("snapshot.json: line 3, column 7: ...").
[[nodiscard]] Result<nlohmann::json> parse_json(std::string_view text, std::string_view what);
// Reads and parses a whole file from the real file system (not a sysroot).
[[nodiscard]] Result<nlohmann::json> read_json_file(const std::string& path);
// The largest input file acco reads whole (snapshots, configs, traces, recordings).
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{2} << 30;
// Reads a whole file from the real file system; kNotFound when absent; kInvalidArgument for a
// directory, a device or a socket, or a file (or pipe) above kMaxInputFileBytes.
[[nodiscard]] Result<std::string> read_text_file(const std::string& path);
// Writes `content` to `path` atomically: a temporary file in the same directory, fsync, rename.
// Nothing is left behind on failure. A symbolic link is written through (the file it names is
// replaced); a path that exists and is not a regular file is refused (kUnavailable).
[[nodiscard]] Status write_file_atomic(const std::string& path, std::string_view content);

[[nodiscard]] Result<Errc> errc_from_string(std::string_view text);

}  // namespace acco::core
