// TraceRange over NVTX3 (header-only; it ships with the CUDA toolkit), or nothing without the
// CUDA backend. NVTX itself does nothing until a profiler injects its library; the check for one
// here also skips building the range's name and the push when none is attached.
#include "acco/device/trace_range.hpp"

#if defined(ACCO_WITH_NVTX)
#include <cstdlib>
#include <string>

#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#endif

namespace acco::device {

#if defined(ACCO_WITH_NVTX)

namespace {

// What NVTX's own loader looks for: the injection library named by the environment (Nsight
// Systems and Compute set it), or one already in the process.
bool profiler_attached() {
  return std::getenv("NVTX_INJECTION64_PATH") != nullptr ||
         dlsym(RTLD_DEFAULT, "InitializeInjectionNvtx2") != nullptr;
}

nvtxDomainRegistration* domain() {
  // NVTX's API takes the handle as a non-const pointer; it is created once and never changes.
  // NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables)
  static nvtxDomainRegistration* const handle = nvtxDomainCreateA("acco");
  return handle;
}

}  // namespace

bool trace_ranges_built() {
  return true;
}

bool tracing() {
  static const bool attached = profiler_attached();
  return attached;
}

TraceRange::TraceRange(std::string_view name) {
  if (!tracing()) {
    return;
  }
  const std::string text(name);  // NVTX takes a NUL-terminated string and copies it
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = text.c_str();
  (void)nvtxDomainRangePushEx(domain(), &attributes);
  open_ = true;
}

void TraceRange::pop() {
  (void)nvtxDomainRangePop(domain());
}

#else

bool trace_ranges_built() {
  return false;
}

bool tracing() {
  return false;
}

TraceRange::TraceRange(std::string_view /*name*/) {}

void TraceRange::pop() {}

#endif

}  // namespace acco::device
