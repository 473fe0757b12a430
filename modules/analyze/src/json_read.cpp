// The inverse of json.cpp: recordings (acco record), the API's snapshot (acco top --from) and
// the analyzer's input read back into samples, every field checked and named when wrong.
#include <limits>
#include <string>

#include "acco/analyze/json.hpp"
#include "acco/core/json_reader.hpp"

namespace acco::analyze {
namespace {

using core::JsonReader;

core::JsonReaderOptions lenient() {
  core::JsonReaderOptions o;
  o.absent_means_null = true;
  return o;
}

constexpr core::NumberRange kAny{};

std::optional<double> number(JsonReader& r, const char* key) {
  return r.optional_number(key, kAny, "expected a number");
}

// Utilizations are ratios (json.cpp writes 0.93 for 93 %); 1e308 printed "inf%".
std::optional<double> ratio(JsonReader& r, const char* key) {
  return r.optional_number(key, {0, 1}, "expected a ratio from 0 to 1");
}

std::optional<int> small_int(JsonReader& r, const char* key) {
  const auto v = r.optional_integer(key, {-1'000'000, 1'000'000});
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

}  // namespace

Result<power::DeviceSample> device_sample_from_json(const nlohmann::json& j,
                                                    const std::string& path) {
  JsonReader r(j, path, lenient());
  power::DeviceSample s;
  s.device = r.string("device");
  s.uuid = r.optional_string("uuid").value_or("");
  s.pci_bus_id = r.optional_string("pci_bus_id").value_or("");
  s.model = r.optional_string("model").value_or("");
  s.source = r.optional_string("source").value_or("");
  s.time_unix_nanos = r.optional_integer("time_unix_nanos", {}).value_or(0);
  s.lost = r.optional_boolean("lost").value_or(false);
  s.suspended = r.optional_boolean("suspended").value_or(false);
  s.temperature_gpu_celsius = number(r, "temperature_gpu_celsius");
  s.temperature_memory_celsius = number(r, "temperature_memory_celsius");
  s.threshold_gpu_max_celsius = number(r, "threshold_gpu_max_celsius");
  s.threshold_slowdown_celsius = number(r, "threshold_slowdown_celsius");
  s.threshold_shutdown_celsius = number(r, "threshold_shutdown_celsius");
  s.threshold_memory_max_celsius = number(r, "threshold_memory_max_celsius");
  s.thermal_margin_celsius = number(r, "thermal_margin_celsius");
  s.power_watts = number(r, "power_watts");
  s.power_limit_enforced_watts = number(r, "power_limit_enforced_watts");
  s.power_limit_requested_watts = number(r, "power_limit_requested_watts");
  s.power_limit_default_watts = number(r, "power_limit_default_watts");
  s.power_limit_min_watts = number(r, "power_limit_min_watts");
  s.power_limit_max_watts = number(r, "power_limit_max_watts");
  s.energy_joules = number(r, "energy_joules");
  s.sm_clock_hertz = number(r, "sm_clock_hertz");
  s.memory_clock_hertz = number(r, "memory_clock_hertz");
  s.sm_clock_max_hertz = number(r, "sm_clock_max_hertz");
  s.memory_clock_max_hertz = number(r, "memory_clock_max_hertz");
  s.pstate = small_int(r, "pstate");
  s.utilization_ratio = ratio(r, "utilization_ratio");
  s.memory_utilization_ratio = ratio(r, "memory_utilization_ratio");
  s.memory_total_bytes = r.optional_count("memory_total_bytes");
  s.memory_used_bytes = r.optional_count("memory_used_bytes");
  s.memory_free_bytes = r.optional_count("memory_free_bytes");
  s.pcie_tx_bytes_per_second = number(r, "pcie_tx_bytes_per_second");
  s.pcie_rx_bytes_per_second = number(r, "pcie_rx_bytes_per_second");
  s.pcie_replays = r.optional_count("pcie_replays");
  s.pcie_gen_current = small_int(r, "pcie_gen_current");
  s.pcie_width_current = small_int(r, "pcie_width_current");
  s.pcie_gen_max = small_int(r, "pcie_gen_max");
  s.pcie_width_max = small_int(r, "pcie_width_max");
  s.clock_event_reasons = r.optional_count("clock_event_reasons");
  if (const auto* t = r.optional_object("throttle_seconds")) {
    JsonReader tr(*t, r.path("throttle_seconds"), lenient());
    for (const auto& key : tr.keys()) {
      s.throttle_seconds[key] = tr.non_negative(key);
    }
    r.add(tr.status());
  }
  s.nvlinks = r.optional_list<power::NvlinkSample>(
      "nvlinks", [](const nlohmann::json& item, const std::string& p) {
        JsonReader lr(item, p, lenient());
        power::NvlinkSample l;
        l.link = static_cast<int>(lr.integer("link", {0, 1024}));
        l.up = lr.boolean("up");
        l.speed_bytes_per_second = lr.optional_non_negative("speed_bytes_per_second");
        l.tx_bytes = lr.optional_count("tx_bytes");
        l.rx_bytes = lr.optional_count("rx_bytes");
        return lr.finish(l);
      });
  s.xids = r.optional_list<power::XidEvent>(
      "xids", [](const nlohmann::json& item, const std::string& p) {
        JsonReader xr(item, p, lenient());
        power::XidEvent x;
        x.xid = xr.count("xid");
        x.time_unix_nanos = xr.optional_integer("time_unix_nanos", {}).value_or(0);
        return xr.finish(x);
      });
  s.dropped_readings =
      static_cast<int>(r.optional_integer("dropped_readings", {0, 1'000'000}).value_or(0));
  return r.finish(s);
}

Result<power::HostSample> host_sample_from_json(const nlohmann::json& j, const std::string& path) {
  JsonReader r(j, path, lenient());
  power::HostSample h;
  h.time_unix_nanos = r.optional_integer("time_unix_nanos", {}).value_or(0);
  if (const auto* cpu = r.optional_object("cpu")) {
    JsonReader cr(*cpu, r.path("cpu"), lenient());
    h.cpu.cpus = static_cast<int>(cr.optional_integer("cpus", {0, 1 << 20}).value_or(0));
    if (const auto* secs = cr.optional_object("seconds")) {
      JsonReader sr(*secs, cr.path("seconds"), lenient());
      for (const auto& key : sr.keys()) {
        h.cpu.seconds[key] = sr.non_negative(key);
      }
      cr.add(sr.status());
    }
    r.add(cr.status());
  }
  if (const auto* mem = r.optional_object("memory_bytes")) {
    JsonReader mr(*mem, r.path("memory_bytes"), lenient());
    for (const auto& key : mr.keys()) {
      h.memory_bytes[key] = mr.count(key);
    }
    r.add(mr.status());
  }
  h.pressure = r.optional_list<power::PressureSample>(
      "pressure", [](const nlohmann::json& item, const std::string& p) {
        JsonReader pr(item, p, lenient());
        power::PressureSample s;
        s.resource = pr.string("resource");
        s.kind = pr.string("kind");
        s.stalled_seconds = pr.non_negative("stalled_seconds");
        s.avg10_ratio = pr.optional_non_negative("avg10_ratio").value_or(0);
        return pr.finish(s);
      });
  h.disks = r.optional_list<power::DiskSample>("disks", [](const nlohmann::json& item,
                                                           const std::string& p) {
    JsonReader dr(item, p, lenient());
    power::DiskSample d;
    d.name = dr.string("name");
    d.read_bytes = dr.optional_count("read_bytes").value_or(0);
    d.written_bytes = dr.optional_count("written_bytes").value_or(0);
    d.reads = dr.optional_count("reads").value_or(0);
    d.writes = dr.optional_count("writes").value_or(0);
    d.io_seconds = dr.optional_non_negative("io_seconds").value_or(0);
    d.members = dr.optional_list<std::string>(
        "members", [](const nlohmann::json& member, const std::string& mp) -> Result<std::string> {
          if (!member.is_string()) {
            return fail(Errc::kInvalidArgument, mp + ": expected a string");
          }
          return member.get<std::string>();
        });
    return dr.finish(d);
  });
  h.net = r.optional_list<power::NetSample>(
      "net", [](const nlohmann::json& item, const std::string& p) {
        JsonReader nr(item, p, lenient());
        power::NetSample n;
        n.name = nr.string("name");
        n.rx_bytes = nr.optional_count("rx_bytes").value_or(0);
        n.tx_bytes = nr.optional_count("tx_bytes").value_or(0);
        n.rx_errors = nr.optional_count("rx_errors").value_or(0);
        n.tx_errors = nr.optional_count("tx_errors").value_or(0);
        n.physical = nr.optional_boolean("physical").value_or(false);
        return nr.finish(n);
      });
  h.issues = r.optional_list<std::string>(
      "issues", [](const nlohmann::json& item, const std::string& p) -> Result<std::string> {
        if (!item.is_string()) {
          return fail(Errc::kInvalidArgument, p + ": expected a string");
        }
        return item.get<std::string>();
      });
  return r.finish(h);
}

Result<Snapshot> snapshot_from_json(const nlohmann::json& j) {
  JsonReader r(j, "", lenient());
  Snapshot s;
  s.time_unix_nanos = r.integer("time_unix_nanos", {});
  s.devices = r.list<power::DeviceSample>("devices", device_sample_from_json);
  if (const auto* host = r.optional_object("host")) {
    auto h = host_sample_from_json(*host, r.path("host"));
    if (h) {
      s.host = std::move(*h);
    } else {
      r.add(h.error());
    }
  }
  if (const auto* sampler = r.optional_object("sampler")) {
    JsonReader sr(*sampler, r.path("sampler"), lenient());
    s.stats.rounds = sr.optional_count("rounds").value_or(0);
    s.stats.interval_seconds = sr.optional_non_negative("interval_seconds").value_or(1);
    s.stats.last_round_seconds = sr.optional_non_negative("last_round_seconds").value_or(0);
    s.stats.cpu_seconds = sr.optional_non_negative("cpu_seconds").value_or(0);
    s.stats.dropped_readings = sr.optional_count("dropped_readings").value_or(0);
    if (const auto* errors = sr.optional_object("read_errors")) {
      JsonReader er(*errors, sr.path("read_errors"), lenient());
      for (const auto& key : er.keys()) {
        s.stats.read_errors[key] = er.count(key);
      }
      sr.add(er.status());
    }
    r.add(sr.status());
  }
  return r.finish(s);
}

}  // namespace acco::analyze
