// The CUDA backend's factory: loads the driver, enumerates the GPUs it sees (CUDA_VISIBLE_DEVICES
// applies) and describes each one from the driver's attributes.
#include "acco/device/cuda_backend.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "acco/core/fs.hpp"

#include "cuda/allocation_table.hpp"
#include "cuda/cuda_device.hpp"
#include "cuda/driver.hpp"
#include "cuda/primary_context.hpp"

namespace acco::device {
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

// The domain:bus:device form sysfs uses, function 0 (the driver reports no function number).
std::string pci_address(int domain, int bus, int device) {
  std::array<char, 32> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "%04x:%02x:%02x.0",  // NOLINT
                static_cast<unsigned>(domain), static_cast<unsigned>(bus),
                static_cast<unsigned>(device));
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

Result<int> device_count(const detail::Driver& driver) {
  int count = 0;
  if (const CUresult code = driver.api().device_get_count(&count); code != CUDA_SUCCESS) {
    return tl::unexpected(driver.error("cuDeviceGetCount", code, Errc::kUnavailable));
  }
  if (count == 0) {
    return fail(Errc::kUnavailable, "cuDeviceGetCount: no CUDA device");
  }
  return count;
}

Result<int> attribute(const detail::Driver& driver, CUdevice device, CUdevice_attribute which,
                      const char* what) {
  int value = 0;
  if (const CUresult code = driver.api().device_get_attribute(&value, which, device);
      code != CUDA_SUCCESS) {
    return tl::unexpected(driver.error("cuDeviceGetAttribute", code).with_context(what));
  }
  return value;
}

struct Described {
  DeviceInfo info;
  CUdevice device = 0;  // cuDeviceGet's handle, which every later call about the device takes
  bool can_map_host = false;
};

Result<Described> describe(const detail::Driver& driver, int ordinal, const core::Fs* fs) {
  const detail::DriverApi& api = driver.api();
  CUdevice device = 0;
  ACCO_RETURN_IF_ERROR(driver.check("cuDeviceGet", api.device_get(&device, ordinal)));
  std::array<char, 256> name{};
  ACCO_RETURN_IF_ERROR(driver.check(
      "cuDeviceGetName", api.device_get_name(name.data(), static_cast<int>(name.size()), device)));
  std::size_t memory_bytes = 0;
  ACCO_RETURN_IF_ERROR(
      driver.check("cuDeviceTotalMem_v2", api.device_total_mem(&memory_bytes, device)));
  ACCO_ASSIGN_OR_RETURN(const int domain,
                        attribute(driver, device, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, "PCI domain"));
  ACCO_ASSIGN_OR_RETURN(const int bus,
                        attribute(driver, device, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, "PCI bus"));
  ACCO_ASSIGN_OR_RETURN(const int slot,
                        attribute(driver, device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, "PCI device"));
  ACCO_ASSIGN_OR_RETURN(
      const int engines,
      attribute(driver, device, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, "copy engines"));
  ACCO_ASSIGN_OR_RETURN(
      const int can_map,
      attribute(driver, device, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, "can map host memory"));
  ACCO_ASSIGN_OR_RETURN(
      const int unified,
      attribute(driver, device, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, "unified addressing"));
  if (unified == 0) {
    // Copies pass plain pointers and let the driver tell host from device by address.
    return fail(Errc::kUnsupported, "the device lacks unified addressing, which acco needs");
  }
  Described described;
  DeviceInfo& info = described.info;
  info.index = ordinal;
  info.name = name.data();
  info.backend = "cuda";
  info.pci = pci_address(domain, bus, slot);
  info.numa_node = numa_node_of(fs, info.pci);
  info.memory_bytes = memory_bytes;
  info.link_bytes_per_second = 0;  // the topology knows the link; the driver does not
  info.copy_engines = engines > 0 ? engines : 1;
  described.device = device;
  described.can_map_host = can_map != 0;
  return described;
}

// Lets every device reach the memory of every peer the driver allows (NVLink or PCIe P2P), so a
// device-to-device copy goes straight across instead of being staged through host memory. Best
// effort: a pair the driver refuses still copies, staged. The primary contexts are shared with
// the rest of the process (the CUDA runtime, NCCL), which may have enabled a pair already.
void enable_peer_access(
    const detail::Driver& driver,
    const std::vector<std::shared_ptr<const detail::PrimaryContext>>& contexts) {
  for (const auto& from : contexts) {
    for (const auto& to : contexts) {
      int can_access = 0;
      if (from == to ||
          driver.api().device_can_access_peer(&can_access, from->device(), to->device()) !=
              CUDA_SUCCESS ||
          can_access == 0 || !from->make_current().has_value()) {
        continue;
      }
      // CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED and refusals alike leave the pair as it was.
      static_cast<void>(driver.api().ctx_enable_peer_access(to->handle(), 0));
    }
  }
}

}  // namespace

bool cuda_compiled() {
  return true;
}

std::string cuda_library() {
  const char* named = std::getenv("ACCO_CUDA_LIBRARY");  // NOLINT(concurrency-mt-unsafe)
  return named != nullptr && *named != '\0' ? named : detail::kCudaLibrary;
}

Result<CudaDriverInfo> cuda_driver_info(const std::string& library) {
  ACCO_ASSIGN_OR_RETURN(const auto driver, detail::Driver::open(library), "cuda");
  CudaDriverInfo info;
  info.library = library;
  info.version = driver->version();
  info.cuda_version = detail::cuda_version_text(driver->version());
  ACCO_ASSIGN_OR_RETURN(info.device_count, device_count(*driver), "cuda");
  return info;
}

Result<std::unique_ptr<Backend>> make_cuda_backend(const std::string& library) {
  ACCO_ASSIGN_OR_RETURN(auto driver, detail::Driver::open(library), "cuda");
  ACCO_ASSIGN_OR_RETURN(const int count, device_count(*driver), "cuda");
  const auto fs = core::make_disk_fs("/");
  auto table = std::make_shared<detail::AllocationTable>();
  std::vector<std::unique_ptr<detail::CudaDevice>> devices;
  std::vector<std::shared_ptr<const detail::PrimaryContext>> contexts;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    const std::string where = "cuda device " + std::to_string(ordinal);
    ACCO_ASSIGN_OR_RETURN(auto described,
                          describe(*driver, ordinal, fs.has_value() ? fs->get() : nullptr), where);
    ACCO_ASSIGN_OR_RETURN(auto context,
                          detail::PrimaryContext::retain(driver, ordinal, described.device), where);
    contexts.push_back(context);
    devices.push_back(std::make_unique<detail::CudaDevice>(
        std::move(described.info), described.can_map_host, std::move(context), table));
  }
  enable_peer_access(*driver, contexts);
  return std::make_unique<CudaBackend>(std::move(devices));
}

}  // namespace acco::device
