// NvmlReport to and from JSON, for snapshots and `--json`. Reading checks every field's type and
// range, so a hand-edited snapshot fails here, naming the field, rather than later in a check.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "acco/core/json_reader.hpp"
#include "acco/topo/nvml.hpp"

#include "p2p_status_names.hpp"

namespace acco::topo {
namespace {

using nlohmann::json;

constexpr int kIntMax = std::numeric_limits<int>::max();

template <typename T>
json or_null(const std::optional<T>& value) {
  return value.has_value() ? json(*value) : json(nullptr);
}

json to_json(const NvLink& link) {
  return {{"link", link.link},
          {"active", link.active},
          {"remote_pci", link.remote_pci},
          {"version", link.version}};
}

json to_json(const P2pStatus& status) {
  return {{"peer_pci", status.peer_pci}, {"read", status.read}, {"write", status.write}};
}

json to_json(const NvmlGpu& gpu);
json to_json(const MigDevice& mig) {
  return {{"slot", mig.slot},
          {"uuid", mig.uuid},
          {"profile", mig.profile},
          {"memory_total_bytes", mig.memory_total_bytes},
          {"gpu_instance", or_null(mig.gpu_instance)},
          {"compute_instance", or_null(mig.compute_instance)}};
}

template <typename T>
json to_json_array(const std::vector<T>& items) {
  json array = json::array();
  for (const T& item : items) {
    array.push_back(to_json(item));
  }
  return array;
}

json to_json(const NvmlGpu& gpu) {
  return {{"index", gpu.index},
          {"pci", gpu.pci},
          {"name", gpu.name},
          {"uuid", gpu.uuid},
          {"memory_total_bytes", gpu.memory_total_bytes},
          {"pstate", or_null(gpu.pstate)},
          {"persistence_mode", or_null(gpu.persistence_mode)},
          {"mig_enabled", or_null(gpu.mig_enabled)},
          {"mig_instances", gpu.mig_instances},
          {"mig_pending", or_null(gpu.mig_pending)},
          {"mig_devices", to_json_array(gpu.mig_devices)},
          {"pcie_current_gen", or_null(gpu.pcie_current_gen)},
          {"pcie_current_width", or_null(gpu.pcie_current_width)},
          {"pcie_max_gen", or_null(gpu.pcie_max_gen)},
          {"pcie_max_width", or_null(gpu.pcie_max_width)},
          {"nvlinks", to_json_array(gpu.nvlinks)},
          {"p2p", to_json_array(gpu.p2p)}};
}

// Snapshots leave unknown fields out or null, and their messages name no value:
// "nvml.gpus[2].pstate: 16 is outside 0..15".
constexpr core::JsonReaderOptions kSnapshotWording{
    .show_value = false, .absent_means_null = true, .range = core::RangeWording::kIsOutside};

constexpr core::IntRange kNonNegativeInt{0, kIntMax};

std::optional<int> small_int(std::optional<std::int64_t> value) {
  return value.has_value() ? std::optional<int>(static_cast<int>(*value)) : std::nullopt;
}

// An absent or null field keeps the default the struct gives it.
template <typename T>
void keep_default(T& out, std::optional<T> value) {
  if (value.has_value()) {
    out = std::move(*value);
  }
}

Result<NvLink> read_nvlink(const json& value, const std::string& where) {
  NvLink link;
  core::JsonReader in(value, where, kSnapshotWording);
  link.link = static_cast<int>(in.integer("link", kNonNegativeInt));
  keep_default(link.active, in.optional_boolean("active"));
  keep_default(link.remote_pci, in.optional_string("remote_pci"));
  keep_default(link.version, small_int(in.optional_integer("version", kNonNegativeInt)));
  return in.finish(std::move(link));
}

Result<P2pStatus> read_p2p(const json& value, const std::string& where) {
  P2pStatus status;
  core::JsonReader in(value, where, kSnapshotWording);
  status.peer_pci = in.string("peer_pci");
  keep_default(status.read, in.optional_one_of("read", detail::kP2pStatusNames));
  keep_default(status.write, in.optional_one_of("write", detail::kP2pStatusNames));
  return in.finish(std::move(status));
}

Result<MigDevice> read_mig(const json& value, const std::string& where) {
  MigDevice mig;
  core::JsonReader in(value, where, kSnapshotWording);
  mig.slot = static_cast<int>(in.integer("slot", kNonNegativeInt));
  keep_default(mig.uuid, in.optional_string("uuid"));
  keep_default(mig.profile, in.optional_string("profile"));
  keep_default(mig.memory_total_bytes, in.optional_count("memory_total_bytes"));
  mig.gpu_instance = small_int(in.optional_integer("gpu_instance", kNonNegativeInt));
  mig.compute_instance = small_int(in.optional_integer("compute_instance", kNonNegativeInt));
  return in.finish(std::move(mig));
}

Result<NvmlGpu> read_gpu(const json& value, const std::string& where) {
  NvmlGpu gpu;
  core::JsonReader in(value, where, kSnapshotWording);
  gpu.index = static_cast<int>(in.integer("index", kNonNegativeInt));
  gpu.pci = in.string("pci");
  keep_default(gpu.name, in.optional_string("name"));
  keep_default(gpu.uuid, in.optional_string("uuid"));
  keep_default(gpu.memory_total_bytes, in.optional_count("memory_total_bytes"));
  gpu.pstate = small_int(in.optional_integer("pstate", {0, 15}));
  gpu.persistence_mode = in.optional_boolean("persistence_mode");
  gpu.mig_enabled = in.optional_boolean("mig_enabled");
  keep_default(gpu.mig_instances, small_int(in.optional_integer("mig_instances", kNonNegativeInt)));
  gpu.mig_pending = in.optional_boolean("mig_pending");
  gpu.mig_devices = in.optional_list<MigDevice>("mig_devices", read_mig);
  gpu.pcie_current_gen = small_int(in.optional_integer("pcie_current_gen", kNonNegativeInt));
  gpu.pcie_current_width = small_int(in.optional_integer("pcie_current_width", kNonNegativeInt));
  gpu.pcie_max_gen = small_int(in.optional_integer("pcie_max_gen", kNonNegativeInt));
  gpu.pcie_max_width = small_int(in.optional_integer("pcie_max_width", kNonNegativeInt));
  gpu.nvlinks = in.optional_list<NvLink>("nvlinks", read_nvlink);
  gpu.p2p = in.optional_list<P2pStatus>("p2p", read_p2p);
  return in.finish(std::move(gpu));
}

}  // namespace

nlohmann::json to_json(const NvmlReport& report) {
  return {{"available", report.available},
          {"reason", report.reason},
          {"library", report.library},
          {"driver_version", report.driver_version},
          {"gpus", to_json_array(report.gpus)}};
}

Result<NvmlReport> nvml_report_from_json(const nlohmann::json& json) {
  NvmlReport report;
  core::JsonReader in(json, "nvml", kSnapshotWording);
  report.available = in.boolean("available");
  keep_default(report.reason, in.optional_string("reason"));
  keep_default(report.library, in.optional_string("library"));
  keep_default(report.driver_version, in.optional_string("driver_version"));
  report.gpus = in.optional_list<NvmlGpu>("gpus", read_gpu);
  return in.finish(std::move(report));
}

}  // namespace acco::topo
