#include "acco/testing/json_schema.hpp"

#include <algorithm>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/files.hpp"

namespace acco::testing {
namespace {

bool has_type(const nlohmann::json& v, const std::string& type) {
  if (type == "object") {
    return v.is_object();
  }
  if (type == "array") {
    return v.is_array();
  }
  if (type == "string") {
    return v.is_string();
  }
  if (type == "integer") {
    return v.is_number_integer();
  }
  if (type == "number") {
    return v.is_number();
  }
  if (type == "boolean") {
    return v.is_boolean();
  }
  if (type == "null") {
    return v.is_null();
  }
  return false;
}

void check(const nlohmann::json& root, const nlohmann::json& schema, const nlohmann::json& v,
           const std::string& path, std::vector<std::string>& errors) {
  if (schema.contains("$ref")) {
    const auto ref = schema["$ref"].get<std::string>();
    const std::string prefix = "#/$defs/";
    if (ref.rfind(prefix, 0) != 0 || !root["$defs"].contains(ref.substr(prefix.size()))) {
      errors.push_back(path + ": unresolvable $ref " + ref);
      return;
    }
    check(root, root["$defs"][ref.substr(prefix.size())], v, path, errors);
    return;
  }
  if (schema.contains("type")) {
    std::vector<std::string> types;
    if (schema["type"].is_string()) {
      types.push_back(schema["type"].get<std::string>());
    } else {
      types = schema["type"].get<std::vector<std::string>>();
    }
    if (std::none_of(types.begin(), types.end(), [&](const auto& t) { return has_type(v, t); })) {
      errors.push_back(path + ": expected " + schema["type"].dump() + ", got " + v.dump());
      return;
    }
  }
  if (schema.contains("enum")) {
    const auto& e = schema["enum"];
    if (std::find(e.begin(), e.end(), v) == e.end()) {
      errors.push_back(path + ": " + v.dump() + " is not one of " + e.dump());
    }
  }
  if (schema.contains("const") && schema["const"] != v) {
    errors.push_back(path + ": expected " + schema["const"].dump());
  }
  if (v.is_object()) {
    for (const auto& key : schema.value("required", nlohmann::json::array())) {
      if (!v.contains(key.get<std::string>())) {
        errors.push_back(path + ": missing required '" + key.get<std::string>() + "'");
      }
    }
    const auto props = schema.value("properties", nlohmann::json::object());
    for (const auto& [key, value] : v.items()) {
      if (props.contains(key)) {
        check(root, props[key], value, path + "." + key, errors);
      } else if (schema.contains("additionalProperties") &&
                 schema["additionalProperties"].is_boolean() &&
                 !schema["additionalProperties"].get<bool>()) {
        errors.push_back(path + ": unexpected property '" + key + "'");
      }
    }
  }
  if (v.is_array() && schema.contains("items")) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      check(root, schema["items"], v[i], path + "[" + std::to_string(i) + "]", errors);
    }
  }
}

}  // namespace

std::vector<std::string> validate(const nlohmann::json& schema, const nlohmann::json& value) {
  std::vector<std::string> errors;
  check(schema, schema, value, "$", errors);
  return errors;
}

nlohmann::json published_schema(const std::string& file) {
  return nlohmann::json::parse(
      slurp(std::filesystem::path(ACCO_TESTING_SOURCE_DIR) / "docs/schemas" / file));
}

void expect_conforms(const std::string& text, const std::string& file) {
  const auto errors = validate(published_schema(file), nlohmann::json::parse(text));
  EXPECT_TRUE(errors.empty()) << file << ": " << ::testing::PrintToString(errors);
}

}  // namespace acco::testing
