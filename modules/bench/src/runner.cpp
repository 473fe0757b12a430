#include "acco/bench/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "acco/bench/machine_summary.hpp"
#include "acco/core/clock.hpp"
#include "acco/core/units.hpp"
#include "acco/device/cuda_backend.hpp"

#include "cases/cases.hpp"
#include "emulated_peak.hpp"

namespace acco::bench {
namespace {

// The topology's path bandwidth of the device's PCI function: what its link can carry.
double topology_peak(const topo::Machine* machine, const std::string& pci) {
  if (machine == nullptr || pci.empty()) {
    return 0;
  }
  const auto* d = machine->find(pci);
  if (d == nullptr) {
    return 0;
  }
  return d->path_bytes_per_second > 0 ? d->path_bytes_per_second : d->capable_bytes_per_second;
}

// The context of one case on devices[i]: the run's defaults, the device and its peak.
CaseContext context_for(const CaseContext& defaults, const std::vector<device::Device*>& devices,
                        std::size_t i, const topo::Machine* machine, bool emulated) {
  CaseContext ctx = defaults;
  ctx.device = devices[i];
  ctx.devices = devices;
  ctx.machine = machine;
  if (emulated) {
    // The verdict "emulated" with a provisional peak; EmulatedPeaks sets the real one.
    const double link = devices[i]->info().link_bytes_per_second;
    ctx.peak_bytes_per_second = link > 0 ? link : 1;
    ctx.link_kind = PathKind::kEmulatedLink;
  } else {
    ctx.peak_bytes_per_second = topology_peak(machine, devices[i]->info().pci);
    ctx.link_kind = PathKind::kPcieCopyEngine;
  }
  return ctx;
}

}  // namespace

Result<OpenedBackend> open_backend(BackendChoice choice, const device::HostBackendOptions& host) {
  OpenedBackend out;
  if (choice != BackendChoice::kHost) {
    auto cuda = device::make_cuda_backend();
    if (cuda && !(*cuda)->devices().empty()) {
      out.backend = std::move(*cuda);
      return out;
    }
    if (choice == BackendChoice::kCuda) {
      return fail(Errc::kUnavailable, cuda ? std::string("no CUDA device found")
                                           : "CUDA backend: " + cuda.error().message);
    }
    out.fell_back = true;
    if (!cuda) {
      out.cuda_error = std::move(cuda.error());
    }
  }
  ACCO_ASSIGN_OR_RETURN(out.backend, device::make_host_backend(host));
  return out;
}

Result<BenchRun> run_benchmarks(const RunOptions& options, const topo::Machine* machine,
                                const Progress& progress) {
  std::vector<Case*> selected;
  for (const auto& c : cases()) {
    if (c->suite() == options.suite && matches(c->key(), options.patterns)) {
      selected.push_back(c.get());
    }
  }
  if (selected.empty()) {
    return fail(Errc::kInvalidArgument, "no case matches the patterns");
  }
  std::string note;
  std::shared_ptr<device::Backend> backend = options.opened;
  if (!backend) {
    ACCO_ASSIGN_OR_RETURN(auto opened, open_backend(options.backend, options.host));
    backend = std::move(opened.backend);
    if (opened.fell_back) {
      note = opened.cuda_error ? opened.cuda_error->message : "no CUDA device found";
    }
  }
  const auto devices = backend->devices();
  const bool emulated = backend->name() == "host";
  if (!note.empty() && progress) {
    progress(fmt::format("acco bench: {}; using the host backend with an emulated {} link", note,
                         options.host.link.name.empty() ? "unlimited" : options.host.link.name));
  }

  BenchRun run;
  run.created = core::utc_timestamp(std::chrono::system_clock::now());
  if (machine != nullptr) {
    run.host = machine->hostname;
    run.machine = machine_summary(*machine);
    run.fingerprint = machine_fingerprint(*machine);
  }
  run.machine["backend"] = backend->name();
  if (backend->name() == "cuda") {
    std::vector<device::DeviceInfo> infos;
    infos.reserve(devices.size());
    for (const auto* d : devices) {
      infos.push_back(d->info());
    }
    name_from_devices(run.machine, infos);
    // The driver the backend loaded (loading it again is a reference count and an idempotent
    // cuInit): which CUDA versions this machine can run is part of what was measured.
    if (const auto driver = device::cuda_driver_info(); driver.has_value()) {
      run.machine["cuda_driver_version"] = driver->version;
      run.machine["cuda_version"] = driver->cuda_version;
    }
  }
  if (emulated) {
    // Emulated runs compare only with runs of the same emulation.
    run.machine["emulated_link"] = options.host.link.name;
    run.fingerprint += fmt::format("|host:{}x{}", devices.size(), options.host.link.name);
  }

  std::size_t total = 0;
  for (const auto* c : selected) {
    total += detail::runs_once_per_backend(*c) ? 1 : devices.size();
  }
  std::size_t done = 0;
  detail::EmulatedPeaks emulated_peaks;
  bool stopped = false;
  for (auto* c : selected) {
    const std::size_t rounds = detail::runs_once_per_backend(*c) ? 1 : devices.size();
    for (std::size_t i = 0; i < rounds && !stopped; ++i) {
      stopped = options.stop && options.stop();
      if (stopped) {
        break;
      }
      const CaseContext ctx = context_for(options.defaults, devices, i, machine, emulated);
      ++done;
      if (progress) {
        progress(fmt::format("[{}/{}] {} on {}", done, total, c->key(), ctx.device_name()));
      }
      if (auto why = c->applies_to(ctx); !why.empty()) {
        run.results.push_back(waived(c->key(), ctx.device_name(), why));
        continue;
      }
      const std::size_t first = run.results.size();
      for (auto& r : c->run(ctx)) {
        run.results.push_back(std::move(r));
      }
      if (emulated) {
        emulated_peaks.after_case(*devices[i], run.results, first);
      }
    }
  }
  emulated_peaks.finish(run.results);
  return run;
}

}  // namespace acco::bench
