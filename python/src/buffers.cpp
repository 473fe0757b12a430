#include "buffers.hpp"

#include <cstdint>

#include "dlpack.hpp"
#include "errors.hpp"

namespace py = pybind11;

namespace acco::python {
namespace {

[[noreturn]] void invalid(const std::string& what, const std::string& why) {
  throw ErrorException(Error{Errc::kInvalidArgument, what + ": " + why});
}

// The message of the Python error now set, which is cleared.
std::string take_python_error() {
  py::error_already_set error;
  return py::str(error.value());
}

}  // namespace

BufferView::BufferView(py::handle object, bool writable, const std::string& what) : what_(what) {
  if (py::isinstance<DeviceBuffer>(object)) {
    const auto& memory = object.cast<const DeviceBuffer&>();
    owner_ = memory.device;
    object_ = py::reinterpret_borrow<py::object>(object);
    data_ = memory.buffer->data();
    bytes_ = memory.buffer->size();
    return;
  }
  if (PyObject_CheckBuffer(object.ptr()) != 0) {
    auto view = std::make_unique<Py_buffer>();
    const int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object.ptr(), view.get(), flags) != 0) {
      invalid(what, take_python_error());
    }
    object_ = py::reinterpret_borrow<py::object>(object);
    data_ = view->buf;
    bytes_ = static_cast<std::size_t>(view->len);
    view_ = std::move(view);
    return;
  }
  if (py::hasattr(object, "__dlpack__")) {
    py::object capsule = object.attr("__dlpack__")();
    auto* managed = static_cast<dlpack::ManagedTensor*>(
        PyCapsule_GetPointer(capsule.ptr(), dlpack::kCapsuleName));
    if (managed == nullptr) {
      invalid(what, "__dlpack__: " + take_python_error());
    }
    const dlpack::Tensor& t = managed->dl_tensor;
    const auto type = t.device.device_type;
    if (type != dlpack::kDLCPU && type != dlpack::kDLCUDA && type != dlpack::kDLCUDAHost) {
      throw ErrorException(
          Error{Errc::kUnsupported, what + ": DLPack device type " + std::to_string(type) +
                                        " is neither host memory nor a CUDA device's"});
    }
    // Compact row-major only: the engine moves one byte range.
    std::int64_t elements = 1;
    std::int64_t expected_stride = 1;
    for (std::int32_t d = t.ndim - 1; d >= 0; --d) {
      if (t.strides != nullptr && t.shape[d] > 1 && t.strides[d] != expected_stride) {
        invalid(what, "the tensor is not contiguous (call .contiguous() first)");
      }
      expected_stride *= t.shape[d];
      elements *= t.shape[d];
    }
    gpu_memory_ = type == dlpack::kDLCUDA;
    gpu_ = t.device.device_id;
    object_ = std::move(capsule);
    data_ = static_cast<std::byte*>(t.data) + t.byte_offset;
    bytes_ = static_cast<std::size_t>(elements) * ((t.dtype.bits * t.dtype.lanes + 7U) / 8U);
    return;
  }
  invalid(what, std::string("expected a numpy array, a tensor, an acco.DeviceBuffer or another "
                            "object with the buffer protocol or __dlpack__, got ") +
                    Py_TYPE(object.ptr())->tp_name);
}

void BufferView::check_for(const device::Device& device) const {
  const auto& info = device.info();
  if (owner_ != nullptr && owner_ != &device) {
    throw ErrorException(
        Error{Errc::kInvalidArgument, what_ + ": memory of " + owner_->info().name +
                                          ", not of the engine's device " + info.name});
  }
  if (gpu_memory_ && info.backend != "cuda") {
    throw ErrorException(
        Error{Errc::kUnsupported, what_ + ": a tensor on CUDA device " + std::to_string(gpu_) +
                                      ", but the engine's device is " + info.name});
  }
}

BufferView::~BufferView() {
  if (view_) {
    PyBuffer_Release(view_.get());
  }
}

}  // namespace acco::python
