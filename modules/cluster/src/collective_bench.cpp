#include "acco/cluster/collective_bench.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/cluster/agreement.hpp"
#include "acco/cluster/fusion.hpp"
#include "acco/core/units.hpp"

namespace acco::cluster {
namespace {

constexpr std::uint64_t kElement = sizeof(float);

bool splits(Op op) {
  return op == Op::kAllGather || op == Op::kReduceScatter || op == Op::kAllToAll;
}

// Element i of rank r's send buffer: small integers, so sums over ranks are exact in float.
float value(int rank, std::uint64_t i) {
  return static_cast<float>((static_cast<std::uint64_t>(rank + 1) * 7 + i) % 61);
}

// Rank `rank`'s send buffer and the size of its receive buffer (nccl-tests' layouts).
struct Layout {
  std::vector<float> send;
  std::size_t recv_count = 0;
};

Layout make_layout(Op op, int rank, int ranks, std::uint64_t count) {
  const auto n = static_cast<std::uint64_t>(ranks);
  const bool wide_send = op == Op::kReduceScatter || op == Op::kAllToAll;
  const bool wide_recv = op == Op::kAllGather || op == Op::kAllToAll;
  Layout b;
  b.send.resize(wide_send ? count * n : count);
  b.recv_count = wide_recv ? count * n : count;
  for (std::uint64_t i = 0; i < b.send.size(); ++i) {
    b.send[i] = value(rank, i);
  }
  return b;
}

float sum_over_ranks(int ranks, std::uint64_t i) {
  float s = 0;
  for (int r = 0; r < ranks; ++r) {
    s += value(r, i);
  }
  return s;
}

// Elements of `recv` that differ from what the op must leave there on `rank`.
std::uint64_t count_wrong(Op op, int rank, int ranks, std::uint64_t count,
                          const std::vector<float>& recv) {
  const auto expected = [&](std::uint64_t j) -> float {
    const std::uint64_t block = count == 0 ? 0 : j / count;
    const std::uint64_t i = count == 0 ? 0 : j % count;
    switch (op) {
      case Op::kAllReduce:
        return sum_over_ranks(ranks, j);
      case Op::kAllGather:
        return value(static_cast<int>(block), i);
      case Op::kReduceScatter:
        return sum_over_ranks(ranks, static_cast<std::uint64_t>(rank) * count + j);
      case Op::kAllToAll:
        return value(static_cast<int>(block), static_cast<std::uint64_t>(rank) * count + i);
      case Op::kBroadcast:
        return value(0, j);
      case Op::kSendRecv:
        return value((rank + ranks - 1) % ranks, j);
    }
    return 0;
  };
  std::uint64_t wrong = 0;
  for (std::uint64_t j = 0; j < recv.size(); ++j) {
    if (recv[j] != expected(j)) {
      ++wrong;
    }
  }
  return wrong;
}

// `n` collectives, then waits for them. On an asynchronous plane every rank says whether it
// could queue all of them before any waits: a rank that failed to queue one would otherwise leave
// its peers' queued work waiting for it forever. On the others a failure is this rank's alone
// (its peers are stopped in the same blocking call as with MPI itself).
Status run_and_complete(Communicator& comm, CollectivePlane& plane, Op op, std::size_t count,
                        int n) {
  Status queued;
  for (int i = 0; i < n && queued; ++i) {
    queued = plane.run(op, count);
  }
  if (plane.asynchronous()) {
    if (auto all = agree(comm, std::move(queued)); !all) {
      plane.abandon();
      return all;
    }
  } else {
    ACCO_RETURN_IF_ERROR(queued);
  }
  return plane.complete();
}

Result<SizePoint> measure(Communicator& comm, CollectivePlane& plane, Op op, std::uint64_t size,
                          const CollectiveOptions& o) {
  const int ranks = comm.size();
  const std::uint64_t per_rank = splits(op) ? size / static_cast<std::uint64_t>(ranks) : size;
  const std::uint64_t count = per_rank / kElement;
  const Layout layout = make_layout(op, comm.rank(), ranks, count);
  // Buffers and a first, untimed collective are agreed on by every rank: a rank that fails here
  // stops them all (its peers' NCCL work abandoned) instead of leaving them waiting for it.
  ACCO_RETURN_IF_ERROR(agree(comm, plane.prepare(layout.send, layout.recv_count, -1.0F)));
  if (auto first = agree(comm, plane.run(op, count)); !first) {
    plane.abandon();
    return tl::unexpected(std::move(first.error()));
  }
  ACCO_RETURN_IF_ERROR(run_and_complete(comm, plane, op, count, o.warmup));
  ACCO_RETURN_IF_ERROR(comm.barrier());
  const double start = comm.seconds();
  ACCO_RETURN_IF_ERROR(run_and_complete(comm, plane, op, count, o.iters));
  const double per_op = (comm.seconds() - start) / o.iters;
  std::uint64_t wrong = 0;
  if (o.check) {
    ACCO_ASSIGN_OR_RETURN(const auto recv, plane.received());
    wrong = count_wrong(op, comm.rank(), ranks, count, recv);
  }
  ACCO_ASSIGN_OR_RETURN(const auto times, comm.allgather(per_op));
  ACCO_ASSIGN_OR_RETURN(const auto wrongs, comm.allgather(static_cast<double>(wrong)));
  double all_wrong = 0;
  for (const double w : wrongs) {
    all_wrong += w;
  }
  return make_point(op, ranks, size, count, times, static_cast<std::uint64_t>(all_wrong));
}

std::string rate(double bytes_per_second) {
  return fmt::format("{:.2f}", bytes_per_second / 1e9);
}

}  // namespace

Status validate(const CollectiveOptions& o) {
  if (o.ops.empty()) {
    return fail(Errc::kInvalidArgument, "collectives: expected at least one operation");
  }
  if (o.min_bytes < kElement || o.max_bytes < o.min_bytes ||
      o.max_bytes > (std::uint64_t{4} << 30)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("sizes {}..{} bytes: expected 4 B <= min <= max <= 4 GiB", o.min_bytes,
                            o.max_bytes));
  }
  if (o.factor < 2 || o.factor > 1024) {
    return fail(Errc::kInvalidArgument,
                fmt::format("size factor {}: expected 2 to 1024", o.factor));
  }
  if (o.iters < 1 || o.iters > 100000 || o.warmup < 0 || o.warmup > 100000) {
    return fail(Errc::kInvalidArgument,
                fmt::format("iterations {} (warm-up {}): expected 1 to 100000 (0 to 100000)",
                            o.iters, o.warmup));
  }
  return {};
}

