// tune_options and tune_and_save: `acco tune`'s flags checked into a run, and the run saved.
#include <chrono>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "acco/core/option_check.hpp"
#include "acco/core/units.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/tune/tune_run.hpp"

namespace acco::tune {

Result<TuneOptions> tune_options(const TuneRequest& request) {
  TuneOptions o;
  if (request.devices < 1 || request.devices > 64) {
    return fail(Errc::kInvalidArgument,
                fmt::format("--devices: {} is not between 1 and 64", request.devices));
  }
  o.host.devices = request.devices;
  ACCO_ASSIGN_OR_RETURN(o.host.link, device::parse_link(request.link), "--link");
  const auto budget = units::parse_duration(request.budget);
  if (!budget || *budget < 1 || *budget > 24 * 3600) {
    return core::bad_option("--budget", request.budget, "a duration from 1s to 24h");
  }
  o.search.budget =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(*budget));
  const auto bytes = units::parse_bytes(request.bytes);
  if (!bytes || *bytes < (std::uint64_t{1} << 20) || *bytes > (std::uint64_t{4} << 30)) {
    return core::bad_option("--bytes", request.bytes, "a size from 1MiB to 4GiB");
  }
  o.search.bytes = *bytes;
  o.search.fit_bytes.clear();
  for (std::uint64_t b = *bytes; b >= (std::uint64_t{1} << 20) && o.search.fit_bytes.size() < 4;
       b /= 4) {
    o.search.fit_bytes.insert(o.search.fit_bytes.begin(), b);
  }
  if (!request.file.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(request.file, ec)) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("--file: '{}' is not a regular file", request.file));
    }
    if (const auto size = std::filesystem::file_size(request.file, ec); ec || size < 4096) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("--file: '{}' is smaller than 4 KiB", request.file));
    }
    o.reader_file = request.file;
  }
  ACCO_ASSIGN_OR_RETURN(o.backend, bench::parse_backend(request.backend), "--backend");
  return o;
}

Result<TuneSaved> tune_and_save(const TuneOptions& options, const std::string& path,
                                const std::optional<TuneProfile>& previous,
                                const topo::Machine* machine, const StopRequested& stop,
                                const Progress& progress) {
  TuneSaved saved;
  ACCO_ASSIGN_OR_RETURN(saved.result, run_tune(options, machine, stop, progress));
  if (saved.result.interrupted) {
    saved.notes = fmt::format("acco: tune interrupted; {} left as it was\n", path);
    return saved;
  }
  if (previous) {
    saved.result.profile.fusion = previous->fusion;
  }
  if (auto s = save_tune_profile(path, saved.result.profile); !s) {
    saved.save_failure = std::move(s.error());
    saved.save_failure->code = Errc::kCannotWrite;
    saved.notes = fmt::format("acco: {}\n", saved.save_failure->message);
  } else {
    saved.notes = fmt::format("acco: tune profile written to {}\n", path);
  }
  if (saved.result.profile.budget_exhausted) {
    saved.notes +=
        "acco: the budget ran out before the search finished; the best so far was kept\n";
  }
  return saved;
}

}  // namespace acco::tune
