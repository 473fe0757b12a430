// A stand-in libnccl.so.2 so the NCCL path is tested on machines without a GPU. It defines the
// prototypes acco declares (modules/cluster/src/nccl_api.hpp) and behaves as ACCO_FAKE_NCCL_MODE
// says:
//   unset or "no-gpu"   as NCCL on a machine without a CUDA device: ncclGetUniqueId works,
//                       ncclCommInitRank answers ncclUnhandledCudaError and ncclGetLastError
//                       names the CUDA failure
//   "ok"                ncclCommInitRank succeeds when the id is one ncclGetUniqueId made (in any
//                       process: the id carries a marker, so a rank that did not receive rank 0's
//                       id fails with ncclInvalidArgument), nranks > 0 and 0 <= rank < nranks;
//                       ncclCommCount answers nranks
//   "unique-id-fails"   ncclGetUniqueId answers ncclSystemError
//   "fail-on-rank-N"    as "ok", except that rank N's ncclCommInitRank answers ncclSystemError
//   "collective-fails"  as "ok", except that every collective answers ncclSystemError
//   "wrong-sum"         as "ok", except that ncclAllReduce adds 1 to the first element
//   "collective-fails-on-rank-N-after-K"
//                       as "ok", except that on rank N every collective call after the first K
//                       (ncclSend and ncclRecv count one each) answers ncclSystemError
//   "async-error-on-rank-N-after-K"
//                       as "ok", except that the calls after the first K are accepted and never
//                       run: on rank N ncclCommGetAsyncError then answers ncclSystemError (its
//                       NIC failed under them), on the other ranks ncclInProgress for ever (as
//                       kernels that wait for rank N; NCCL has no timeout of its own)
//   "init-stalls"       as "ok", except that a nonblocking init never completes (a rank cannot
//                       reach rank 0's bootstrap address: NCCL waits for it for ever), and a
//                       blocking one answers ncclSystemError (the fake does not hang a test)
// ncclCommInitRankConfig (NCCL 2.14) reads the config as NCCL does (the first `size` bytes, the
// magic, `blocking` from version 2.14): a nonblocking init answers ncclInProgress, and
// ncclCommGetAsyncError answers ncclInProgress twice before the init's outcome (its errors, as
// "no-gpu"'s, come from there); a nonblocking communicator's collectives and group ends answer
// ncclInProgress, then ncclCommGetAsyncError once more ncclInProgress (still enqueueing) and
// then ncclSuccess (queued: that poll runs nothing, as NCCL's waits for no peer). A
// call on a nonblocking communicator before ncclCommGetAsyncError has answered ncclSuccess
// answers ncclInvalidUsage (NCCL requires that poll).
// ncclCommSplit (NCCL 2.18) copies a communicator with the config's blocking. As in NCCL, the
// split runs in the parent's mode: from a nonblocking parent it answers ncclInProgress, and
// both communicators then answer ncclInProgress to two polls of ncclCommGetAsyncError and
// refuse calls until a poll has answered ncclSuccess (NCCL answers ncclInvalidArgument there);
// ACCO_FAKE_NCCL_SPLIT_FAILS set makes it fail. The library built with
// tests/fake_nccl/no_config.map lacks ncclCommInitRankConfig and ncclCommSplit (an NCCL before
// 2.14: a blocking init).
// The collectives work on host memory (the host backend's device buffers) and ignore the
// stream: with one rank they copy at once; with more they are queued, as kernels on a stream
// that wait for their peers, and run Open MPI's collectives on MPI_COMM_WORLD (the ranks of
// acco's job, when built with MPI: ACCO_FAKE_NCCL_MPI) in order when ncclCommGetAsyncError or
// ncclCommDestroy is called (an error then is the asynchronous error); ncclCommAbort drops them.
// alltoall and sendrecv are groups of ncclSend/ncclRecv, queued at ncclGroupEnd.
// ACCO_FAKE_NCCL_VERSION: the code ncclGetVersion answers (default 22105, NCCL 2.21.5).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <utility>
#include <vector>

#ifdef ACCO_FAKE_NCCL_MPI
#include <mpi.h>
#endif

#include "nccl_api.hpp"

