#include <string>
#include <vector>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/exec/binding.hpp"

namespace acco::exec {
namespace {

using Json = nlohmann::ordered_json;

// null for what is not known: an empty text, a negative number.
Json or_null(const std::string& text) {
  return text.empty() ? Json() : Json(text);
}
Json or_null(int value) {
  return value < 0 ? Json() : Json(value);
}

}  // namespace

nlohmann::ordered_json to_json(const Binding& binding) {
  nlohmann::ordered_json out;
  out["schema"] = "acco.exec-binding/1";
  const Accelerator& d = binding.device;
  out["device"] = {{"index", d.index},
                   {"pci", d.address},
                   {"uuid", or_null(d.uuid)},
                   {"name", d.name},
                   {"numa_node", or_null(d.numa_node)}};
  out["device_cpus"] = units::format_cpulist(binding.device_cpus);
  out["inherited_cpus"] = units::format_cpulist(binding.inherited_cpus);
  out["cpus"] = or_null(units::format_cpulist(binding.cpus));
  out["memory_node"] = or_null(binding.memory_node);
  out["nic"] = or_null(binding.nic);
  out["env"] = nlohmann::ordered_json::array();
  for (const EnvVar& var : binding.env) {
    out["env"].push_back({{"name", var.name}, {"value", var.value}, {"reason", var.reason}});
  }
  out["notes"] = binding.notes;
  return out;
}

report::Document binding_report(const Binding& binding) {
  const Accelerator& d = binding.device;
  report::Document doc;
  doc.add(report::Heading{fmt::format("acco exec: GPU{} {} ({})", d.index, d.address, d.name)});
  report::Fields where;
  where.fields = {
      {"NUMA node", d.numa_node < 0 ? "unknown" : std::to_string(d.numa_node)},
      {"device CPUs",
       binding.device_cpus.empty() ? "unknown" : units::format_cpulist(binding.device_cpus)},
      {"inherited CPUs", units::format_cpulist(binding.inherited_cpus)},
      {"CPUs bound", binding.cpus.empty() ? "as inherited" : units::format_cpulist(binding.cpus)},
      {"memory bound to",
       binding.memory_node < 0 ? "as inherited" : fmt::format("node {}", binding.memory_node)},
  };
  doc.add(std::move(where));
  report::Fields env;
  for (const EnvVar& var : binding.env) {
    env.fields.emplace_back(var.name, fmt::format("{}  ({})", var.value, var.reason));
  }
  if (!env.fields.empty()) {
    doc.add(report::Heading{"Environment"});
    doc.add(std::move(env));
  }
  // One block for every note (one line each, indented as a Note is).
  report::Preformatted notes;
  for (const std::string& note : binding.notes) {
    notes.text += (notes.text.empty() ? "  " : "\n  ") + note;
  }
  if (!notes.text.empty()) {
    doc.add(std::move(notes));
  }
  return doc;
}

}  // namespace acco::exec
