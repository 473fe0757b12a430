#include "acco/sched/experiment_setup.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/device/cuda_backend.hpp"

namespace acco::sched {

namespace {

tl::unexpected<Error> not_a(std::string_view text, std::string_view expected) {
  return fail(Errc::kInvalidArgument, fmt::format("'{}' is not {}", text, expected));
}

}  // namespace

Status parse_device_spec(std::string_view text, DeviceSetup& setup) {
  constexpr std::string_view kExpected = "host:N (N from 1 to 64) or cuda";
  if (text == "cuda") {
    setup.cuda = true;
    return {};
  }
  if (text == "host") {
    return {};
  }
  if (!text.starts_with("host:")) {
    return not_a(text, kExpected);
  }
  const auto n = units::parse_int(text.substr(5));
  if (!n || *n < 1 || *n > kMaxHostDevices) {
    return not_a(text, kExpected);
  }
  setup.host_devices = static_cast<int>(*n);
  return {};
}

Result<std::vector<std::string>> parse_device_kinds(std::string_view list) {
  std::vector<std::string> kinds;
  for (const auto& part : units::split(list, ',')) {
    std::string kind(units::trim(part));
    if (kind != "cpu" && kind != "gpu") {
      return not_a(kind, "cpu or gpu");
    }
    kinds.push_back(std::move(kind));
  }
  return kinds;
}

Result<std::vector<double>> parse_speed_factors(std::string_view list) {
  std::vector<double> speeds;
  for (const auto& item : units::split(list, ',')) {
    const auto speed = units::parse_double(item);
    if (!speed || !(*speed >= kMinSpeedFactor && *speed <= kMaxSpeedFactor)) {
      return not_a(item, "a number from 0.001 to 1000");
    }
    speeds.push_back(*speed);
  }
  return speeds;
}

Result<std::pair<int, device::FaultPlan>> parse_injected_fault(std::string_view text) {
  const auto colon = text.find(':');
  const auto index = units::parse_int(text.substr(0, colon));
  if (colon == std::string_view::npos || !index || *index < 0 || *index >= kMaxHostDevices) {
    return not_a(text, fmt::format("DEVICE:FAULTS with a device index from 0 to {} (e.g. "
                                   "0:copy-fails:3)",
                                   kMaxHostDevices - 1));
  }
  ACCO_ASSIGN_OR_RETURN(auto plan, device::parse_fault_plan(text.substr(colon + 1)));
  return std::pair{static_cast<int>(*index), plan};
}

Result<std::uint64_t> parse_data_bytes(std::string_view text) {
  const auto bytes = units::parse_bytes(text);
  if (!bytes || *bytes == 0 || *bytes > (std::uint64_t{1} << 40)) {
    return not_a(text, "a size from 1 B to 1 TiB, such as 64KiB or 4MiB");
  }
  return *bytes;
}

Result<std::uint64_t> parse_memory_budget(std::string_view text) {
  const auto bytes = units::parse_bytes(text);
  if (!bytes || *bytes == 0) {
    return not_a(text, "a size such as 512MiB or 2GiB");
  }
  return *bytes;
}

Status check_per_device(std::size_t entries, std::size_t devices) {
  if (entries != 1 && entries != devices) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{} values for {} devices (give one per device, or one for all)",
                            entries, devices));
  }
  return {};
}

Result<std::unique_ptr<device::Backend>> open_experiment_backend(const DeviceSetup& setup) {
  if (setup.cuda) {
    ACCO_ASSIGN_OR_RETURN(auto backend, device::make_cuda_backend());
    if (backend->devices().empty()) {
      return fail(Errc::kUnavailable, "the CUDA backend found no GPU");
    }
    return backend;
  }
  device::HostBackendOptions host;
  host.devices = setup.host_devices;
  host.link = setup.link;
  ACCO_ASSIGN_OR_RETURN(
      host.speed_factors,
      expand_per_device(setup.speeds, 1.0,
                        static_cast<std::size_t>(std::max(setup.host_devices, 0))),
      "host devices: speeds");
  if (setup.memory_bytes > 0) {
    host.memory_bytes_per_device = setup.memory_bytes;
  }
  ACCO_ASSIGN_OR_RETURN(auto backend, device::make_host_backend(host), "host devices");
  return backend;
}

Result<ExperimentDevices> experiment_devices(std::unique_ptr<device::Backend> backend,
                                             const DeviceSetup& setup,
                                             const std::vector<std::string>& kinds,
                                             const std::vector<double>& speeds) {
  ExperimentDevices out;
  out.backend = std::move(backend);
  out.devices = out.backend->devices();
  ACCO_CHECK(kinds.size() == out.devices.size() && speeds.size() == out.devices.size());
  out.memory_budget_bytes = setup.memory_bytes;
  if (!setup.cuda) {
    out.link = setup.link.name;
  }
  for (std::size_t d = 0; d < out.devices.size(); ++d) {
    out.models.push_back({kinds[d], speeds[d]});
  }
  const std::size_t n = out.devices.size();
  for (const auto& [index, plan] : setup.faults) {
    if (index < 0 || static_cast<std::size_t>(index) >= n) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("there is no device {} ({} device{})", index, n, n == 1 ? "" : "s"));
    }
    out.faulty.push_back(device::with_faults(*out.devices[static_cast<std::size_t>(index)], plan));
    out.devices[static_cast<std::size_t>(index)] = out.faulty.back().get();
  }
  return out;
}

void apply_transfer_profiles(const std::map<std::string, transfer::Profile>& engines,
                             ExperimentDevices& devices) {
  devices.transfer_profiles.assign(devices.devices.size(), std::nullopt);
  for (std::size_t i = 0; i < devices.devices.size(); ++i) {
    const auto& info = devices.devices[i]->info();
    const auto it = engines.find((info.pci.empty() ? info.name : info.pci) + "/h2d_pinned");
    if (it != engines.end()) {
      devices.transfer_profiles[i] = it->second;
    }
  }
}

Status check_memory_budget(std::uint64_t budget_bytes, const Workload& workload) {
  if (budget_bytes == 0) {
    return {};
  }
  const LargestTask needed = largest_task(workload);
  if (needed.bytes > budget_bytes) {
    return fail(
        Errc::kInvalidArgument,
        fmt::format("{} cannot hold the {} a {} task touches", units::format_bytes(budget_bytes),
                    units::format_bytes(needed.bytes), needed.type));
  }
  return {};
}

}  // namespace acco::sched