Result<CollectiveRun> run_collectives(Communicator& comm, const CollectiveOptions& options,
                                      const ExpectedPeak& peak, const ProgressLine& progress) {
  const auto plane = host_plane(comm);
  return run_collectives(comm, *plane, options, peak, progress);
}

Result<CollectiveRun> run_collectives(Communicator& comm, CollectivePlane& plane,
                                      const CollectiveOptions& options, const ExpectedPeak& peak,
                                      const ProgressLine& progress) {
  ACCO_RETURN_IF_ERROR(validate(options));
  CollectiveRun run;
  run.ranks = comm.size();
  run.nodes = comm.nodes();
  run.backend = comm.backend();
  run.capabilities = comm.capabilities();
  run.path = plane.path();
  run.data_path = describe(run.path, run.backend);
  run.options = options;
  for (const Op op : options.ops) {
    const std::uint64_t granule =
        kElement * (splits(op) ? static_cast<std::uint64_t>(run.ranks) : 1);
    ACCO_ASSIGN_OR_RETURN(const auto sizes, size_sweep(std::max(options.min_bytes, granule),
                                                       std::max(options.max_bytes, granule),
                                                       options.factor, granule));
    OpResult r;
    r.op = op;
    for (const std::uint64_t size : sizes) {
      auto point = measure(comm, plane, op, size, options);
      if (!point) {
        return tl::unexpected(
            std::move(point.error())
                .with_context(fmt::format("{} of {} bytes", to_string(op), size)));
      }
      run.wrong += point->wrong;
      r.points.push_back(*point);
    }
    r.summary = summarize(r.points, run.ranks, peak.bytes_per_second, peak.source);
    if (auto fit = fit_points(r.points); fit) {
      r.fit = *fit;
      r.fusion_threshold = op == Op::kAllReduce ? fusion_threshold(*fit) : 0;
    }
    if (progress && comm.rank() == 0) {
      progress(fmt::format("{}: {} sizes, plateau {} GB/s", to_string(op), r.points.size(),
                           rate(r.summary.plateau_busbw)));
    }
    run.ops.push_back(std::move(r));
  }
  return run;
}

