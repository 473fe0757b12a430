// `acco probe`: discover the machine's links (live, a sysroot or a snapshot) and report what is
// wrong; optionally record everything read into a snapshot for --from.
#include <memory>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/topo/json.hpp"
#include "acco/topo/probe.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "machine_flags.hpp"
#include "text_report.hpp"

namespace acco::cli {
namespace {

class ProbeCommand final : public Command {
 public:
  explicit ProbeCommand(MachineOptions machine) : machine_(std::move(machine)) {}

  Output run(const Invocation& inv) const override {
    auto result = topo::probe(probe_request(machine_, inv.settings));
    if (!result) {
      return error_output(result.error());
    }
    if (!machine_.snapshot.empty()) {
      if (!result->snapshot) {  // capture_snapshot was asked for: a bug if nothing came back
        return error_output(Error{Errc::kInternal, "snapshot: the probe recorded nothing"});
      }
      if (auto written = topo::write_snapshot(machine_.snapshot, *result->snapshot); !written) {
        return error_output(as_cannot_write(std::move(written.error())));
      }
    }
    Output out;
    out.out = inv.format == Format::kJson
                  ? topo::probe_json(result->machine, result->findings).dump(2) + "\n"
                  : probe_text(result->machine, result->findings);
    if (!machine_.snapshot.empty()) {
      out.err = fmt::format("acco: snapshot written to {}\n", machine_.snapshot);
    }
    out.exit_code = findings_exit(machine_, result->findings);
    return out;
  }

 private:
  MachineOptions machine_;
};

}  // namespace

CommandSpec probe_command() {
  return command_with_flags<MachineFlags>(
      "probe", "discover the machine's links and report what is wrong",
      [](CLI::App& sub, SharedFlags& shared, MachineFlags& flags) {
        add_machine_flags(sub, shared, flags, true);
      },
      [](const MachineFlags& flags, const core::Settings& settings) {
        return command_from<ProbeCommand>(machine_options(flags, settings));
      });
}

}  // namespace acco::cli
