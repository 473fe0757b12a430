#include "acco/tune/profile_report.hpp"

#include <filesystem>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "acco/bench/machine_summary.hpp"
#include "acco/core/file.hpp"
#include "acco/core/units.hpp"
#include "acco/device/device.hpp"
#include "acco/io/reader.hpp"
#include "acco/report/table.hpp"
#include "acco/transfer/profile.hpp"
#include "acco/tune/search.hpp"

namespace acco::tune {
namespace {

std::string threads_cell(int threads) {
  return threads == 0 ? std::string("auto") : std::to_string(threads);
}

std::string choice_cell(bool tuned, bool confirmed) {
  return tuned ? "tuned" : confirmed ? "defaults" : "defaults (unconfirmed)";
}

// "+5.0% (noise 2.0%)", or "-" without a confirmation.
std::string gain_cell(double default_rate, double winner_rate, double gain, double noise) {
  return default_rate > 0 && winner_rate > 0
             ? fmt::format("{:+.1f}% (noise {:.1f}%)", 100 * gain, 100 * noise)
             : "-";
}

std::string rate_cell(double rate) {
  return rate > 0 ? units::format_rate(rate) : "-";
}

// The reader's row, in a table of its own: its settings are not the engine's.
void add_reader(report::Document& doc, const ReaderTuning& r) {
  const io::ReaderOptions d;
  const auto& c = r.options;
  const double dr = median_rate(r.default_bytes_per_second);
  const double wr = median_rate(r.winner_bytes_per_second);
  doc.add(report::Note{fmt::format("storage reader on {} (reads of {} into pinned staging):",
                                   r.file, units::format_bytes(r.bytes))});
  const std::vector<std::vector<std::string>> rows = {
      {"reader", "choice", "block", "depth", "threads", "defaults", "tuned", "gain"},
      {"read_discard", choice_cell(r.tuned, r.confirmed),
       fmt::format("{} ({})", units::format_bytes(c.block_bytes),
                   units::format_bytes(d.block_bytes)),
       fmt::format("{} ({})", c.depth, d.depth), fmt::format("{} ({})", c.threads, d.threads),
       rate_cell(dr), rate_cell(wr), gain_cell(dr, wr, r.gain, r.noise)}};
  doc.add(report::plain_table(rows, report::TableStyle::layout(2, 1)));
}

// The engine's defaults on the profile's backend (transfer::default_profile): what the search
// started from and what "(default)" shows.
transfer::Profile engine_defaults(const TuneProfile& p) {
  device::DeviceInfo info;
  info.backend = p.backend;
  return transfer::default_profile(info);
}

}  // namespace

report::Document profile_report(const TuneProfile& p, const std::string& path) {
  const transfer::Profile d = engine_defaults(p);
  report::Document doc;
  doc.add(report::Heading{fmt::format("Tune profile {}", path)});
  doc.add(report::Note{fmt::format(
      "machine {}, created {}, backend {}{}, copies of {}, budget {:g} s{}", p.fingerprint,
      p.created, p.backend, p.link.empty() ? "" : fmt::format(" (emulated link {})", p.link),
      units::format_bytes(p.bytes), p.budget_seconds,
      p.budget_exhausted ? " (spent before the search finished)" : "")});
  std::vector<std::vector<std::string>> rows = {{"device", "path", "choice", "staged", "chunk",
                                                 "slots", "queues", "threads", "defaults", "tuned",
                                                 "gain", "fit (alpha + bytes / beta)"}};
  for (const auto& t : p.paths) {
    const auto& c = t.profile;
    const double dr = median_rate(t.default_bytes_per_second);
    const double wr = median_rate(t.winner_bytes_per_second);
    const auto yes_no = [](bool b) { return b ? "yes" : "no"; };
    rows.push_back({t.device, t.path, choice_cell(t.tuned, t.confirmed),
                    fmt::format("{} ({})", yes_no(c.stage_pageable), yes_no(d.stage_pageable)),
                    fmt::format("{} ({})", units::format_bytes(c.chunk_bytes),
                                units::format_bytes(d.chunk_bytes)),
                    fmt::format("{} ({})", c.slots, d.slots),
                    fmt::format("{} ({})", c.queues, d.queues),
                    fmt::format("{} ({})", threads_cell(c.host_copy_threads),
                                threads_cell(d.host_copy_threads)),
                    rate_cell(dr), rate_cell(wr), gain_cell(dr, wr, t.gain, t.noise),
                    t.fit ? fmt::format("{:.1f} us + bytes / {}", t.fit->alpha_seconds * 1e6,
                                        units::format_rate(t.fit->beta_bytes_per_second))
                          : "-"});
  }
  doc.add(report::plain_table(rows, report::TableStyle::layout(2, 1)));
  if (p.reader) {
    add_reader(doc, *p.reader);
  }
  for (const FusionTuning& f : p.fusion) {
    doc.add(report::Note{fmt::format(
        "fusion of small allreduces, {} links: threshold {} ({:.1f} us + bytes / {}, {} ranks, {})",
        f.link_class, units::format_bytes(f.threshold_bytes), f.alpha_seconds * 1e6,
        units::format_rate(f.beta_bytes_per_second), f.ranks, f.measured)});
  }
  doc.add(report::Note{
      "chosen (default); staged: pageable memory through acco's pinned staging (no: the device's "
      "own copy, the plain path); the defaults and tuned columns are medians of the interleaved "
      "confirmation"});
  return doc;
}

nlohmann::json profile_with_defaults_json(const TuneProfile& profile, const std::string& path) {
  auto j = to_json(profile);
  j["path"] = path;
  j["defaults"] = transfer::to_json(engine_defaults(profile));
  if (profile.reader) {
    const io::ReaderOptions d;
    j["reader_defaults"] = {
        {"block_bytes", d.block_bytes}, {"depth", d.depth}, {"threads", d.threads}};
  }
  return j;
}

Result<std::string> machine_profile_path(const topo::Machine* machine, std::string_view directory) {
  if (machine == nullptr) {
    return fail(Errc::kUnavailable,
                "no machine fingerprint (the topology is unavailable); name a file with --output");
  }
  ACCO_ASSIGN_OR_RETURN(const auto dir, tune_directory_or(directory));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return fail(Errc::kCannotWrite,
                fmt::format("{}: cannot create the tune directory: {}", dir, ec.message()));
  }
  return profile_path(dir, bench::machine_fingerprint(*machine));
}

