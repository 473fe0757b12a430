#include "acco/bench/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "acco/bench/machine_summary.hpp"
#include "acco/core/units.hpp"
#include "acco/dev/cuda_backend.hpp"

#include "cases/cases.hpp"

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

// One thread's memcpy rate between two pageable buffers of `bytes` (at most 64 MiB), the best of
// three after a warm-up: on the host backend every emulated DMA is such a memcpy, so no copy can
// beat it whatever the emulated link's rate.
double host_memcpy_rate(std::uint64_t bytes) {
  const auto n = static_cast<std::size_t>(
      std::clamp<std::uint64_t>(bytes, std::uint64_t{1} << 20, std::uint64_t{64} << 20));
  const std::vector<std::byte> a(n, std::byte{0x5a});
  std::vector<std::byte> b(n);
  std::memcpy(b.data(), a.data(), n);
  double best = 0;
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    std::memcpy(b.data(), a.data(), n);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    if (took.count() > 0) {
      best = std::max(best, static_cast<double>(n) / took.count());
    }
  }
  return best;
}

// Emulated devices are judged against what the host can move at all: the lower of the emulated
// link and one thread's memcpy, and their verdict is "emulated", not a band of a real link.
struct EmulatedPeak {
  double bytes_per_second = 0;
  std::string source;
};

EmulatedPeak emulated_peak_of(const std::vector<dev::Device*>& devices, std::uint64_t bytes) {
  const double memcpy_rate = host_memcpy_rate(bytes);
  const double link_rate = devices.empty() ? 0 : devices.front()->info().link_bytes_per_second;
  return {link_rate > 0 ? std::min(link_rate, memcpy_rate) : memcpy_rate,
          fmt::format("the lower of the emulated link ({}) and this host's memcpy ({})",
                      link_rate > 0 ? units::format_rate(link_rate) : std::string("unlimited"),
                      units::format_rate(memcpy_rate))};
}

}  // namespace

Result<OpenedBackend> open_backend(BackendChoice choice, const dev::HostBackendOptions& host) {
  OpenedBackend out;
  if (choice != BackendChoice::kHost) {
    auto cuda = dev::make_cuda_backend();
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
  ACCO_ASSIGN_OR_RETURN(out.backend, dev::make_host_backend(host));
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
  std::shared_ptr<dev::Backend> backend = options.opened;
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
  run.created = utc_timestamp(std::chrono::system_clock::now());
  if (machine != nullptr) {
    run.host = machine->hostname;
    run.machine = machine_summary(*machine);
    run.fingerprint = machine_fingerprint(*machine);
  }
  run.machine["backend"] = backend->name();
  if (emulated) {
    // Emulated runs compare only with runs of the same emulation.
    run.machine["emulated_link"] = options.host.link.name;
    run.fingerprint += fmt::format("|host:{}x{}", devices.size(), options.host.link.name);
  }

  const EmulatedPeak emulated_peak =
      emulated ? emulated_peak_of(devices, options.defaults.bytes) : EmulatedPeak{};

  std::size_t total = 0;
  for (const auto* c : selected) {
    total += detail::runs_once_per_backend(*c) ? 1 : devices.size();
  }
  std::size_t done = 0;
  for (auto* c : selected) {
    const std::size_t rounds = detail::runs_once_per_backend(*c) ? 1 : devices.size();
    for (std::size_t i = 0; i < rounds; ++i) {
      CaseContext ctx = options.defaults;
      ctx.device = devices[i];
      ctx.devices = devices;
      ctx.machine = machine;
      if (emulated) {
        ctx.peak_bytes_per_second = emulated_peak.bytes_per_second;
        ctx.link_kind = PathKind::kEmulatedLink;
      } else {
        ctx.peak_bytes_per_second = topology_peak(machine, devices[i]->info().pci);
        ctx.link_kind = PathKind::kPcieCopyEngine;
      }
      ++done;
      if (progress) {
        progress(fmt::format("[{}/{}] {} on {}", done, total, c->key(), ctx.device_name()));
      }
      if (auto why = c->applies_to(ctx); !why.empty()) {
        run.results.push_back(waived(c->key(), ctx.device_name(), why));
        continue;
      }
      for (auto& r : c->run(ctx)) {
        if (r.verdict == "emulated" && r.peak_source.empty()) {
          r.peak_source = emulated_peak.source;
        }
        run.results.push_back(std::move(r));
      }
    }
  }
  return run;
}

}  // namespace acco::bench
