#include "bench_collective.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/bench/compare.hpp"
#include "acco/bench/history.hpp"
#include "acco/bench/report.hpp"
#include "acco/bench/result.hpp"
#include "acco/cluster/collective.hpp"
#include "acco/cluster/collective_bench.hpp"
#include "acco/cluster/collective_history.hpp"
#include "acco/cluster/collective_plane.hpp"
#include "acco/cluster/communicator.hpp"
#include "acco/core/units.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/report/document.hpp"

#include "bench_command.hpp"
#include "command_spec.hpp"

namespace acco::cli {
namespace {

class CollectiveCommand final : public Command {
 public:
  CollectiveCommand(cluster::CollectiveBenchOptions options, const CollectiveFlags& flags)
      : o_(std::move(options)),
        save_fusion_(flags.save_fusion),
        history_(flags.history),
        no_history_(flags.no_history),
        compare_(flags.compare) {}

  Result<Output> run(const Invocation& inv) const override {
    ACCO_ASSIGN_OR_RETURN(const auto comm, cluster::open_job_communicator());
    Output out;
    std::string warning;
    cluster::CollectiveBenchOptions options = o_;
    options.machine = probe_machine(inv.settings, warning);
    const std::optional<topo::Machine>& machine = options.machine;
    if (comm->rank() == 0) {
      out.err += warning;
    }
    auto result = cluster::run_collective_bench(*comm, options, inv.progress);
    if (!result) {
      return error_output(result.error(), out.err);
    }
    if (comm->rank() != 0) {
      return out;  // rank 0 reports for the job
    }
    std::vector<bench::Comparison> comparisons;  // --compare
    std::string compare_note = "No machine fingerprint (the probe failed): nothing to compare.\n";
    if (!no_history_ && machine) {
      auto recorded =
          bench::record_run(history_, cluster::history_run(*result, *machine), compare_);
      if (!recorded) {
        return error_output(recorded.error(), out.err);
      }
      out.err += recorded->warnings;
      comparisons = std::move(recorded->comparisons);
      compare_note =
          recorded->had_previous
              ? std::string()
              : "No previous run of these collectives on this machine to compare with.\n";
    }
    if (inv.format == Format::kJson) {
      auto j = to_json(*result);
      if (compare_) {
        j["comparisons"] = bench::to_json(comparisons);
      }
      out.out = j.dump(2) + "\n";
    } else {
      out.out = to_text(*result);
      if (compare_ && compare_note.empty()) {
        report::Document doc;
        bench::add_comparison(doc, comparisons);
        out.out += report::render_text(doc);
      } else if (compare_) {
        out.out += "\n" + compare_note;
      }
    }
    if (save_fusion_) {
      auto saved = cluster::save_fusion_threshold(*result, machine ? &*machine : nullptr,
                                                  inv.settings.get("tune-dir"));
      if (!saved) {
        Output failed =
            error_output(std::move(saved.error()).with_context("--save-fusion"), out.err);
        failed.out = std::move(out.out);
        return failed;
      }
      out.err += fmt::format("acco: fusion threshold {} for {} links saved to {}\n",
                             units::format_bytes(saved->fusion.threshold_bytes),
                             saved->fusion.link_class, saved->path);
    }
    if (result->wrong > 0) {
      out.err += fmt::format("acco: {} element(s) held a wrong value after the collectives\n",
                             result->wrong);
      out.exit_code = kExitWrongResults;
    }
    return out;
  }

