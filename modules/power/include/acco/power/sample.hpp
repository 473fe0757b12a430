// What the sensors read, as plain values: one DeviceSample per accelerator per read, one
// HostSample per read of the host. A reading a device could not give (NVML's NOT_SUPPORTED, a
// file that is absent) is nullopt or an empty list, never a sentinel number; readings outside
// their physical range (utilization above 100 %, NVML's 0xFFFFFFFF) are dropped and counted.
// Units are base units throughout: celsius, watts, joules, hertz, bytes, seconds, ratios 0-1.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace acco::power {

// NVML's clock-event (throttle) reason bits, which DCGM's field 112 shares.
namespace clock_event {
inline constexpr std::uint64_t kGpuIdle = 0x1;
inline constexpr std::uint64_t kApplicationsClocksSetting = 0x2;
inline constexpr std::uint64_t kSwPowerCap = 0x4;
inline constexpr std::uint64_t kHwSlowdown = 0x8;
inline constexpr std::uint64_t kSyncBoost = 0x10;
inline constexpr std::uint64_t kSwThermalSlowdown = 0x20;
inline constexpr std::uint64_t kHwThermalSlowdown = 0x40;
inline constexpr std::uint64_t kHwPowerBrakeSlowdown = 0x80;
inline constexpr std::uint64_t kDisplayClockSetting = 0x100;
}  // namespace clock_event

// The label value of each reason bit in /metrics ("sw_power_cap"), in bit order.
struct ClockEventName {
  std::uint64_t bit;
  const char* name;
};
[[nodiscard]] const std::vector<ClockEventName>& clock_event_names();

struct NvlinkSample {
  int link = 0;
  bool up = false;
  std::optional<double> speed_bytes_per_second;  // per direction
  std::optional<std::uint64_t> tx_bytes;         // cumulative since driver load
  std::optional<std::uint64_t> rx_bytes;
  bool operator==(const NvlinkSample&) const = default;
};

struct XidEvent {
  std::uint64_t xid = 0;
  std::int64_t time_unix_nanos = 0;
  bool operator==(const XidEvent&) const = default;
};

struct DeviceSample {
  // Identity, the labels of every series.
  std::string device;      // index as NVML or the simulator numbers it: "0"
  std::string uuid;        // "GPU-8d1c...", "SIM-0"
  std::string pci_bus_id;  // sysfs form "0000:18:00.0"; empty for a simulated device
  std::string model;       // "NVIDIA H100 80GB HBM3"
  std::string source;      // "nvml" or "simulated"
  std::int64_t time_unix_nanos = 0;

  // A device that is lost (NVML_ERROR_GPU_IS_LOST) or runtime-suspended reports nothing else;
  // a suspended one is not queried so that the read does not wake it.
  bool lost = false;
  bool suspended = false;

  std::optional<double> temperature_gpu_celsius;
  std::optional<double> temperature_memory_celsius;
  std::optional<double> threshold_gpu_max_celsius;   // max operating (SW thermal slowdown)
  std::optional<double> threshold_slowdown_celsius;  // HW slowdown
  std::optional<double> threshold_shutdown_celsius;
  std::optional<double> threshold_memory_max_celsius;
  std::optional<double> thermal_margin_celsius;  // to the nearest slowdown threshold

  std::optional<double> power_watts;
  std::optional<double> power_limit_enforced_watts;
  std::optional<double> power_limit_requested_watts;  // the management limit someone set
  std::optional<double> power_limit_default_watts;
  std::optional<double> power_limit_min_watts;
  std::optional<double> power_limit_max_watts;
  std::optional<double> energy_joules;  // cumulative since driver load

  std::optional<double> sm_clock_hertz;
  std::optional<double> memory_clock_hertz;
  std::optional<double> sm_clock_max_hertz;
  std::optional<double> memory_clock_max_hertz;
  std::optional<int> pstate;

  std::optional<double> utilization_ratio;         // a kernel ran in the sample period
  std::optional<double> memory_utilization_ratio;  // memory interface busy
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<std::uint64_t> memory_used_bytes;
  std::optional<std::uint64_t> memory_free_bytes;

  std::optional<double> pcie_tx_bytes_per_second;  // device to host
  std::optional<double> pcie_rx_bytes_per_second;  // host to device
  std::optional<std::uint64_t> pcie_replays;       // cumulative
  std::optional<int> pcie_gen_current;
  std::optional<int> pcie_width_current;
  std::optional<int> pcie_gen_max;
  std::optional<int> pcie_width_max;

