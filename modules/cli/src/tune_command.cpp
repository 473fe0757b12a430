// `acco tune`: sweep the transfer engine's settings per device and copy path (and, with --file,
// the storage reader's on that file) within a budget, confirm the winner against the defaults
// and save the profile for this machine, which bench and doctor then load; `--show` prints the
// saved one beside the defaults.
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/bench/machine_summary.hpp"
#include "acco/core/file.hpp"
#include "acco/core/stats.hpp"
#include "acco/core/units.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/report/table.hpp"
#include "acco/tune/tune_run.hpp"

#include "bench_command.hpp"
#include "command_spec.hpp"
#include "commands.hpp"
#include "process.hpp"

namespace acco::cli {
namespace {

// 128 + SIGINT, what a shell reports for a program stopped by Ctrl-C.
constexpr int kExitInterrupted = 130;

struct TuneFlags {
  std::string backend = "auto";
  int devices = 1;
  std::string link{kDefaultLink};
  std::string budget = "60s";
  std::string bytes = "64MiB";
  std::string output;
  std::string file;
  bool show = false;
};

struct TuneOptions {
  tune::TuneOptions run;
  std::string output;  // empty = the default path for this machine
  bool show = false;
};

void add_tune_flags(CLI::App& sub, SharedFlags& shared, TuneFlags& f) {
  offer_values(sub.add_option("--backend", f.backend,
                              "auto (CUDA when a GPU is usable, else host), host, cuda")
                   ->type_name("NAME"),
               backend_names());
  sub.add_option("--devices", f.devices, "host backend: number of emulated devices")
      ->type_name("N");
  sub.add_option("--link", f.link,
                 "host backend: emulated link, e.g. pcie4x16 (default), 25GB/s,2us, unlimited")
      ->type_name("SPEC");
  sub.add_option("--budget", f.budget, "time for the whole run, e.g. 60s (default), 5m")
      ->type_name("DURATION");
  sub.add_option("--bytes", f.bytes, "copy size of the search (default 64MiB)")->type_name("SIZE");
  sub.add_option("--output", f.output,
                 "profile file (default $XDG_STATE_HOME/acco/tune/<fingerprint>.json)")
      ->type_name("FILE");
  sub.add_option("--file", f.file,
                 "also tune the storage reader (block size, depth, threads) on this file, read "
                 "up to --bytes per measurement")
      ->type_name("PATH");
  sub.add_flag("--show", f.show, "print the saved profile beside the defaults and exit");
  add_json_flag(sub, shared, "print JSON (schema acco.tune-profile/1)");
  add_setting_flag(sub, shared, "sysroot", "topology from DIR/sys (for the fingerprint)", "DIR");
  add_config_flag(sub, shared);
}

Result<TuneOptions> tune_options(const TuneFlags& f) {
  TuneOptions o;
  o.output = f.output;
  o.show = f.show;
  if (f.show) {
    return o;
  }
  if (f.devices < 1 || f.devices > 64) {
    return usage(fmt::format("--devices: {} is not between 1 and 64", f.devices));
  }
  auto link = device::parse_link(f.link);
  if (!link) {
    return tl::unexpected(as_usage(std::move(link.error()).with_context("--link")));
  }
  o.run.host.devices = f.devices;
  o.run.host.link = *link;
  auto budget = units::parse_duration(f.budget);
  if (!budget || *budget < 1 || *budget > 24 * 3600) {
    return bad_value("--budget", f.budget, "a duration from 1s to 24h");
  }
  o.run.search.budget =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(*budget));
  auto bytes = units::parse_bytes(f.bytes);
  if (!bytes || *bytes < (std::uint64_t{1} << 20) || *bytes > (std::uint64_t{4} << 30)) {
    return bad_value("--bytes", f.bytes, "a size from 1MiB to 4GiB");
  }
  o.run.search.bytes = *bytes;
  o.run.search.fit_bytes.clear();
  for (std::uint64_t b = *bytes; b >= (std::uint64_t{1} << 20) && o.run.search.fit_bytes.size() < 4;
       b /= 4) {
    o.run.search.fit_bytes.insert(o.run.search.fit_bytes.begin(), b);
  }
  if (!f.file.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(f.file, ec)) {
      return usage(fmt::format("--file: '{}' is not a regular file", f.file));
    }
    if (const auto size = std::filesystem::file_size(f.file, ec); ec || size < 4096) {
      return usage(fmt::format("--file: '{}' is smaller than 4 KiB", f.file));
    }
    o.run.reader_file = f.file;
  }
  ACCO_ASSIGN_OR_RETURN(o.run.backend, parse_backend(f.backend));
  return o;
}

std::string threads_text(int threads) {
  return threads == 0 ? std::string("auto") : std::to_string(threads);
}

// The median of a series of rates (core::stats, as the search's gain), 0 for none.
double median_rate(const std::vector<double>& v) {
  return v.empty() ? 0 : core::stats::median(v);
}

std::string choice_text(bool tuned, bool confirmed) {
  return tuned ? "tuned" : confirmed ? "defaults" : "defaults (unconfirmed)";
}

