// Why a job is slow, from what was recorded: for each device and each window (30 s by default)
// one bottleneck verdict (idle, thermal, power_cap, pcie, nvlink, link_underuse, host, memory,
// compute, mixed when no rule holds, or unknown when the readings a rule needs are not in the
// recording), each citing the numbers it used, plus the device's
// shares over the whole recording and the events worth a look. Pure: it takes the rounds as
// values. The rules and their thresholds are documented in docs/monitoring.md ("Verdicts").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "acco/analyze/events.hpp"
#include "acco/analyze/recording.hpp"
#include "acco/analyze/snapshot.hpp"
#include "acco/report/document.hpp"

namespace acco::analyze {

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
  kUnknown,  // the recording lacks the readings to judge (no utilization, no readings at all)
};

[[nodiscard]] const char* to_string(Verdict verdict);

struct AnalyzeOptions {
  double window_seconds = 30;
  std::optional<std::int64_t> since_unix_nanos;
  std::optional<std::int64_t> until_unix_nanos;
  std::string device;  // only this device; empty: all
  std::size_t max_events = 10;
};

// `acco analyze`'s flags in their text forms; empty: not given.
struct AnalyzeRequest {
  std::string since;  // RFC 3339 or Unix seconds
  std::string until;
  std::string device;    // its index
  std::string window;    // 1s-1d; empty: 30s
  std::string interval;  // a dmon log's sampling interval, up to 1d
};

// What a request asks: the analysis's and the reader's options, and the flags given that only a
// recording has a use for (a Chrome trace refuses them).
struct AnalyzeSetup {
  AnalyzeOptions analyze;
  RecordingOptions recording;
  std::vector<std::string> recording_flags;  // "--since", "--device", ...
};

// `request` checked; errors name the flag ("--window: '0s' is not a duration from 1s to 1d (e.g.
// 30s)", "--until is before --since"), kInvalidArgument.
[[nodiscard]] Result<AnalyzeSetup> analyze_setup(const AnalyzeRequest& request);

// The numbers behind a verdict, in base units (ratios 0-1, watts, hertz). nullopt: the
// recording holds no such reading in the window, which is unknown, never zero.
struct WindowNumbers {
  int samples = 0;
  std::optional<double> utilization;  // mean
  std::optional<double> utilization_max;
  std::optional<double> memory_utilization;
  std::optional<double> power_watts;  // from the energy counter when it is there, else the mean
  std::optional<double> power_limit_watts;  // enforced, else the management limit
  // Shares of the busy samples (utilization unknown or at least 5 %) whose clock-event reasons
  // say a power cap (sw_power_cap, hw_slowdown, hw_power_brake_slowdown) or a thermal slowdown
  // (sw/hw thermal); nullopt when no sample carries the reasons.
  std::optional<double> power_cap_share;
  std::optional<double> thermal_share;
  std::optional<double> thermal_throttled_ratio;  // d(thermal violation seconds) / dt
  std::optional<double> sm_clock_hertz;           // mean
  // Mean SM clock over its maximum (clocks.max.sm, DCGM_FI_DEV_MAX_SM_CLOCK), else over the
  // device's highest SM clock in the recording (`sm_clock_reference` says which).
  std::optional<double> sm_clock_ratio;
  std::string sm_clock_reference;  // "max", "highest_seen" or "" without a ratio
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
  // MIG instances seen on this physical GPU ("1 (1g.10gb)"), with what was read of each; the
  // caller fills it from the recording.
  std::vector<std::string> instances;
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
  std::vector<std::string> notes;       // what the input could not tell
  TimeBase time_base = TimeBase::kUtc;  // the caller sets it from the recording
};

[[nodiscard]] AnalyzeReport analyze(const std::vector<Snapshot>& recorded,
                                    const AnalyzeOptions& options, std::string input = "");
// analyze() of a recording's rounds (not a trace's) with what the file adds: its time base, the
// MIG instances of each device and the reader's notes (first, before the analysis's own).
[[nodiscard]] AnalyzeReport analyze_recording(const Recording& recording,
                                              const AnalyzeOptions& options, std::string input);
// The text: the recording's span, each device's verdicts by window, the events, the notes.
[[nodiscard]] report::Document analyze_report(const AnalyzeReport& report);
[[nodiscard]] nlohmann::ordered_json to_json(const AnalyzeReport& report);

}  // namespace acco::analyze
