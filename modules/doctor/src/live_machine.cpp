#include "acco/doctor/live_machine.hpp"

#include <utility>

#include <fmt/format.h>

#include "acco/device/cuda_backend.hpp"
#include "acco/io/reader.hpp"
#include "acco/topo/json.hpp"
#include "acco/topo/probe_report.hpp"

namespace acco::doctor {

Result<ProbeReport> probe_with_driver(const topo::ProbeRequest& request) {
  ProbeReport report;
  ACCO_ASSIGN_OR_RETURN(report.probe, topo::probe(request));
  if (is_live(request)) {
    report.cuda = read_cuda_driver();
  }
  return report;
}

nlohmann::ordered_json to_json(const ProbeReport& report) {
  auto j = topo::probe_json(report.probe.machine, report.probe.findings);
  if (report.cuda) {
    j["cuda_driver"] = to_json(*report.cuda);
  }
  return j;
}

report::Document probe_report(const ProbeReport& report) {
  return topo::probe_report(report.probe.machine, report.probe.findings,
                            report.cuda ? cuda_driver_text(*report.cuda) : "");
}

CudaDriver read_cuda_driver() {
  CudaDriver d;
  d.library = device::cuda_library();
  auto info = device::cuda_driver_info(d.library);
  if (!info) {
    d.error = info.error().message;
    return d;
  }
  d.usable = true;
  d.version = info->version;
  d.cuda_version = info->cuda_version;
  d.device_count = info->device_count;
  return d;
}

nlohmann::ordered_json to_json(const CudaDriver& driver) {
  nlohmann::ordered_json j;
  j["library"] = driver.library;
  if (driver.usable) {
    j["version"] = driver.version;
    j["cuda_version"] = driver.cuda_version;
    j["device_count"] = driver.device_count;
    j["error"] = nullptr;
  } else {
    j["version"] = nullptr;
    j["cuda_version"] = nullptr;
    j["device_count"] = nullptr;
    j["error"] = driver.error;
  }
  return j;
}

std::string cuda_driver_text(const CudaDriver& driver) {
  if (!driver.usable) {
    return fmt::format("CUDA driver: none usable ({})\n", driver.error);
  }
  return fmt::format("CUDA driver: {} (supports CUDA {}), {} device{}, {}\n", driver.version,
                     driver.cuda_version, driver.device_count, driver.device_count == 1 ? "" : "s",
                     driver.library);
}

bool is_live(const topo::ProbeRequest& request) {
  return request.from_snapshot.empty() && request.hwloc_xml.empty() && request.nccl_topo.empty() &&
         request.sysroot == "/";
}

void try_direct_io(topo::ProbeRequest& request) {
  if (!is_live(request) || request.data_dir.empty() || request.direct_io ||
      !request.direct_io_untried.empty()) {
    return;
  }
  auto tried = io::probe_direct_io(request.data_dir);
  if (!tried) {
    request.direct_io_untried = tried.error().message;
    return;
  }
  topo::DirectIo d;
  d.o_direct = tried->o_direct;
  d.o_direct_error = std::move(tried->o_direct_error);
  d.io_uring = tried->io_uring;
  d.io_uring_error = std::move(tried->io_uring_error);
  d.memory_alignment = tried->memory_alignment;
  d.offset_alignment = tried->offset_alignment;
  d.alignment_source = std::move(tried->alignment_source);
  request.direct_io = std::move(d);
}

}  // namespace acco::doctor
