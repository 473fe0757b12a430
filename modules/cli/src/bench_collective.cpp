#include "bench_collective.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/bench/compare.hpp"
#include "acco/bench/report.hpp"
#include "acco/cluster/collective.hpp"
#include "acco/cluster/collective_bench.hpp"
#include "acco/cluster/collective_history.hpp"
#include "acco/cluster/communicator.hpp"
#include "acco/core/units.hpp"
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
    cluster::CollectiveHistory history;  // --compare reads it
    if (!no_history_) {
      auto recorded = cluster::record_collective_run(*result, machine, history_, compare_);
      if (!recorded) {
        return error_output(recorded.error(), out.err);
      }
      history = std::move(*recorded);
      out.err += history.warnings;
    }
    if (inv.format == Format::kJson) {
      auto j = to_json(*result);
      if (compare_) {
        j["comparisons"] = bench::to_json(history.comparisons);
      }
      out.out = j.dump(2) + "\n";
    } else {
      out.out = to_text(*result);
      if (compare_ && history.note.empty()) {
        report::Document doc;
        bench::add_comparison(doc, history.comparisons);
        out.out += report::render_text(doc);
      } else if (compare_) {
        out.out += "\n" + history.note;
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

}  // namespace

CLI::Option* add_collective_flags(CLI::App& sub, CollectiveFlags& f) {
  std::vector<std::string> ops = {"all"};
  for (const cluster::Op op : cluster::kOps) {
    ops.emplace_back(cluster::to_string(op));
  }
  CLI::Option* collective = offer_values(
      sub.add_option("--collective", f.request.ops,
                     "collectives to measure under mpirun/srun: allreduce,allgather,reducescatter,"
                     "alltoall,broadcast,sendrecv or all")
          ->type_name("OPS"),
      ops);
  sub.add_option("-b,--min-bytes", f.request.min_bytes, "--collective: smallest size (default 8)")
      ->type_name("SIZE")
      ->needs(collective);
  sub.add_option("-e,--max-bytes", f.request.max_bytes,
                 "--collective: largest size (default 32MiB; --quick: 1MiB)")
      ->type_name("SIZE")
      ->needs(collective);
  sub.add_option("-f,--factor", f.request.factor, "--collective: size step factor (default 2)")
      ->type_name("N")
      ->needs(collective);
  sub.add_option("-n,--iters", f.request.iters,
                 "--collective: timed iterations per size (default 20; --quick: 5)")
      ->type_name("N")
      ->needs(collective);
  sub.add_option("-w,--warmup", f.request.warmup,
                 "--collective: warm-up iterations per size (default 5; --quick: 1)")
      ->type_name("N")
      ->needs(collective);
  sub.add_flag("--no-check", f.request.no_check, "--collective: do not check the results")
      ->needs(collective);
  sub.add_flag("--save-fusion", f.save_fusion,
               "--collective: store the allreduce fit's fusion threshold in the tune profile")
      ->needs(collective);
  sub.add_option("--nccl-library", f.request.nccl_library,
                 "--collective: NCCL library to dlopen and bootstrap (default libnccl.so.2)")
      ->envname("ACCO_NCCL_LIBRARY")
      ->type_name("PATH");
  offer_values(
      sub.add_option("--buffers", f.request.buffers,
                     "--collective: host (default) or device buffers (the device of "
                     "--backend, one per rank of a node)")
          ->type_name("WHERE")
          ->needs(collective),
      {cluster::to_string(cluster::Buffers::kHost), cluster::to_string(cluster::Buffers::kDevice)});
  offer_values(sub.add_option("--via", f.request.via,
                              "--collective with --buffers device: auto (NCCL on a GPU, else MPI), "
                              "nccl, or mpi (CUDA-aware when it is, else staged through pinned "
                              "host buffers)")
                   ->type_name("PATH")
                   ->needs(collective),
               {cluster::to_string(cluster::Via::kAuto), cluster::to_string(cluster::Via::kNccl),
                cluster::to_string(cluster::Via::kMpi)});
  sub.add_option("--nccl-timeout", f.request.nccl_timeout,
                 "--collective: abort NCCL's init, and collectives over NCCL, not complete "
                 "after this long (a peer failed, stopped or cannot be reached; default 300s)")
      ->type_name("DURATION")
      ->needs(collective);
  return collective;
}

Result<std::unique_ptr<Command>> collective_command(const CollectiveFlags& f) {
  ACCO_ASSIGN_OR_RETURN(auto options, as_usage(cluster::collective_bench_options(f.request)));
  const auto& ops = options.collectives.ops;
  if (f.save_fusion && std::find(ops.begin(), ops.end(), cluster::Op::kAllReduce) == ops.end()) {
    return usage("--save-fusion: needs allreduce in --collective");
  }
  if (f.compare && f.no_history) {
    return usage("--compare needs the history; drop --no-history");
  }
  return std::unique_ptr<Command>(std::make_unique<CollectiveCommand>(std::move(options), f));
}

}  // namespace acco::cli