struct ncclComm {
  int nranks = 0;
  int rank = 0;
  std::vector<std::function<ncclResult_t()>> queued;  // more than one rank: run when asked
  int calls = 0;                                      // collective calls so far
  bool stalled = false;      // async-error-on-rank-N-after-K: a call after the K-th was made
  bool stall_fails = false;  // ... and this is rank N, whose NIC failed under them
  bool nonblocking = false;  // made by ncclCommInitRankConfig with blocking = 0
  bool joining = false;      // a split's copy, made from a nonblocking parent, still joining
  int busy_polls = 0;        // ncclCommGetAsyncError answers ncclInProgress this often; -1: ever
  bool enqueued = false;     // ... then ncclSuccess once, the queue left for a later poll
  ncclResult_t init_error = ncclSuccess;  // a nonblocking init's outcome, after busy_polls
  std::string init_why;
};

namespace {

constexpr char kMarker[] = "acco-fake-nccl-id";
// Not thread_local: dynamic TLS in a dlopen'd library sends this toolchain's LeakSanitizer
// (GCC 12, glibc 2.36) reading a bogus DTLS range at exit ("Tracer caught signal 11"). Each
// rank is its own process and the tests call from one thread.
std::string g_last_error;

std::string mode() {
  const char* m = std::getenv("ACCO_FAKE_NCCL_MODE");
  return m != nullptr ? m : "no-gpu";
}

ncclResult_t fail(ncclResult_t code, const char* why) {
  g_last_error = why;
  return code;
}

constexpr std::size_t kFloat = sizeof(float);

// A send or receive of a group, posted at ncclGroupEnd.
struct PointToPoint {
  bool send = false;
  void* buffer = nullptr;
  std::size_t count = 0;
  int peer = 0;
};
int g_group_depth = 0;
std::vector<PointToPoint> g_group;
ncclComm_t g_group_comm = nullptr;  // every call of one group names the same one in acco

// NCCL requires a nonblocking communicator's state to be ncclSuccess before the next call.
constexpr const char* kBusy =
    "a call while the communicator is still in progress (poll ncclCommGetAsyncError until "
    "ncclSuccess first)";
bool busy(ncclComm_t comm) {
  return (comm->nonblocking || comm->joining) && comm->busy_polls != 0;
}

// Checks common to every collective; ncclSuccess when it may go on.
ncclResult_t usable(ncclComm_t comm, const void* send, const void* recv, std::size_t count) {
  if (comm == nullptr) {
    return fail(ncclInvalidArgument, "collective: null communicator");
  }
  if (count > 0 && (send == nullptr || recv == nullptr)) {
    return fail(ncclInvalidArgument, "collective: null buffer");
  }
  if (busy(comm)) {
    return fail(ncclInvalidUsage, kBusy);
  }
  const std::string m = mode();
  if (m == "collective-fails") {
    return fail(ncclSystemError, "NET/Socket : peer closed the connection");
  }
  int rank = -1;
  int after = 0;
  if (std::sscanf(m.c_str(), "collective-fails-on-rank-%d-after-%d", &rank, &after) == 2 &&
      rank == comm->rank && ++comm->calls > after) {
    return fail(ncclSystemError, "transport/net.cc: NET/IB : failed to post a send (rank's NIC)");
  }
  if (std::sscanf(m.c_str(), "async-error-on-rank-%d-after-%d", &rank, &after) == 2 &&
      ++comm->calls > after) {
    comm->stalled = true;
    comm->stall_fails = rank == comm->rank;
  }
#ifndef ACCO_FAKE_NCCL_MPI
  if (comm->nranks > 1) {
    return fail(ncclInternalError, "fake NCCL built without MPI: one rank only");
  }
#endif
  return ncclSuccess;
}

#ifdef ACCO_FAKE_NCCL_MPI
ncclResult_t mpi(int code) {
  return code == MPI_SUCCESS ? ncclSuccess : fail(ncclSystemError, "MPI call failed");
}
int mpi_count(std::size_t count) {
  return static_cast<int>(count);
}
#endif

// What a collective call answers once accepted: a nonblocking communicator is still enqueueing
// (one more ncclCommGetAsyncError answers ncclInProgress). A stalled call is accepted at once.
ncclResult_t accepted(ncclComm_t comm) {
  if (!comm->nonblocking || comm->stalled) {
    return ncclSuccess;
  }
  comm->busy_polls = std::max(comm->busy_polls, 1);
  comm->enqueued = true;
  return ncclInProgress;
}

// Queues work for the peers' arrival, unless the communicator stalled (it never runs then).
void enqueue(ncclComm_t comm, std::function<ncclResult_t()> work) {
  if (!comm->stalled) {
    comm->queued.push_back(std::move(work));
  }
}

// Runs what is queued, in order; the first failure is the asynchronous error.
ncclResult_t run_queued(ncclComm_t comm) {
  std::vector<std::function<ncclResult_t()>> work;
  work.swap(comm->queued);
  for (const auto& w : work) {
    if (ncclResult_t ok = w(); ok != ncclSuccess) {
      return ok;
    }
  }
  return ncclSuccess;
}

// Posts the group's sends and receives (one rank: each send copied to the receive from itself).
ncclResult_t run_group(ncclComm_t comm) {
  std::vector<PointToPoint> ops;
  ops.swap(g_group);
  g_group_comm = nullptr;
  if (comm == nullptr || ops.empty()) {
    return ncclSuccess;
  }
  if (comm->nranks == 1) {
    std::size_t next_recv = 0;
    for (const PointToPoint& s : ops) {
      if (!s.send) {
        continue;
      }
      while (next_recv < ops.size() && ops[next_recv].send) {
        ++next_recv;
      }
      if (next_recv == ops.size() || ops[next_recv].count != s.count) {
        return fail(ncclInvalidUsage, "group: a send without its matching receive");
      }
      std::memcpy(ops[next_recv].buffer, s.buffer, s.count * kFloat);
      ++next_recv;
    }
    return ncclSuccess;
  }
#ifdef ACCO_FAKE_NCCL_MPI
  enqueue(comm, [ops = std::move(ops)] {
    std::vector<MPI_Request> requests(ops.size(), MPI_REQUEST_NULL);
    constexpr int kTag = 4242;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const PointToPoint& p = ops[i];
      const int code = p.send ? MPI_Isend(p.buffer, mpi_count(p.count), MPI_FLOAT, p.peer, kTag,
                                          MPI_COMM_WORLD, &requests[i])
                              : MPI_Irecv(p.buffer, mpi_count(p.count), MPI_FLOAT, p.peer, kTag,
                                          MPI_COMM_WORLD, &requests[i]);
      if (code != MPI_SUCCESS) {
        return mpi(code);
      }
    }
    return mpi(
        MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  });
  return ncclSuccess;
#else
  return fail(ncclInternalError, "fake NCCL built without MPI: one rank only");
#endif
}

ncclResult_t add_to_group(ncclComm_t comm, PointToPoint op) {
  if (comm == nullptr || op.peer < 0 || op.peer >= comm->nranks) {
    return fail(ncclInvalidArgument, "send/recv: bad peer");
  }
  if (ncclResult_t ok = usable(comm, op.buffer, op.buffer, op.count); ok != ncclSuccess) {
    return ok;
  }
  g_group.push_back(op);
  g_group_comm = comm;
  return g_group_depth > 0 ? ncclSuccess : run_group(comm);
}

// A config read as NCCL reads it: the first `size` bytes (at most its own struct's), then the
// magic; `blocking` from version 2.14 on.
ncclResult_t read_config(const ncclConfig_t* config, bool& blocking) {
  ncclConfig_t c{sizeof(ncclConfig_t), 0, 0, 1};
  std::size_t size = 0;
  std::memcpy(&size, config, sizeof size);
  std::memcpy(&c, config, std::min(size, sizeof c));
  if (c.magic != kNcclConfigMagic) {
    return fail(ncclInvalidArgument,
                "ncclConfig_t argument not initialized via NCCL_CONFIG_INITIALIZER");
  }
  blocking = c.version < kNcclConfigVersion || c.blocking != 0;
  return ncclSuccess;
}

// ncclCommInitRank, and ncclCommInitRankConfig once its config is read. Nonblocking: the
// outcome of every check after the arguments' comes from ncclCommGetAsyncError.
ncclResult_t init(ncclComm_t* comm, int nranks, const ncclUniqueId& comm_id, int rank,
                  bool blocking) {
  if (comm == nullptr || nranks <= 0 || rank < 0 || rank >= nranks) {
    return fail(ncclInvalidArgument, "ncclCommInitRank: bad rank or size");
  }
  const std::string m = mode();
  ncclResult_t code = ncclSuccess;
  const char* why = "";
  if (m == "no-gpu") {
    code = ncclUnhandledCudaError;
    why = "Cuda failure 100 'no CUDA-capable device is detected'";
  } else if (std::memcmp(comm_id.internal, kMarker, sizeof kMarker) != 0) {
    code = ncclInvalidArgument;
    why = "ncclCommInitRank: invalid unique id";
  } else if (m == "fail-on-rank-" + std::to_string(rank)) {
    code = ncclSystemError;
    why = "socket connect to the root failed";
  } else if (m == "init-stalls" && blocking) {
    code = ncclSystemError;
    why = "the fake's init-stalls mode needs a nonblocking init (a blocking one would hang)";
  }
  if (blocking && code != ncclSuccess) {
    return fail(code, why);
  }
  *comm = new (std::nothrow) ncclComm;
  if (*comm == nullptr) {
    return fail(ncclSystemError, "out of memory");
  }
  (*comm)->nranks = nranks;
  (*comm)->rank = rank;
  if (blocking) {
    return ncclSuccess;
  }
  (*comm)->nonblocking = true;
  (*comm)->busy_polls = m == "init-stalls" ? -1 : 2;
  (*comm)->init_error = code;
  (*comm)->init_why = why;
  return ncclInProgress;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) {
    return fail(ncclInvalidArgument, "ncclGetVersion: null pointer");
  }
  const char* v = std::getenv("ACCO_FAKE_NCCL_VERSION");
  *version = v != nullptr ? std::atoi(v) : 22105;
  return ncclSuccess;
}

