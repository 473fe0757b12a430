#include "acco/topo/probe.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/core/clock.hpp"
#include "acco/core/file.hpp"
#include "acco/core/json.hpp"
#include "acco/core/json_reader.hpp"
#include "acco/topo/hwloc_source.hpp"
#include "acco/topo/link_model.hpp"
#include "acco/topo/mounts.hpp"
#include "acco/topo/nccl_topo_source.hpp"
#include "acco/topo/nvml.hpp"
#include "acco/topo/pci_ids.hpp"
#include "acco/topo/sysfs_source.hpp"

namespace acco::topo {
namespace {

// hwloc's view merged into `machine`; when hwloc cannot read the input the machine keeps acco's
// own counts and says why. Returns the XML export for a snapshot.
std::string add_hwloc(Machine& machine, const HwlocInput& input) {
  auto view = discover_hwloc(input);
  if (!view) {
    machine.cpu.unavailable = view.error().message;
    return {};
  }
  merge_hwloc(machine, *view);
  return std::move(view->xml);
}

// The database the devices are named from, or why there is none.
struct PciNames {
  std::optional<PciIds> ids;
  PciIdsSource source;
};

PciNames names_from(Result<PciIdsFile> file) {
  PciNames names;
  if (!file) {
    names.source.unavailable = file.error().message;
    return names;
  }
  names.source.path = file->path;
  names.source.version = file->ids.version();
  names.ids = std::move(file->ids);
  return names;
}

// The file the pci-ids setting names, which must be there, else the database under `fs`'s root
// when it has one.
Result<PciNames> load_pci_names(const core::Fs& fs, const std::string& named) {
  if (named.empty()) {
    return names_from(read_pci_ids(fs));
  }
  ACCO_ASSIGN_OR_RETURN(const auto host, core::make_disk_fs("/"));
  ACCO_ASSIGN_OR_RETURN(auto file, read_pci_ids(*host, named));
  return names_from(std::move(file));
}

ProbeResult finish(Machine machine, NvmlReport nvml, std::string origin, const PciNames& names) {
  machine.nvml = std::move(nvml);
  machine.origin = std::move(origin);
  machine.pci_ids = names.source;
  name_devices(machine, names.ids ? &*names.ids : nullptr);
  annotate_links(machine);
  ProbeResult result;
  result.findings = check(machine);
  result.machine = std::move(machine);
  return result;
}

// The data directory of a sysroot or snapshot is not on this host, so nothing was tried there.
constexpr const char* kRecordedMachine = "recorded machine";

void set_direct_io(Machine& machine, std::optional<DirectIo> direct_io, std::string untried) {
  if (!machine.data_dir) {
    return;
  }
  machine.data_dir->direct_io = std::move(direct_io);
  machine.data_dir->direct_io_untried = machine.data_dir->direct_io ? std::string()
                                        : untried.empty()
                                            ? std::string("not asked for by the caller")
                                            : std::move(untried);
}

}  // namespace

nlohmann::json to_json(const Snapshot& snapshot) {
  const auto& source = snapshot.pci_ids_source;
  return {{"schema", kSnapshotSchema},
          {"created", snapshot.created},
          {"origin", snapshot.origin},
          {"acco_version", snapshot.acco_version},
          {"fs", core::to_json(snapshot.fs)},
          {"nvml", to_json(snapshot.nvml)},
          {"hwloc_xml", snapshot.hwloc_xml},
          {"pci_ids",
           {{"path", source.path},
            {"version", source.version},
            {"unavailable", source.unavailable},
            {"entries", snapshot.pci_ids}}}};
}

Result<Snapshot> snapshot_from_json(const nlohmann::json& j) {
  core::JsonReaderOptions options;
  options.absent_means_null = true;
  options.not_object = "expected a JSON object (an acco snapshot)";
  core::JsonReader in(j, "", options);
  if (in.optional_string("schema") != kSnapshotSchema) {
    in.problem("schema",
               fmt::format("must be \"{}\" (is this an acco snapshot?)", kSnapshotSchema));
  }
  Snapshot s;
  s.created = in.optional_string("created").value_or("");
  s.origin = in.optional_string("origin").value_or("");
  s.acco_version = in.optional_string("acco_version").value_or("");
  s.hwloc_xml = in.optional_string("hwloc_xml").value_or("");
  if (const nlohmann::json* fs = in.object("fs")) {
    if (auto record = core::fs_record_from_json(*fs)) {
      s.fs = std::move(*record);
    } else {
      in.add(std::move(record).error());
    }
  }
  if (const nlohmann::json* pci = in.optional_field("pci_ids")) {
    core::JsonReader names(*pci, "pci_ids", options);
    s.pci_ids_source.path = names.optional_string("path").value_or("");
    s.pci_ids_source.version = names.optional_string("version").value_or("");
    s.pci_ids_source.unavailable = names.optional_string("unavailable").value_or("");
    s.pci_ids = names.optional_string("entries").value_or("");
    in.add(names.status());
  } else {
    s.pci_ids_source.unavailable =
        "the snapshot holds no PCI ID database entries (taken by an older acco)";
  }
  if (const nlohmann::json* nvml = in.optional_field("nvml")) {
    if (auto report = nvml_report_from_json(*nvml)) {
      s.nvml = std::move(*report);
    } else {
      in.add(std::move(report).error());
    }
  }
  return in.finish(std::move(s));
}

Status write_snapshot(const std::string& path, const Snapshot& snapshot) {
  ACCO_RETURN_IF_ERROR(core::write_output_file(path, to_json(snapshot).dump(1)), "snapshot");
  return {};
}

namespace {

// `acco probe --from FILE`: the machine the snapshot recorded, named from the database entries it
// kept unless a database is named.
Result<ProbeResult> probe_snapshot(const ProbeRequest& request) {
  ACCO_ASSIGN_OR_RETURN(const nlohmann::json j, core::read_json_file(request.from_snapshot),
                        "snapshot");
  ACCO_ASSIGN_OR_RETURN(const Snapshot snapshot, snapshot_from_json(j),
                        "snapshot " + request.from_snapshot);
  core::ReplayFs fs(snapshot.fs);
  ACCO_ASSIGN_OR_RETURN(Machine machine, discover_sysfs(fs), "snapshot " + request.from_snapshot);
  if (!request.data_dir.empty()) {
    read_data_dir(fs, request.data_dir, machine);
    set_direct_io(machine, std::nullopt, kRecordedMachine);
  }
  if (snapshot.hwloc_xml.empty()) {
    machine.cpu.unavailable = "the snapshot holds no hwloc XML (taken by an older acco)";
  } else {
    add_hwloc(machine, {HwlocInputKind::kXmlText, snapshot.hwloc_xml});
  }
  PciNames names;
  if (!request.pci_ids.empty()) {
    ACCO_ASSIGN_OR_RETURN(names, load_pci_names(fs, request.pci_ids));
  } else {
    names.source = snapshot.pci_ids_source;
    if (names.source.unavailable.empty()) {
      names.ids = parse_pci_ids(snapshot.pci_ids);
    }
  }
  return finish(std::move(machine), snapshot.nvml,
                fmt::format("snapshot {} (taken {} from {})", request.from_snapshot,
                            snapshot.created, snapshot.origin),
                names);
}

// `acco probe --hwloc-xml FILE`: what the export holds.
Result<ProbeResult> probe_hwloc_xml(const ProbeRequest& request) {
  ACCO_ASSIGN_OR_RETURN(const HwlocView view,
                        discover_hwloc({HwlocInputKind::kXmlFile, request.hwloc_xml}));
  NvmlReport nvml;
  nvml.reason = "not in an hwloc XML export";
  // The export names no database: this host's names its ids as well as any.
  ACCO_ASSIGN_OR_RETURN(const auto host, core::make_disk_fs("/"));
  ACCO_ASSIGN_OR_RETURN(const PciNames names, load_pci_names(*host, request.pci_ids));
  return finish(machine_from_hwloc(view, ""), std::move(nvml), "hwloc XML " + request.hwloc_xml,
                names);
}

// `acco probe --nccl-topo FILE`: what the topology file holds; its GPUs' NVLinks stand where
// NVML's answers would.
Result<ProbeResult> probe_nccl_topo(const ProbeRequest& request) {
  // Refused by its size before it is read: a topology is under 100 KB, the reader's cap 16 MiB.
  if (std::error_code ec; std::filesystem::is_regular_file(request.nccl_topo, ec) &&
                          std::filesystem::file_size(request.nccl_topo, ec) > kMaxNcclTopoBytes &&
                          !ec) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: NCCL topology: more than the {} bytes read", request.nccl_topo,
                            kMaxNcclTopoBytes));
  }
  ACCO_ASSIGN_OR_RETURN(const std::string xml, core::read_text_file(request.nccl_topo));
  auto machine = machine_from_nccl_topo(xml);
  if (!machine) {
    return tl::unexpected(std::move(machine.error()).with_context(request.nccl_topo));
  }
  NvmlReport nvml = std::move(machine->nvml);
  nvml.available = false;
  nvml.reason = "not queried; the NVLinks come from the NCCL topology file";
  ACCO_ASSIGN_OR_RETURN(const auto host, core::make_disk_fs("/"));
  ACCO_ASSIGN_OR_RETURN(const PciNames names, load_pci_names(*host, request.pci_ids));
  return finish(std::move(*machine), std::move(nvml), "NCCL topology " + request.nccl_topo, names);
}

