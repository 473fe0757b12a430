// NvmlReport to and from JSON, for snapshots and `--json`. Reading checks every field's type and
// range, so a hand-edited snapshot fails here, naming the field, rather than later in a check.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/topo/nvml.hpp"

#include "nvml_api.hpp"

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
          {"pcie_current_gen", or_null(gpu.pcie_current_gen)},
          {"pcie_current_width", or_null(gpu.pcie_current_width)},
          {"pcie_max_gen", or_null(gpu.pcie_max_gen)},
          {"pcie_max_width", or_null(gpu.pcie_max_width)},
          {"nvlinks", to_json_array(gpu.nvlinks)},
          {"p2p", to_json_array(gpu.p2p)}};
}

// Reads the fields of one JSON object. The first bad field wins and is named by its full path
// ("nvml.gpus[2].pstate"); later reads are skipped, so a chain of reads needs one check at the end.
class ObjectReader {
 public:
  ObjectReader(const json& value, std::string where) : where_(std::move(where)) {
    if (value.is_object()) {
      object_ = &value;
    } else {
      problem(where_, "expected an object");
    }
  }

  ObjectReader& required(std::string_view key) {
    if (object_ != nullptr && error_.empty() && find(key) == nullptr) {
      problem(path(key), "missing");
    }
    return *this;
  }

  ObjectReader& text(std::string_view key, std::string& out) {
    if (const json* value = field(key); value != nullptr) {
      if (value->is_string()) {
        out = value->get<std::string>();
      } else {
        problem(path(key), "expected a string");
      }
    }
    return *this;
  }

  ObjectReader& flag(std::string_view key, bool& out) {
    if (const json* value = field(key); value != nullptr) {
      if (value->is_boolean()) {
        out = value->get<bool>();
      } else {
        problem(path(key), "expected true or false");
      }
    }
    return *this;
  }

  ObjectReader& flag(std::string_view key, std::optional<bool>& out) {
    bool value = false;
    if (field(key) != nullptr && flag(key, value).error_.empty()) {
      out = value;
    }
    return *this;
  }

  ObjectReader& integer(std::string_view key, int& out, int min, int max) {
    const json* value = field(key);
    if (value == nullptr) {
      return *this;
    }
    if (!value->is_number_integer()) {
      problem(path(key), "expected an integer");
    } else if (value->is_number_unsigned()
                   ? value->get<std::uint64_t>() > static_cast<std::uint64_t>(max)
                   : value->get<std::int64_t>() < min || value->get<std::int64_t>() > max) {
      problem(path(key), fmt::format("{} is outside {}..{}", value->dump(), min, max));
    } else {
      out = value->get<int>();
    }
    return *this;
  }

  ObjectReader& integer(std::string_view key, std::optional<int>& out, int min, int max) {
    int value = 0;
    if (field(key) != nullptr && integer(key, value, min, max).error_.empty()) {
      out = value;
    }
    return *this;
  }

  ObjectReader& bytes(std::string_view key, std::uint64_t& out) {
    if (const json* value = field(key); value != nullptr) {
      if (value->is_number_unsigned()) {
        out = value->get<std::uint64_t>();
      } else {
        problem(path(key), "expected a non-negative integer");
      }
    }
    return *this;
  }

  ObjectReader& p2p_status(std::string_view key, std::string& out) {
    std::string value;
    if (field(key) == nullptr || !text(key, value).error_.empty()) {
      return *this;
    }
    const auto& names = detail::kP2pStatusNames;
    if (std::find(names.begin(), names.end(), value) == names.end()) {
      problem(path(key), fmt::format("'{}' is not one of {}", value, fmt::join(names, ", ")));
    } else {
      out = std::move(value);
    }
    return *this;
  }

