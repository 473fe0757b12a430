// A small JSON Schema validator for the subset acco's schemas use: type (string or list),
// properties, required, items, enum, additionalProperties false, $ref to #/$defs/NAME.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace acco::testing {

// Every violation as "path: problem"; empty when `value` conforms to `schema`.
[[nodiscard]] std::vector<std::string> validate(const nlohmann::json& schema,
                                                const nlohmann::json& value);

}  // namespace acco::testing
