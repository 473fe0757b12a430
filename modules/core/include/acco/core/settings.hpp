// The settings registry: every tunable has a key, a default and a description, and records who
// set it. Precedence, lowest first: default < config file (JSON) < ACCO_* environment < flag.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acco/core/result.hpp"

namespace acco::core {

enum class SetBy {
  kDefault,
  kFile,
  kEnv,
  kFlag
};
[[nodiscard]] std::string_view to_string(SetBy source);

struct Setting {
  std::string key;  // kebab-case, as the flag: "sysroot", "nvml-library"
  std::string value;
  std::string default_value;
  std::string description;
  SetBy set_by = SetBy::kDefault;
  bool operator==(const Setting&) const = default;
};

// "nvml-library" -> "ACCO_NVML_LIBRARY".
[[nodiscard]] std::string env_name(std::string_view key);

// Not thread-safe: fill it at start-up, then read it.
class Settings {
 public:
  void define(std::string key, std::string default_value, std::string description);
  // A JSON object of key -> string/number/bool. Unknown keys are an error (kInvalidArgument).
  [[nodiscard]] Status load_file(const std::string& path);
  // Reads ACCO_<KEY> for every defined key through `getenv` (std::getenv by default).
  void load_env(const std::function<const char*(const char*)>& getenv);
  [[nodiscard]] Status set(std::string_view key, std::string value, SetBy source);
  [[nodiscard]] std::string get(std::string_view key) const;  // aborts on an undefined key
  [[nodiscard]] const Setting* find(std::string_view key) const;
  [[nodiscard]] std::vector<Setting> all() const;
  // The config file load_file read (the settings set by kFile came from it); empty for none.
  [[nodiscard]] const std::string& file() const { return file_; }

 private:
  std::map<std::string, Setting, std::less<>> settings_;
  std::string file_;
};

}  // namespace acco::core
