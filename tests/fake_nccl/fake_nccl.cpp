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
// ACCO_FAKE_NCCL_VERSION: the code ncclGetVersion answers (default 22105, NCCL 2.21.5).
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "nccl_api.hpp"

struct ncclComm {
  int nranks = 0;
  int rank = 0;
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
  *comm = new (std::nothrow) ncclComm{nranks, rank};
  return *comm != nullptr ? ncclSuccess : fail(ncclSystemError, "out of memory");
}

__attribute__((visibility("default"))) ncclResult_t ncclCommCount(ncclComm_t comm, int* count) {
  if (comm == nullptr || count == nullptr) {
    return fail(ncclInvalidArgument, "ncclCommCount: null pointer");
  }
  *count = comm->nranks;
  return ncclSuccess;
}

__attribute__((visibility("default"))) ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  delete comm;
  return ncclSuccess;
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

}  // extern "C"
