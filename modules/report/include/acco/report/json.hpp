// A result's JSON document: its schema id beside its fields, in one place, so a schema's id and
// the fields it names can never drift apart. Every published id is listed in docs/json-schemas.md.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace acco::report {

// `fields` (an object) with "schema": `schema_id` (e.g. "acco.bench/1") added.
[[nodiscard]] nlohmann::json document(std::string_view schema_id, nlohmann::json fields);

}  // namespace acco::report