 private:
  cluster::CollectiveBenchOptions o_;
  bool save_fusion_ = false;
  std::string history_;
  bool no_history_ = false;
  bool compare_ = false;
};

Result<std::uint64_t> size_flag(const char* flag, const std::string& text) {
  auto bytes = units::parse_bytes(text);
  if (!bytes || *bytes < 4 || *bytes > (std::uint64_t{4} << 30)) {
    return bad_value(flag, text, "a size from 4B to 4GiB");
  }
  return *bytes;
}

}  // namespace

CLI::Option* add_collective_flags(CLI::App& sub, CollectiveFlags& f) {
  std::vector<std::string> ops = {"all"};
  for (const cluster::Op op : cluster::kOps) {
    ops.emplace_back(cluster::to_string(op));
  }
  CLI::Option* collective = offer_values(
      sub.add_option("--collective", f.ops,
                     "collectives to measure under mpirun/srun: allreduce,allgather,reducescatter,"
                     "alltoall,broadcast,sendrecv or all")
          ->type_name("OPS"),
      ops);
  sub.add_option("-b,--min-bytes", f.min_bytes, "--collective: smallest size (default 8)")
      ->type_name("SIZE")
      ->needs(collective);
  sub.add_option("-e,--max-bytes", f.max_bytes,
                 "--collective: largest size (default 32MiB; --quick: 1MiB)")
      ->type_name("SIZE")
      ->needs(collective);
  sub.add_option("-f,--factor", f.factor, "--collective: size step factor (default 2)")
      ->type_name("N")
      ->needs(collective);
  sub.add_option("-n,--iters", f.iters,
                 "--collective: timed iterations per size (default 20; --quick: 5)")
      ->type_name("N")
      ->needs(collective);
  sub.add_option("-w,--warmup", f.warmup,
                 "--collective: warm-up iterations per size (default 5; --quick: 1)")
      ->type_name("N")
      ->needs(collective);
  sub.add_flag("--no-check", f.no_check, "--collective: do not check the results")
      ->needs(collective);
  sub.add_flag("--save-fusion", f.save_fusion,
               "--collective: store the allreduce fit's fusion threshold in the tune profile")
      ->needs(collective);
  sub.add_option("--nccl-library", f.nccl_library,
                 "--collective: NCCL library to dlopen and bootstrap (default libnccl.so.2)")
      ->envname("ACCO_NCCL_LIBRARY")
      ->type_name("PATH");
  offer_values(
      sub.add_option("--buffers", f.buffers,
                     "--collective: host (default) or device buffers (the device of "
                     "--backend, one per rank of a node)")
          ->type_name("WHERE")
          ->needs(collective),
      {cluster::to_string(cluster::Buffers::kHost), cluster::to_string(cluster::Buffers::kDevice)});
  offer_values(sub.add_option("--via", f.via,
                              "--collective with --buffers device: auto (NCCL on a GPU, else MPI), "
                              "nccl, or mpi (CUDA-aware when it is, else staged through pinned "
                              "host buffers)")
                   ->type_name("PATH")
                   ->needs(collective),
               {cluster::to_string(cluster::Via::kAuto), cluster::to_string(cluster::Via::kNccl),
                cluster::to_string(cluster::Via::kMpi)});
  sub.add_option("--nccl-timeout", f.nccl_timeout,
                 "--collective: abort NCCL's init, and collectives over NCCL, not complete "
                 "after this long (a peer failed, stopped or cannot be reached; default 300s)")
      ->type_name("DURATION")
      ->needs(collective);
  return collective;
}

Result<std::unique_ptr<Command>> collective_command(const CollectiveFlags& f) {
  cluster::CollectiveBenchOptions options;
  cluster::CollectiveOptions& o = options.collectives;
  ACCO_ASSIGN_OR_RETURN(o.ops, for_flag("--collective", cluster::parse_ops(f.ops)));
  // --quick: a sweep that ends at 1 MiB with few iterations, a look in seconds; what was given
  // explicitly stays.
  const std::string max_bytes = !f.max_bytes.empty() ? f.max_bytes : f.quick ? "1MiB" : "32MiB";
  const int iters = f.iters != -1 ? f.iters : f.quick ? 5 : 20;
  const int warmup = f.warmup != -1 ? f.warmup : f.quick ? 1 : 5;
  ACCO_ASSIGN_OR_RETURN(o.min_bytes, size_flag("--min-bytes", f.min_bytes));
  ACCO_ASSIGN_OR_RETURN(o.max_bytes, size_flag("--max-bytes", max_bytes));
  if (o.min_bytes > o.max_bytes) {
    return usage(
        fmt::format("--min-bytes {} is larger than --max-bytes {}", f.min_bytes, max_bytes));
  }
  if (f.factor < 2 || f.factor > 1024) {
    return bad_value("--factor", std::to_string(f.factor), "a number from 2 to 1024");
  }
  if (iters < 1 || iters > 100000) {
    return bad_value("--iters", std::to_string(iters), "a number from 1 to 100000");
  }
  if (warmup < 0 || warmup > 100000) {
    return bad_value("--warmup", std::to_string(warmup), "a number from 0 to 100000");
  }
  o.factor = f.factor;
  o.iters = iters;
  o.warmup = warmup;
  o.check = !f.no_check;
  if (f.nccl_library.empty()) {
    return bad_value("--nccl-library", f.nccl_library, "a library name or path");
  }
  if (f.save_fusion &&
      std::find(o.ops.begin(), o.ops.end(), cluster::Op::kAllReduce) == o.ops.end()) {
    return usage("--save-fusion: needs allreduce in --collective");
  }
  if (f.compare && f.no_history) {
    return usage("--compare needs the history; drop --no-history");
  }
  options.nccl_library = f.nccl_library;
  ACCO_ASSIGN_OR_RETURN(options.buffers, for_flag("--buffers", cluster::parse_buffers(f.buffers)));
  ACCO_ASSIGN_OR_RETURN(options.via, for_flag("--via", cluster::parse_via(f.via)));
  ACCO_RETURN_IF_ERROR(as_usage(cluster::check_via(options.buffers, options.via)));
  ACCO_ASSIGN_OR_RETURN(const auto backend, parse_backend(f.backend));
  device::HostBackendOptions host;  // the device of --buffers device on the host backend
  ACCO_ASSIGN_OR_RETURN(host.link, for_flag("--link", device::parse_link(f.link)));
  options.open_backend = cluster::backend_opener(backend, std::move(host));
  auto timeout = units::parse_duration(f.nccl_timeout);
  if (!timeout || !(*timeout > 0)) {
    return usage(
        fmt::format("--nccl-timeout '{}': expected a duration above 0 (300s, 5m)", f.nccl_timeout));
  }
  options.nccl_timeout_seconds = *timeout;
  return std::unique_ptr<Command>(std::make_unique<CollectiveCommand>(std::move(options), f));
}

}  // namespace acco::cli