__attribute__((visibility("default"))) ncclResult_t ncclGetUniqueId(ncclUniqueId* unique_id) {
  if (unique_id == nullptr) {
    return fail(ncclInvalidArgument, "ncclGetUniqueId: null pointer");
  }
  if (mode() == "unique-id-fails") {
    return fail(ncclSystemError, "bootstrap: no socket interface found");
  }
  std::memset(unique_id->internal, 0, sizeof unique_id->internal);
  std::memcpy(unique_id->internal, kMarker, sizeof kMarker);
  return ncclSuccess;
}

__attribute__((visibility("default"))) ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks,
                                                                     ncclUniqueId comm_id,
                                                                     int rank) {
  return init(comm, nranks, comm_id, rank, true);
}

__attribute__((visibility("default"))) ncclResult_t ncclCommInitRankConfig(
    ncclComm_t* comm, int nranks, ncclUniqueId comm_id, int rank, ncclConfig_t* config) {
  if (config == nullptr) {
    return fail(ncclInvalidArgument, "ncclCommInitRankConfig: null config");
  }
  bool blocking = true;
  if (ncclResult_t read = read_config(config, blocking); read != ncclSuccess) {
    return read;
  }
  return init(comm, nranks, comm_id, rank, blocking);
}

// As NCCL 2.18: every rank of `comm` passes color 0 here (acco's blocking copy). With
// ACCO_FAKE_NCCL_SPLIT_FAILS set it answers ncclInvalidUsage on every rank.
__attribute__((visibility("default"))) ncclResult_t ncclCommSplit(ncclComm_t comm, int color,
                                                                  int key, ncclComm_t* newcomm,
                                                                  ncclConfig_t* config) {
  if (comm == nullptr || newcomm == nullptr || config == nullptr || color != 0 || key < 0) {
    return fail(ncclInvalidArgument, "ncclCommSplit: bad arguments");
  }
  if (busy(comm)) {
    return fail(ncclInvalidUsage, kBusy);
  }
  if (std::getenv("ACCO_FAKE_NCCL_SPLIT_FAILS") != nullptr) {
    return fail(ncclInvalidUsage, "ncclCommSplit: refused (ACCO_FAKE_NCCL_SPLIT_FAILS)");
  }
  bool blocking = true;
  if (ncclResult_t read = read_config(config, blocking); read != ncclSuccess) {
    return read;
  }
  *newcomm = new (std::nothrow) ncclComm;
  if (*newcomm == nullptr) {
    return fail(ncclSystemError, "out of memory");
  }
  (*newcomm)->nranks = comm->nranks;
  (*newcomm)->rank = key;
  (*newcomm)->nonblocking = !blocking;
  if (!comm->nonblocking) {
    return ncclSuccess;
  }
  comm->busy_polls = 2;
  (*newcomm)->joining = true;
  (*newcomm)->busy_polls = 2;
  return ncclInProgress;
}

