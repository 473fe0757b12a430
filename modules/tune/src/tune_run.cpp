#include "acco/tune/tune_run.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "acco/bench/case.hpp"
#include "acco/bench/machine_summary.hpp"
#include "acco/bench/result.hpp"

#include "engine_measure.hpp"

namespace acco::tune {

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
  std::map<std::string, dev::Device*> by_name;
  std::vector<Target> targets;
  for (auto* d : backend->devices()) {
    bench::CaseContext ctx;
    ctx.device = d;
    const auto name = ctx.device_name();
    by_name[name] = d;
    for (const auto path : kPaths) {
      targets.push_back({name, std::string(path)});
    }
  }
  SearchOptions so = options.search;
  const int cpus = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  so.space.host_copy_threads.clear();
  for (int t = 1; t <= std::min(cpus, 8); ++t) {
    so.space.host_copy_threads.push_back(t);
  }
  detail::EngineMeasure measure(std::move(by_name), options.copies);
  ACCO_ASSIGN_OR_RETURN(auto outcome,
                        search(
                            targets, so,
                            [&](const Target& t, const xfer::Profile& p, std::uint64_t bytes) {
                              return measure(t, p, bytes);
                            },
                            [] { return std::chrono::steady_clock::now(); }, stop, progress));

  TuneResult result;
  result.interrupted = outcome.interrupted;
  auto& profile = result.profile;
  profile.fingerprint = machine != nullptr ? bench::machine_fingerprint(*machine) : "unknown";
  profile.created = bench::utc_timestamp(std::chrono::system_clock::now());
  profile.backend = backend->name();
  profile.link = emulated ? options.host.link.name : "";
  profile.bytes = so.bytes;
  profile.budget_seconds = std::chrono::duration<double>(so.budget).count();
  profile.budget_exhausted = outcome.budget_exhausted;
  profile.paths = std::move(outcome.paths);
  return result;
}

}  // namespace acco::tune
