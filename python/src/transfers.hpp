// acco.devices, acco.Device, acco.Engine (copy, copy_async, batch), acco.Transfer,
// acco.DeviceBuffer and acco.pinned_empty: the transfer engine on Python buffers.
#pragma once

#include <memory>

#include <pybind11/pybind11.h>

#include "acco/device/device.hpp"

namespace acco::python {

// acco.Device: one device of a backend; holds the backend, which owns it.
struct PyDevice {
  std::shared_ptr<device::Backend> backend;
  device::Device* device = nullptr;
};

void bind_transfers(pybind11::module_& m);

}  // namespace acco::python
