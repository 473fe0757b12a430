// Snapshot -> prometheus-cpp registry -> text. Families are registered on their first series,
// so a reading no device gave leaves no empty family behind; series are sorted by their labels
// after collection because prometheus-cpp keeps them in a hash map.
#include "acco/monitor/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include "acco/analyze/pcie_peak.hpp"

namespace acco::monitor {
namespace {

using prometheus::Labels;

class Families {
 public:
  explicit Families(prometheus::Registry& registry) : registry_(registry) {}

  void gauge(const std::string& name, const std::string& help, const Labels& labels, double value) {
    if (!std::isfinite(value)) {
      return;
    }
    auto it = gauges_.find(name);
    if (it == gauges_.end()) {
      it =
          gauges_.emplace(name, &prometheus::BuildGauge().Name(name).Help(help).Register(registry_))
              .first;
    }
    it->second->Add(labels).Set(value);
  }

  void counter(const std::string& name, const std::string& help, const Labels& labels,
               double value) {
    if (!std::isfinite(value) || value < 0) {
      return;
    }
    auto it = counters_.find(name);
    if (it == counters_.end()) {
      it = counters_
               .emplace(name, &prometheus::BuildCounter().Name(name).Help(help).Register(registry_))
               .first;
    }
    auto& c = it->second->Add(labels);
    c.Increment(value - c.Value());
  }

  template <typename T>
  void gauge(const std::string& name, const std::string& help, const Labels& labels,
             const std::optional<T>& value) {
    if (value) {
      gauge(name, help, labels, static_cast<double>(*value));
    }
  }
  template <typename T>
  void counter(const std::string& name, const std::string& help, const Labels& labels,
               const std::optional<T>& value) {
    if (value) {
      counter(name, help, labels, static_cast<double>(*value));
    }
  }

