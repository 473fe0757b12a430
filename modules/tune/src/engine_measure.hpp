// The tuner's measurement on a real device: copies through an Engine built with the candidate
// profile, timed on the host clock (what a caller of Engine::copy waits), the median kept.
#pragma once

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "acco/device/device.hpp"
#include "acco/tune/search.hpp"

namespace acco::tune::detail {

class EngineMeasure {
 public:
  // `devices` by the names Targets use; they must outlive this. `copies` timed per measurement
  // after one untimed warm-up.
  EngineMeasure(std::map<std::string, device::Device*> devices, int copies);

  // Seconds of one copy (median). kInvalidArgument for an unknown device or path; the engine's
  // and the device's errors as they are.
  [[nodiscard]] Result<double> operator()(const Target& target, const transfer::Profile& profile,
                                          std::uint64_t bytes);

 private:
  struct Buffers {
    std::unique_ptr<device::Buffer> host;
    std::unique_ptr<device::Buffer> device;
  };
  Result<Buffers*> buffers(device::Device& device, const std::string& name, device::MemoryKind kind,
                           std::size_t bytes);

  std::map<std::string, device::Device*> devices_;
  int copies_;
  std::map<std::tuple<std::string, device::MemoryKind>, Buffers> buffers_;
};

}  // namespace acco::tune::detail
