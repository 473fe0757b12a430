// A stand-in libnccl.so.2 so the NCCL path is tested on machines without a GPU. It defines the
// prototypes acco declares (modules/dist/src/nccl_api.hpp) and behaves as ACCO_FAKE_NCCL_MODE says:
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
// The collectives work on host memory (the host backend's device buffers) and ignore the
// stream: with one rank they copy at once; with more they are queued, as kernels on a stream
// that wait for their peers, and run Open MPI's collectives on MPI_COMM_WORLD (the ranks of
// acco's job, when built with MPI: ACCO_FAKE_NCCL_MPI) in order when ncclCommGetAsyncError or
// ncclCommDestroy is called (an error then is the asynchronous error); ncclCommAbort drops them.
// alltoall and sendrecv are groups of ncclSend/ncclRecv, queued at ncclGroupEnd.
// ACCO_FAKE_NCCL_VERSION: the code ncclGetVersion answers (default 22105, NCCL 2.21.5).
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

// Checks common to every collective; ncclSuccess when it may go on.
ncclResult_t usable(ncclComm_t comm, const void* send, const void* recv, std::size_t count) {
  if (comm == nullptr) {
    return fail(ncclInvalidArgument, "collective: null communicator");
  }
  if (count > 0 && (send == nullptr || recv == nullptr)) {
    return fail(ncclInvalidArgument, "collective: null buffer");
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
  if (comm == nullptr || nranks <= 0 || rank < 0 || rank >= nranks) {
    return fail(ncclInvalidArgument, "ncclCommInitRank: bad rank or size");
  }
  const std::string m = mode();
  if (m == "no-gpu") {
    return fail(ncclUnhandledCudaError, "Cuda failure 100 'no CUDA-capable device is detected'");
  }
  if (std::memcmp(comm_id.internal, kMarker, sizeof kMarker) != 0) {
    return fail(ncclInvalidArgument, "ncclCommInitRank: invalid unique id");
  }
  if (m == "fail-on-rank-" + std::to_string(rank)) {
    return fail(ncclSystemError, "socket connect to the root failed");
  }
  *comm = new (std::nothrow) ncclComm;
  if (*comm == nullptr) {
    return fail(ncclSystemError, "out of memory");
  }
  (*comm)->nranks = nranks;
  (*comm)->rank = rank;
  return ncclSuccess;
}

__attribute__((visibility("default"))) ncclResult_t ncclCommCount(ncclComm_t comm, int* count) {
  if (comm == nullptr || count == nullptr) {
    return fail(ncclInvalidArgument, "ncclCommCount: null pointer");
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
    return ncclSuccess;
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
  return ncclSuccess;
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
    return ncclSuccess;
  }
#ifdef ACCO_FAKE_NCCL_MPI
  enqueue(comm, [=] {
    return mpi(MPI_Allgather(sendbuff, mpi_count(sendcount), MPI_FLOAT, recvbuff,
                             mpi_count(sendcount), MPI_FLOAT, MPI_COMM_WORLD));
  });
  return ncclSuccess;
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
    return ncclSuccess;
  }
#ifdef ACCO_FAKE_NCCL_MPI
  enqueue(comm, [=] {
    return mpi(MPI_Reduce_scatter_block(sendbuff, recvbuff, mpi_count(recvcount), MPI_FLOAT,
                                        MPI_SUM, MPI_COMM_WORLD));
  });
  return ncclSuccess;
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
    return ncclSuccess;
  }
#ifdef ACCO_FAKE_NCCL_MPI
  enqueue(comm, [=, mine = comm->rank == root] {
    if (mine) {
      std::memmove(recvbuff, sendbuff, count * kFloat);
    }
    return mpi(MPI_Bcast(recvbuff, mpi_count(count), MPI_FLOAT, root, MPI_COMM_WORLD));
  });
  return ncclSuccess;
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
  return run_group(g_group_comm);
}

}  // extern "C"