// "+5.0% (noise 2.0%)", or "-" without a confirmation.
std::string gain_text(double default_rate, double winner_rate, double gain, double noise) {
  return default_rate > 0 && winner_rate > 0
             ? fmt::format("{:+.1f}% (noise {:.1f}%)", 100 * gain, 100 * noise)
             : "-";
}

std::string rate_text(double rate) {
  return rate > 0 ? units::format_rate(rate) : "-";
}

// The reader's row, in a table of its own: its settings are not the engine's.
std::string reader_text(const tune::ReaderTuning& r) {
  const io::ReaderOptions d;
  const auto& c = r.options;
  const double dr = median_rate(r.default_bytes_per_second);
  const double wr = median_rate(r.winner_bytes_per_second);
  std::string out = fmt::format("  storage reader on {} (reads of {} into pinned staging):\n",
                                r.file, units::format_bytes(r.bytes));
  const std::vector<std::vector<std::string>> rows = {
      {"reader", "choice", "block", "depth", "threads", "defaults", "tuned", "gain"},
      {"read_discard", choice_text(r.tuned, r.confirmed),
       fmt::format("{} ({})", units::format_bytes(c.block_bytes),
                   units::format_bytes(d.block_bytes)),
       fmt::format("{} ({})", c.depth, d.depth), fmt::format("{} ({})", c.threads, d.threads),
       rate_text(dr), rate_text(wr), gain_text(dr, wr, r.gain, r.noise)}};
  return out + report::render_table(report::plain_table(rows, report::TableStyle::layout(2, 1)));
}

// The engine's defaults on the profile's backend (transfer::default_profile): what the search
// started from and what "(default)" shows.
transfer::Profile engine_defaults(const tune::TuneProfile& p) {
  device::DeviceInfo info;
  info.backend = p.backend;
  return transfer::default_profile(info);
}

// The profile beside the defaults: one row per path, each setting as "chosen (default)".
std::string profile_text(const tune::TuneProfile& p, const std::string& path) {
  const transfer::Profile d = engine_defaults(p);
  std::string out = fmt::format("Tune profile {}\n", path);
  out += fmt::format("  machine {}, created {}, backend {}{}, copies of {}, budget {:g} s{}\n",
                     p.fingerprint, p.created, p.backend,
                     p.link.empty() ? "" : fmt::format(" (emulated link {})", p.link),
                     units::format_bytes(p.bytes), p.budget_seconds,
                     p.budget_exhausted ? " (spent before the search finished)" : "");
  std::vector<std::vector<std::string>> rows = {{"device", "path", "choice", "staged", "chunk",
                                                 "slots", "queues", "threads", "defaults", "tuned",
                                                 "gain", "fit (alpha + bytes / beta)"}};
  for (const auto& t : p.paths) {
    const auto& c = t.profile;
    const std::string choice = choice_text(t.tuned, t.confirmed);
    const double dr = median_rate(t.default_bytes_per_second);
    const double wr = median_rate(t.winner_bytes_per_second);
    const auto yes_no = [](bool b) { return b ? "yes" : "no"; };
    rows.push_back({t.device, t.path, choice,
                    fmt::format("{} ({})", yes_no(c.stage_pageable), yes_no(d.stage_pageable)),
                    fmt::format("{} ({})", units::format_bytes(c.chunk_bytes),
                                units::format_bytes(d.chunk_bytes)),
                    fmt::format("{} ({})", c.slots, d.slots),
                    fmt::format("{} ({})", c.queues, d.queues),
                    fmt::format("{} ({})", threads_text(c.host_copy_threads),
                                threads_text(d.host_copy_threads)),
                    rate_text(dr), rate_text(wr), gain_text(dr, wr, t.gain, t.noise),
                    t.fit ? fmt::format("{:.1f} us + bytes / {}", t.fit->alpha_seconds * 1e6,
                                        units::format_rate(t.fit->beta_bytes_per_second))
                          : "-"});
  }
  out += report::render_table(report::plain_table(rows, report::TableStyle::layout(2, 1)));
  if (p.reader) {
    out += reader_text(*p.reader);
  }
  for (const tune::FusionTuning& f : p.fusion) {
    out += fmt::format(
        "  fusion of small allreduces, {} links: threshold {} ({:.1f} us + bytes / {}, {} ranks, "
        "{})\n",
        f.link_class, units::format_bytes(f.threshold_bytes), f.alpha_seconds * 1e6,
        units::format_rate(f.beta_bytes_per_second), f.ranks, f.measured);
  }
  out +=
      "  chosen (default); staged: pageable memory through acco's pinned staging (no: the device's "
      "own copy, the plain path); the defaults and tuned columns are medians of the interleaved "
      "confirmation\n";
  return out;
}