__attribute__((visibility("default"))) ncclResult_t ncclCommCount(ncclComm_t comm, int* count) {
  if (comm == nullptr || count == nullptr) {
    return fail(ncclInvalidArgument, "ncclCommCount: null pointer");
  }
  if (busy(comm)) {
    return fail(ncclInvalidUsage, kBusy);
  }
  *count = comm->nranks;
  return ncclSuccess;
}

__attribute__((visibility("default"))) ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  const ncclResult_t ok = comm != nullptr ? run_queued(comm) : ncclSuccess;
  delete comm;
  return ok;
}

__attribute__((visibility("default"))) const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    default:
      return "unknown result code";
  }
}

__attribute__((visibility("default"))) const char* ncclGetLastError(ncclComm_t /*comm*/) {
  return g_last_error.c_str();
}

__attribute__((visibility("default"))) ncclResult_t ncclAllReduce(const void* sendbuff,
                                                                  void* recvbuff, std::size_t count,
                                                                  ncclDataType_t datatype,
                                                                  ncclRedOp_t op, ncclComm_t comm,
                                                                  cudaStream_t /*stream*/) {
  if (datatype != ncclFloat32 || op != ncclSum) {
    return fail(ncclInvalidArgument, "allreduce: the fake sums floats only");
  }
  if (ncclResult_t ok = usable(comm, sendbuff, recvbuff, count); ok != ncclSuccess) {
    return ok;
  }
  const bool wrong = mode() == "wrong-sum" && count > 0;
  if (comm->nranks == 1) {
    std::memmove(recvbuff, sendbuff, count * kFloat);
    if (wrong) {
      static_cast<float*>(recvbuff)[0] += 1.0F;
    }
    return accepted(comm);
  }
#ifdef ACCO_FAKE_NCCL_MPI
  enqueue(comm, [=] {
    if (ncclResult_t ok = mpi(MPI_Allreduce(sendbuff, recvbuff, mpi_count(count), MPI_FLOAT,
                                            MPI_SUM, MPI_COMM_WORLD));
        ok != ncclSuccess) {
      return ok;
    }
    if (wrong) {
      static_cast<float*>(recvbuff)[0] += 1.0F;
    }
    return ncclSuccess;
  });
  return accepted(comm);
#else
  return ncclInternalError;
#endif
}

