// One probe end to end: read a machine (live sysroot plus NVML, or a snapshot), annotate its
// links, run the checks, and optionally record everything read into a snapshot file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "acco/core/fs.hpp"
#include "acco/core/result.hpp"
#include "acco/topo/checks.hpp"
#include "acco/topo/machine.hpp"

namespace acco::topo {

inline constexpr const char* kSnapshotSchema = "acco.snapshot/1";

enum class NvmlMode {
  kAuto,  // query NVML for the live root "/" or when a library was named explicitly
  kOn,    // always query
  kOff,   // never query
};

struct ProbeRequest {
  std::string sysroot = "/";
  std::string from_snapshot;      // replay this file instead of reading a sysroot
  std::string hwloc_xml;          // assess an hwloc XML export (lstopo --of xml) instead
  std::string nccl_topo;          // assess an NCCL topology XML file (NCCL_TOPO_FILE) instead
  std::string write_snapshot;     // record everything read into this file (write_snapshot)
  bool capture_snapshot = false;  // record everything read into ProbeResult::snapshot
  std::string nvml_library = "libnvidia-ml.so.1";
  bool nvml_library_explicit = false;
  NvmlMode nvml = NvmlMode::kAuto;
  // The data directory whose mount to assess (--data-dir): absolute, in the namespace of the
  // sysroot or snapshot, matched against its /proc/self/mountinfo and never looked up on this
  // host. Empty: none. Ignored with hwloc_xml, which holds no mounts.
  std::string data_dir = {};
  // What trying O_DIRECT and io_uring in `data_dir` showed, for a live probe (sysroot "/", no
  // snapshot): topo does no I/O on the data itself, so the caller tries (acco::io's
  // probe_direct_io) and passes the result, or why it could not in `direct_io_untried`. Both are
  // ignored for a sysroot or snapshot, whose data directory is not on this host: the DataDir then
  // says "recorded machine".
  std::optional<DirectIo> direct_io = {};
  std::string direct_io_untried = {};
  // The PCI ID database to name devices from (the pci-ids setting): a file of this host. Empty:
  // the sysroot's (kPciIdsPaths under it), a snapshot's own entries, this host's for an hwloc
  // XML export.
  std::string pci_ids = {};
};

// What a snapshot file holds: every file-system answer and NVML's report.
struct Snapshot {
  std::string created;  // ISO 8601 UTC
  std::string origin;   // sysroot it was taken from
  std::string acco_version;
  core::FsRecord fs;
  NvmlReport nvml;
  // hwloc's XML export of the machine, replayed by --from; empty in snapshots of acco before 0.2
  // (their CPU topology is then unknown).
  std::string hwloc_xml;
  // The PCI ID database's entries for the machine's devices (PciIds::excerpt, pci.ids format)
  // and where they came from; `pci_ids_source.unavailable` says why there are none (snapshots
  // of acco before 0.2 hold neither).
  PciIdsSource pci_ids_source;
  std::string pci_ids;
};

struct ProbeResult {
  Machine machine;
  std::vector<Finding> findings;
  std::optional<Snapshot> snapshot;  // with ProbeRequest::capture_snapshot
};

[[nodiscard]] nlohmann::json to_json(const Snapshot& snapshot);
// kInvalidArgument naming the field when the file is not an acco snapshot.
[[nodiscard]] Result<Snapshot> snapshot_from_json(const nlohmann::json& j);

// Writes `snapshot` to `path` atomically. Errors as core::write_output_file (kCannotWrite),
// prefixed "snapshot".
[[nodiscard]] Status write_snapshot(const std::string& path, const Snapshot& snapshot);

// Errors: kNotFound (no sysroot, no snapshot or XML file, no file at `pci_ids`), kInvalidArgument
// (malformed snapshot or XML),
// kUnavailable/kNotFound when the snapshot cannot be written (nothing half-written is left).
[[nodiscard]] Result<ProbeResult> probe(const ProbeRequest& request);

}  // namespace acco::topo
