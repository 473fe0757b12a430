// A data-parallel training step as a task graph, for `acco sim --workload train`: what a model's
// step costs on a cluster, and what a fabric buys. Every device holds a replica: it reads its
// batch from its node's host memory, runs the layers forward and backward, and each gradient
// bucket (PyTorch DDP's, filled in backward order) is all-reduced over rings of every device
// while the layers below it still run backward: as NCCL does, one ring per fabric port of a
// node, ring r entering each node at its device r, each carrying its share of the bucket. A
// ring's bandwidth term is one flow per ring edge, 2(D-1)/D of its share from each device to
// the next, all at once, sharing the
// links they cross as SimGrid shares them; each flow carries its route's latency once, and the
// ring's further 2(D-1)-1 step latencies are not modelled (a few microseconds each: small
// beside a 25 MiB bucket's bytes, not beside small buckets over thousands of devices). The
// all-reduce task takes no device time (NCCL's kernels reduce at HBM speed, beside the backward
// pass) unless the spec gives a reduction rate: then each device spends (D-1)/D of the bucket at
// that rate after its ring's copies (the sums of a reduce-scatter on a CPU, as Open MPI's or
// gloo's, not overlapped). The step ends when the last bucket is reduced everywhere.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/sched/workload.hpp"
#include "acco/sim/platform.hpp"
#include "acco/sim/simulate.hpp"

namespace acco::sim {

struct TrainingSpec {
  int layers = 24;
  double layer_seconds = 5e-3;  // one layer forward on one device; backward takes twice as long
  double parameters = 1.3e9;    // the model's, spread evenly over its layers
  double gradient_bytes_per_parameter = 2;   // bf16 gradients
  double bucket_bytes = 25.0 * 1024 * 1024;  // DDP's bucket_cap_mb (25)
  double batch_bytes = 64.0 * 1024 * 1024;   // each replica's input for the step
  // Bytes of a bucket one device sums into its own a second; 0: free (see above).
  double reduce_bytes_per_second = 0;
};

struct TrainingStep {
  sched::Workload workload;
  std::vector<int> pinned;           // per task: the device of its replica (SimOptions::pinned)
  std::vector<int> home;             // per datum: its node (SimOptions::home)
  std::vector<double> bucket_bytes;  // in the order they are reduced
  std::string text;  // "24 layers, 1.30e9 parameters, 3 buckets, ring over 16 devices"
};

// kInvalidArgument naming the field when a value is out of range, or when the graph would have
// more than 10 million tasks.
[[nodiscard]] Result<TrainingStep> training_step(const Platform& platform,
                                                 const TrainingSpec& spec);

// The step simulated with every task on its replica's device (`base`'s other options: record,
// cooling); the run's policy is "data-parallel".
[[nodiscard]] Result<SimResult> simulate_training(const Platform& platform,
                                                  const TrainingStep& step,
                                                  const SimOptions& base = {});

}  // namespace acco::sim
