#include "acco/sched/experiment_request.hpp"

#include <fmt/format.h>

#include "acco/core/option_check.hpp"

namespace acco::sched {
namespace {

constexpr double kMaxFactor = 1e6;  // --skew, --ccr, --alpha, --time-scale (and its inverse)

// A per-device list's length, when the devices are known (host).
Status check_length(const char* flag, std::size_t entries, const DeviceSetup& d) {
  if (d.cuda) {
    return {};
  }
  ACCO_RETURN_IF_ERROR(check_per_device(entries, static_cast<std::size_t>(d.host_devices)), flag);
  return {};
}

}  // namespace

Result<DeviceSetup> device_setup(const DeviceRequest& r) {
  DeviceSetup d;
  ACCO_RETURN_IF_ERROR(parse_device_spec(r.devices, d), "--devices");
  if (!r.kinds.empty()) {
    if (d.cuda) {
      return fail(Errc::kInvalidArgument, "--kinds: not with --devices cuda (every GPU is gpu)");
    }
    ACCO_ASSIGN_OR_RETURN(d.kinds, parse_device_kinds(r.kinds), "--kinds");
    ACCO_RETURN_IF_ERROR(check_length("--kinds", d.kinds.size(), d));
  }
  if (!r.speeds.empty()) {
    ACCO_ASSIGN_OR_RETURN(d.speeds, parse_speed_factors(r.speeds), "--speeds");
    ACCO_RETURN_IF_ERROR(check_length("--speeds", d.speeds.size(), d));
  }
  if (d.cuda && !r.link.empty()) {
    return fail(Errc::kInvalidArgument, "--link: only for host devices (a GPU has its own link)");
  }
  ACCO_ASSIGN_OR_RETURN(d.link, device::parse_link(r.link.empty() ? "pcie3x16" : r.link), "--link");
  for (const std::string& fault : r.faults) {
    ACCO_ASSIGN_OR_RETURN(auto parsed, parse_injected_fault(fault), "--inject-fault");
    d.faults.push_back(std::move(parsed));
  }
  if (!r.memory.empty()) {
    ACCO_ASSIGN_OR_RETURN(d.memory_bytes, parse_memory_budget(r.memory), "--memory");
  }
  return d;
}

Result<ExperimentDevices> open_devices(const DeviceSetup& setup) {
  const DeviceSetup& d = setup;
  auto backend = open_experiment_backend(d);
  if (!backend) {
    return tl::unexpected(d.cuda ? std::move(backend.error()).with_context("--devices cuda")
                                 : std::move(backend.error()));
  }
  const std::size_t n = (*backend)->devices().size();
  ACCO_ASSIGN_OR_RETURN(const auto speeds, expand_per_device(d.speeds, 1.0, n), "--speeds");
  ACCO_ASSIGN_OR_RETURN(const auto kinds, expand_per_device(d.kinds, std::string("gpu"), n),
                        "--kinds");
  ACCO_ASSIGN_OR_RETURN(auto devices, experiment_devices(std::move(*backend), d, kinds, speeds),
                        "--inject-fault");
  return devices;
}

Result<WorkloadSpec> workload_spec(const WorkloadRequest& r) {
  WorkloadSpec w = r.spec;
  const auto kind = parse_workload_kind(r.kind);
  if (!kind) {
    return core::bad_option("--workload", r.kind,
                            "one of cholesky, lu, independent, chain, random");
  }
  w.kind = *kind;
  ACCO_RETURN_IF_ERROR(
      core::check_range("--tiles", w.tiles, 1, kMaxExperimentTiles, "between 1 and 100"));
  ACCO_RETURN_IF_ERROR(
      core::check_range("--tasks", w.tasks, 1, kMaxExperimentTasks, "between 1 and 1000000"));
  // Bounds far beyond any useful value, so the emulated times stay finite.
  ACCO_RETURN_IF_ERROR(
      core::check_range("--skew", w.skew, 1.0, kMaxFactor, "a number from 1 to 1e6"));
  ACCO_RETURN_IF_ERROR(
      core::check_range("--ccr", w.ccr, 0.0, kMaxFactor, "a number from 0 to 1e6"));
  if (!(w.alpha > 0 && w.alpha <= kMaxFactor)) {
    return core::bad_option("--alpha", core::option_text(w.alpha), "a number above 0, at most 1e6");
  }
  if (w.out_degree < 1) {
    return core::bad_option("--out-degree", core::option_text(static_cast<long long>(w.out_degree)),
                            "at least 1");
  }
  if (!(w.beta >= 0 && w.beta < 2)) {
    return core::bad_option("--beta", core::option_text(w.beta), "in [0, 2)");
  }
  ACCO_RETURN_IF_ERROR(core::check_range("--time-scale", w.time_scale, 1 / kMaxFactor, kMaxFactor,
                                         "a number from 1e-6 to 1e6"));
  if (!kernel_table(w.kernels)) {
    return core::bad_option("--kernels", w.kernels, "one of sirocco, mirage, uniform");
  }
  if (!r.tile_bytes.empty()) {
    ACCO_ASSIGN_OR_RETURN(w.tile_bytes, parse_data_bytes(r.tile_bytes), "--tile-bytes");
  }
  if (!r.task_bytes.empty()) {
    ACCO_ASSIGN_OR_RETURN(w.task_bytes, parse_data_bytes(r.task_bytes), "--task-bytes");
  }
  return w;
}

}  // namespace acco::sched
