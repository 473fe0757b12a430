// The collective benchmark, run by every rank of a job: for each operation a sweep of sizes,
// warm-up, timed iterations (host wall clock around the loop, as nccl-tests times it), the
// result checked element by element, and the per-rank times combined; then the summary beside
// nccl-tests' columns (collective.hpp). Rank 0 holds the complete result.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "acco/bench/runner.hpp"
#include "acco/cluster/collective.hpp"
#include "acco/cluster/collective_plane.hpp"
#include "acco/cluster/communicator.hpp"
#include "acco/cluster/nccl.hpp"
#include "acco/core/fit.hpp"
#include "acco/core/result.hpp"
#include "acco/device/device.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/topo/machine.hpp"

namespace acco::cluster {

inline constexpr const char* kCollectiveSchema = "acco.collective/1";

struct CollectiveOptions {
  std::vector<Op> ops = {Op::kAllReduce};
  std::uint64_t min_bytes = 8;  // nccl-tests -b: its "size" (the whole array where split)
  std::uint64_t max_bytes = std::uint64_t{32} << 20;  // -e
  int factor = 2;                                     // -f
  int warmup = 5;                                     // -w
  int iters = 20;                                     // -n
  bool check = true;                                  // -c
};
// kInvalidArgument naming the field (sizes, factor, iterations out of range).
[[nodiscard]] Status validate(const CollectiveOptions& options);

// The link a collective's data crosses, from the topology of every node: its rate is the bus
// bandwidth the collective can reach.
struct ExpectedPeak {
  double bytes_per_second = 0;  // 0 unknown
  std::string source;           // "eth0 at 25 Gb/s on node 1 (the slowest node's fastest NIC)"
};

struct OpResult {
  Op op = Op::kAllReduce;
  std::vector<SizePoint> points;
  OpSummary summary;
  // t(S) = alpha + S / beta over the sweep (fusion.hpp); none when the times do not fit a link.
  std::optional<LatencyBandwidth> fit;
  std::uint64_t fusion_threshold = 0;  // allreduce: 10 alpha beta as a power of two; else 0
};

struct CollectiveRun {
  int ranks = 1;
  int nodes = 1;
  std::string backend;  // "mpi", "self"
  Capabilities capabilities;
  DataPath path = DataPath::kHost;
  std::string data_path;  // describe(path, backend): "host buffers over MPI"
  std::string device;     // the device holding the buffers ("NVIDIA H200"); empty for host ones
  NcclReport nccl;        // set by the caller (probe_nccl); library empty: not probed
  CollectiveOptions options;
  std::vector<OpResult> ops;
  std::uint64_t wrong = 0;  // over every op and size
};

using ProgressLine = std::function<void(std::string_view line)>;

// Runs on every rank (they must call it with the same options and the same path). The collectives
// move `plane`'s buffers; the times cover enqueueing and completing `iters` of them, as
// nccl-tests times them. kInvalidArgument for bad options; the plane's errors otherwise.
[[nodiscard]] Result<CollectiveRun> run_collectives(Communicator& comm, CollectivePlane& plane,
                                                    const CollectiveOptions& options,
                                                    const ExpectedPeak& peak,
                                                    const ProgressLine& progress = {});
// On host buffers (host_plane(comm)).
[[nodiscard]] Result<CollectiveRun> run_collectives(Communicator& comm,
                                                    const CollectiveOptions& options,
                                                    const ExpectedPeak& peak,
                                                    const ProgressLine& progress = {});

struct CollectiveBenchOptions {
  CollectiveOptions collectives;
  Buffers buffers = Buffers::kHost;
  Via via = Via::kAuto;                     // device buffers: what may move them
  std::string nccl_library = kNcclLibrary;  // dlopen'ed and bootstrapped on every rank
  double nccl_timeout_seconds = kNcclTimeoutSeconds;
  // This node's topology: its fastest port (under any root qdisc's shaping) gives the expected
  // peak. nullopt: unknown here.
  std::optional<topo::Machine> machine;
  // Device buffers: opens the backend whose devices hold them (every rank calls it once). Each
  // rank takes device local rank modulo the device count, made current before NCCL's init.
  std::function<Result<std::shared_ptr<device::Backend>>()> open_backend;
};

// CollectiveBenchOptions::open_backend for the bench's CUDA-or-host choice (bench::open_backend):
// the GPUs, or the host backend's emulated devices on `host`.
[[nodiscard]] std::function<Result<std::shared_ptr<device::Backend>>()> backend_opener(
    bench::BackendChoice choice, device::HostBackendOptions host);

// The benchmark of a job end to end; every rank calls it with the same options. The expected
// peak from every node's topology (gathered from each node's first rank), the device (device
// buffers; every rank has one before any goes on), NCCL probed (kept as the data path for device
// buffers, reported only for host buffers), the data path every rank agrees on, then
// run_collectives. Rank 0 holds the complete result, NCCL's report and the device's name in it.
// Errors: the communicator's, open_backend's (and kUnavailable when this node's ranks would
// share a GPU, or a rank failed), choose_data_path's, the plane's, run_collectives'.
[[nodiscard]] Result<CollectiveRun> run_collective_bench(Communicator& comm,
                                                         const CollectiveBenchOptions& options,
                                                         const ProgressLine& progress = {});

// nccl-tests' table, one per op, then acco's summary lines.
[[nodiscard]] std::string to_text(const CollectiveRun& run);
[[nodiscard]] nlohmann::ordered_json to_json(const CollectiveRun& run);

}  // namespace acco::cluster
