// `acco doctor`, the main job: the probe's report, a quick measurement of the data paths on the
// live machine, and what to fix first.
#include <memory>
#include <optional>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/bench/report.hpp"
#include "acco/bench/run_setup.hpp"
#include "acco/report/document.hpp"
#include "acco/topo/json.hpp"
#include "acco/topo/probe.hpp"
#include "acco/topo/probe_report.hpp"
#include "acco/tune/saved_profile.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "machine_flags.hpp"

namespace acco::cli {
namespace {

// Info when acco tune has no profile for this machine: the engine then runs on its defaults.
// The fingerprint is the profile's key, so a profile for another fingerprint in the directory
// means the machine changed (a GPU added, moved or replaced) since the last tune.
std::optional<topo::Finding> tune_finding(const topo::Machine& machine) {
  auto state = tune::saved_profile_state(machine);
  if (!state || state->exists) {
    return std::nullopt;
  }
  topo::Finding f;
  f.rule = "tune-profile-missing";
  f.severity = topo::Severity::kInfo;
  f.message = state->others ? fmt::format(
                                  "no tune profile for this machine ({}): the machine changed "
                                  "since the last tune, so the transfer engine uses its defaults",
                                  state->path)
                            : fmt::format(
                                  "no tune profile for this machine ({}): the transfer engine "
                                  "uses its defaults",
                                  state->path);
  f.recommendation = "run acco tune (about a minute; --budget bounds it)";
  return f;
}

class DoctorCommand final : public Command {
 public:
  DoctorCommand(MachineOptions machine, bool skip_bench)
      : machine_(std::move(machine)), skip_bench_(skip_bench) {}

  Result<Output> run(const Invocation& inv) const override {
    auto result = topo::probe(probe_request(machine_, inv.settings));
    if (!result) {
      return tl::unexpected(result.error());
    }
    // The doctor measures only the machine it runs on: a sysroot or a snapshot is someone else's.
    std::optional<bench::BenchRun> measured;
    std::string bench_note;
    if (skip_bench_) {
      bench_note = "skipped (--no-bench)";
    } else if (!machine_.from.empty() || !machine_.hwloc_xml.empty() ||
               inv.settings.get("sysroot") != "/") {
      bench_note = "skipped (not the live machine)";
    } else if (auto quick = bench::quick_bench(
                   result->machine, tune::saved_engine_profiles(result->machine), inv.progress);
               quick) {
      measured = std::move(quick->run);
      bench_note = std::move(quick->note);
    } else {
      bench_note = "failed: " + quick.error().message;
    }
    const bool live =
        machine_.from.empty() && machine_.hwloc_xml.empty() && inv.settings.get("sysroot") == "/";
    if (live) {
      if (auto f = tune_finding(result->machine)) {
        result->findings.push_back(std::move(*f));
      }
    }
    Output out;
    if (inv.format == Format::kJson) {
      auto j = topo::probe_json(result->machine, result->findings);
      if (live) {
        j["cuda_driver"] = cuda_driver_json();
      }
      j["quick_bench"] = {{"note", bench_note},
                          {"results", measured ? bench::to_json(*measured)["results"]
                                               : nlohmann::ordered_json::array()}};
      nlohmann::ordered_json first = nlohmann::ordered_json::array();
      for (const auto& s : topo::fix_first(result->findings)) {
        if (first.size() < topo::kFixFirst) {
          first.push_back(s.rule);
        }
      }
      j["fix_first"] = first;
      out.out = j.dump(2) + "\n";
    } else {
      auto doc = topo::probe_report(result->machine, result->findings,
                                    live ? cuda_driver_text() : std::string());
      doc.add(report::Heading{fmt::format("Measured paths (quick bench): {}", bench_note)});
      if (measured) {
        doc.add(report::Preformatted{bench::text_table(measured->results)});
      }
      topo::add_doctor_summary(doc, result->findings);
      out.out = report::render_text(doc);
    }
    out.exit_code = findings_exit(machine_, result->findings);
    return out;
  }

 private:
  MachineOptions machine_;
  bool skip_bench_ = false;
};

struct DoctorFlags {
  MachineFlags machine;
  bool no_bench = false;
};

}  // namespace

CommandSpec doctor_command() {
  return command_with_flags<DoctorFlags>(
      "doctor", "assess this machine and say what to fix first (the main job)",
      [](CLI::App& sub, SharedFlags& shared, DoctorFlags& flags) {
        add_machine_flags(sub, shared, flags.machine, false);
        sub.add_flag("--no-bench", flags.no_bench, "skip the quick measurement of the data paths");
      },
      [](const DoctorFlags& flags,
         const core::Settings& settings) -> Result<std::unique_ptr<Command>> {
        ACCO_ASSIGN_OR_RETURN(auto machine, machine_options(flags.machine, settings));
        return std::make_unique<DoctorCommand>(std::move(machine), flags.no_bench);
      });
}

}  // namespace acco::cli