std::string to_text(const CollectiveRun& run) {
  std::string out = fmt::format("# acco collectives: {} rank{} on {} node{}, backend {} ({})\n",
                                run.ranks, run.ranks == 1 ? "" : "s", run.nodes,
                                run.nodes == 1 ? "" : "s", run.backend, run.capabilities.library);
  out +=
      fmt::format("# data path: {}{}; CUDA-aware MPI: {} ({})\n", run.data_path,
                  run.device.empty() ? std::string() : fmt::format(" on {}", run.device),
                  run.capabilities.cuda_aware ? "yes" : "no", run.capabilities.cuda_aware_source);
  if (!run.nccl.library.empty()) {
    out += fmt::format("# {}; the collectives below ran on {}\n", to_text(run.nccl), run.data_path);
  }
  out += fmt::format("# warm-up {}, iterations {}, check {}; GB/s = 1e9 bytes per second\n",
                     run.options.warmup, run.options.iters, run.options.check ? "on" : "off");
  for (const OpResult& r : run.ops) {
    const bool reduces = r.op == Op::kAllReduce || r.op == Op::kReduceScatter;
    out += fmt::format("#\n# {}\n", to_string(r.op));
    out += fmt::format("# {:>10} {:>12} {:>6} {:>6} {:>5} {:>10} {:>7} {:>7} {:>7}\n", "size",
                       "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong");
    out += fmt::format("# {:>10} {:>12} {:>6} {:>6} {:>5} {:>10} {:>7} {:>7} {:>7}\n", "(B)",
                       "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "");
    for (const SizePoint& p : r.points) {
      out +=
          fmt::format("  {:>10} {:>12} {:>6} {:>6} {:>5} {:>10.2f} {:>7} {:>7} {:>7}\n", p.bytes,
                      p.count, "float", reduces ? "sum" : "none", r.op == Op::kBroadcast ? 0 : -1,
                      p.seconds * 1e6, rate(p.algbw), rate(p.busbw), p.wrong);
    }
    const OpSummary& s = r.summary;
    const bool single = s.verdict == Verdict::kSingleRank;
    out += fmt::format(
        "# {}: plateau {} {} GB/s (median of the {} largest size{}), n1/2 {}, latency {:.2f} us "
        "at {} B\n",
        to_string(r.op), single ? "algbw" : "busbw", rate(s.plateau_busbw), s.plateau_sizes,
        s.plateau_sizes == 1 ? "" : "s",
        s.n_half ? units::format_bytes(*s.n_half) : std::string("-"), s.small_latency_seconds * 1e6,
        r.points.empty() ? 0 : r.points.front().bytes);
    if (r.fit) {
      out +=
          fmt::format("#   alpha-beta fit: alpha {:.2f} us, beta {} GB/s{}\n",
                      r.fit->alpha_seconds * 1e6, rate(r.fit->beta_bytes_per_second),
                      r.fusion_threshold > 0 ? fmt::format("; fusion threshold {} (10 alpha beta)",
                                                           units::format_bytes(r.fusion_threshold))
                                             : std::string());
    }
    if (single) {
      out += "#   one rank: nothing crosses a link (busbw 0, algbw only)\n";
    } else if (s.expected_busbw > 0) {
      out += fmt::format("#   expected {} GB/s ({}), efficiency {:.0f} %: {}\n",
                         rate(s.expected_busbw), s.expected_source, 100 * s.efficiency,
                         to_string(s.verdict));
    } else {
      out += fmt::format("#   no expected peak ({})\n",
                         s.expected_source.empty() ? "no link known" : s.expected_source);
    }
  }
  out += fmt::format("#\n# Out of bounds values : {} {}\n", run.wrong,
                     run.wrong == 0 ? "OK" : "FAILED");
  return out;
}

nlohmann::ordered_json to_json(const CollectiveRun& run) {
  nlohmann::ordered_json j;
  j["schema"] = kCollectiveSchema;
  j["ranks"] = run.ranks;
  j["nodes"] = run.nodes;
  j["backend"] = run.backend;
  j["library"] = run.capabilities.library;
  j["thread_multiple"] = run.capabilities.thread_multiple;
  j["cuda_aware"] = run.capabilities.cuda_aware;
  j["cuda_aware_source"] = run.capabilities.cuda_aware_source;
  j["path"] = to_string(run.path);
  j["data_path"] = run.data_path;
  j["device"] = run.device;
  if (!run.nccl.library.empty()) {
    j["nccl"] = to_json(run.nccl);
  }
  j["options"] = {{"min_bytes", run.options.min_bytes}, {"max_bytes", run.options.max_bytes},
                  {"factor", run.options.factor},       {"warmup", run.options.warmup},
                  {"iters", run.options.iters},         {"check", run.options.check}};
  j["ops"] = nlohmann::ordered_json::array();
  for (const OpResult& r : run.ops) {
    nlohmann::ordered_json op;
    op["op"] = to_string(r.op);
    op["points"] = nlohmann::ordered_json::array();
    for (const SizePoint& p : r.points) {
      op["points"].push_back({{"bytes", p.bytes},
                              {"count", p.count},
                              {"seconds", p.seconds},
                              {"min_seconds", p.min_seconds},
                              {"max_seconds", p.max_seconds},
                              {"algbw_bytes_per_second", p.algbw},
                              {"busbw_bytes_per_second", p.busbw},
                              {"wrong", p.wrong}});
    }
    const OpSummary& s = r.summary;
    op["summary"] = {
        {"plateau_busbw_bytes_per_second", s.plateau_busbw},
        {"plateau_sizes", s.plateau_sizes},
        {"n_half_bytes", s.n_half ? nlohmann::ordered_json(*s.n_half) : nlohmann::ordered_json()},
        {"small_latency_seconds", s.small_latency_seconds},
        {"expected_busbw_bytes_per_second", s.expected_busbw},
        {"expected_source", s.expected_source},
        {"efficiency", s.efficiency},
        {"verdict", to_string(s.verdict)}};
    op["fit"] =
        r.fit ? nlohmann::ordered_json{{"alpha_seconds", r.fit->alpha_seconds},
                                       {"beta_bytes_per_second", r.fit->beta_bytes_per_second},
                                       {"fusion_threshold_bytes", r.fusion_threshold}}
              : nlohmann::ordered_json();
    j["ops"].push_back(std::move(op));
  }
  j["wrong"] = run.wrong;
  return j;
}

}  // namespace acco::cluster
