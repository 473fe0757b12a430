// The simulator's all-reduce against a measured one: reads what `acco bench --collective
// sendrecv,allreduce --json` measured under mpirun (acco.collective/1), fits the link between
// ranks from the sendrecv sweep (t = alpha + S / beta), builds a platform of one device per rank
// on that link (single switch, alpha as the route's latency), simulates the training step's
// ring all-reduce (sim::training_step: each ring edge one flow of 2(n-1)/n of the bucket, all at
// once) at every measured allreduce size, and prints measured against simulated side by side,
// with the textbook ring 2(n-1) alpha + 2(n-1)/n S / beta beside them. Writes JSON
// ("acco.sim-collective/1"). Issue 40: the collective model checked against acco bench
// --collective on this machine. Not a test: the measurements are a machine's, with its noise.
// MPI ranks on a CPU sum each chunk they receive: the rate at which this host sums one float
// buffer into another (64 MiB, best of 5) is measured here and given to the model as its
// reduction rate (--reduce-rate overrides it; 0 leaves the sums out, as for NCCL on GPUs).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "acco/core/file.hpp"
#include "acco/core/fit.hpp"
#include "acco/core/units.hpp"
#include "acco/sim/simulate.hpp"
#include "acco/sim/training.hpp"

namespace {

using acco::Result;

struct Point {
  std::uint64_t bytes = 0;
  double seconds = 0;
};

struct Measured {
  int ranks = 0;
  std::vector<Point> sendrecv;
  std::vector<Point> allreduce;
};

Result<Measured> read_measured(const std::string& path) {
  ACCO_ASSIGN_OR_RETURN(const auto text, acco::core::read_text_file(path), path);
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("schema", "") != "acco.collective/1") {
    return acco::fail(acco::Errc::kInvalidArgument,
                      fmt::format("{}: expected acco.collective/1 JSON (acco bench --collective "
                                  "--json)",
                                  path));
  }
  Measured m;
  try {
    m.ranks = j.at("ranks").get<int>();
    for (const auto& op : j.at("ops")) {
      const auto name = op.at("op").get<std::string>();
      auto* into = name == "sendrecv" ? &m.sendrecv : name == "allreduce" ? &m.allreduce : nullptr;
      for (const auto& p : op.at("points")) {
        if (into != nullptr && p.value("wrong", 0) == 0) {
          into->push_back({p.at("bytes").get<std::uint64_t>(), p.at("seconds").get<double>()});
        }
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return acco::fail(acco::Errc::kInvalidArgument, fmt::format("{}: {}", path, e.what()));
  }
  if (m.ranks < 2 || m.sendrecv.size() < 2 || m.allreduce.empty()) {
    return acco::fail(acco::Errc::kInvalidArgument,
                      fmt::format("{}: needs 2 ranks or more, a sendrecv sweep and allreduce "
                                  "sizes (acco bench --collective sendrecv,allreduce)",
                                  path));
  }
  return m;
}

// Bytes of a float buffer this host sums into another a second: what a rank's reduction runs at.
double host_reduce_rate() {
  constexpr std::size_t kFloats = 16U << 20U;  // 64 MiB a buffer, past any cache
  std::vector<float> from(kFloats, 1.0F);
  std::vector<float> into(kFloats, 2.0F);
  double best = std::numeric_limits<double>::infinity();
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < kFloats; ++i) {
      into[i] += from[i];
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
  }
  if (into[kFloats / 2] != 7.0F) {  // 2 + 5 x 1: the sums ran
    return 0;
  }
  return static_cast<double>(kFloats * sizeof(float)) / best;
}

// One device per rank, each rank a node whose one port is the fitted link: a copy between
// ranks crosses the sender's port up and the receiver's down, alpha / 2 each.
acco::sim::Platform rank_platform(int ranks, const acco::LatencyBandwidth& link) {
  acco::sim::Platform p;
  p.node.origin = "one device per rank on the fitted link";
  p.node.devices = {"rank"};
  p.node.links = {{"pcie", "pcie", 1e15, 0}, {"nic", "nic", 1e15, 0}};
  p.node.to_host = {{0}};
  p.node.peer = {{{}}};
  p.node.nic = 1;
  p.node.fabric_ports = 1;
  p.nodes = ranks;
  p.fabric.bytes_per_second = link.beta_bytes_per_second;
  p.fabric.latency = link.alpha_seconds / 2;
  return p;
}

// The training step's ring all-reduce of `bytes` alone: one layer of no compute, one bucket.
Result<double> simulated_allreduce(const acco::sim::Platform& p, std::uint64_t bytes,
                                   double reduce_rate) {
  acco::sim::TrainingSpec spec;
  spec.reduce_bytes_per_second = reduce_rate;
  spec.layers = 1;
  spec.layer_seconds = 1e-12;
  spec.gradient_bytes_per_parameter = 1;
  spec.parameters = static_cast<double>(std::max<std::uint64_t>(bytes, 1));
  spec.bucket_bytes = spec.parameters;
  spec.batch_bytes = 0;
  ACCO_ASSIGN_OR_RETURN(const auto step, acco::sim::training_step(p, spec));
  ACCO_ASSIGN_OR_RETURN(const auto run, acco::sim::simulate_training(p, step));
  return run.makespan - 3 * spec.layer_seconds;
}

struct Row {
  std::uint64_t bytes = 0;
  double measured = 0;
  double simulated = 0;
  double textbook = 0;
};

int run(int argc, char** argv) {
  CLI::App app{
      "acco-sim-collective-bench: the simulator's ring all-reduce against one measured by acco "
      "bench --collective"};
  std::string measured_path;
  std::string json;
  std::string from = "1MiB";
  app.add_option("--measured", measured_path,
                 "acco.collective/1 JSON of `mpirun -np N acco bench --collective "
                 "sendrecv,allreduce --json`")
      ->required();
  app.add_option("--from", from, "the sizes the summary counts from (default 1MiB)");
  double reduce_gbps = -1;
  app.add_option("--reduce-rate", reduce_gbps,
                 "GB/s a rank sums a received chunk into its own at (default: measured on this "
                 "host; 0: free)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--json", json, "write results to FILE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());
    return 0;
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "acco-sim-collective-bench: {}\n", e.what());
    return 64;
  }
  const auto from_bytes = acco::units::parse_bytes(from);
  if (!from_bytes) {
    fmt::print(stderr, "acco-sim-collective-bench: --from: {}\n", from_bytes.error().message);
    return 64;
  }
  const auto m = read_measured(measured_path);
  if (!m) {
    fmt::print(stderr, "acco-sim-collective-bench: {}\n", m.error().message);
    return 65;
  }
  std::vector<acco::TimedSize> points;
  for (const auto& p : m->sendrecv) {
    points.push_back({p.bytes, p.seconds});
  }
  const auto link = acco::fit_latency_bandwidth(points, acco::FitWeight::kRelative);
  if (!link) {
    fmt::print(stderr, "acco-sim-collective-bench: the sendrecv sweep: {}\n", link.error().message);
    return 65;
  }
  const int n = m->ranks;
  fmt::print("{} ranks; link fitted to sendrecv: alpha {}, beta {:.2f} GB/s\n", n,
             acco::units::format_seconds(link->alpha_seconds), link->beta_bytes_per_second / 1e9);
  const double reduce_rate = reduce_gbps >= 0 ? reduce_gbps * 1e9 : host_reduce_rate();
  fmt::print("reduction rate {:.2f} GB/s ({})\n\n", reduce_rate / 1e9,
             reduce_gbps >= 0 ? "--reduce-rate" : "a float buffer summed into another here");
  const auto platform = rank_platform(n, *link);
  std::vector<Row> rows;
  for (const auto& p : m->allreduce) {
    const auto simulated = simulated_allreduce(platform, p.bytes, reduce_rate);
    if (!simulated) {
      fmt::print(stderr, "acco-sim-collective-bench: {} B: {}\n", p.bytes,
                 simulated.error().message);
      return 70;
    }
    const double steps = 2.0 * (n - 1);
    rows.push_back({p.bytes, p.seconds, *simulated,
                    steps * link->alpha_seconds +
                        steps / n * static_cast<double>(p.bytes) / link->beta_bytes_per_second});
  }
  fmt::print("{:>12} {:>13} {:>14} {:>9} {:>13} {:>12} {:>12}\n", "bytes", "measured us",
             "simulated us", "sim/real", "textbook us", "busbw real", "busbw sim");
  const double factor = 2.0 * (n - 1) / n;
  std::vector<double> ratios;
  for (const Row& r : rows) {
    const double ratio = r.measured > 0 ? r.simulated / r.measured : 0;
    if (r.bytes >= *from_bytes) {
      ratios.push_back(ratio);
    }
    fmt::print("{:>12} {:>13.1f} {:>14.1f} {:>9.3f} {:>13.1f} {:>10.2f} GB/s {:>7.2f} GB/s\n",
               r.bytes, r.measured * 1e6, r.simulated * 1e6, ratio, r.textbook * 1e6,
               factor * static_cast<double>(r.bytes) / r.measured / 1e9,
               factor * static_cast<double>(r.bytes) / r.simulated / 1e9);
  }
  if (!ratios.empty()) {
    std::sort(ratios.begin(), ratios.end());
    fmt::print("\nfrom {}: simulated / measured {:.3f} to {:.3f}, median {:.3f}\n", from,
               ratios.front(), ratios.back(), ratios[ratios.size() / 2]);
  }
  if (!json.empty()) {
    nlohmann::json results = nlohmann::json::array();
    for (const Row& r : rows) {
      results.push_back({{"bytes", r.bytes},
                         {"measured_seconds", r.measured},
                         {"simulated_seconds", r.simulated},
                         {"textbook_seconds", r.textbook}});
    }
    const nlohmann::json out = {{"schema", "acco.sim-collective/1"},
                                {"ranks", n},
                                {"alpha_seconds", link->alpha_seconds},
                                {"beta_bytes_per_second", link->beta_bytes_per_second},
                                {"reduce_bytes_per_second", reduce_rate},
                                {"results", results}};
    if (auto written = acco::core::write_file_atomic(json, out.dump(2) + "\n"); !written) {
      fmt::print(stderr, "acco-sim-collective-bench: {}\n", written.error().message);
      return 73;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "acco-sim-collective-bench: {}\n", e.what());
    return 70;
  }
}
