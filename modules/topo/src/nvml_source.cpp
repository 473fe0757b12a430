// What NVML says about the GPUs, read once through the acco::nvml facade (which owns the one
// dlopen of libnvidia-ml): open, query every GPU, and let the library shut down and unload.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "acco/nvml/library.hpp"
#include "acco/topo/nvml.hpp"

#include "p2p_status_names.hpp"

namespace acco::topo {
namespace {

using nvml::Device;
using nvml::Library;

std::optional<int> query_link(const Library& nvml, Device device, nvml::PcieLink which) {
  const Result<unsigned int> value = nvml.pcie_link(device, which);
  if (!value.has_value()) {
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

// The profile in a MIG device's name: "NVIDIA H100 80GB HBM3 MIG 3g.40gb" -> "3g.40gb"; the
// whole name when it has no " MIG " part.
std::string mig_profile(const std::string& name) {
  const auto at = name.rfind(" MIG ");
  return at == std::string::npos ? name : name.substr(at + 5);
}

// MIG device slots are sparse: a slot without an instance answers NOT_FOUND, so read the handles
// that exist rather than trusting the maximum.
std::vector<MigDevice> query_mig_devices(const Library& nvml, Device device) {
  std::vector<MigDevice> out;
  const Result<unsigned int> slots = nvml.max_mig_device_count(device);
  if (!slots.has_value()) {
    return out;
  }
  for (unsigned int slot = 0; slot < *slots; ++slot) {
    const Result<Device> mig = nvml.mig_device(device, slot);
    if (!mig.has_value()) {
      continue;
    }
    MigDevice entry;
    entry.slot = static_cast<int>(slot);
    if (Result<std::string> uuid = nvml.uuid(*mig); uuid.has_value()) {
      entry.uuid = std::move(*uuid);
    }
    if (const Result<std::string> name = nvml.name(*mig); name.has_value()) {
      entry.profile = mig_profile(*name);
    }
    if (const Result<nvml::MemoryInfo> memory = nvml.memory_info(*mig); memory.has_value()) {
      entry.memory_total_bytes = memory->total_bytes;
    }
    if (const Result<unsigned int> gi = nvml.gpu_instance_id(*mig); gi.has_value()) {
      entry.gpu_instance = static_cast<int>(*gi);
    }
    if (const Result<unsigned int> ci = nvml.compute_instance_id(*mig); ci.has_value()) {
      entry.compute_instance = static_cast<int>(*ci);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

// NVML's NVML_NVLINK_MAX_LINKS in the driver 450 headers acco's declarations follow.
constexpr unsigned int kMaxNvLinks = 18;

std::vector<NvLink> query_nvlinks(const Library& nvml, Device device) {
  std::vector<NvLink> links;
  for (unsigned int link = 0; link < kMaxNvLinks; ++link) {
    const Result<bool> active = nvml.nvlink_active(device, link);
    // A GPU has fewer links than NVML's maximum: the first index past its last link answers
    // INVALID_ARGUMENT, and a GPU without NVLink (or a driver without the call) NOT_SUPPORTED.
    if (!active.has_value() && (active.error().code == Errc::kInvalidArgument ||
                                active.error().code == Errc::kUnsupported)) {
      break;
    }
    if (!active.has_value()) {
      continue;
    }
    NvLink& entry = links.emplace_back();
    entry.link = static_cast<int>(link);
    entry.active = *active;
    if (Result<std::string> remote = nvml.nvlink_remote_pci(device, link); remote.has_value()) {
      entry.remote_pci = std::move(*remote);
    }
    if (const Result<unsigned int> version = nvml.nvlink_version(device, link);
        version.has_value()) {
      entry.version = static_cast<int>(*version);
    }
  }
  return links;
}

void query_gpu(const Library& nvml, Device device, NvmlGpu& gpu) {
  if (Result<std::string> name = nvml.name(device); name.has_value()) {
    gpu.name = std::move(*name);
  }
  if (Result<std::string> uuid = nvml.uuid(device); uuid.has_value()) {
    gpu.uuid = std::move(*uuid);
  }
  if (const Result<nvml::MemoryInfo> memory = nvml.memory_info(device); memory.has_value()) {
    gpu.memory_total_bytes = memory->total_bytes;
  }
  if (const Result<int> pstate = nvml.performance_state(device);
      pstate.has_value() && *pstate >= 0 && *pstate <= 15) {
    gpu.pstate = *pstate;
  }
  if (const Result<bool> persistence = nvml.persistence_mode(device); persistence.has_value()) {
    gpu.persistence_mode = *persistence;
  }
  if (const Result<nvml::MigMode> mig = nvml.mig_mode(device); mig.has_value()) {
    gpu.mig_enabled = mig->current;
    gpu.mig_pending = mig->pending;
    if (mig->current) {
      gpu.mig_devices = query_mig_devices(nvml, device);
      gpu.mig_instances = static_cast<int>(gpu.mig_devices.size());
    }
  }
  gpu.pcie_current_gen = query_link(nvml, device, nvml::PcieLink::kCurrentGen);
  gpu.pcie_current_width = query_link(nvml, device, nvml::PcieLink::kCurrentWidth);
  gpu.pcie_max_gen = query_link(nvml, device, nvml::PcieLink::kMaxGen);
  gpu.pcie_max_width = query_link(nvml, device, nvml::PcieLink::kMaxWidth);
  gpu.nvlinks = query_nvlinks(nvml, device);
}

std::string_view p2p_name(int status) {
  const auto value = static_cast<std::size_t>(status);
  return status >= 0 && value < detail::kP2pStatusNames.size() ? detail::kP2pStatusNames[value]
                                                               : detail::kP2pStatusNames.back();
}

// `devices[i]` is empty where GPU i could not be opened; its pairs are left out.
std::vector<P2pStatus> query_p2p(const Library& nvml,
                                 const std::vector<std::optional<Device>>& devices,
                                 std::size_t self, const std::vector<NvmlGpu>& gpus) {
  std::vector<P2pStatus> pairs;
  for (std::size_t peer = 0; peer < devices.size(); ++peer) {
    if (peer == self || !devices[peer].has_value()) {
      continue;
    }
    const Result<int> read = nvml.p2p_status(*devices[self], *devices[peer], nvml::P2pCaps::kRead);
    if (!read.has_value()) {
      continue;
    }
    const Result<int> write =
        nvml.p2p_status(*devices[self], *devices[peer], nvml::P2pCaps::kWrite);
    if (write.has_value()) {
      pairs.push_back(
          P2pStatus{gpus[peer].pci, std::string(p2p_name(*read)), std::string(p2p_name(*write))});
    }
  }
  return pairs;
}

void query_gpus(const Library& nvml, NvmlReport& report) {
  const Result<unsigned int> count = nvml.device_count();
  if (!count.has_value()) {
    report.reason = count.error().message;
    return;
  }
  report.available = true;
  if (Result<std::string> version = nvml.driver_version(); version.has_value()) {
    report.driver_version = std::move(*version);
  }
  // Handles and addresses first: every GPU's P2P entries name their peers by address.
  std::vector<std::optional<Device>> devices(*count);
  report.gpus.resize(*count);
  for (unsigned int i = 0; i < *count; ++i) {
    report.gpus[i].index = static_cast<int>(i);
    Result<Device> device = nvml.device(i);
    if (!device.has_value()) {
      continue;
    }
    Result<std::string> pci = nvml.pci_bus_id(*device);
    if (!pci.has_value()) {
      continue;
    }
    devices[i] = *device;
    report.gpus[i].pci = std::move(*pci);
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].has_value()) {
      query_gpu(nvml, *devices[i], report.gpus[i]);
      report.gpus[i].p2p = query_p2p(nvml, devices, i, report.gpus);
    }
  }
}

}  // namespace

NvmlReport query_nvml(const std::string& library) {
  NvmlReport report;
  report.library = library;
  const Result<std::shared_ptr<Library>> nvml = Library::open(library);
  if (!nvml.has_value()) {
    report.reason = nvml.error().message;
    return report;
  }
  query_gpus(**nvml, report);
  return report;
}

}  // namespace acco::topo
