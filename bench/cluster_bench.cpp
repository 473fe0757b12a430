// acco's collectives against Open MPI's own calls, side by side in one MPI job: for each size,
// rounds that alternate acco's Communicator::run with MPI_Allreduce (and, for sendrecv, with
// MPI_Sendrecv on the same ring), the median of the rounds kept for each; acco / MPI is the
// overhead acco adds to the data plane (issue 18's target: within 5 % from 1 MiB up). Run under
// mpirun:
//   mpirun -np 2 build/default/bench/acco_cluster_bench --json dist-bench.json
// Then fusion: --fusion-count allreduces of --fusion-bytes each, one by one (in place) through
// Communicator::run against FusedAllReduce (Horovod's way: packed into a fusion buffer and copied
// back) and against FusionBuckets (PyTorch DDP's bucket views: the tensors live in the buckets,
// reduced in place), with the threshold chosen from this link's alpha-beta fit (an allreduce
// sweep from 8 B to 4 MiB), alternating rounds; the target is at least 10x.
// Rank 0 prints the tables and writes JSON ("acco.dist-bench/1"). Not a test.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "acco/cluster/collective.hpp"
#include "acco/cluster/communicator.hpp"
#include "acco/cluster/fusion.hpp"
#include "acco/cluster/launcher.hpp"
#include "acco/core/stats.hpp"
#include "acco/core/units.hpp"

namespace {

using acco::cluster::Op;

struct Options {
  std::string min = "1MiB";
  std::string max = "32MiB";
  int iters = 10;  // operations per timed round
  int rounds = 7;  // rounds per side, alternating
  std::string json;
  int fusion_count = 1000;
  std::string fusion_bytes = "4KiB";
  std::string fusion_threshold;              // empty: from the fit
  std::uint64_t fusion_threshold_bytes = 0;  // --fusion-threshold parsed; 0: from the fit
};

using acco::core::stats::median;

// Seconds per operation of `body` over `iters` calls, the slowest rank's (every rank agrees).
template <typename Body>
double timed(int iters, Body body) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    body();
  }
  const double mine = (MPI_Wtime() - start) / iters;
  double slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

struct Row {
  std::string op;
  std::uint64_t bytes = 0;
  double acco_seconds = 0;
  double mpi_seconds = 0;
};

struct Fusion {
  acco::LatencyBandwidth fit;
  std::string fit_error;  // why the fit failed (the threshold is then the smallest)
  std::uint64_t threshold = 0;
  bool threshold_given = false;   // --fusion-threshold, not the fit's
  std::uint64_t collectives = 0;  // per fused round
  double one_by_one_seconds = 0;  // median round, all `count` allreduces
  double fused_seconds = 0;
  std::uint64_t bucket_collectives = 0;
  double bucket_seconds = 0;  // the same allreduces as bucket views
  std::uint64_t wrong = 0;
};

// The alpha-beta fit of allreduce on this job's link, the threshold from it, then `count`
// allreduces of `bytes` one by one and fused, alternating rounds; results checked.
Fusion measure_fusion(acco::cluster::Communicator& c, const Options& o, std::uint64_t bytes) {
  Fusion f;
  std::vector<acco::cluster::SizePoint> sweep;
  for (std::uint64_t s = 8; s <= (std::uint64_t{4} << 20); s *= 4) {
    const std::uint64_t n = s / sizeof(float);
    std::vector<float> send(n, 1.0F);
    std::vector<float> recv(n);
    const auto op = [&] { (void)c.run(Op::kAllReduce, send.data(), recv.data(), n); };
    timed(2, op);
    std::vector<double> t;
    t.reserve(3);
    for (int r = 0; r < 3; ++r) {
      t.push_back(timed(o.iters, op));
    }
    acco::cluster::SizePoint p;
    p.bytes = s;
    p.seconds = median(t);
    sweep.push_back(p);
  }
  auto fit = acco::cluster::fit_points(sweep);
  f.fit = fit ? *fit : acco::LatencyBandwidth{};
  f.fit_error = fit ? std::string() : fit.error().message;
  f.threshold = fit ? acco::cluster::fusion_threshold(*fit) : acco::cluster::kMinFusionThreshold;
  if (o.fusion_threshold_bytes > 0) {
    f.threshold = o.fusion_threshold_bytes;
    f.threshold_given = true;
  }

  const std::uint64_t n = bytes / sizeof(float);
  const auto count = static_cast<std::size_t>(o.fusion_count);
  std::vector<std::vector<float>> buffers(count, std::vector<float>(n));
  const auto reset = [&] {
    for (std::size_t b = 0; b < count; ++b) {
      std::fill(buffers[b].begin(), buffers[b].end(), static_cast<float>(b % 7 + 1));
    }
  };
  // Elements of tensor `b` that do not hold its sum over the ranks.
  const auto wrong_in = [&](std::span<const float> tensor, std::size_t b) {
    const auto want = static_cast<float>((b % 7 + 1) * static_cast<std::size_t>(c.size()));
    return static_cast<std::uint64_t>(
        std::count_if(tensor.begin(), tensor.end(), [&](float v) { return v != want; }));
  };
  const auto expect = [&] {
    for (std::size_t b = 0; b < count; ++b) {
      f.wrong += wrong_in(buffers[b], b);
    }
  };
  const auto one_by_one = [&] {
    for (auto& b : buffers) {
      (void)c.run(Op::kAllReduce, b.data(), b.data(), n);  // in place
    }
  };
  // One engine for every round, as a training loop keeps it: its fusion buffer is made once.
  auto engine = acco::cluster::FusedAllReduce::make(c, {.threshold_bytes = f.threshold}).value();
  const auto fused = [&] {
    const std::uint64_t before = engine.stats().collectives;
    for (auto& b : buffers) {
      (void)engine.add(b.data(), n);
    }
    (void)engine.flush();
    f.collectives = engine.stats().collectives - before;
  };
  const std::vector<std::size_t> counts(count, n);
  auto buckets =
      acco::cluster::FusionBuckets::make(c, counts, {.threshold_bytes = f.threshold}).value();
  f.bucket_collectives = buckets.buckets();
  const auto reset_views = [&] {
    for (std::size_t b = 0; b < count; ++b) {
      const auto view = buckets.tensor(b);
      std::fill(view.begin(), view.end(), static_cast<float>(b % 7 + 1));
    }
  };
  const auto expect_views = [&] {
    for (std::size_t b = 0; b < count; ++b) {
      f.wrong += wrong_in(buckets.tensor(b), b);
    }
  };
  std::vector<double> ours;
  std::vector<double> theirs;
  std::vector<double> views;
  for (int r = 0; r < o.rounds; ++r) {
    reset();
    theirs.push_back(timed(1, one_by_one));
    expect();
    reset();
    ours.push_back(timed(1, fused));
    expect();
    reset_views();
    views.push_back(timed(1, [&] { (void)buckets.allreduce(); }));
    expect_views();
  }
  f.one_by_one_seconds = median(theirs);
  f.fused_seconds = median(ours);
  f.bucket_seconds = median(views);
  return f;
}