__attribute__((visibility("default"))) ncclResult_t ncclAllGather(
    const void* sendbuff, void* recvbuff, std::size_t sendcount, ncclDataType_t datatype,
    ncclComm_t comm, cudaStream_t /*stream*/) {
  if (datatype != ncclFloat32) {
    return fail(ncclInvalidArgument, "allgather: the fake moves floats only");
  }
  if (ncclResult_t ok = usable(comm, sendbuff, recvbuff, sendcount); ok != ncclSuccess) {
    return ok;
  }
  if (comm->nranks == 1) {
    std::memmove(recvbuff, sendbuff, sendcount * kFloat);
    return accepted(comm);
  }
#ifdef ACCO_FAKE_NCCL_MPI
  enqueue(comm, [=] {
    return mpi(MPI_Allgather(sendbuff, mpi_count(sendcount), MPI_FLOAT, recvbuff,
                             mpi_count(sendcount), MPI_FLOAT, MPI_COMM_WORLD));
  });
  return accepted(comm);
#else
  return ncclInternalError;
#endif
}

__attribute__((visibility("default"))) ncclResult_t ncclReduceScatter(
    const void* sendbuff, void* recvbuff, std::size_t recvcount, ncclDataType_t datatype,
    ncclRedOp_t op, ncclComm_t comm, cudaStream_t /*stream*/) {
  if (datatype != ncclFloat32 || op != ncclSum) {
    return fail(ncclInvalidArgument, "reducescatter: the fake sums floats only");
  }
  if (ncclResult_t ok = usable(comm, sendbuff, recvbuff, recvcount); ok != ncclSuccess) {
    return ok;
  }
  if (comm->nranks == 1) {
    std::memmove(recvbuff, sendbuff, recvcount * kFloat);
    return accepted(comm);
  }
#ifdef ACCO_FAKE_NCCL_MPI
  enqueue(comm, [=] {
    return mpi(MPI_Reduce_scatter_block(sendbuff, recvbuff, mpi_count(recvcount), MPI_FLOAT,
                                        MPI_SUM, MPI_COMM_WORLD));
  });
  return accepted(comm);
#else
  return ncclInternalError;
#endif
}

