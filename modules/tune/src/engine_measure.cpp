#include "engine_measure.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "acco/core/stats.hpp"
#include "acco/transfer/engine.hpp"

namespace acco::tune::detail {

EngineMeasure::EngineMeasure(std::map<std::string, device::Device*> devices, int copies)
    : devices_(std::move(devices)), copies_(std::max(1, copies)) {}

Result<EngineMeasure::Buffers*> EngineMeasure::buffers(device::Device& device,
                                                       const std::string& name,
                                                       device::MemoryKind kind, std::size_t bytes) {
  auto& b = buffers_[{name, kind}];
  if (!b.host || b.host->size() < bytes) {
    b = {};  // free the smaller pair first: the largest size is asked for first
    ACCO_ASSIGN_OR_RETURN(b.host, device.allocate_host(bytes, kind));
    ACCO_ASSIGN_OR_RETURN(b.device, device.allocate(bytes));
    // Touch every page so the first timed copy does not pay for the page faults.
    std::memset(b.host->data(), 0x5a, bytes);
  }
  return &b;
}

Result<double> EngineMeasure::operator()(const Target& target, const transfer::Profile& profile,
                                         std::uint64_t bytes) {
  const auto it = devices_.find(target.device);
  if (it == devices_.end()) {
    return fail(Errc::kInvalidArgument, fmt::format("tune: no device '{}'", target.device));
  }
  const bool h2d = target.path.starts_with("h2d_");
  const bool pinned = target.path.ends_with("_pinned");
  if (!h2d && !target.path.starts_with("d2h_")) {
    return fail(Errc::kInvalidArgument, fmt::format("tune: unknown path '{}'", target.path));
  }
  const auto n = static_cast<std::size_t>(bytes);
  device::Device& device = *it->second;
  ACCO_ASSIGN_OR_RETURN(
      auto* b, buffers(device, target.device,
                       pinned ? device::MemoryKind::kPinned : device::MemoryKind::kPageable, n));
  void* dst = h2d ? b->device->data() : b->host->data();
  const void* src = h2d ? b->host->data() : b->device->data();
  ACCO_ASSIGN_OR_RETURN(auto engine, transfer::Engine::create(device, profile));
  const auto one = [&]() -> Status {
    ACCO_ASSIGN_OR_RETURN(auto t, engine->copy(dst, src, n));
    return t.wait().transform([](const auto&) {});
  };
  ACCO_RETURN_IF_ERROR(one(), "warm-up");
  std::vector<double> seconds;
  for (int i = 0; i < copies_; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    ACCO_RETURN_IF_ERROR(one(), "copy");
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return core::stats::median_in_place(seconds);
}

}  // namespace acco::tune::detail