Result<std::optional<TuneProfile>> profile_to_replace(const std::string& path) {
  if (auto file = core::check_file_or_absent(path); !file) {  // a directory, a pipe
    Error e = std::move(file).error();
    e.code = Errc::kCannotWrite;
    return tl::unexpected(std::move(e));
  }
  if (std::error_code ec; !std::filesystem::exists(path, ec)) {
    return std::nullopt;
  }
  auto loaded = load_tune_profile(path);
  if (!loaded) {
    Error e = std::move(loaded).error();
    e.message += "; left as it is (remove it, or give --output another file)";
    return tl::unexpected(std::move(e));
  }
  return std::optional<TuneProfile>(std::move(*loaded));
}

Result<std::string> chosen_profile_path(const std::string& output, const topo::Machine* machine,
                                        std::string_view directory) {
  if (!output.empty()) {
    return output;
  }
  return machine_profile_path(machine, directory);
}

Result<TuneProfile> load_saved_tune_profile(const std::string& path, bool named) {
  auto profile = load_tune_profile(path);
  if (!profile && profile.error().code == Errc::kNotFound && !named) {
    return fail(Errc::kNotFound,
                fmt::format("no tune profile for this machine ({}); run acco tune", path));
  }
  return profile;
}

Result<SavedTuneProfile> saved_profile_to_show(const std::string& output,
                                               const topo::Machine* machine,
                                               std::string_view directory) {
  SavedTuneProfile saved;
  ACCO_ASSIGN_OR_RETURN(saved.path, chosen_profile_path(output, machine, directory));
  ACCO_ASSIGN_OR_RETURN(saved.profile, load_saved_tune_profile(saved.path, !output.empty()));
  return saved;
}

nlohmann::json to_json(const SavedTuneProfile& saved) {
  return profile_with_defaults_json(saved.profile, saved.path);
}

report::Document saved_profile_report(const SavedTuneProfile& saved) {
  return profile_report(saved.profile, saved.path);
}

Result<ProfileTarget> profile_target(const std::string& output, const topo::Machine* machine,
                                     std::string_view directory) {
  ProfileTarget target;
  ACCO_ASSIGN_OR_RETURN(target.path, chosen_profile_path(output, machine, directory));
  ACCO_ASSIGN_OR_RETURN(target.previous, profile_to_replace(target.path));
  return target;
}

}  // namespace acco::tune
