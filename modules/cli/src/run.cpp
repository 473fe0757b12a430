#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/bench/report.hpp"
#include "acco/cli/app.hpp"
#include "acco/topo/json.hpp"
#include "acco/topo/probe.hpp"

#include "bench_command.hpp"
#include "schedule_command.hpp"
#include "text_report.hpp"

namespace acco::cli {
namespace {

topo::ProbeRequest request_from(const Options& o) {
  topo::ProbeRequest r;
  r.sysroot = o.settings.get("sysroot");
  r.from_snapshot = o.from;
  r.write_snapshot = o.snapshot;
  r.nvml_library = o.settings.get("nvml-library");
  r.nvml_library_explicit = o.settings.find("nvml-library")->set_by != core::SetBy::kDefault;
  const auto nvml = o.settings.get("nvml");
  r.nvml = nvml == "on"    ? topo::NvmlMode::kOn
           : nvml == "off" ? topo::NvmlMode::kOff
                           : topo::NvmlMode::kAuto;
  return r;
}

int findings_exit(const Options& o, const std::vector<topo::Finding>& findings) {
  if (!o.fail_on) {
    return kExitOk;
  }
  const bool hit = std::any_of(findings.begin(), findings.end(),
                               [&](const topo::Finding& f) { return f.severity >= *o.fail_on; });
  return hit ? kExitFindings : kExitOk;
}

Outcome error_outcome(const Error& e) {
  return {"", fmt::format("acco: {}\n", e.message), exit_code_for(e)};
}

Outcome run_probe(const Options& o, bool doctor) {
  auto result = topo::probe(request_from(o));
  if (!result) {
    Outcome failed = error_outcome(result.error());
    if (!o.snapshot.empty() && result.error().message.rfind("snapshot: " + o.snapshot, 0) == 0) {
      failed.exit_code = kExitCantCreate;
    }
    return failed;
  }
  Outcome out;
  // The doctor measures only the machine it runs on: a sysroot or a snapshot is someone else's.
  std::optional<bench::BenchRun> measured;
  std::string bench_note;
  if (doctor) {
    if (o.bench.skip) {
      bench_note = "skipped (--no-bench)";
    } else if (!o.from.empty() || o.settings.get("sysroot") != "/") {
      bench_note = "skipped (not the live machine)";
    } else if (auto run = quick_bench(o, result->machine, bench_note); run) {
      measured = std::move(*run);
    } else {
      bench_note = "failed: " + run.error().message;
    }
  }
  if (o.format == Format::kJson) {
    auto j = topo::probe_json(result->machine, result->findings);
    if (doctor) {
      j["quick_bench"] = {{"note", bench_note},
                          {"results", measured ? bench::to_json(*measured)["results"]
                                               : nlohmann::ordered_json::array()}};
      nlohmann::ordered_json first = nlohmann::ordered_json::array();
      for (const auto& f : result->findings) {
        if (f.severity != topo::Severity::kInfo && first.size() < 3) {
          first.push_back(f.rule);
        }
      }
      j["fix_first"] = first;
    }
    out.out = j.dump(2) + "\n";
  } else {
    out.out = probe_text(result->machine, result->findings);
    if (doctor) {
      out.out += fmt::format("\nMeasured paths (quick bench): {}\n", bench_note);
      if (measured) {
        out.out += bench::text_table(measured->results);
      }
      out.out += doctor_summary_text(result->findings);
    }
  }
  if (!o.snapshot.empty()) {
    out.err = fmt::format("acco: snapshot written to {}\n", o.snapshot);
  }
  out.exit_code = findings_exit(o, result->findings);
  return out;
}

Outcome run_config(const Options& o) {
  Outcome out;
  if (o.format == Format::kJson) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& s : o.settings.all()) {
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
  for (const auto& s : o.settings.all()) {
    out.out += fmt::format("{} = {}  (set by {}; default {}; env {})\n    {}\n", s.key, s.value,
                           core::to_string(s.set_by), s.default_value, core::env_name(s.key),
                           s.description);
  }
  return out;
}

Outcome run_rules(const Options& o) {
  Outcome out;
  if (o.format == Format::kJson) {
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

}  // namespace

int exit_code_for(const Error& error) {
  switch (error.code) {
    case Errc::kInvalidArgument:
      return kExitDataError;
    case Errc::kNotFound:
      return kExitNoInput;
    case Errc::kUnavailable:
    case Errc::kUnsupported:
    case Errc::kDeviceError:
      return kExitUnavailable;
    case Errc::kInternal:
      return kExitInternal;
  }
  return kExitInternal;
}

Outcome run(const Options& options) {
  try {
    switch (options.command) {
      case Command::kProbe:
        return run_probe(options, false);
      case Command::kDoctor:
        return run_probe(options, true);
      case Command::kBench:
        return run_bench(options);
      case Command::kSchedule:
        return run_schedule(options);
      case Command::kConfig:
        return run_config(options);
      case Command::kRules:
        return run_rules(options);
      case Command::kVersion:
        return {fmt::format("acco {}\n", ACCO_VERSION), "", kExitOk};
      case Command::kHelp:
        return {options.help_text, "", kExitOk};
    }
  } catch (const std::exception& e) {
    return {"", fmt::format("acco: internal error: {}\n", e.what()), kExitInternal};
  }
  return {"", "acco: internal error: unknown command\n", kExitInternal};
}

Outcome main_outcome(const std::vector<std::string>& args, const Getenv& getenv,
                     const std::function<void(std::string_view)>& progress) {
  auto options = parse_args(args, getenv);
  if (options) {
    options->progress = progress;
  }
  if (!options) {
    const bool usage = options.error().message.rfind("--config", 0) != 0;
    return {"", fmt::format("acco: {}\n", options.error().message),
            usage ? kExitUsage : exit_code_for(options.error())};
  }
  return run(*options);
}

}  // namespace acco::cli
