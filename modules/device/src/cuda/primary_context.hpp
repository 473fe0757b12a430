// A device's primary context, retained while any object of the backend that lives in it (device,
// buffer, queue, event) does. The driver API's calls act on the calling thread's current context,
// so each call that needs one makes this one current first (cheap when unchanged), as
// cudaSetDevice did for the runtime.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "acco/core/result.hpp"

#include "cuda/driver.hpp"

namespace acco::device::detail {

class PrimaryContext {
 public:
  // cuDevicePrimaryCtxRetain of `device`, cuDeviceGet's handle of device `ordinal` (the driver
  // does not promise that the two are equal). kDeviceError when the driver refuses.
  [[nodiscard]] static Result<std::shared_ptr<const PrimaryContext>> retain(
      std::shared_ptr<const Driver> driver, int ordinal, CUdevice device);

  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;
  // cuDevicePrimaryCtxRelease_v2; the driver destroys the context with its last release.
  ~PrimaryContext();

  // cuCtxSetCurrent on the calling thread. Thread-safe.
  [[nodiscard]] Status make_current() const;
  [[nodiscard]] const Driver& driver() const { return *driver_; }
  [[nodiscard]] const DriverApi& api() const { return driver_->api(); }
  [[nodiscard]] int ordinal() const { return ordinal_; }
  // The handle every driver call about the device takes.
  [[nodiscard]] CUdevice device() const { return device_; }
  // "cuda device <ordinal>", and "cuda device <ordinal>: <what>": errors name their device.
  [[nodiscard]] std::string name() const;
  [[nodiscard]] std::string where(std::string_view what) const;
  [[nodiscard]] CUcontext handle() const { return context_; }

 private:
  PrimaryContext(std::shared_ptr<const Driver> driver, int ordinal, CUdevice device,
                 CUcontext context)
      : driver_(std::move(driver)), ordinal_(ordinal), device_(device), context_(context) {}

  std::shared_ptr<const Driver> driver_;
  int ordinal_;
  CUdevice device_;
  CUcontext context_;
};

}  // namespace acco::device::detail
