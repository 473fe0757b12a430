// NCCL, the GPU data plane, loaded at run time: libnccl.so.2 comes with the CUDA stack of a GPU
// machine, so acco opens it with dlopen (its own declarations of the few calls used) and builds
// and runs without it. The bootstrap is NCCL's own: rank 0's ncclGetUniqueId, broadcast over the
// job's communicator (MPI), then the init on every rank: ncclCommInitRankConfig nonblocking
// (NCCL 2.14), polled and aborted by a watchdog when it does not complete in time, or
// ncclCommInitRank on an older NCCL. Each rank uses the CUDA device
// current in it: the one its launcher left visible (Slurm's --gpus-per-task, or
// CUDA_VISIBLE_DEVICES per rank), device 0 otherwise.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "acco/cluster/collective.hpp"
#include "acco/cluster/communicator.hpp"

namespace acco::cluster {

inline constexpr const char* kNcclLibrary = "libnccl.so.2";

// Where the probe stopped, in order.
enum class NcclStage {
  kLoad,          // dlopen and the required entry points
  kUniqueId,      // ncclGetUniqueId on rank 0
  kInit,          // ncclCommInitRankConfig (or ncclCommInitRank) on every rank
  kBootstrapped,  // every rank holds an NCCL communicator of the job's size
};
[[nodiscard]] const char* to_string(NcclStage stage);

struct NcclReport {
  std::string library;  // the name or path given to dlopen
  bool loaded = false;  // on every rank
  std::string version;  // "2.21.5" (ncclGetVersion), empty when not loaded
  NcclStage stage = NcclStage::kLoad;
  // The init was nonblocking, under the watchdog (ncclCommInitRankConfig: NCCL 2.14 or later);
  // false: a blocking ncclCommInitRank, or the probe stopped before the init.
  bool nonblocking = false;
  // The collectives run on a blocking copy of the watched communicator (ncclCommSplit, NCCL
  // 2.18), as nccl-tests' do; false: on the communicator of the init itself.
  bool blocking_data_plane = false;
  int ranks = 0;  // of the NCCL communicator (ncclCommCount) when bootstrapped
  // Why it stopped there, with the rank that failed first ("rank 1: libnccl.so.2: cannot open
  // shared object file ..."); empty when bootstrapped.
  std::string error;
  [[nodiscard]] bool bootstrapped() const { return stage == NcclStage::kBootstrapped; }
  bool operator==(const NcclReport&) const = default;
};

// "2.21.5" from ncclGetVersion's code (X*10000+Y*100+Z since NCCL 2.9, X*1000+Y*100+Z before).
[[nodiscard]] std::string nccl_version_text(int code);

// An NCCL communicator of the job's ranks, for the collectives; destroyed with the object. One
// thread at a time.
class NcclCommunicator {
 public:
  virtual ~NcclCommunicator() = default;
  NcclCommunicator() = default;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;
  // Enqueues one collective of device buffers on `stream` (device::Queue::native_stream: the
  // cudaStream_t of the queue whose device is current on this thread) and returns before the data
  // has moved: synchronize the queue to wait. Layouts as Communicator::run; alltoall and the
  // sendrecv ring are groups of ncclSend/ncclRecv, as nccl-tests runs them. kInvalidArgument for
  // a null buffer with count > 0; kDeviceError with NCCL's message.
  // kUnsupported when the library lacks a call the op needs (ncclSend before NCCL 2.7).
  [[nodiscard]] virtual Status enqueue(Op op, const float* send, float* recv, std::size_t count,
                                       void* stream) = 0;
  // ncclCommGetAsyncError: kDeviceError naming it once the communicator has failed (a peer or
  // the network gone while its kernels wait); true while it reports ncclInProgress (a
  // nonblocking communicator still working on what was queued), false otherwise (a blocking
  // communicator answers false while its kernels still run: wait for the stream as well).
  [[nodiscard]] virtual Result<bool> in_progress() = 0;
  // ncclCommAbort: what is queued on every stream stops; the communicator is unusable after.
  virtual void abort() = 0;
};

// NCCL work not complete after this long is aborted: the init (a rank that never joins leaves
// the others in NCCL's bootstrap), and collectives queued and waited for (CollectivePlane: a peer
// that failed on its own leaves this rank's kernels waiting with no error of NCCL's). PyTorch's
// NCCL watchdog waits 10 minutes by default; a benchmark's collectives take milliseconds.
inline constexpr double kNcclTimeoutSeconds = 300;

struct NcclSession {
  NcclReport report;
  std::unique_ptr<NcclCommunicator> comm;  // set when report.bootstrapped()
};

// Loads `library` and bootstraps one NCCL communicator over `comm`'s ranks on the CUDA device
// current in each. Every rank must call it; every rank returns the same report. NCCL's failures
// are the report's content, not errors: the result fails only when `comm` itself does, or
// (kInvalidArgument) for a timeout not above 0. A nonblocking init not complete after
// `timeout_seconds` is aborted (the report's error says so), and so is a later call of the
// communicator that answers ncclInProgress and stays so that long.
[[nodiscard]] Result<NcclSession> open_nccl(Communicator& comm, const std::string& library,
                                            double timeout_seconds = kNcclTimeoutSeconds);
// open_nccl, the communicator destroyed at once: the report alone.
[[nodiscard]] Result<NcclReport> probe_nccl(Communicator& comm, const std::string& library,
                                            double timeout_seconds = kNcclTimeoutSeconds);

[[nodiscard]] nlohmann::ordered_json to_json(const NcclReport& report);
// "NCCL 2.21.5 (libnccl.so.2): bootstrapped over 2 ranks" or "NCCL (libnccl.so.2) not used:
// stopped at init: rank 0: ...".
[[nodiscard]] std::string to_text(const NcclReport& report);

}  // namespace acco::cluster
