#include "bench_command.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/bench/case.hpp"
#include "acco/bench/compare.hpp"
#include "acco/bench/history.hpp"
#include "acco/bench/report.hpp"
#include "acco/bench/runner.hpp"
#include "acco/core/json.hpp"
#include "acco/core/units.hpp"
#include "acco/dev/cuda_backend.hpp"
#include "acco/dev/host_backend.hpp"
#include "acco/topo/probe.hpp"

namespace acco::cli {
namespace {

Result<bench::RunOptions> run_options(const BenchOptions& b) {
  bench::RunOptions o;
  o.backend = b.backend;
  o.host.devices = b.devices;
  auto link = dev::parse_link(b.link);
  if (!link) {
    return tl::unexpected(std::move(link.error()).with_context("--link"));
  }
  o.host.link = *link;
  o.patterns = b.cases;
  auto bytes = units::parse_bytes(b.bytes);
  if (!bytes || *bytes < 4096 || *bytes > (std::uint64_t{16} << 30)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("--bytes: '{}' is not a size from 4KiB to 16GiB", b.bytes));
  }
  o.defaults.bytes = *bytes;
  o.defaults.reps = b.reps;
  if (b.quick) {
    o.defaults.bytes = std::min<std::uint64_t>(o.defaults.bytes, std::uint64_t{64} << 20);
    o.defaults.reps = std::min(o.defaults.reps, 3);
    o.defaults.warmup = 1;
    o.defaults.copies_per_sample = 2;
    o.defaults.sweep_max_bytes = std::uint64_t{64} << 20;
    o.defaults.small_copies = 2000;
  }
  return o;
}

// The topology, for link peaks and the history's fingerprint. A probe failure is not fatal:
// the bench then reports peaks as unknown.
std::optional<topo::Machine> probe_machine(const Options& o, std::string& warning) {
  topo::ProbeRequest r;
  r.sysroot = o.settings.get("sysroot");
  r.nvml = topo::NvmlMode::kOff;
  auto result = topo::probe(r);
  if (!result) {
    warning = "acco: topology unavailable, link peaks unknown: " + result.error().message + "\n";
    return std::nullopt;
  }
  return result->machine;
}

Outcome list_cases() {
  Outcome out;
  for (const auto& c : bench::cases()) {
    out.out += fmt::format("{:<26} {}\n", c->key(), c->description());
  }
  return out;
}

}  // namespace

Outcome run_bench(const Options& o) {
  if (o.bench.list) {
    return list_cases();
  }
  auto options = run_options(o.bench);
  if (!options) {
    return {"", fmt::format("acco: {}\n", options.error().message), kExitUsage};
  }
  Outcome out;
  auto machine = probe_machine(o, out.err);
  auto run =
      bench::run_benchmarks(*options, machine ? &*machine : nullptr, [&](std::string_view line) {
        if (o.progress) {
          o.progress(line);
        }
      });
  if (!run) {
    const int code =
        run.error().code == Errc::kInvalidArgument ? kExitUsage : exit_code_for(run.error());
    return {"", out.err + fmt::format("acco: {}\n", run.error().message), code};
  }

  std::vector<bench::Comparison> comparisons;
  std::string compare_note;
  if (!o.bench.no_history) {
    auto path = o.bench.history.empty() ? bench::default_history_path()
                                        : Result<std::string>(o.bench.history);
    auto history =
        path ? bench::History::open(*path) : Result<bench::History>(tl::unexpected(path.error()));
    if (!history) {
      if (o.bench.compare) {
        return {"", out.err + fmt::format("acco: history: {}\n", history.error().message),
                exit_code_for(history.error())};
      }
      out.err += fmt::format("acco: history not saved: {}\n", history.error().message);
    } else {
      auto previous = history->last_run(run->fingerprint);
      if (!previous) {
        out.err += fmt::format("acco: history: {}\n", previous.error().message);
      } else if (o.bench.compare && !*previous) {
        compare_note = "No previous run on this machine to compare with.\n";
      } else if (o.bench.compare) {
        comparisons = bench::compare(**previous, *run);
      }
      if (auto saved = history->save(*run); !saved) {
        out.err += fmt::format("acco: history not saved: {}\n", saved.error().message);
      }
    }
  }

  if (!o.bench.html.empty()) {
    if (auto s = core::write_file_atomic(o.bench.html, bench::html_report(*run, comparisons)); !s) {
      return {"", out.err + fmt::format("acco: --html: {}\n", s.error().message), kExitCantCreate};
    }
    out.err += fmt::format("acco: HTML report written to {}\n", o.bench.html);
  }
  if (o.format == Format::kJson) {
    auto j = bench::to_json(*run);
    if (o.bench.compare) {
      j["comparisons"] = bench::to_json(comparisons);
    }
    out.out = j.dump(2) + "\n";
  } else {
    out.out = bench::text_report(*run);
    if (run->machine.value("backend", "") == "host") {
      for (const auto& r : run->results) {
        if (r.case_key == "host_memcpy" && r.status == bench::kStatusOk) {
          out.out += fmt::format(
              "note: on the host backend every emulated DMA is a memcpy; this CPU copies {} on one "
              "thread, so rates above that are out of reach whatever the emulated link\n",
              units::format_rate(r.median_bytes_per_second));
        }
      }
    }
    if (o.bench.compare) {
      out.out += "\n" + (compare_note.empty() ? bench::text_comparison(comparisons) : compare_note);
    }
  }
  return out;
}

Result<bench::BenchRun> quick_bench(const Options& o, const topo::Machine& machine,
                                    std::string& note) {
  BenchOptions b;
  b.quick = true;
  b.bytes = "64MiB";
  b.reps = 3;
  auto cuda = dev::make_cuda_backend();
  std::shared_ptr<dev::Backend> gpus;
  if (cuda && !(*cuda)->devices().empty()) {
    gpus = std::move(*cuda);
    b.backend = "cuda";
    b.cases = {"h2d_pinned_plain", "d2h_pinned_plain", "h2d_pageable_plain", "h2d_pageable_engine"};
    note = "pinned and pageable copies on every GPU, 64 MiB, 3 samples";
  } else {
    // Emulated devices say nothing about this machine; its memory bandwidth does.
    b.backend = "host";
    b.cases = {"host_memcpy"};
    note = fmt::format("no accelerator to measure ({}); host memory bandwidth only",
                       cuda ? std::string("no CUDA device") : cuda.error().message);
  }
  auto options = run_options(b);
  if (!options) {
    return tl::unexpected(options.error());
  }
  options->opened = gpus;  // initialising CUDA once is enough
  return bench::run_benchmarks(*options, &machine, [&](std::string_view line) {
    if (o.progress) {
      o.progress(line);
    }
  });
}

}  // namespace acco::cli