  std::optional<std::uint64_t> clock_event_reasons;  // clock_event bits active now
  // Cumulative seconds the clocks were held down, by reason: "power", "thermal", "sync_boost",
  // "board_limit", "low_util", "reliability", "sw_thermal", "hw_thermal", "hw_power_brake".
  std::map<std::string, double> throttle_seconds;

  std::vector<NvlinkSample> nvlinks;
  std::vector<XidEvent> xids;  // events since the previous read

  int dropped_readings = 0;  // out-of-range values left out of this sample
  bool operator==(const DeviceSample&) const = default;
};

// Host readings; each list is empty where the file is absent (no PSI before Linux 4.20, no RAPL
// in a VM, no InfiniBand).
struct CpuTimes {
  // Cumulative seconds over all CPUs by mode, /proc/stat's first line: "user", "nice",
  // "system", "idle", "iowait", "irq", "softirq", "steal".
  std::map<std::string, double> seconds;
  int cpus = 0;
  bool operator==(const CpuTimes&) const = default;
};

struct PressureSample {
  std::string resource;        // "cpu", "memory", "io"
  std::string kind;            // "some", "full"
  double stalled_seconds = 0;  // cumulative (total= in microseconds)
  double avg10_ratio = 0;      // avg10 / 100
  bool operator==(const PressureSample&) const = default;
};

struct DiskSample {
  std::string name;  // "nvme0n1"
  std::uint64_t read_bytes = 0;
  std::uint64_t written_bytes = 0;
  std::uint64_t reads = 0;
  std::uint64_t writes = 0;
  double io_seconds = 0;  // time the device had I/O in flight
  // The block devices this one is built on (/sys/block/<disk>/slaves: a dm or md device's
  // disks or partitions); empty for a disk of its own. Their I/O is counted on them too.
  std::vector<std::string> members;
  bool operator==(const DiskSample&) const = default;
};

struct NetSample {
  std::string name;  // "ens1f0np0"
  std::uint64_t rx_bytes = 0;
  std::uint64_t tx_bytes = 0;
  std::uint64_t rx_packets = 0;
  std::uint64_t tx_packets = 0;
  std::uint64_t rx_errors = 0;
  std::uint64_t tx_errors = 0;
  std::uint64_t rx_dropped = 0;
  std::uint64_t tx_dropped = 0;
  // Backed by a device (/sys/class/net/<if>/device exists): not a bridge, bond, VLAN, veth or
  // tunnel, whose traffic is also counted on the interfaces under them. False when unknown
  // (read from /proc/net/dev).
  bool physical = false;
  bool operator==(const NetSample&) const = default;
};

struct IbPortCounters {
  std::string device;  // "mlx5_0"
  int port = 1;
  // port_rcv_data / port_xmit_data count 4-byte words; these are bytes.
  std::optional<std::uint64_t> rx_bytes;
  std::optional<std::uint64_t> tx_bytes;
  std::optional<std::uint64_t> rx_packets;
  std::optional<std::uint64_t> tx_packets;
  std::optional<std::uint64_t> symbol_errors;
  std::optional<std::uint64_t> link_downed;
  std::optional<std::uint64_t> rx_errors;
  bool operator==(const IbPortCounters&) const = default;
};

struct HwmonTemperature {
  std::string chip;    // hwmon "name": "k10temp", "coretemp", "nvme"
  std::string sensor;  // "temp1" or its label ("Tctl", "Package id 0")
  double celsius = 0;
  bool operator==(const HwmonTemperature&) const = default;
};

struct RaplEnergy {
  std::string zone;                         // "intel-rapl:0"
  std::string name;                         // "package-0", "dram"
  double joules = 0;                        // cumulative; wraps at max_energy_range_uj
  std::optional<double> power_limit_watts;  // constraint_0 (long term)
  bool operator==(const RaplEnergy&) const = default;
};

struct HostSample {
  std::int64_t time_unix_nanos = 0;
  CpuTimes cpu;
  std::map<std::string, std::uint64_t> memory_bytes;  // "total", "available", "free", "cached",
                                                      // "buffers", "swap_total", "swap_free"
  std::vector<PressureSample> pressure;
  std::vector<DiskSample> disks;
  std::vector<NetSample> net;
  std::vector<IbPortCounters> ib_ports;
  std::vector<HwmonTemperature> hwmon;
  std::vector<RaplEnergy> rapl;
  // Files that exist but could not be understood ("/proc/pressure/cpu: ..."), one line each.
  std::vector<std::string> issues;
  bool operator==(const HostSample&) const = default;
};

}  // namespace acco::power
