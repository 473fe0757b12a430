// The CUDA backend's factory: enumerates the GPUs the runtime sees (CUDA_VISIBLE_DEVICES
// applies) and describes each one. The runtime is linked statically and loads libcuda.so.1 on
// first use, so a machine without a driver gets kUnavailable here instead of a loader error.
#include "acco/dev/cuda_backend.hpp"

#include <array>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "acco/core/fs.hpp"

#include "cuda/allocation_table.hpp"
#include "cuda/cuda_device.hpp"
#include "cuda/cuda_error.hpp"

namespace acco::dev {
namespace {

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(std::vector<std::unique_ptr<detail::CudaDevice>> devices)
      : devices_(std::move(devices)) {}
  [[nodiscard]] std::string name() const override { return "cuda"; }
  [[nodiscard]] std::vector<Device*> devices() override {
    std::vector<Device*> result;
    result.reserve(devices_.size());
    for (const auto& device : devices_) {
      result.push_back(device.get());
    }
    return result;
  }

 private:
  std::vector<std::unique_ptr<detail::CudaDevice>> devices_;
};

// The domain:bus:device form sysfs uses, function 0 (the runtime reports no function number).
std::string pci_address(const cudaDeviceProp& properties) {
  std::array<char, 32> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "%04x:%02x:%02x.0",
                static_cast<unsigned>(properties.pciDomainID),
                static_cast<unsigned>(properties.pciBusID),
                static_cast<unsigned>(properties.pciDeviceID));
  return buffer.data();
}

// -1 when sysfs has no answer (no NUMA, a sandbox without /sys/bus/pci) or says -1 itself.
int numa_node_of(const core::Fs* fs, const std::string& pci) {
  if (fs == nullptr) {
    return -1;
  }
  const auto text = fs->read_file("/sys/bus/pci/devices/" + pci + "/numa_node");
  if (!text.has_value()) {
    return -1;
  }
  try {
    return std::stoi(*text);
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

bool cuda_compiled() {
  return true;
}

Result<std::unique_ptr<Backend>> make_cuda_backend() {
  int count = 0;
  if (const cudaError_t code = cudaGetDeviceCount(&count); code != cudaSuccess) {
    return tl::unexpected(detail::cuda_error("cudaGetDeviceCount", code, Errc::kUnavailable));
  }
  if (count == 0) {
    return fail(Errc::kUnavailable, "cudaGetDeviceCount: no CUDA device");
  }
  const auto fs = core::make_disk_fs("/");
  auto table = std::make_shared<detail::AllocationTable>();
  std::vector<std::unique_ptr<detail::CudaDevice>> devices;
  for (int index = 0; index < count; ++index) {
    cudaDeviceProp properties{};
    if (const cudaError_t code = cudaGetDeviceProperties(&properties, index); code != cudaSuccess) {
      return tl::unexpected(detail::cuda_error("cudaGetDeviceProperties", code)
                                .with_context("cuda device " + std::to_string(index)));
    }
    DeviceInfo info;
    info.index = index;
    info.name = properties.name;
    info.backend = "cuda";
    info.pci = pci_address(properties);
    info.numa_node = numa_node_of(fs.has_value() ? fs->get() : nullptr, info.pci);
    info.memory_bytes = properties.totalGlobalMem;
    info.link_bytes_per_second = 0;  // the topology knows the link; the runtime does not
    info.copy_engines = properties.asyncEngineCount > 0 ? properties.asyncEngineCount : 1;
    devices.push_back(std::make_unique<detail::CudaDevice>(
        std::move(info), properties.canMapHostMemory != 0, table));
  }
  return std::make_unique<CudaBackend>(std::move(devices));
}

}  // namespace acco::dev
