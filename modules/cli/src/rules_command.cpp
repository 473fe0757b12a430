// `acco rules`: the rules the checks can report, with their titles.
#include <memory>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/topo/checks.hpp"

#include "command_spec.hpp"
#include "commands.hpp"

namespace acco::cli {
namespace {

class RulesCommand final : public Command {
 public:
  Output run(const Invocation& inv) const override {
    Output out;
    if (inv.format == Format::kJson) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& r : topo::rules()) {
        j.push_back({{"rule", r.id}, {"title", r.title}});
      }
      out.out = j.dump(2) + "\n";
      return out;
    }
    for (const auto& r : topo::rules()) {
      out.out += fmt::format("{:<28} {}\n", r.id, r.title);
    }
    return out;
  }
};

}  // namespace

CommandSpec rules_command() {
  return {"rules", "list the rules checks can report",
          [](CLI::App& sub, SharedFlags& shared) -> FinishParse {
            add_json_flag(sub, shared, "print JSON");
            return [](const core::Settings&) -> Result<std::unique_ptr<Command>> {
              return std::make_unique<RulesCommand>();
            };
          }};
}

}  // namespace acco::cli
