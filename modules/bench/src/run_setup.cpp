#include "acco/bench/run_setup.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/device/cuda_backend.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/topo/probe.hpp"
#include "acco/topo/storage_link.hpp"

namespace acco::bench {

const std::vector<std::string>& backend_names() {
  static const std::vector<std::string> names = {"auto", "host", "cuda"};
  return names;
}

Result<BackendChoice> parse_backend(std::string_view name) {
  if (name == "auto") {
    return BackendChoice::kAuto;
  }
  if (name == "host") {
    return BackendChoice::kHost;
  }
  if (name == "cuda") {
    return BackendChoice::kCuda;
  }
  return fail(Errc::kInvalidArgument,
              fmt::format("'{}' is not one of {}", name, fmt::join(backend_names(), ", ")));
}

Result<topo::Machine> probe_machine(const core::Settings& settings, const std::string& data_path) {
  topo::ProbeRequest r;
  r.sysroot = settings.get("sysroot");
  r.nvml = topo::NvmlMode::kOff;
  r.data_dir = data_path;
  r.pci_ids = settings.get("pci-ids");
  ACCO_ASSIGN_OR_RETURN(auto result, topo::probe(r));
  return std::move(result.machine);
}

std::string storage_path(const std::string& file) {
  std::error_code ec;
  auto canonical = std::filesystem::canonical(file, ec);
  return ec ? std::filesystem::absolute(file, ec).lexically_normal().string() : canonical.string();
}

Result<topo::Machine> probe_for_run(const core::Settings& settings, RunOptions& options) {
  if (options.suite != "storage") {
    return probe_machine(settings);
  }
  auto machine = probe_machine(settings, storage_path(options.defaults.storage_file));
  if (!machine) {
    options.defaults.storage_peak_source = "topology unavailable";
    return machine;
  }
  const topo::StorageLink link = topo::storage_link(*machine);
  options.defaults.storage_peak_bytes_per_second = link.bytes_per_second;
  options.defaults.storage_peak_source = link.source;
  return machine;
}

void apply_quick(CaseContext& context) {
  context.bytes = std::min(context.bytes, kQuickBytes);
  context.reps = std::min(context.reps, kQuickReps);
  context.warmup = 1;
  context.copies_per_sample = 2;
  context.sweep_max_bytes = kQuickBytes;
  context.small_copies = 2000;
}

Result<QuickBench> quick_bench(const topo::Machine& machine,
                               std::map<std::string, transfer::Profile> path_profiles,
                               const Progress& progress) {
  RunOptions o;
  o.defaults.bytes = kQuickBytes;
  o.defaults.reps = kQuickReps;
  apply_quick(o.defaults);
  auto link = device::parse_link(kDefaultLink);
  ACCO_CHECK(link.has_value());
  o.host.link = *link;
  ACCO_ASSIGN_OR_RETURN(auto opened, open_backend(BackendChoice::kAuto, o.host));
  QuickBench out;
  if (!opened.fell_back) {
    o.patterns = {"h2d_pinned_plain", "d2h_pinned_plain", "h2d_pageable_plain",
                  "h2d_pageable_engine"};
    out.note = "pinned and pageable copies on every GPU, 64 MiB, 3 samples";
    if (const auto driver = device::cuda_driver_info(); driver.has_value()) {
      out.note +=
          fmt::format(" (CUDA driver {}, supports CUDA {})", driver->version, driver->cuda_version);
    }
  } else {
    // Emulated devices say nothing about this machine; its memory bandwidth does.
    o.patterns = {"host_memcpy"};
    out.note = fmt::format("no accelerator to measure ({}); host memory bandwidth only",
                           opened.cuda_error ? opened.cuda_error->message : "no CUDA device");
  }
  o.opened = std::move(opened.backend);  // initialising CUDA once is enough
  o.defaults.path_profiles = std::move(path_profiles);
  ACCO_ASSIGN_OR_RETURN(out.run, run_benchmarks(o, &machine, progress));
  return out;
}

}  // namespace acco::bench
