#include "acco/bench/run_setup.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/core/option_check.hpp"
#include "acco/core/units.hpp"
#include "acco/device/cuda_backend.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/topo/probe.hpp"
#include "acco/topo/storage_link.hpp"

namespace acco::bench {

const std::vector<std::string>& backend_names() {
  static const std::vector<std::string> names = {"auto", "host", "cuda"};
  return names;
}

const std::vector<std::string>& suite_names() {
  static const std::vector<std::string> names = {"transfer", "storage"};
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

namespace acco::bench {
namespace {

Status storage_plan(const RunRequest& r, RunPlan& plan) {
  const auto& suites = suite_names();
  if (std::find(suites.begin(), suites.end(), r.suite) == suites.end()) {
    return fail(Errc::kInvalidArgument,
                fmt::format("--suite: '{}' is not one of {}", r.suite, fmt::join(suites, ", ")));
  }
  plan.run.suite = r.suite;
  if (r.suite != "storage") {
    if (!r.file.empty() || !r.create.empty()) {
      return fail(Errc::kInvalidArgument, "--file and --create belong to --suite storage");
    }
    return {};
  }
  if (r.file.empty()) {
    return fail(Errc::kInvalidArgument, "--suite storage: expected --file PATH (the file to read)");
  }
  plan.run.defaults.storage_file = r.file;
  plan.run.defaults.quick = r.quick;
  std::error_code ec;
  if (!r.create.empty()) {
    const auto bytes = units::parse_bytes(r.create);
    if (!bytes || *bytes < 4096 || *bytes > (std::uint64_t{1} << 40)) {
      return core::bad_option("--create", r.create, "a size from 4KiB to 1TiB");
    }
    plan.create_file = r.file;
    plan.create_bytes = *bytes;
  } else if (!std::filesystem::is_regular_file(r.file, ec)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("--file: '{}' is not a regular file (give --create SIZE to write one)",
                            r.file));
  } else if (const auto size = std::filesystem::file_size(r.file, ec); !ec && size < 4096) {
    return fail(Errc::kInvalidArgument,
                fmt::format("--file: '{}' holds {} bytes; the storage cases read at least 4 KiB "
                            "(give --create SIZE to write a larger one)",
                            r.file, size));
  }
  return {};
}

}  // namespace

Result<RunPlan> run_plan(const RunRequest& r) {
  if (r.devices < 1 || r.devices > 64) {
    return fail(Errc::kInvalidArgument,
                fmt::format("--devices: {} is not between 1 and 64", r.devices));
  }
  if (r.reps < 1 || r.reps > 1000) {
    return fail(Errc::kInvalidArgument,
                fmt::format("--reps: {} is not between 1 and 1000", r.reps));
  }
  RunPlan plan;
  auto& run = plan.run;
  run.host.devices = r.devices;
  ACCO_ASSIGN_OR_RETURN(run.host.link, device::parse_link(r.link), "--link");
  const auto bytes = units::parse_bytes(r.bytes);
  if (!bytes || *bytes < 4096 || *bytes > (std::uint64_t{16} << 30)) {
    return core::bad_option("--bytes", r.bytes, "a size from 4KiB to 16GiB");
  }
  run.defaults.bytes = *bytes;
  run.defaults.reps = r.reps;
  if (r.quick) {
    apply_quick(run.defaults);
  }
  ACCO_RETURN_IF_ERROR(storage_plan(r, plan));
  run.patterns = r.cases;
  if (std::none_of(cases().begin(), cases().end(), [&](const auto& c) {
        return c->suite() == r.suite && matches(c->key(), r.cases);
      })) {
    return fail(Errc::kInvalidArgument, "--cases: no case matches (see acco bench --list)");
  }
  ACCO_ASSIGN_OR_RETURN(run.backend, parse_backend(r.backend), "--backend");
  return plan;
}

}  // namespace acco::bench
