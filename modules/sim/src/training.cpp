#include "acco/sim/training.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace acco::sim {

namespace {

// kInvalidArgument naming the first field out of range.
Status check_spec(const TrainingSpec& spec) {
  if (spec.layers < 1 || spec.layers > 10000) {
    return fail(Errc::kInvalidArgument,
                fmt::format("layers: {} is not from 1 to 10000", spec.layers));
  }
  for (const auto& [name, value] :
       {std::pair{"layer time", spec.layer_seconds},
        {"parameters", spec.parameters},
        {"bucket size", spec.bucket_bytes},
        {"gradient bytes a parameter", spec.gradient_bytes_per_parameter}}) {
    if (!(value > 0) || !std::isfinite(value)) {
      return fail(Errc::kInvalidArgument, fmt::format("{}: {} is not above 0", name, value));
    }
  }
  for (const auto& [name, value] : {std::pair{"batch size", spec.batch_bytes},
                                    {"reduction rate", spec.reduce_bytes_per_second}}) {
    if (!(value >= 0) || !std::isfinite(value)) {
      return fail(Errc::kInvalidArgument, fmt::format("{}: {} is not 0 or more", name, value));
    }
  }
  return {};
}

}  // namespace

Result<TrainingStep> training_step(const Platform& platform, const TrainingSpec& spec) {
  ACCO_RETURN_IF_ERROR(check_spec(spec));
  const int devices = platform.devices();
  const int per_node = static_cast<int>(platform.node.devices.size());
  const auto layers = static_cast<std::size_t>(spec.layers);
  // DDP's buckets: layers in backward order, a bucket closed when the next layer would overflow.
  const double layer_bytes = spec.parameters * spec.gradient_bytes_per_parameter / spec.layers;
  std::vector<std::size_t> bucket_of(layers + 1, 0);  // by layer number 1..L
  TrainingStep step;
  for (std::size_t l = layers; l >= 1; --l) {
    if (step.bucket_bytes.empty() ||
        step.bucket_bytes.back() + layer_bytes > spec.bucket_bytes + 1e-9) {
      step.bucket_bytes.push_back(0);
    }
    step.bucket_bytes.back() += layer_bytes;
    bucket_of[l] = step.bucket_bytes.size() - 1;
  }
  const std::size_t buckets = step.bucket_bytes.size();
  const auto d_count = static_cast<std::size_t>(devices);
  const std::size_t reduce_tasks = devices > 1 ? buckets * d_count : 0;
  if (d_count * 2 * layers + reduce_tasks > 10'000'000) {
    return fail(
        Errc::kInvalidArgument,
        fmt::format("{} devices x {} layers is more than 10 million tasks", devices, spec.layers));
  }
  auto& w = step.workload;
  w.name = "train";
  // Data: per device its batch, its activations (no bytes: they never leave it) and its share
  // of each bucket that the ring sends on.
  const auto add_datum = [&](double bytes, int node) {
    w.data_bytes.push_back(static_cast<std::size_t>(std::llround(bytes)));
    step.home.push_back(node);
    return w.data_bytes.size() - 1;
  };
  // NCCL's rings across nodes: one per fabric port (at most one per device of a node), ring r
  // entering each node at its device r, so each ring leaves a node through another device and
  // NIC. On one node every ring would cross the same links: one ring.
  const int rings = platform.nodes > 1 ? std::clamp(platform.node.fabric_ports, 1, per_node) : 1;
  const auto pred = [&](int d, int r) {
    const int n = d / per_node;
    const int j = (d % per_node - r + per_node) % per_node;  // d's place in ring r on its node
    if (j > 0) {
      return n * per_node + (d % per_node - 1 + per_node) % per_node;
    }
    const int before = (n - 1 + platform.nodes) % platform.nodes;
    return before * per_node + (r + per_node - 1) % per_node;
  };
  std::vector<std::size_t> batch(d_count);
  std::vector<std::size_t> state(d_count);
  // grad[d][k][r]: what d sends on ring r for bucket k.
  std::vector<std::vector<std::vector<std::size_t>>> grad(
      d_count, std::vector<std::vector<std::size_t>>(buckets));
  const double share = devices > 1 ? 2.0 * (devices - 1) / devices / rings : 0;
  for (std::size_t d = 0; d < d_count; ++d) {
    const int node = static_cast<int>(d) / per_node;
    batch[d] = add_datum(spec.batch_bytes, node);
    state[d] = add_datum(0, node);
    for (std::size_t k = 0; k < buckets; ++k) {
      for (int r = 0; r < rings; ++r) {
        grad[d][k].push_back(add_datum(share * step.bucket_bytes[k], node));
      }
    }
  }
  const auto add_task = [&](std::string type, std::string name, double seconds,
                            std::vector<std::pair<std::size_t, sched::Access>> accesses, int d) {
    sched::WorkTask t;
    t.type = std::move(type);
    t.name = std::move(name);
    t.seconds = {seconds};
    t.accesses = std::move(accesses);
    w.tasks.push_back(std::move(t));
    step.pinned.push_back(d);
  };
  using sched::Access;
  for (std::size_t d = 0; d < d_count; ++d) {
    const int dev = static_cast<int>(d);
    for (std::size_t l = 1; l <= layers; ++l) {
      std::vector<std::pair<std::size_t, Access>> a = {{state[d], Access::kReadWrite}};
      if (l == 1) {
        a.emplace_back(batch[d], Access::kRead);
      }
      add_task("forward", fmt::format("forward({},{})", l, d), spec.layer_seconds, std::move(a),
               dev);
    }
    for (std::size_t l = layers; l >= 1; --l) {
      const auto k = bucket_of[l];
      // The bucket's first layer in backward order writes it; the others add to it.
      const bool first = l == layers || bucket_of[l + 1] != k;
      std::vector<std::pair<std::size_t, Access>> a = {{state[d], Access::kReadWrite}};
      for (const auto g : grad[d][k]) {
        a.emplace_back(g, first ? Access::kWrite : Access::kReadWrite);
      }
      add_task("backward", fmt::format("backward({},{})", l, d), 2 * spec.layer_seconds,
               std::move(a), dev);
    }
  }
  for (std::size_t k = 0; k < buckets && devices > 1; ++k) {
    for (std::size_t d = 0; d < d_count; ++d) {
      std::vector<std::pair<std::size_t, Access>> a;
      for (int r = 0; r < rings; ++r) {
        const auto from = static_cast<std::size_t>(pred(static_cast<int>(d), r));
        a.emplace_back(grad[from][k][static_cast<std::size_t>(r)], Access::kRead);
        a.emplace_back(grad[d][k][static_cast<std::size_t>(r)], Access::kRead);
      }
      const double summed = (devices - 1.0) / devices * step.bucket_bytes[k];
      add_task("allreduce", fmt::format("allreduce({},{})", k, d),
               spec.reduce_bytes_per_second > 0 ? summed / spec.reduce_bytes_per_second : 0,
               std::move(a), static_cast<int>(d));
    }
  }
  const auto mib = [](double b) { return b / (1024.0 * 1024.0); };
  step.text = fmt::format(
      "training step ({} layers, {:.3g} parameters, {} bucket{} (cap {:.0f} MiB), {} ring{} "
      "over {} device{}, {:.0f} MiB batches)",
      spec.layers, spec.parameters, buckets, buckets == 1 ? "" : "s", mib(spec.bucket_bytes), rings,
      rings == 1 ? "" : "s", devices, devices == 1 ? "" : "s", mib(spec.batch_bytes));
  return step;
}

Result<SimResult> simulate_training(const Platform& platform, const TrainingStep& step,
                                    const SimOptions& base) {
  SimOptions options = base;
  options.policy = sched::PolicyKind::kDmda;  // never asked: every task is pinned
  options.pinned = step.pinned;
  options.home = step.home;
  ACCO_ASSIGN_OR_RETURN(auto result, simulate(platform, step.workload, options));
  result.policy = "data-parallel";
  return result;
}

}  // namespace acco::sim