 private:
  prometheus::Registry& registry_;
  std::map<std::string, prometheus::Family<prometheus::Gauge>*> gauges_;
  std::map<std::string, prometheus::Family<prometheus::Counter>*> counters_;
};

Labels with(Labels labels, const std::string& name, const std::string& value) {
  labels[name] = value;
  return labels;
}

Labels device_labels(const power::DeviceSample& d) {
  return {{"device", d.device}, {"uuid", d.uuid}, {"pci_bus_id", d.pci_bus_id}, {"model", d.model}};
}

void add_device(Families& f, const power::DeviceSample& d) {
  const Labels base = device_labels(d);
  f.gauge("acco_gpu_up", "1 when the device answered this round; 0 when lost or suspended", base,
          d.lost || d.suspended ? 0.0 : 1.0);
  f.gauge("acco_gpu_lost", "1 when the device answers GPU_IS_LOST (fell off the bus, shut down)",
          base, d.lost ? 1.0 : 0.0);
  f.gauge("acco_gpu_suspended",
          "1 when the device is runtime-suspended (not queried, so that reading does not wake it)",
          base, d.suspended ? 1.0 : 0.0);
  if (d.lost || d.suspended) {
    return;
  }
  const std::string temp = "acco_gpu_temperature_celsius";
  const std::string temp_help = "Temperature by sensor";
  f.gauge(temp, temp_help, with(base, "sensor", "gpu"), d.temperature_gpu_celsius);
  f.gauge(temp, temp_help, with(base, "sensor", "memory"), d.temperature_memory_celsius);
  const std::string thr = "acco_gpu_temperature_threshold_celsius";
  const std::string thr_help =
      "The device's own thresholds: gpu_max (SW thermal slowdown), slowdown (HW), shutdown, "
      "memory_max";
  f.gauge(thr, thr_help, with(base, "kind", "gpu_max"), d.threshold_gpu_max_celsius);
  f.gauge(thr, thr_help, with(base, "kind", "slowdown"), d.threshold_slowdown_celsius);
  f.gauge(thr, thr_help, with(base, "kind", "shutdown"), d.threshold_shutdown_celsius);
  f.gauge(thr, thr_help, with(base, "kind", "memory_max"), d.threshold_memory_max_celsius);
  f.gauge("acco_gpu_thermal_margin_celsius", "Degrees left to the nearest slowdown threshold", base,
          d.thermal_margin_celsius);

  f.gauge("acco_gpu_power_watts", "Power draw (NVML: a 1-second average on Ampere and later)", base,
          d.power_watts);
  const std::string lim = "acco_gpu_power_limit_watts";
  const std::string lim_help = "Power limits: enforced, requested (management), default, min, max";
  f.gauge(lim, lim_help, with(base, "kind", "enforced"), d.power_limit_enforced_watts);
  f.gauge(lim, lim_help, with(base, "kind", "requested"), d.power_limit_requested_watts);
  f.gauge(lim, lim_help, with(base, "kind", "default"), d.power_limit_default_watts);
  f.gauge(lim, lim_help, with(base, "kind", "min"), d.power_limit_min_watts);
  f.gauge(lim, lim_help, with(base, "kind", "max"), d.power_limit_max_watts);
  f.counter("acco_gpu_energy_joules_total", "Energy used since the driver loaded", base,
            d.energy_joules);

  const std::string clk = "acco_gpu_clock_hertz";
  f.gauge(clk, "Current clock by domain", with(base, "clock", "sm"), d.sm_clock_hertz);
  f.gauge(clk, "Current clock by domain", with(base, "clock", "memory"), d.memory_clock_hertz);
  const std::string clk_max = "acco_gpu_clock_max_hertz";
  f.gauge(clk_max, "Maximum clock by domain", with(base, "clock", "sm"), d.sm_clock_max_hertz);
  f.gauge(clk_max, "Maximum clock by domain", with(base, "clock", "memory"),
          d.memory_clock_max_hertz);
  f.gauge("acco_gpu_performance_state", "Performance state (0 = P0, the busiest)", base, d.pstate);

  f.gauge("acco_gpu_utilization_ratio",
          "Share of the sample period in which a kernel ran (NVML; saturates before the SMs do)",
          base, d.utilization_ratio);
  f.gauge("acco_gpu_memory_utilization_ratio",
          "Share of the sample period in which device memory was read or written", base,
          d.memory_utilization_ratio);
  const std::string mem = "acco_gpu_memory_bytes";
  f.gauge(mem, "Device memory by state", with(base, "state", "total"), d.memory_total_bytes);
  f.gauge(mem, "Device memory by state", with(base, "state", "used"), d.memory_used_bytes);
  f.gauge(mem, "Device memory by state", with(base, "state", "free"), d.memory_free_bytes);

  if (d.clock_event_reasons) {
    for (const auto& e : power::clock_event_names()) {
      f.gauge("acco_gpu_clock_event_active",
              "1 while this clock-event (throttle) reason holds the clocks down",
              with(base, "reason", e.name), (*d.clock_event_reasons & e.bit) != 0 ? 1.0 : 0.0);
    }
  }
  for (const auto& [reason, seconds] : d.throttle_seconds) {
    f.counter("acco_gpu_throttle_seconds_total",
              "Time the clocks were held down, by reason (NVML violation counters)",
              with(base, "reason", reason), seconds);
  }

  const std::string pcie = "acco_pcie_throughput_bytes_per_second";
  const std::string pcie_help =
      "PCIe traffic by direction: rx = host to device, tx = device to host (NVML: 20 ms window)";
  f.gauge(pcie, pcie_help, with(base, "direction", "rx"), d.pcie_rx_bytes_per_second);
  f.gauge(pcie, pcie_help, with(base, "direction", "tx"), d.pcie_tx_bytes_per_second);
  f.counter("acco_pcie_replays_total", "PCIe replays (link-level retries)", base, d.pcie_replays);
  const std::string gen = "acco_pcie_link_generation";
  f.gauge(gen, "PCIe link generation", with(base, "state", "current"), d.pcie_gen_current);
  f.gauge(gen, "PCIe link generation", with(base, "state", "max"), d.pcie_gen_max);
  const std::string width = "acco_pcie_link_width_lanes";
  f.gauge(width, "PCIe link width", with(base, "state", "current"), d.pcie_width_current);
  f.gauge(width, "PCIe link width", with(base, "state", "max"), d.pcie_width_max);
  if (const double peak = analyze::pcie_peak_bytes_per_second(d); peak > 0) {
    Labels link = with(base, "link_type", "pcie");
    f.gauge("acco_link_peak_bytes_per_second",
            "Peak of one direction of the link at its current generation and width", link, peak);
    const std::string util = "acco_link_utilization_ratio";
    const std::string util_help = "Measured rate over the link's peak, by direction";
    if (d.pcie_rx_bytes_per_second) {
      f.gauge(util, util_help, with(link, "direction", "rx"), *d.pcie_rx_bytes_per_second / peak);
    }
    if (d.pcie_tx_bytes_per_second) {
      f.gauge(util, util_help, with(link, "direction", "tx"), *d.pcie_tx_bytes_per_second / peak);
    }
  }
  for (const auto& l : d.nvlinks) {
    const Labels link = with(base, "link", std::to_string(l.link));
    f.gauge("acco_nvlink_link_up", "1 when the NVLink is active", link, l.up ? 1.0 : 0.0);
    f.gauge("acco_nvlink_link_speed_bytes_per_second", "NVLink speed per direction", link,
            l.speed_bytes_per_second);
    f.counter("acco_nvlink_bytes_total", "NVLink data by direction", with(link, "direction", "tx"),
              l.tx_bytes);
    f.counter("acco_nvlink_bytes_total", "NVLink data by direction", with(link, "direction", "rx"),
              l.rx_bytes);
  }
}

void add_host(Families& f, const power::HostSample& h) {
  for (const auto& [mode, seconds] : h.cpu.seconds) {
    f.counter("acco_host_cpu_seconds_total", "CPU time over all CPUs by mode (/proc/stat)",
              {{"mode", mode}}, seconds);
  }
  if (h.cpu.cpus > 0) {
    f.gauge("acco_host_cpus", "CPUs listed in /proc/stat", {}, h.cpu.cpus);
  }
  for (const auto& [state, bytes] : h.memory_bytes) {
    f.gauge("acco_host_memory_bytes", "Host memory by state (/proc/meminfo)", {{"state", state}},
            static_cast<double>(bytes));
  }
  for (const auto& p : h.pressure) {
    f.counter("acco_host_pressure_stall_seconds_total",
              "Time tasks stalled on a resource (pressure stall information)",
              {{"resource", p.resource}, {"kind", p.kind}}, p.stalled_seconds);
  }
  for (const auto& d : h.disks) {
    const Labels l = {{"disk", d.name}};
    f.counter("acco_host_disk_read_bytes_total", "Bytes read (/proc/diskstats)", l,
              static_cast<double>(d.read_bytes));
    f.counter("acco_host_disk_written_bytes_total", "Bytes written (/proc/diskstats)", l,
              static_cast<double>(d.written_bytes));
    f.counter("acco_host_disk_io_seconds_total", "Time the disk had I/O in flight", l,
              d.io_seconds);
  }
  for (const auto& n : h.net) {
    const Labels l = {{"interface", n.name}};
    f.counter("acco_host_network_receive_bytes_total", "Bytes received", l,
              static_cast<double>(n.rx_bytes));
    f.counter("acco_host_network_transmit_bytes_total", "Bytes sent", l,
              static_cast<double>(n.tx_bytes));
    f.counter("acco_host_network_errors_total", "Receive and transmit errors",
              with(l, "direction", "rx"), static_cast<double>(n.rx_errors));
    f.counter("acco_host_network_errors_total", "Receive and transmit errors",
              with(l, "direction", "tx"), static_cast<double>(n.tx_errors));
  }
  for (const auto& p : h.ib_ports) {
    const Labels l = {{"ib_device", p.device}, {"port", std::to_string(p.port)}};
    f.counter("acco_infiniband_receive_bytes_total", "Bytes received on the port", l, p.rx_bytes);
    f.counter("acco_infiniband_transmit_bytes_total", "Bytes sent on the port", l, p.tx_bytes);
    f.counter("acco_infiniband_symbol_errors_total", "Symbol errors on the port", l,
              p.symbol_errors);
    f.counter("acco_infiniband_link_downed_total", "Times the port's link went down", l,
              p.link_downed);
  }
  for (const auto& t : h.hwmon) {
    f.gauge("acco_host_hwmon_temperature_celsius", "Host sensor temperatures (hwmon)",
            {{"chip", t.chip}, {"sensor", t.sensor}}, t.celsius);
  }
  for (const auto& r : h.rapl) {
    const Labels l = {{"zone", r.zone}, {"name", r.name}};
    f.counter("acco_host_rapl_energy_joules_total", "CPU package/DRAM energy (powercap RAPL)", l,
              r.joules);
    if (r.power_limit_watts) {
      f.gauge("acco_host_rapl_power_limit_watts", "RAPL long-term power limit", l,
              *r.power_limit_watts);
    }
  }
}

// dcgm-exporter's default counters (etc/default-counters.csv) with its labels and units.
void add_dcgm(Families& f, const power::DeviceSample& d, const std::string& hostname) {
  if (d.lost || d.suspended) {
    return;
  }
  const Labels l = {{"gpu", d.device},
                    {"UUID", d.uuid},
                    {"pci_bus_id", d.pci_bus_id},
                    {"device", "nvidia" + d.device},
                    {"modelName", d.model},
                    {"Hostname", hostname}};
  const auto mhz = [](const std::optional<double>& hz) {
    return hz ? std::optional<double>(*hz / 1e6) : std::nullopt;
  };
  const auto percent = [](const std::optional<double>& ratio) {
    return ratio ? std::optional<double>(*ratio * 100) : std::nullopt;
  };
  const auto mib = [](const std::optional<std::uint64_t>& bytes) {
    return bytes ? std::optional<double>(static_cast<double>(*bytes) / (1024.0 * 1024.0))
                 : std::nullopt;
  };
  f.gauge("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", l, mhz(d.sm_clock_hertz));
  f.gauge("DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz).", l,
          mhz(d.memory_clock_hertz));
  f.gauge("DCGM_FI_DEV_MEMORY_TEMP", "Memory temperature (in C).", l, d.temperature_memory_celsius);
  f.gauge("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", l, d.temperature_gpu_celsius);
  f.gauge("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", l, d.power_watts);
  f.counter("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "Total energy consumption since boot (in mJ).",
            l, d.energy_joules ? std::optional<double>(*d.energy_joules * 1000) : std::nullopt);
  f.counter("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "Total number of PCIe retries.", l, d.pcie_replays);
  f.gauge("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", l, percent(d.utilization_ratio));
  f.gauge("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).", l,
          percent(d.memory_utilization_ratio));
  f.gauge("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", l, mib(d.memory_free_bytes));
  f.gauge("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", l, mib(d.memory_used_bytes));
  f.gauge("DCGM_FI_DEV_POWER_MGMT_LIMIT", "Power management limit (in W).", l,
          d.power_limit_requested_watts);
  f.gauge("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "Current clock event (throttle) reasons bitmask.",
          l, d.clock_event_reasons);
  f.gauge("DCGM_FI_PROF_PCIE_TX_BYTES",
          "The rate of data transmitted over the PCIe bus - including both protocol headers and "
          "data payloads - in bytes per second.",
          l, d.pcie_tx_bytes_per_second);
  f.gauge("DCGM_FI_PROF_PCIE_RX_BYTES",
          "The rate of data received over the PCIe bus - including both protocol headers and "
          "data payloads - in bytes per second.",
          l, d.pcie_rx_bytes_per_second);
}

void add_process(Families& f, const analyze::ProcessCounters& p) {
  for (const analyze::RuntimeDeviceActivity& d : p.devices) {
    const Labels base = {{"device", d.device}};
    for (const analyze::TransferCounters& t : d.transfers) {
      const Labels l = with(base, "direction", t.direction);
      f.counter("acco_transfer_bytes_total", "Bytes moved by acco's transfer engine, by direction",
                l, static_cast<double>(t.bytes));
      f.counter("acco_transfer_copies_total",
                "Copies (and batch items) moved by acco's transfer engine, by direction", l,
                static_cast<double>(t.copies));
    }
    f.gauge("acco_runtime_queue_depth", "Tasks placed on the device and not yet started", base,
            static_cast<double>(d.queued));
    f.gauge("acco_runtime_running_tasks", "Tasks started on the device and not yet ended", base,
            static_cast<double>(d.running));
    const std::string tasks = "acco_runtime_tasks_total";
    const std::string tasks_help = "Tasks by what happened: started, finished, failed";
    f.counter(tasks, tasks_help, with(base, "state", "started"), static_cast<double>(d.started));
    f.counter(tasks, tasks_help, with(base, "state", "finished"), static_cast<double>(d.finished));
    f.counter(tasks, tasks_help, with(base, "state", "failed"), static_cast<double>(d.failed));
    f.counter("acco_runtime_task_seconds_total", "Time inside task implementations", base,
              d.task_seconds);
    f.counter("acco_runtime_queue_wait_seconds_total",
              "Time from a task's dependencies done to its start, input copies included", base,
              d.queue_wait_seconds);
  }
}

void add_governor(Families& f, const power::GovernorStatus& g) {
  const Labels mode = {{"mode", g.mode}, {"control", g.allow_control ? "applied" : "dry-run"}};
  f.gauge("acco_governor_info", "The governor's mode and whether it applies its actions, always 1",
          mode, 1.0);
  for (const power::GovernorDevice& d : g.devices) {
    const Labels base = {{"device", d.device}, {"uuid", d.uuid}};
    for (const auto state : {power::GovernorState::kNormal, power::GovernorState::kWarm,
                             power::GovernorState::kHot, power::GovernorState::kDraining}) {
      f.gauge("acco_governor_state",
              "1 for the governor's state of the device (normal, warm, hot, draining), else 0",
              with(base, "state", power::to_string(state)), d.state == state ? 1.0 : 0.0);
    }
    f.gauge("acco_governor_power_limit_watts", "The power limit the governor asked for last", base,
            d.limit_watts);
    f.gauge("acco_governor_weight_ratio",
            "The scheduler weight the governor published (temperature headroom), 0-1", base,
            d.weight);
    f.gauge("acco_governor_no_new_work", "1 while the scheduler places no new work on the device",
            base, d.no_new_work ? 1.0 : 0.0);
    f.gauge("acco_governor_drained", "1 while the device's queue is evacuated", base,
            d.drained ? 1.0 : 0.0);
    f.gauge("acco_governor_hands_off",
            "1 once the governor stopped touching the device (changed outside acco, refused)", base,
            g.hands_off.contains(d.uuid) ? 1.0 : 0.0);
  }
  for (const auto& [action, n] : g.actions_total) {
    f.counter("acco_governor_actions_total",
              "Governor actions by kind, applied or not (dry-run, refused)", {{"action", action}},
              static_cast<double>(n));
  }
}

void add_self(Families& f, const analyze::Snapshot& s, const MetricsOptions& options) {
  f.gauge("acco_build_info", "acco's version, always 1", {{"version", options.version}}, 1.0);
  f.counter("acco_sampler_rounds_total", "Sampling rounds completed", {},
            static_cast<double>(s.stats.rounds));
  for (const auto& [source, n] : s.stats.read_errors) {
    f.counter("acco_sampler_read_errors_total", "Failed reads by source", {{"source", source}},
              static_cast<double>(n));
  }
  f.counter("acco_sensor_dropped_readings_total",
            "Readings outside their physical range, left out (utilization above 100 %, "
            "0xFFFFFFFF)",
            {}, static_cast<double>(s.stats.dropped_readings));
  f.gauge("acco_sampler_round_seconds", "How long the latest sampling round took", {},
          s.stats.last_round_seconds);
  f.counter("acco_sampler_cpu_seconds_total", "CPU time the sampler thread has used", {},
            s.stats.cpu_seconds);
  f.gauge("acco_sampler_interval_seconds", "The sampling period", {}, s.stats.interval_seconds);
  f.gauge("acco_snapshot_timestamp_seconds", "When the latest round was taken (Unix time)", {},
          static_cast<double>(s.time_unix_nanos) / 1e9);
}

}  // namespace

std::string render_metrics(const analyze::Snapshot& snapshot, const MetricsOptions& options) {
  prometheus::Registry registry;
  Families f(registry);
  for (const auto& d : snapshot.devices) {
    add_device(f, d);
  }
  if (snapshot.host) {
    add_host(f, *snapshot.host);
  }
  if (options.dcgm_compat) {
    for (const auto& d : snapshot.devices) {
      add_dcgm(f, d, options.hostname);
    }
  }
  if (snapshot.process) {
    add_process(f, *snapshot.process);
  }
  if (snapshot.governor) {
    add_governor(f, *snapshot.governor);
  }
  add_self(f, snapshot, options);
  auto families = registry.Collect();
  for (auto& family : families) {
    std::sort(family.metric.begin(), family.metric.end(),
              [](const prometheus::ClientMetric& a, const prometheus::ClientMetric& b) {
                return a.label < b.label;
              });
  }
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace acco::monitor