// NVML's report when the request asks for it (kUnavailable when it insists and there is none),
// else why it was not queried.
Result<NvmlReport> query_nvml_for(const ProbeRequest& request) {
  NvmlReport nvml;
  const bool live_root = request.sysroot == "/";
  const bool query =
      request.nvml == NvmlMode::kOn ||
      (request.nvml == NvmlMode::kAuto && (live_root || request.nvml_library_explicit));
  if (query) {
    nvml = query_nvml(request.nvml_library);
    if (request.nvml == NvmlMode::kOn && !nvml.available) {  // asked for, as serve and power do
      return fail(Errc::kUnavailable,
                  fmt::format("--nvml on: NVML is unavailable ({})", nvml.reason));
    }
  } else {
    nvml.reason = request.nvml == NvmlMode::kOff
                      ? "disabled (--nvml off)"
                      : "not queried for a sysroot other than / (set --nvml on to force)";
  }
  return nvml;
}

}  // namespace

Result<ProbeResult> probe(const ProbeRequest& request) {
  if (!request.from_snapshot.empty()) {
    return probe_snapshot(request);
  }
  if (!request.hwloc_xml.empty()) {
    return probe_hwloc_xml(request);
  }
  if (!request.nccl_topo.empty()) {
    return probe_nccl_topo(request);
  }

  ACCO_ASSIGN_OR_RETURN(const auto disk, core::make_disk_fs(request.sysroot));
  core::RecordingFs recording(*disk);
  const bool record = !request.write_snapshot.empty() || request.capture_snapshot;
  const core::Fs& fs = record ? recording : *disk;

  const bool live_root = request.sysroot == "/";
  ACCO_ASSIGN_OR_RETURN(NvmlReport nvml, query_nvml_for(request));

  ACCO_ASSIGN_OR_RETURN(Machine machine, discover_sysfs(fs), "sysroot " + request.sysroot);
  if (!request.data_dir.empty()) {
    read_data_dir(fs, request.data_dir, machine);
    if (live_root) {
      set_direct_io(machine, request.direct_io, request.direct_io_untried);
    } else {
      set_direct_io(machine, std::nullopt, kRecordedMachine);
    }
  }
  std::string hwloc_xml = add_hwloc(machine, {HwlocInputKind::kFsRoot, request.sysroot, record});
  // Read past the recording: a snapshot keeps only the entries that name this machine's devices,
  // not the 1.3 MB database.
  ACCO_ASSIGN_OR_RETURN(const PciNames names, load_pci_names(*disk, request.pci_ids));
  std::optional<Snapshot> snapshot;
  if (record) {
    snapshot.emplace();
    snapshot->created = core::utc_timestamp(std::chrono::system_clock::now());
    snapshot->origin = request.sysroot;
    snapshot->acco_version = ACCO_VERSION;
    snapshot->fs = recording.record();
    snapshot->nvml = nvml;
    snapshot->hwloc_xml = std::move(hwloc_xml);
    snapshot->pci_ids_source = names.source;
    if (names.ids) {
      snapshot->pci_ids = names.ids->excerpt(pci_id_keys(machine));
    }
  }
  if (!request.write_snapshot.empty()) {
    ACCO_RETURN_IF_ERROR(write_snapshot(request.write_snapshot, *snapshot));
  }
  ProbeResult result = finish(std::move(machine), std::move(nvml),
                              live_root ? std::string("/") : "sysroot " + request.sysroot, names);
  if (request.capture_snapshot) {
    result.snapshot = std::move(snapshot);
  }
  return result;
}

}  // namespace acco::topo
