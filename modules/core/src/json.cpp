#include "acco/core/json.hpp"

#include <fmt/format.h>

#include "acco/core/file.hpp"
#include "acco/core/units.hpp"

namespace acco::core {

std::string json_message(const nlohmann::json::exception& e) {
  std::string message = e.what();
  if (const auto pos = message.find("] "); pos != std::string::npos) {
    message.erase(0, pos + 2);
  }
  // nlohmann quotes the token it stopped at ("last read: '...'") as the raw bytes read, which
  // for a binary or cut file are neither text nor short.
  constexpr std::size_t kMessageChars = 200;
  return units::excerpt(message, kMessageChars);
}

Result<nlohmann::json> parse_json(std::string_view text, std::string_view what) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    // parse_error, and out_of_range for a number past a double's range ("1e999"): the fuzz
    // target task_graphs found the second, which aborted every reader of JSON files.
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: not valid JSON: {}", what, json_message(e)));
  }
}

Result<nlohmann::json> read_json_file(const std::string& path) {
  ACCO_ASSIGN_OR_RETURN(const auto text, read_text_file(path));
  return parse_json(text, path);
}

Result<Errc> errc_from_string(std::string_view text) {
  for (const auto code :
       {Errc::kInvalidArgument, Errc::kNotFound, Errc::kUnavailable, Errc::kUnsupported,
        Errc::kDeviceError, Errc::kInternal, Errc::kUsage, Errc::kCannotWrite}) {
    if (to_string(code) == text) {
      return code;
    }
  }
  return fail(Errc::kInvalidArgument, fmt::format("unknown error code '{}'", text));
}

}  // namespace acco::core
