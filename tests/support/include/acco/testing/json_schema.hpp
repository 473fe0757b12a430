// Checking JSON against the published schemas (docs/schemas/): a small JSON Schema validator for
// the subset acco's schemas use (type as a string or a list, properties, required, items, enum,
// additionalProperties false, $ref to #/$defs/NAME), for the unit and the integration tests.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace acco::testing {

// Every violation as "path: problem"; empty when `value` conforms to `schema`.
[[nodiscard]] std::vector<std::string> validate(const nlohmann::json& schema,
                                                const nlohmann::json& value);

// docs/schemas/`file` parsed ("probe.schema.json"); throws when it cannot be read or parsed.
[[nodiscard]] nlohmann::json published_schema(const std::string& file);

// `text` parses as JSON and conforms to docs/schemas/`file` (a non-fatal failure otherwise).
void expect_conforms(const std::string& text, const std::string& file);

}  // namespace acco::testing
