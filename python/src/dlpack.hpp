// The DLPack 0.x structures acco reads from `__dlpack__` capsules (torch 1.13 exports these): the
// ABI of dmlc/dlpack's dlpack.h up to 0.8, declared here because Debian 12 installs no header by
// default. Only what a consumer reads; acco never produces DLPack tensors.
#pragma once

#include <cstdint>

namespace acco::python::dlpack {

enum DeviceType : std::int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,  // pinned host memory (cudaMallocHost)
};

struct Device {
  std::int32_t device_type;
  std::int32_t device_id;
};

struct DataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};

struct Tensor {
  void* data;
  Device device;
  std::int32_t ndim;
  DataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null: compact row-major
  std::uint64_t byte_offset;
};

struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};

// The capsule's name while nobody has consumed it; a consumer that takes ownership renames it
// "used_dltensor". acco only borrows: the capsule keeps the name and frees the tensor when it dies.
inline constexpr const char* kCapsuleName = "dltensor";

}  // namespace acco::python::dlpack