__attribute__((visibility("default"))) ncclResult_t ncclBroadcast(const void* sendbuff,
                                                                  void* recvbuff, std::size_t count,
                                                                  ncclDataType_t datatype, int root,
                                                                  ncclComm_t comm,
                                                                  cudaStream_t /*stream*/) {
  if (datatype != ncclFloat32) {
    return fail(ncclInvalidArgument, "broadcast: the fake moves floats only");
  }
  if (ncclResult_t ok = usable(comm, sendbuff, recvbuff, count); ok != ncclSuccess) {
    return ok;
  }
  if (root < 0 || root >= comm->nranks) {
    return fail(ncclInvalidArgument, "broadcast: bad root");
  }
  if (comm->nranks == 1) {
    std::memmove(recvbuff, sendbuff, count * kFloat);
    return accepted(comm);
  }
#ifdef ACCO_FAKE_NCCL_MPI
  enqueue(comm, [=, mine = comm->rank == root] {
    if (mine) {
      std::memmove(recvbuff, sendbuff, count * kFloat);
    }
    return mpi(MPI_Bcast(recvbuff, mpi_count(count), MPI_FLOAT, root, MPI_COMM_WORLD));
  });
  return accepted(comm);
#else
  return ncclInternalError;
#endif
}

__attribute__((visibility("default"))) ncclResult_t ncclSend(const void* sendbuff,
                                                             std::size_t count,
                                                             ncclDataType_t datatype, int peer,
                                                             ncclComm_t comm,
                                                             cudaStream_t /*stream*/) {
  if (datatype != ncclFloat32) {
    return fail(ncclInvalidArgument, "send: the fake moves floats only");
  }
  // The buffer is only read; MPI_Isend takes it as void*.
  return add_to_group(comm, {true, const_cast<void*>(sendbuff), count, peer});
}

__attribute__((visibility("default"))) ncclResult_t ncclRecv(void* recvbuff, std::size_t count,
                                                             ncclDataType_t datatype, int peer,
                                                             ncclComm_t comm,
                                                             cudaStream_t /*stream*/) {
  if (datatype != ncclFloat32) {
    return fail(ncclInvalidArgument, "recv: the fake moves floats only");
  }
  return add_to_group(comm, {false, recvbuff, count, peer});
}

__attribute__((visibility("default"))) ncclResult_t ncclCommGetAsyncError(
    ncclComm_t comm, ncclResult_t* async_error) {
  if (comm == nullptr || async_error == nullptr) {
    return fail(ncclInvalidArgument, "ncclCommGetAsyncError: null pointer");
  }
  if (comm->busy_polls != 0) {
    comm->busy_polls -= comm->busy_polls > 0 ? 1 : 0;
    *async_error = ncclInProgress;
    return ncclSuccess;
  }
  if (comm->enqueued) {  // the call is queued: the poll NCCL requires waits for no peer
    comm->enqueued = false;
    *async_error = ncclSuccess;
    return ncclSuccess;
  }
  if (comm->init_error != ncclSuccess) {
    *async_error = fail(comm->init_error, comm->init_why.c_str());
    return ncclSuccess;
  }
  *async_error = run_queued(comm);
  if (*async_error == ncclSuccess && comm->stalled) {
    *async_error = comm->stall_fails
                       ? fail(ncclSystemError,
                              "transport/net_ib.cc: NET/IB : Got completion from peer with "
                              "status=12 (rank's NIC)")
                       : ncclInProgress;
  }
  return ncclSuccess;
}

__attribute__((visibility("default"))) ncclResult_t ncclCommAbort(ncclComm_t comm) {
  delete comm;
  return ncclSuccess;
}

__attribute__((visibility("default"))) ncclResult_t ncclGroupStart() {
  ++g_group_depth;
  return ncclSuccess;
}

__attribute__((visibility("default"))) ncclResult_t ncclGroupEnd() {
  if (g_group_depth == 0) {
    return fail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  }
  if (--g_group_depth > 0) {
    return ncclSuccess;
  }
  ncclComm_t comm = g_group_comm;
  const ncclResult_t ran = run_group(comm);
  return ran == ncclSuccess && comm != nullptr ? accepted(comm) : ran;
}

}  // extern "C"
