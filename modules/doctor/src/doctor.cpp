#include "acco/doctor/doctor.hpp"

#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/bench/report.hpp"
#include "acco/bench/run_setup.hpp"
#include "acco/topo/json.hpp"
#include "acco/topo/probe_report.hpp"
#include "acco/tune/saved_profile.hpp"

namespace acco::doctor {

std::optional<topo::Finding> tune_profile_finding(const topo::Machine& machine,
                                                  std::string_view tune_dir) {
  // The fingerprint is the profile's key, so a profile for another fingerprint in the directory
  // means the machine changed (a GPU added, moved or replaced) since the last tune.
  auto state = tune::saved_profile_state(machine, tune_dir);
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

Result<Report> run(Options options) {
  try_direct_io(options.probe);
  ACCO_ASSIGN_OR_RETURN(auto probed, topo::probe(options.probe));
  Report r;
  r.machine = std::move(probed.machine);
  r.findings = std::move(probed.findings);
  r.live = is_live(options.probe);
  if (options.skip_bench) {
    r.bench_note = fmt::format("skipped ({})", *options.skip_bench);
  } else if (!r.live) {
    r.bench_note = "skipped (not the live machine)";
  } else if (auto quick = bench::quick_bench(
                 r.machine, tune::saved_engine_profiles(r.machine, options.tune_dir),
                 options.progress);
             quick) {
    r.measured = std::move(quick->run);
    r.bench_note = std::move(quick->note);
  } else {
    r.bench_note = "failed: " + quick.error().message;
  }
  if (r.live) {
    if (auto f = tune_profile_finding(r.machine, options.tune_dir)) {
      r.findings.push_back(std::move(*f));
    }
    r.cuda = read_cuda_driver();
  }
  return r;
}

std::string summary_line(const std::vector<topo::Finding>& findings) {
  const auto summary = topo::fix_first(findings);
  if (summary.empty()) {
    return "Nothing to fix: no warning or critical finding.";
  }
  std::size_t problems = 0;
  std::vector<std::string> rules;
  for (const auto& s : summary) {
    problems += s.findings.size();
    if (rules.size() < topo::kFixFirst) {
      rules.push_back(s.rule);
    }
  }
  return fmt::format("{} problem(s) to fix, from {} rule(s); start with {}", problems,
                     summary.size(), fmt::join(rules, ", "));
}

nlohmann::ordered_json to_json(const Report& r) {
  auto j = topo::probe_json(r.machine, r.findings);
  if (r.cuda) {
    j["cuda_driver"] = to_json(*r.cuda);
  }
  j["quick_bench"] = {{"note", r.bench_note},
                      {"results", r.measured ? bench::to_json(*r.measured)["results"]
                                             : nlohmann::ordered_json::array()}};
  nlohmann::ordered_json first = nlohmann::ordered_json::array();
  for (const auto& s : topo::fix_first(r.findings)) {
    if (first.size() < topo::kFixFirst) {
      first.push_back(s.rule);
    }
  }
  j["fix_first"] = first;
  j["summary"] = summary_line(r.findings);
  return j;
}

report::Document doctor_report(const Report& r) {
  auto doc =
      topo::probe_report(r.machine, r.findings, r.cuda ? cuda_driver_text(*r.cuda) : std::string());
  doc.add(report::Heading{fmt::format("Measured paths (quick bench): {}", r.bench_note)});
  if (r.measured) {
    doc.add(bench::results_table(r.measured->results));
  }
  topo::add_doctor_summary(doc, r.findings);
  return doc;
}

}  // namespace acco::doctor
