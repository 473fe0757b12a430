#include "acco/report/json.hpp"

#include <string>
#include <utility>

#include "acco/core/result.hpp"

namespace acco::report {

nlohmann::json document(std::string_view schema_id, nlohmann::json fields) {
  ACCO_CHECK(fields.is_object());
  fields["schema"] = std::string(schema_id);
  return fields;
}

}  // namespace acco::report
