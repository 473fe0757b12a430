// `acco rules`: every rule a finding can name (topo::rules()), with its severities and title.
#include <algorithm>
#include <memory>
#include <string>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/topo/checks.hpp"

#include "command_spec.hpp"
#include "commands.hpp"

namespace acco::cli {
namespace {

// "warning", or "info..critical" for a rule whose findings range over severities.
std::string severity_range(const topo::RuleInfo& r) {
  return r.lowest == r.highest
             ? std::string(topo::to_string(r.lowest))
             : fmt::format("{}..{}", topo::to_string(r.lowest), topo::to_string(r.highest));
}

class RulesCommand final : public Command {
 public:
  Result<Output> run(const Invocation& inv) const override {
    Output out;
    if (inv.format == Format::kJson) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& r : topo::rules()) {
        j.push_back({{"rule", r.id},
                     {"title", r.title},
                     {"lowest", topo::to_string(r.lowest)},
                     {"highest", topo::to_string(r.highest)}});
      }
      out.out = j.dump(2) + "\n";
      return out;
    }
    std::size_t width = 0;
    for (const auto& r : topo::rules()) {
      width = std::max(width, r.id.size());
    }
    for (const auto& r : topo::rules()) {
      out.out += fmt::format("{:<{}} {:<17} {}\n", r.id, width, severity_range(r), r.title);
    }
    return out;
  }
};

}  // namespace

CommandSpec rules_command() {
  return {"rules", "list the rules findings can name, with their severities",
          [](CLI::App& sub, SharedFlags& shared) -> FinishParse {
            add_json_flag(sub, shared, "print JSON");
            return [](const core::Settings&) -> Result<std::unique_ptr<Command>> {
              return std::make_unique<RulesCommand>();
            };
          }};
}

}  // namespace acco::cli