int run(int argc, char** argv) {
  CLI::App app{"acco's collectives against Open MPI's own calls (run under mpirun)"};
  Options o;
  app.add_option("--min-bytes", o.min, "smallest size (1MiB)");
  app.add_option("--max-bytes", o.max, "largest size (32MiB)");
  app.add_option("--iters", o.iters, "operations per timed round (10)");
  app.add_option("--rounds", o.rounds, "rounds per side, alternating (7)");
  app.add_option("--json", o.json, "write results here (rank 0)");
  app.add_option("--fusion-count", o.fusion_count, "small allreduces in the fusion case (1000)");
  app.add_option("--fusion-bytes", o.fusion_bytes, "size of each (4KiB)");
  app.add_option("--fusion-threshold", o.fusion_threshold,
                 "fusion threshold instead of the fit's (128MiB: Horovod's default)");
  CLI11_PARSE(app, argc, argv);
  const auto min = acco::units::parse_bytes(o.min);
  const auto max = acco::units::parse_bytes(o.max);
  const auto small = acco::units::parse_bytes(o.fusion_bytes);
  if (!o.fusion_threshold.empty()) {
    o.fusion_threshold_bytes = acco::units::parse_bytes(o.fusion_threshold).value_or(0);
  }
  if (!min || !max || !small || *min < 4 || *max < *min || o.iters < 1 || o.rounds < 1 ||
      *small < 4 || o.fusion_count < 1 ||
      (!o.fusion_threshold.empty() && o.fusion_threshold_bytes < 4)) {
    fmt::print(stderr,
               "cluster bench: expected 4 B <= --min-bytes <= --max-bytes, --iters, --rounds and "
               "--fusion-count >= 1, --fusion-bytes and --fusion-threshold >= 4 B\n");
    return 64;
  }
  auto launch = acco::cluster::detect_launcher(acco::cluster::process_environment());
  if (!launch || launch->launcher == acco::cluster::Launcher::kNone) {
    fmt::print(stderr, "cluster bench: run it under mpirun (no launcher found)\n");
    return 64;
  }
  auto comm = acco::cluster::open_communicator(*launch);
  if (!comm) {
    fmt::print(stderr, "cluster bench: {}\n", comm.error().message);
    return 69;
  }
  acco::cluster::Communicator& c = **comm;
  const int rank = c.rank();
  const int ranks = c.size();
  const int next = (rank + 1) % ranks;
  const int prev = (rank + ranks - 1) % ranks;
  std::vector<Row> rows;
  for (std::uint64_t bytes = *min; bytes <= *max; bytes *= 2) {
    const std::uint64_t count = bytes / sizeof(float);
    const int n = static_cast<int>(count);
    std::vector<float> send(count, 1.0F);
    std::vector<float> recv(count);
    for (const Op op : {Op::kAllReduce, Op::kSendRecv}) {
      std::vector<double> ours;
      std::vector<double> theirs;
      const auto acco_op = [&] { (void)c.run(op, send.data(), recv.data(), count); };
      const auto mpi_op = [&] {
        if (op == Op::kAllReduce) {
          MPI_Allreduce(send.data(), recv.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        } else {
          MPI_Sendrecv(send.data(), n, MPI_FLOAT, next, 7001, recv.data(), n, MPI_FLOAT, prev, 7001,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
      };
      timed(2, acco_op);  // warm-up of both
      timed(2, mpi_op);
      for (int r = 0; r < o.rounds; ++r) {  // alternating, the order swapped each round
        if (r % 2 == 0) {
          ours.push_back(timed(o.iters, acco_op));
          theirs.push_back(timed(o.iters, mpi_op));
        } else {
          theirs.push_back(timed(o.iters, mpi_op));
          ours.push_back(timed(o.iters, acco_op));
        }
      }
      rows.push_back({acco::cluster::to_string(op), bytes, median(ours), median(theirs)});
    }
  }
  const Fusion fusion = measure_fusion(c, o, *small);
  if (rank == 0) {
    fmt::print("acco collectives against Open MPI's own calls: {} ranks on {} node(s), {}\n", ranks,
               c.nodes(), c.capabilities().library);
    fmt::print("median of {} alternating rounds of {} operations, the slowest rank's time\n\n",
               o.rounds, o.iters);
    fmt::print("{:<10} {:>10} {:>12} {:>12} {:>9}\n", "op", "size", "acco (us)", "MPI (us)",
               "acco/MPI");
    nlohmann::json j = {
        {"schema", "acco.dist-bench/1"},       {"ranks", ranks},     {"nodes", c.nodes()},
        {"library", c.capabilities().library}, {"rounds", o.rounds}, {"iters", o.iters},
        {"rows", nlohmann::json::array()}};
    double worst = 0;
    for (const Row& r : rows) {
      const double ratio = r.acco_seconds / r.mpi_seconds;
      worst = std::max(worst, ratio);
      fmt::print("{:<10} {:>10} {:>12.1f} {:>12.1f} {:>9.3f}\n", r.op,
                 acco::units::format_bytes(r.bytes), r.acco_seconds * 1e6, r.mpi_seconds * 1e6,
                 ratio);
      j["rows"].push_back({{"op", r.op},
                           {"bytes", r.bytes},
                           {"acco_seconds", r.acco_seconds},
                           {"mpi_seconds", r.mpi_seconds},
                           {"ratio", ratio}});
    }
    j["worst_ratio"] = worst;
    fmt::print("\nworst acco/MPI {:.3f} (target: at most 1.05 at every size from 1 MiB)\n", worst);
    fmt::print(
        "\nfusion: {} allreduces of {}; alpha {:.1f} us, beta {:.2f} GB/s -> threshold {}{}\n",
        o.fusion_count, acco::units::format_bytes(*small), fusion.fit.alpha_seconds * 1e6,
        fusion.fit.beta_bytes_per_second / 1e9, acco::units::format_bytes(fusion.threshold),
        fusion.threshold_given ? " (--fusion-threshold)" : "");
    if (!fusion.fit_error.empty()) {
      fmt::print("({}: the smallest threshold is used)\n", fusion.fit_error);
    }
    const auto line = [](const char* name, std::uint64_t collectives, double seconds,
                         double baseline) {
      fmt::print("{:<34} {:>11} {:>12.1f} {:>9.1f}x\n", name, collectives, seconds * 1e6,
                 baseline / seconds);
    };
    fmt::print("{:<34} {:>11} {:>12} {:>10}\n", "", "collectives", "time (us)", "speed-up");
    line("one by one (in place)", static_cast<std::uint64_t>(o.fusion_count),
         fusion.one_by_one_seconds, fusion.one_by_one_seconds);
    line("fused: packed, copied back", fusion.collectives, fusion.fused_seconds,
         fusion.one_by_one_seconds);
    line("fused: bucket views, in place", fusion.bucket_collectives, fusion.bucket_seconds,
         fusion.one_by_one_seconds);
    fmt::print("(target: >= 10x)  wrong elements: {}\n", fusion.wrong);
    j["fusion"] = {{"count", o.fusion_count},
                   {"bytes", *small},
                   {"alpha_seconds", fusion.fit.alpha_seconds},
                   {"beta_bytes_per_second", fusion.fit.beta_bytes_per_second},
                   {"fit_error", fusion.fit_error},
                   {"threshold_bytes", fusion.threshold},
                   {"threshold_given", fusion.threshold_given},
                   {"collectives", fusion.collectives},
                   {"one_by_one_seconds", fusion.one_by_one_seconds},
                   {"fused_seconds", fusion.fused_seconds},
                   {"speedup", fusion.one_by_one_seconds / fusion.fused_seconds},
                   {"bucket_collectives", fusion.bucket_collectives},
                   {"bucket_seconds", fusion.bucket_seconds},
                   {"bucket_speedup", fusion.one_by_one_seconds / fusion.bucket_seconds},
                   {"wrong", fusion.wrong}};
    if (!o.json.empty()) {
      std::ofstream(o.json) << j.dump(2) << "\n";
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (...) {
    std::fputs("cluster bench: unexpected failure\n", stderr);
    return 70;
  }
}
