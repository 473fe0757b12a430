// The collective bench's data plane: host buffers over the job's communicator, or device buffers
// through NCCL, a CUDA-aware MPI, or pinned host buffers the transfer engine stages (device to
// host, MPI, host to device). Every run reports the path it took.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "acco/cluster/collective.hpp"
#include "acco/cluster/communicator.hpp"
#include "acco/cluster/nccl.hpp"
#include "acco/core/result.hpp"
#include "acco/device/device.hpp"

namespace acco::cluster {

enum class Buffers {
  kHost,
  kDevice
};
[[nodiscard]] const char* to_string(Buffers buffers);  // "host", "device"
// kInvalidArgument naming the word otherwise.
[[nodiscard]] Result<Buffers> parse_buffers(const std::string& text);

// What the user asked for device buffers.
enum class Via {
  kAuto,  // NCCL when it bootstrapped, else MPI
  kNccl,  // NCCL, or fail
  kMpi,   // MPI, CUDA-aware when it is, else staged
};
[[nodiscard]] const char* to_string(Via via);  // "auto", "nccl", "mpi"
[[nodiscard]] Result<Via> parse_via(const std::string& text);
// kInvalidArgument for --via nccl|mpi with host buffers (they always go over the communicator).
[[nodiscard]] Status check_via(Buffers buffers, Via via);

enum class DataPath {
  kHost,          // host buffers, the job's communicator
  kNccl,          // device buffers, NCCL's collectives on the device's stream
  kCudaAwareMpi,  // device buffers handed to a CUDA-aware MPI
  kStagedMpi,     // device buffers through pinned host buffers (transfer engine), MPI between
};
[[nodiscard]] const char* to_string(DataPath path);  // "host", "nccl", "cuda-aware-mpi", ...
// "host buffers over MPI", "device buffers staged through pinned host buffers, one rank (copy)";
// `backend` is the communicator's ("mpi", "self").
[[nodiscard]] std::string describe(DataPath path, const std::string& backend);

struct PathQuery {
  Buffers buffers = Buffers::kHost;
  Via via = Via::kAuto;
  bool nccl_bootstrapped = false;
  std::string nccl_why;         // why not (NCCL's report as text), for the error of --via nccl
  bool mpi_cuda_aware = false;  // Capabilities::cuda_aware
  bool device_is_gpu = false;   // the device is a CUDA device, not host memory standing in for one
};
// The path a run takes. kInvalidArgument for --via nccl|mpi with host buffers; kUnavailable for
// --via nccl when NCCL did not bootstrap (with why).
[[nodiscard]] Result<DataPath> choose_data_path(const PathQuery& query);

// The buffers of one size and the collectives on them. One thread.
class CollectivePlane {
 public:
  virtual ~CollectivePlane() = default;
  CollectivePlane() = default;
  CollectivePlane(const CollectivePlane&) = delete;
  CollectivePlane& operator=(const CollectivePlane&) = delete;

  [[nodiscard]] virtual DataPath path() const = 0;
  // Whether run() only queues the work (NCCL on a stream): a rank that fails to queue one must
  // then tell its peers before they wait for work that will never match (see measure()).
  [[nodiscard]] virtual bool asynchronous() const { return false; }
  // Buffers for the next size: a send buffer holding `send`, a receive buffer of `recv_count`
  // elements set to `recv_fill`. Replaces the previous size's.
  [[nodiscard]] virtual Status prepare(std::span<const float> send, std::size_t recv_count,
                                       float recv_fill) = 0;
  // One collective on the prepared buffers (layouts of Communicator::run, `count` elements per
  // rank); may return before it has completed (NCCL).
  [[nodiscard]] virtual Status run(Op op, std::size_t count) = 0;
  // Waits until every run so far has completed.
  [[nodiscard]] virtual Status complete() = 0;
  // The receive buffer as it is now, on the host.
  [[nodiscard]] virtual Result<std::vector<float>> received() = 0;
  // After a failure on another rank: stops what this rank queued and its peers will never match
  // (NCCL: ncclCommAbort). The plane takes no more runs after.
  virtual void abandon() = 0;
};

// Host buffers over `comm`.
[[nodiscard]] std::unique_ptr<CollectivePlane> host_plane(Communicator& comm);

// Buffers in `device`'s memory, moved by `path` (kNccl, kCudaAwareMpi or kStagedMpi); `nccl` is
// required for kNccl; NCCL collectives queued and not complete `nccl_timeout_seconds` after
// complete() began waiting are aborted (the watchdog, kNcclTimeoutSeconds in nccl.hpp). `comm`,
// `device` and `nccl` must outlive the plane. kInvalidArgument for
// kHost, kNccl without a communicator or a timeout not above 0; kDeviceError when the device's
// queue or the transfer engine cannot be made.
[[nodiscard]] Result<std::unique_ptr<CollectivePlane>> device_plane(
    Communicator& comm, device::Device& device, DataPath path, NcclCommunicator* nccl,
    double nccl_timeout_seconds = kNcclTimeoutSeconds);

}  // namespace acco::cluster