Result<std::string> default_output(const topo::Machine* machine) {
  if (machine == nullptr) {
    return fail(Errc::kUnavailable,
                "no machine fingerprint (the topology is unavailable); name a file with --output");
  }
  ACCO_ASSIGN_OR_RETURN(const auto dir, tune::tune_directory());
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return fail(Errc::kCannotWrite,
                fmt::format("{}: cannot create the tune directory: {}", dir, ec.message()));
  }
  return tune::profile_path(dir, bench::machine_fingerprint(*machine));
}

class TuneCommand final : public Command {
 public:
  explicit TuneCommand(TuneOptions options) : o_(std::move(options)) {}

  Result<Output> run(const Invocation& inv) const override {
    Output out;
    if (!o_.show && !o_.output.empty()) {  // before the search, not after it
      if (auto s = check_output_path("--output", o_.output); !s) {
        return tl::unexpected(s.error());
      }
    }
    auto machine = probe_machine(inv.settings, out.err);
    const topo::Machine* m = machine ? &*machine : nullptr;
    return o_.show ? show(inv, m, std::move(out)) : tune(inv, m, std::move(out));
  }

 private:
  Result<Output> show(const Invocation& inv, const topo::Machine* machine, Output out) const {
    auto path = o_.output.empty() ? default_output(machine) : Result<std::string>(o_.output);
    if (!path) {
      return error_output(path.error(), out.err);
    }
    auto p = tune::load_tune_profile(*path);
    if (!p) {
      if (p.error().code == Errc::kNotFound && o_.output.empty()) {
        return error_output(
            Error{Errc::kNotFound,
                  fmt::format("no tune profile for this machine ({}); run acco tune", *path)},
            out.err);
      }
      return error_output(p.error(), out.err);
    }
    if (inv.format == Format::kJson) {
      auto j = tune::to_json(*p);
      j["path"] = *path;
      j["defaults"] = transfer::to_json(engine_defaults(*p));
      if (p->reader) {
        const io::ReaderOptions d;
        j["reader_defaults"] = {
            {"block_bytes", d.block_bytes}, {"depth", d.depth}, {"threads", d.threads}};
      }
      out.out = j.dump(2) + "\n";
    } else {
      out.out = profile_text(*p, *path);
    }
    return out;
  }

  Result<Output> tune(const Invocation& inv, const topo::Machine* machine, Output out) const {
    auto path = o_.output.empty() ? default_output(machine) : Result<std::string>(o_.output);
    if (!path) {
      return error_output(path.error(), out.err);
    }
    // A file there that is not a profile (another program's, a corrupt one) is left as it is:
    // refused before the run rather than replaced after it. A profile's fusion entries are kept.
    std::optional<tune::TuneProfile> previous;
    if (auto file = core::check_file_or_absent(*path); !file) {  // a directory, a pipe: 73
      return error_output(as_cannot_write(std::move(file.error())), out.err);
    }
    if (std::error_code ec; std::filesystem::exists(*path, ec)) {
      auto loaded = tune::load_tune_profile(*path);
      if (!loaded) {
        Error e = std::move(loaded.error());
        e.message += "; left as it is (remove it, or give --output another file)";
        return error_output(e, out.err);
      }
      previous = std::move(*loaded);
    }
    // Blocked before the engines start their threads, so SIGINT reaches only this one and the
    // search stops between two measurements; nothing is written until the end.
    const SignalScope signals;
    bool stopped = false;
    const tune::StopRequested stop = [&] {
      stopped = stopped || signals.wait(std::chrono::milliseconds(0)) != 0;
      return stopped;
    };
    auto result = tune::run_tune(o_.run, machine, stop, inv.progress);
    if (!result) {
      return error_output(as_usage(std::move(result.error())), out.err);
    }
    if (result->interrupted) {
      out.err += fmt::format("acco: tune interrupted; {} left as it was\n", *path);
      out.exit_code = kExitInterrupted;
      return out;
    }
    // What a collective bench saved there (--save-fusion) stays: acco tune does not measure it.
    if (previous) {
      result->profile.fusion = previous->fusion;
    }
    if (auto s = tune::save_tune_profile(*path, result->profile); !s) {
      // Checked before the run, failed now (a full disk): the profile still goes to stdout.
      const Error e = as_cannot_write(std::move(s.error()));
      out.err += fmt::format("acco: {}\n", e.message);
      out.exit_code = exit_code_for(e);
    } else {
      out.err += fmt::format("acco: tune profile written to {}\n", *path);
    }
    if (result->profile.budget_exhausted) {
      out.err += "acco: the budget ran out before the search finished; the best so far was kept\n";
    }
    if (inv.format == Format::kJson) {
      out.out = tune::to_json(result->profile).dump(2) + "\n";
    } else {
      out.out = profile_text(result->profile, *path);
    }
    return out;
  }

  TuneOptions o_;
};

}  // namespace

CommandSpec tune_command() {
  return command_with_flags<TuneFlags>(
      "tune",
      "tune the transfer engine (and with --file the storage reader) for this machine and save "
      "the profile bench loads",
      add_tune_flags, [](const TuneFlags& flags, const core::Settings&) {
        return command_from<TuneCommand>(tune_options(flags));
      });
}

}  // namespace acco::cli
