// Why a job is slow, from what was recorded: for each device and each window (30 s by default)
// one bottleneck verdict (idle, thermal, power_cap, pcie, nvlink, link_underuse, host, memory,
// compute, or mixed when no rule holds), each citing the numbers it used, plus the device's
// shares over the whole recording and the events worth a look. Pure: it takes the rounds as
// values. The rules and their thresholds are documented in docs/monitoring.md ("Verdicts").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "acco/mon/events.hpp"
#include "acco/mon/snapshot.hpp"

namespace acco::mon {

enum class Verdict {
  kIdle,
  kThermal,
  kPowerCap,
  kPcie,
  kNvlink,
  kLinkUnderuse,
  kHost,
  kMemory,
  kCompute,
  kMixed,
};
[[nodiscard]] const char* to_string(Verdict verdict);

struct AnalyzeOptions {
  double window_seconds = 30;
  std::optional<std::int64_t> since_unix_nanos;
  std::optional<std::int64_t> until_unix_nanos;
  std::string device;  // only this device; empty: all
  std::size_t max_events = 10;
};

// The numbers behind a verdict, in base units (ratios 0-1, watts, hertz).
struct WindowNumbers {
  int samples = 0;
  double utilization = 0;  // mean
  double utilization_max = 0;
  std::optional<double> memory_utilization;
  std::optional<double> power_watts;  // from the energy counter when it is there, else the mean
  std::optional<double> power_limit_watts;
  double power_cap_share = 0;                     // share of samples with sw_power_cap
  double thermal_share = 0;                       // share of samples with sw/hw thermal slowdown
  std::optional<double> thermal_throttled_ratio;  // d(thermal violation seconds) / dt
  std::optional<double> sm_clock_ratio;           // mean SM clock / max
  std::optional<double> temperature_max_celsius;
  std::optional<double> pcie_rx_utilization;  // of the current link's peak
  std::optional<double> pcie_tx_utilization;
  std::optional<double> nvlink_utilization;  // of the active links' speed
  int nvlinks_up = 0;
  std::optional<double> host_cpu_busy;      // share of all CPUs, from /proc/stat deltas
  std::optional<double> host_cpu_pressure;  // PSI cpu some avg10
};

struct WindowVerdict {
  std::int64_t start_unix_nanos = 0;
  std::int64_t end_unix_nanos = 0;
  Verdict verdict = Verdict::kMixed;
  std::string why;  // the rule and the numbers it used, in words
  WindowNumbers numbers;
};

struct DeviceAnalysis {
  std::string device;
  std::string model;
  std::string pci_bus_id;
  std::vector<WindowVerdict> windows;
  std::map<Verdict, double> seconds;  // time under each verdict
  Verdict dominant = Verdict::kMixed;
  bool lost = false;  // lost at some point in the recording
};

struct AnalyzeReport {
  std::string input;  // what was read, for the header
  std::size_t rounds = 0;
  std::int64_t start_unix_nanos = 0;
  std::int64_t end_unix_nanos = 0;
  double window_seconds = 30;
  std::vector<DeviceAnalysis> devices;
  std::vector<Event> events;  // warnings and errors first, at most max_events
  std::size_t events_total = 0;
  std::vector<std::string> notes;  // what the input could not tell
};

[[nodiscard]] AnalyzeReport analyze(const std::vector<Snapshot>& recorded,
                                    const AnalyzeOptions& options, std::string input = "");
[[nodiscard]] std::string analyze_text(const AnalyzeReport& report);
[[nodiscard]] nlohmann::ordered_json to_json(const AnalyzeReport& report);

}  // namespace acco::mon
