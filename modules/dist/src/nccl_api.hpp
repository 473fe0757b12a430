// acco's own declarations of the few NCCL calls it makes, as nccl.h declares them (NCCL 2.x ABI),
// so acco builds without NCCL's headers and loads libnccl.so.2 at run time (nccl_library.cpp).
// The fake library of the tests (tests/fake_nccl) defines these very prototypes.
#pragma once

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

ncclResult_t ncclGetVersion(int* version);
ncclResult_t ncclGetUniqueId(ncclUniqueId* unique_id);
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId comm_id, int rank);
ncclResult_t ncclCommCount(ncclComm_t comm, int* count);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
const char* ncclGetErrorString(ncclResult_t result);
// NCCL 2.13 and later: the last error's detail ("Cuda failure 'no CUDA-capable device ...'").
const char* ncclGetLastError(ncclComm_t comm);

}  // extern "C"
// NOLINTEND(modernize-use-using, cppcoreguidelines-avoid-c-arrays, readability-identifier-naming)