  // `read_item(const json& item, std::string where)` returns Result<T>.
  template <typename T, typename ReadItem>
  ObjectReader& list(std::string_view key, std::vector<T>& out, ReadItem read_item) {
    const json* value = field(key);
    if (value == nullptr) {
      return *this;
    }
    if (!value->is_array()) {
      problem(path(key), "expected an array");
      return *this;
    }
    out.clear();
    for (std::size_t i = 0; i < value->size(); ++i) {
      Result<T> item = read_item((*value)[i], fmt::format("{}[{}]", path(key), i));
      if (!item.has_value()) {
        error_ = std::move(item.error().message);
        return *this;
      }
      out.push_back(std::move(*item));
    }
    return *this;
  }

  [[nodiscard]] Status status() const {
    if (!error_.empty()) {
      return fail(Errc::kInvalidArgument, error_);
    }
    return {};
  }

 private:
  [[nodiscard]] std::string path(std::string_view key) const {
    return fmt::format("{}.{}", where_, key);
  }

  // Absent and null both mean "keep the default".
  [[nodiscard]] const json* find(std::string_view key) const {
    const auto it = object_->find(std::string(key));
    return it == object_->end() || it->is_null() ? nullptr : &*it;
  }

  // The field to read, or nullptr when it is absent or an earlier field failed.
  [[nodiscard]] const json* field(std::string_view key) const {
    return object_ != nullptr && error_.empty() ? find(key) : nullptr;
  }

  void problem(const std::string& where, std::string_view what) {
    error_ = fmt::format("{}: {}", where, what);
  }

  const json* object_ = nullptr;
  std::string where_;
  std::string error_;
};

template <typename T>
Result<T> finish(const ObjectReader& reader, T value) {
  if (Status status = reader.status(); !status.has_value()) {
    return tl::unexpected(std::move(status.error()));
  }
  return value;
}

Result<NvLink> read_nvlink(const json& value, const std::string& where) {
  NvLink link;
  ObjectReader reader(value, where);
  reader.required("link")
      .integer("link", link.link, 0, kIntMax)
      .flag("active", link.active)
      .text("remote_pci", link.remote_pci)
      .integer("version", link.version, 0, kIntMax);
  return finish(reader, std::move(link));
}

Result<P2pStatus> read_p2p(const json& value, const std::string& where) {
  P2pStatus status;
  ObjectReader reader(value, where);
  reader.required("peer_pci")
      .text("peer_pci", status.peer_pci)
      .p2p_status("read", status.read)
      .p2p_status("write", status.write);
  return finish(reader, std::move(status));
}

Result<NvmlGpu> read_gpu(const json& value, const std::string& where) {
  NvmlGpu gpu;
  ObjectReader reader(value, where);
  reader.required("index")
      .integer("index", gpu.index, 0, kIntMax)
      .required("pci")
      .text("pci", gpu.pci)
      .text("name", gpu.name)
      .text("uuid", gpu.uuid)
      .bytes("memory_total_bytes", gpu.memory_total_bytes)
      .integer("pstate", gpu.pstate, 0, 15)
      .flag("persistence_mode", gpu.persistence_mode)
      .flag("mig_enabled", gpu.mig_enabled)
      .integer("mig_instances", gpu.mig_instances, 0, kIntMax)
      .integer("pcie_current_gen", gpu.pcie_current_gen, 0, kIntMax)
      .integer("pcie_current_width", gpu.pcie_current_width, 0, kIntMax)
      .integer("pcie_max_gen", gpu.pcie_max_gen, 0, kIntMax)
      .integer("pcie_max_width", gpu.pcie_max_width, 0, kIntMax)
      .list("nvlinks", gpu.nvlinks, read_nvlink)
      .list("p2p", gpu.p2p, read_p2p);
  return finish(reader, std::move(gpu));
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
  ObjectReader reader(json, "nvml");
  reader.required("available")
      .flag("available", report.available)
      .text("reason", report.reason)
      .text("library", report.library)
      .text("driver_version", report.driver_version)
      .list("gpus", report.gpus, read_gpu);
  return finish(reader, std::move(report));
}

}  // namespace acco::topo
