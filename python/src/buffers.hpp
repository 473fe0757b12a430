// The memory behind a Python object, as one contiguous byte range the engine can copy: the buffer
// protocol (numpy arrays, bytearray, memoryview, acco.pinned_empty arrays),
// `__cuda_array_interface__` (GPU arrays of CuPy, Numba, torch), `__dlpack__` (torch tensors, on
// the CPU and, with the CUDA backend, on a GPU) and acco's own DeviceBuffer.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <pybind11/pybind11.h>

#include "acco/device/device.hpp"

namespace acco::python {

// acco.DeviceBuffer: memory of one device (Device.allocate). Holds the backend, so the memory may
// outlive every Python handle to its device.
struct DeviceBuffer {
  std::shared_ptr<device::Backend> backend;
  device::Device* device = nullptr;  // the backend's, which owns it
  std::unique_ptr<device::Buffer> buffer;
};

// Holds the object (and its buffer export) until destroyed; create and destroy it with the GIL.
class BufferView {
 public:
  // `what` names the argument in errors ("dst"). Raises InvalidArgumentError for an object
  // without one of the three interfaces, a non-contiguous or (with `writable`) read-only one;
  // UnsupportedError for DLPack memory neither on the host nor on a CUDA device.
  BufferView(pybind11::handle object, bool writable, const std::string& what);
  ~BufferView();
  BufferView(const BufferView&) = delete;
  BufferView& operator=(const BufferView&) = delete;

  [[nodiscard]] void* data() const { return data_; }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

  // Raises for memory `device` (an engine's) cannot copy: device memory of another device
  // (InvalidArgumentError) or a GPU tensor on the host backend (UnsupportedError).
  void check_for(const device::Device& device) const;

 private:
  void from_cuda_array_interface(pybind11::handle object, bool writable);

  pybind11::object object_;  // the object, or the DLPack capsule that keeps the tensor alive
  std::unique_ptr<Py_buffer> view_;  // set when the buffer protocol was used
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::string what_;
  const device::Device* owner_ = nullptr;  // a DeviceBuffer's device
  bool gpu_memory_ = false;                // a GPU array or tensor of another library
};

}  // namespace acco::python
