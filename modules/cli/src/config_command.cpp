// `acco config`: every setting, its value and who set it (default, file, environment or flag).
#include <memory>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "command_spec.hpp"
#include "commands.hpp"

namespace acco::cli {
namespace {

class ConfigCommand final : public Command {
 public:
  Result<Output> run(const Invocation& inv) const override {
    Output out;
    if (inv.format == Format::kJson) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& s : inv.settings.all()) {
        j.push_back({{"key", s.key},
                     {"value", s.value},
                     {"default", s.default_value},
                     {"set_by", std::string(core::to_string(s.set_by))},
                     {"env", core::env_name(s.key)},
                     {"description", s.description}});
      }
      out.out = j.dump(2) + "\n";
      return out;
    }
    const auto shown = [](const std::string& v) { return v.empty() ? std::string("(empty)") : v; };
    for (const auto& s : inv.settings.all()) {
      out.out += fmt::format("{} = {}  (set by {}; default {}; env {})\n    {}\n", s.key,
                             shown(s.value), core::to_string(s.set_by), shown(s.default_value),
                             core::env_name(s.key), s.description);
    }
    return out;
  }
};

}  // namespace

CommandSpec config_command() {
  return {"config", "print every setting, its value and who set it",
          [](CLI::App& sub, SharedFlags& shared) -> FinishParse {
            add_config_flag(sub, shared);
            add_json_flag(sub, shared, "print JSON");
            return [](const core::Settings&) -> Result<std::unique_ptr<Command>> {
              return std::make_unique<ConfigCommand>();
            };
          }};
}

}  // namespace acco::cli
