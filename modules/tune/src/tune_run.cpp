#include "acco/tune/tune_run.hpp"

#include <algorithm>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "acco/bench/case.hpp"
#include "acco/bench/machine_summary.hpp"
#include "acco/bench/result.hpp"
#include "acco/core/clock.hpp"

#include "engine_measure.hpp"
#include "reader_measure.hpp"

namespace acco::tune {
namespace {

// The bytes the reader reads per measurement: the start of the file up to `bytes`, whole 4 KiB
// blocks so O_DIRECT needs no trimmed tail.
Result<std::uint64_t> reader_bytes(const std::string& file, std::uint64_t bytes) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) {
    return fail(Errc::kInvalidArgument, fmt::format("{}: {}", file, ec.message()));
  }
  std::uint64_t n = std::min<std::uint64_t>(size, bytes);
  n -= n % 4096;
  if (n < 4096) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: expected at least 4 KiB, found {} bytes", file, size));
  }
  return n;
}

}  // namespace

Result<TuneResult> run_tune(const TuneOptions& options, const topo::Machine* machine,
                            const StopRequested& stop, const Progress& progress) {
  ACCO_ASSIGN_OR_RETURN(auto opened, bench::open_backend(options.backend, options.host));
  const auto backend = opened.backend;
  const bool emulated = backend->name() == "host";
  if (opened.fell_back && progress) {
    progress(fmt::format("acco tune: {}; using the host backend with an emulated {} link",
                         opened.cuda_error ? opened.cuda_error->message : "no CUDA device found",
                         options.host.link.name.empty() ? "unlimited" : options.host.link.name));
  }
  std::map<std::string, device::Device*> by_name;
  std::vector<Target> targets;
  for (auto* d : backend->devices()) {
    bench::CaseContext ctx;
    ctx.device = d;
    const auto name = ctx.device_name();
    by_name[name] = d;
    for (const auto path : kPaths) {
      targets.push_back({name, std::string(path), transfer::default_profile(d->info())});
    }
  }
  SearchOptions so = options.search;
  const int cpus = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  so.space.host_copy_threads.clear();
  for (int t = 1; t <= std::min(cpus, 8); ++t) {
    so.space.host_copy_threads.push_back(t);
  }
  std::uint64_t read_bytes = 0;
  if (!options.reader_file.empty()) {
    ACCO_ASSIGN_OR_RETURN(read_bytes, reader_bytes(options.reader_file, so.bytes), "--file");
  }
  const auto clock = [] { return std::chrono::steady_clock::now(); };
  const auto start = clock();
  const auto budget = so.budget;
  if (read_bytes > 0) {
    so.budget = std::chrono::duration_cast<std::chrono::nanoseconds>(
        budget * (1 - std::clamp(options.reader_share, 0.0, 1.0)));
  }
  detail::EngineMeasure measure(std::move(by_name), options.copies);
  ACCO_ASSIGN_OR_RETURN(auto outcome, search(
                                          targets, so,
                                          [&](const Target& t, const transfer::Profile& p,
                                              std::uint64_t bytes) { return measure(t, p, bytes); },
                                          clock, stop, progress));

  TuneResult result;
  result.interrupted = outcome.interrupted;
  if (read_bytes > 0 && !outcome.interrupted) {
    // What the engine paths left of the whole budget, at least the reader's share.
    SearchOptions ro = so;
    ro.budget = std::max(std::chrono::nanoseconds(0), start + budget - clock());
    // Chunks move with the engine's choice for pinned host-to-device copies on that device.
    transfer::Profile engine;
    for (const PathTuning& t : outcome.paths) {
      if (t.path == "h2d_pinned") {
        engine = t.profile;
        break;
      }
    }
    detail::FileReadMeasure reads(*backend->devices().front(), engine, options.reader_file,
                                  options.copies);
    ACCO_ASSIGN_OR_RETURN(auto reader, search_reader(
                                           {options.reader_file, read_bytes}, ro,
                                           [&](const io::ReaderOptions& o, std::uint64_t bytes) {
                                             return reads(o, bytes);
                                           },
                                           clock, stop, progress));
    if (progress) {
      for (const auto& note : reads.notes()) {
        progress(fmt::format("acco tune: reader on {}: {}", options.reader_file, note));
      }
    }
    result.interrupted = reader.interrupted;
    outcome.budget_exhausted = outcome.budget_exhausted || reader.budget_exhausted;
    result.profile.reader = std::move(reader.reader);
  }
  auto& profile = result.profile;
  profile.fingerprint = machine != nullptr ? bench::machine_fingerprint(*machine) : "unknown";
  profile.created = core::utc_timestamp(std::chrono::system_clock::now());
  profile.backend = backend->name();
  profile.link = emulated ? options.host.link.name : "";
  profile.bytes = so.bytes;
  profile.budget_seconds = std::chrono::duration<double>(budget).count();
  profile.budget_exhausted = outcome.budget_exhausted;
  profile.paths = std::move(outcome.paths);
  return result;
}

}  // namespace acco::tune
