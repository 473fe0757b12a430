#include "buffers.hpp"

#include <cstdint>
#include <vector>

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
  if (py::hasattr(object, "__cuda_array_interface__")) {
    from_cuda_array_interface(object, writable);
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
    object_ = std::move(capsule);
    data_ = static_cast<std::byte*>(t.data) + t.byte_offset;
    bytes_ = static_cast<std::size_t>(elements) * ((t.dtype.bits * t.dtype.lanes + 7U) / 8U);
    return;
  }
  invalid(what, std::string("expected a numpy array, a tensor, an acco.DeviceBuffer or another "
                            "object with the buffer protocol or __dlpack__, got ") +
                    Py_TYPE(object.ptr())->tp_name);
}

// Numba's __cuda_array_interface__ (version 2 and 3; CuPy, Numba, torch): a C-contiguous range
// of GPU memory. Its `stream`, when given, is not synchronised with: the producer's work on it
// must be complete (docs/python.md).
void BufferView::from_cuda_array_interface(py::handle object, bool writable) {
  const py::dict cai = object.attr("__cuda_array_interface__");
  const auto get = [&](const char* key) -> py::object {
    if (!cai.contains(key)) {
      invalid(what_, std::string("__cuda_array_interface__: no '") + key + "'");
    }
    return cai[key];
  };
  const auto data = get("data").cast<py::tuple>();
  const std::string typestr = py::str(get("typestr"));
  std::size_t item = 0;
  if (typestr.size() >= 3) {
    item = static_cast<std::size_t>(std::stoul(typestr.substr(2)));
  }
  if (item == 0) {
    invalid(what_, "__cuda_array_interface__: typestr '" + typestr + "' has no item size");
  }
  std::size_t elements = 1;
  std::vector<std::size_t> shape;
  for (const auto& n : get("shape").cast<py::tuple>()) {
    shape.push_back(n.cast<std::size_t>());
    elements *= shape.back();
  }
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    std::size_t expected = item;
    const auto strides = cai["strides"].cast<py::tuple>();
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (shape[d] > 1 && strides[d].cast<std::size_t>() != expected) {
        invalid(what_, "the array is not C-contiguous");
      }
      expected *= shape[d];
    }
  }
  if (writable && data[1].cast<bool>()) {
    invalid(what_, "the array is read-only");
  }
  object_ = py::reinterpret_borrow<py::object>(object);
  // The interface hands the device address over as an integer.
  data_ = reinterpret_cast<void*>(  // NOLINT(performance-no-int-to-ptr)
      data[0].cast<std::uintptr_t>());
  bytes_ = elements * item;
  gpu_memory_ = true;
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
        Error{Errc::kUnsupported,
              what_ + ": memory of a CUDA device, but the engine's device is " + info.name});
  }
}

BufferView::~BufferView() {
  if (view_) {
    PyBuffer_Release(view_.get());
  }
}

}  // namespace acco::python
