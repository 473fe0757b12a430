// acco.devices, acco.Device, acco.Engine (copy, copy_async, batch), acco.Transfer,
// acco.DeviceBuffer and acco.pinned_empty: the transfer engine on Python buffers.
#pragma once

#include <pybind11/pybind11.h>

namespace acco::python {

void bind_transfers(pybind11::module_& m);

}  // namespace acco::python
