#include "acco/topo/probe.hpp"

#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/core/json.hpp"
#include "acco/topo/link_model.hpp"
#include "acco/topo/nvml.hpp"
#include "acco/topo/sysfs_source.hpp"

namespace acco::topo {
namespace {

std::string now_utc() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

Result<ProbeResult> finish(Result<Machine> machine, NvmlReport nvml, std::string origin) {
  if (!machine) {
    return tl::unexpected(machine.error());
  }
  machine->nvml = std::move(nvml);
  machine->origin = std::move(origin);
  annotate_links(*machine);
  ProbeResult result;
  result.findings = check(*machine);
  result.machine = std::move(*machine);
  return result;
}

}  // namespace

nlohmann::json to_json(const Snapshot& snapshot) {
  return {{"schema", kSnapshotSchema},        {"created", snapshot.created},
          {"origin", snapshot.origin},        {"acco_version", snapshot.acco_version},
          {"fs", core::to_json(snapshot.fs)}, {"nvml", to_json(snapshot.nvml)}};
}

Result<Snapshot> snapshot_from_json(const nlohmann::json& j) {
  if (!j.is_object()) {
    return fail(Errc::kInvalidArgument, "expected a JSON object (an acco snapshot)");
  }
  if (!j.contains("schema") || !j["schema"].is_string() ||
      j["schema"].get<std::string>() != kSnapshotSchema) {
    return fail(
        Errc::kInvalidArgument,
        fmt::format("'schema' must be \"{}\" (is this an acco snapshot?)", kSnapshotSchema));
  }
  Snapshot s;
  const auto text = [&](const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  };
  s.created = text("created");
  s.origin = text("origin");
  s.acco_version = text("acco_version");
  if (!j.contains("fs")) {
    return fail(Errc::kInvalidArgument, "missing 'fs' (the recorded file system)");
  }
  ACCO_ASSIGN_OR_RETURN(s.fs, core::fs_record_from_json(j["fs"]));
  if (j.contains("nvml")) {
    ACCO_ASSIGN_OR_RETURN(s.nvml, nvml_report_from_json(j["nvml"]));
  }
  return s;
}

Status write_snapshot(const std::string& path, const Snapshot& snapshot) {
  ACCO_RETURN_IF_ERROR(core::write_file_atomic(path, to_json(snapshot).dump(1)), "snapshot");
  return {};
}

Result<ProbeResult> probe(const ProbeRequest& request) {
  if (!request.from_snapshot.empty()) {
    auto j = core::read_json_file(request.from_snapshot);
    if (!j) {
      return tl::unexpected(std::move(j.error()).with_context("snapshot"));
    }
    auto snapshot = snapshot_from_json(*j);
    if (!snapshot) {
      return tl::unexpected(
          std::move(snapshot.error()).with_context("snapshot " + request.from_snapshot));
    }
    core::ReplayFs fs(snapshot->fs);
    auto machine = discover_sysfs(fs);
    if (!machine) {
      return tl::unexpected(
          std::move(machine.error()).with_context("snapshot " + request.from_snapshot));
    }
    return finish(std::move(machine), snapshot->nvml,
                  fmt::format("snapshot {} (taken {} from {})", request.from_snapshot,
                              snapshot->created, snapshot->origin));
  }

  auto disk = core::make_disk_fs(request.sysroot);
  if (!disk) {
    return tl::unexpected(disk.error());
  }
  core::RecordingFs recording(**disk);
  const bool record = !request.write_snapshot.empty() || request.capture_snapshot;
  const core::Fs& fs = record ? recording : **disk;

  NvmlReport nvml;
  const bool live_root = request.sysroot == "/";
  const bool query =
      request.nvml == NvmlMode::kOn ||
      (request.nvml == NvmlMode::kAuto && (live_root || request.nvml_library_explicit));
  if (query) {
    nvml = query_nvml(request.nvml_library);
  } else {
    nvml.reason = request.nvml == NvmlMode::kOff
                      ? "disabled (--nvml off)"
                      : "not queried for a sysroot other than / (set --nvml on to force)";
  }

  auto machine = discover_sysfs(fs);
  if (!machine) {
    return tl::unexpected(std::move(machine.error()).with_context("sysroot " + request.sysroot));
  }
  std::optional<Snapshot> snapshot;
  if (record) {
    snapshot.emplace();
    snapshot->created = now_utc();
    snapshot->origin = request.sysroot;
    snapshot->acco_version = ACCO_VERSION;
    snapshot->fs = recording.record();
    snapshot->nvml = nvml;
  }
  if (!request.write_snapshot.empty()) {
    ACCO_RETURN_IF_ERROR(write_snapshot(request.write_snapshot, *snapshot));
  }
  auto result = finish(std::move(machine), std::move(nvml),
                       live_root ? std::string("/") : "sysroot " + request.sysroot);
  if (result && request.capture_snapshot) {
    result->snapshot = std::move(snapshot);
  }
  return result;
}

}  // namespace acco::topo
