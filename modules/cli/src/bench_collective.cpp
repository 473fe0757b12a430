#include "bench_collective.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/cluster/collective.hpp"
#include "acco/cluster/collective_bench.hpp"
#include "acco/cluster/collective_job.hpp"
#include "acco/cluster/communicator.hpp"

#include "bench_command.hpp"
#include "command_spec.hpp"

namespace acco::cli {
namespace {

class CollectiveCommand final : public Command {
 public:
  explicit CollectiveCommand(cluster::CollectiveJobOptions options) : o_(std::move(options)) {}

  Result<Output> run(const Invocation& inv) const override {
    ACCO_ASSIGN_OR_RETURN(const auto comm, cluster::open_job_communicator());
    std::string warning;
    cluster::CollectiveJobOptions options = o_;
    options.bench.machine = probe_machine(inv.settings, warning);
    options.tune_dir = inv.settings.get("tune-dir");
    const std::string err = comm->rank() == 0 ? warning : "";
    auto job = cluster::run_collective_job(*comm, options, inv.progress);
    if (!job) {
      return error_output(job.error(), err);
    }
    if (!*job) {
      return Output{};  // rank 0 reports for the job
    }
    Output out{render(inv, **job, [](const auto& j) { return to_text(j); }), err + (*job)->notes,
               (*job)->run.wrong > 0 ? kExitWrongResults : kExitOk};
    if (const auto& failure = (*job)->fusion_failure) {
      Output failed = error_output(Error(*failure).with_context("--save-fusion"), out.err);
      failed.out = std::move(out.out);
      return failed;
    }
    return out;
  }

 private:
  cluster::CollectiveJobOptions o_;
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
  cluster::CollectiveJobOptions job{
      .bench = std::move(options),
      .history = f.no_history ? std::nullopt : std::optional(f.history),
      .compare = f.compare,
      .save_fusion = f.save_fusion};
  return std::unique_ptr<Command>(std::make_unique<CollectiveCommand>(std::move(job)));
}

}  // namespace acco::cli
