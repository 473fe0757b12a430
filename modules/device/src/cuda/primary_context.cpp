#include "cuda/primary_context.hpp"

#include <string>
#include <utility>

namespace acco::device::detail {

Result<std::shared_ptr<const PrimaryContext>> PrimaryContext::retain(
    std::shared_ptr<const Driver> driver, int ordinal, CUdevice device) {
  CUcontext context = nullptr;
  if (const CUresult code = driver->api().primary_ctx_retain(&context, device);
      code != CUDA_SUCCESS) {
    return tl::unexpected(driver->error("cuDevicePrimaryCtxRetain", code)
                              .with_context("cuda device " + std::to_string(ordinal)));
  }
  return std::shared_ptr<const PrimaryContext>(
      new PrimaryContext(std::move(driver), ordinal, device, context));
}

// A release error cannot be reported from a destructor, and leaves nothing to undo.
PrimaryContext::~PrimaryContext() {
  static_cast<void>(driver_->api().primary_ctx_release(device_));
}

std::string PrimaryContext::name() const {
  return "cuda device " + std::to_string(ordinal_);
}

std::string PrimaryContext::where(std::string_view what) const {
  return name() + ": " + std::string(what);
}

Status PrimaryContext::make_current() const {
  return driver_->check("cuCtxSetCurrent", driver_->api().ctx_set_current(context_));
}

}  // namespace acco::device::detail
