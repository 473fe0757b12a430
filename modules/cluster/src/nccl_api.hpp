// acco's own declarations of the few NCCL calls it makes, as nccl.h declares them (NCCL 2.x ABI),
// so acco builds without NCCL's headers and loads libnccl.so.2 at run time (nccl_library.cpp).
// The fake library of the tests (tests/fake_nccl) defines these very prototypes.
#pragma once

#include <cstddef>

// NOLINTBEGIN(modernize-use-using, cppcoreguidelines-avoid-c-arrays, readability-identifier-naming)
extern "C" {

typedef struct ncclComm* ncclComm_t;

enum {
  kNcclUniqueIdBytes = 128
};  // NCCL_UNIQUE_ID_BYTES
typedef struct {
  char internal[kNcclUniqueIdBytes];
} ncclUniqueId;

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
} ncclResult_t;

// The element type and reduction acco's collectives use (nccl.h's ncclFloat32, ncclSum).
typedef enum {
  ncclFloat32 = 7,
} ncclDataType_t;
typedef enum {
  ncclSum = 0,
} ncclRedOp_t;
// cudaStream_t without CUDA's headers (the same opaque pointer type).
typedef struct CUstream_st* cudaStream_t;

ncclResult_t ncclGetVersion(int* version);
ncclResult_t ncclGetUniqueId(ncclUniqueId* unique_id);
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId comm_id, int rank);
// NCCL 2.14: a communicator's configuration, in the layout of 2.14 (later versions append fields
// and read only the first `size` bytes, with the defaults of nccl.h's NCCL_CONFIG_INITIALIZER for
// the rest). `blocking` 0 makes the init and every later call return at once (ncclInProgress):
// the caller polls ncclCommGetAsyncError until ncclSuccess before its next NCCL call.
typedef struct {
  std::size_t size;      // the bytes NCCL reads: up to the end of `blocking` here
  unsigned int magic;    // kNcclConfigMagic
  unsigned int version;  // NCCL_VERSION(2, 14, 0): the fields this struct holds
  int blocking;
} ncclConfig_t;
enum : unsigned int {
  kNcclConfigMagic = 0xcafebeef,
  kNcclConfigVersion = 21400,
};
// nccl.h's layout (checked against NCCL 2.28.9's header): the fields NCCL reads by these offsets.
static_assert(offsetof(ncclConfig_t, magic) == 8 && offsetof(ncclConfig_t, version) == 12 &&
              offsetof(ncclConfig_t, blocking) == 16);
ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId comm_id, int rank,
                                    ncclConfig_t* config);
// NCCL 2.18: a new communicator of the ranks that pass the same color, ordered by key, made with
// `config` (acco: a blocking copy of the watched one, for the data plane).
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                           ncclConfig_t* config);
ncclResult_t ncclCommCount(ncclComm_t comm, int* count);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
const char* ncclGetErrorString(ncclResult_t result);
// The collectives, enqueued on `stream` (they return before the data has moved).
ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, std::size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream);
ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, std::size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, std::size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream);
ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, std::size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
// Point to point (NCCL 2.7): alltoall and the sendrecv ring are groups of these.
ncclResult_t ncclSend(const void* sendbuff, std::size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclRecv(void* recvbuff, std::size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
// NCCL 2.4: a communicator's asynchronous error (network failures while kernels wait), and the
// abort that stops its queued work on every stream.
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError);
ncclResult_t ncclCommAbort(ncclComm_t comm);
// NCCL 2.13 and later: the last error's detail ("Cuda failure 'no CUDA-capable device ...'").
const char* ncclGetLastError(ncclComm_t comm);

}  // extern "C"
// NOLINTEND(modernize-use-using, cppcoreguidelines-avoid-c-arrays, readability-identifier-naming)
