#include "acco/core/settings.hpp"

#include <cctype>

#include <fmt/format.h>

#include "acco/core/json.hpp"
#include "acco/core/json_reader.hpp"

namespace acco::core {

std::string_view to_string(SetBy source) {
  switch (source) {
    case SetBy::kDefault:
      return "default";
    case SetBy::kFile:
      return "file";
    case SetBy::kEnv:
      return "env";
    case SetBy::kFlag:
      return "flag";
  }
  return "default";
}

std::string env_name(std::string_view key) {
  std::string name = "ACCO_";
  for (const char c : key) {
    name += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return name;
}

void Settings::define(std::string key, std::string default_value, std::string description) {
  Setting s{key, default_value, std::move(default_value), std::move(description), SetBy::kDefault};
  settings_.insert_or_assign(std::move(key), std::move(s));
}

Status Settings::set(std::string_view key, std::string value, SetBy source) {
  const auto it = settings_.find(key);
  if (it == settings_.end()) {
    return fail(Errc::kInvalidArgument, fmt::format("unknown setting '{}'", key));
  }
  // A lower-precedence source never overrides a higher one, whatever the call order.
  if (static_cast<int>(source) >= static_cast<int>(it->second.set_by)) {
    it->second.value = std::move(value);
    it->second.set_by = source;
  }
  return {};
}

Status Settings::load_file(const std::string& path) {
  ACCO_ASSIGN_OR_RETURN(const auto j, read_json_file(path), "config file");
  file_ = path;
  const std::string where = "config file " + path;
  JsonReader reader(j, "",
                    {.show_value = false,
                     .quote_keys = true,
                     .not_object = "expected a JSON object of setting: value"});
  // Each member is checked and set before the next is read, so the first bad one (in key order)
  // is reported, whether its value or its name is wrong.
  for (const auto& key : reader.keys()) {
    std::string text = reader.scalar_text(key);
    ACCO_RETURN_IF_ERROR(reader.status(), where);
    ACCO_RETURN_IF_ERROR(set(key, std::move(text), SetBy::kFile), where);
  }
  ACCO_RETURN_IF_ERROR(reader.status(), where);
  return {};
}

void Settings::load_env(const std::function<const char*(const char*)>& getenv) {
  for (auto& [key, setting] : settings_) {
    if (const char* value = getenv(env_name(key).c_str()); value != nullptr) {
      (void)set(key, value, SetBy::kEnv);
    }
  }
}

std::string Settings::get(std::string_view key) const {
  const auto* s = find(key);
  ACCO_CHECK(s != nullptr);
  return s->value;
}

const Setting* Settings::find(std::string_view key) const {
  const auto it = settings_.find(key);
  return it == settings_.end() ? nullptr : &it->second;
}

std::vector<Setting> Settings::all() const {
  std::vector<Setting> out;
  out.reserve(settings_.size());
  for (const auto& [key, s] : settings_) {
    out.push_back(s);
  }
  return out;
}

}  // namespace acco::core
