// What HTML pages (bench's report, sim's page, the monitor's dashboard) share.
#pragma once

#include <string>
#include <string_view>

namespace acco::report {

// & < > " ' as entities: safe in element text and in quoted attribute values.
[[nodiscard]] std::string html_escape(std::string_view text);

}  // namespace acco::report
