#include "acco/cluster/collective_request.hpp"

#include <utility>

#include <fmt/format.h>

#include "acco/bench/history.hpp"
#include "acco/cluster/collective.hpp"
#include "acco/cluster/collective_history.hpp"
#include "acco/cluster/collective_plane.hpp"
#include "acco/core/option_check.hpp"
#include "acco/core/units.hpp"
#include "acco/device/host_backend.hpp"

namespace acco::cluster {
namespace {

Result<std::uint64_t> size_option(const char* flag, const std::string& text) {
  const auto bytes = units::parse_bytes(text);
  if (!bytes || *bytes < 4 || *bytes > (std::uint64_t{4} << 30)) {
    return core::bad_option(flag, text, "a size from 4B to 4GiB");
  }
  return *bytes;
}

}  // namespace

Result<CollectiveBenchOptions> collective_bench_options(const CollectiveRequest& r) {
  CollectiveBenchOptions options;
  CollectiveOptions& o = options.collectives;
  ACCO_ASSIGN_OR_RETURN(o.ops, parse_ops(r.ops), "--collective");
  // quick: a sweep that ends at 1 MiB with few iterations, a look in seconds; what was given
  // explicitly stays.
  const std::string max_bytes = !r.max_bytes.empty() ? r.max_bytes : r.quick ? "1MiB" : "32MiB";
  const int iters = r.iters != -1 ? r.iters : r.quick ? 5 : 20;
  const int warmup = r.warmup != -1 ? r.warmup : r.quick ? 1 : 5;
  ACCO_ASSIGN_OR_RETURN(o.min_bytes, size_option("--min-bytes", r.min_bytes));
  ACCO_ASSIGN_OR_RETURN(o.max_bytes, size_option("--max-bytes", max_bytes));
  if (o.min_bytes > o.max_bytes) {
    return fail(Errc::kInvalidArgument, fmt::format("--min-bytes {} is larger than --max-bytes {}",
                                                    r.min_bytes, max_bytes));
  }
  ACCO_RETURN_IF_ERROR(core::check_range("--factor", r.factor, 2, 1024, "a number from 2 to 1024"));
  ACCO_RETURN_IF_ERROR(core::check_range("--iters", iters, 1, 100000, "a number from 1 to 100000"));
  ACCO_RETURN_IF_ERROR(
      core::check_range("--warmup", warmup, 0, 100000, "a number from 0 to 100000"));
  o.factor = r.factor;
  o.iters = iters;
  o.warmup = warmup;
  o.check = !r.no_check;
  if (r.nccl_library.empty()) {
    return core::bad_option("--nccl-library", r.nccl_library, "a library name or path");
  }
  options.nccl_library = r.nccl_library;
  ACCO_ASSIGN_OR_RETURN(options.buffers, parse_buffers(r.buffers), "--buffers");
  ACCO_ASSIGN_OR_RETURN(options.via, parse_via(r.via), "--via");
  ACCO_RETURN_IF_ERROR(check_via(options.buffers, options.via));
  ACCO_ASSIGN_OR_RETURN(const auto backend, bench::parse_backend(r.backend), "--backend");
  device::HostBackendOptions host;  // the device of device buffers on the host backend
  ACCO_ASSIGN_OR_RETURN(host.link, device::parse_link(r.link), "--link");
  options.open_backend = backend_opener(backend, std::move(host));
  const auto timeout = units::parse_duration(r.nccl_timeout);
  if (!timeout || !(*timeout > 0)) {
    return fail(
        Errc::kInvalidArgument,
        fmt::format("--nccl-timeout '{}': expected a duration above 0 (300s, 5m)", r.nccl_timeout));
  }
  options.nccl_timeout_seconds = *timeout;
  return options;
}

Result<CollectiveHistory> record_collective_run(const CollectiveRun& run,
                                                const std::optional<topo::Machine>& machine,
                                                const std::string& history, bool compare) {
  CollectiveHistory h;
  if (!machine) {
    h.note = "No machine fingerprint (the probe failed): nothing to compare.\n";
    return h;
  }
  ACCO_ASSIGN_OR_RETURN(auto recorded,
                        bench::record_run(history, history_run(run, *machine), compare));
  h.warnings = std::move(recorded.warnings);
  h.comparisons = std::move(recorded.comparisons);
  if (!recorded.had_previous) {
    h.note = "No previous run of these collectives on this machine to compare with.\n";
  }
  return h;
}

}  // namespace acco::cluster
