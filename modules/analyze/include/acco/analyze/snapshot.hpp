// What the sampler publishes after each round: every source's readings at one moment and the
// sampler's own counters. A plain value: the HTTP server, the log and the store read it, none of
// them calls a sensor; a recording is a list of them, which is why it lives here, below monitor.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "acco/power/governor.hpp"
#include "acco/power/sample.hpp"

namespace acco::analyze {

struct SamplerStats {
  std::uint64_t rounds = 0;                          // sampling rounds completed
  std::map<std::string, std::uint64_t> read_errors;  // source name -> failed reads
  std::map<std::string, std::string> last_error;     // source name -> its latest error message
  std::uint64_t dropped_readings = 0;                // out-of-range readings left out, all rounds
  double last_round_seconds = 0;                     // how long the latest round took
  double cpu_seconds = 0;                            // CPU time the sampler thread has used
  double interval_seconds = 1;
  bool operator==(const SamplerStats&) const = default;
};

// acco's own work in the process that runs the sampler (`acco schedule --serve`): what the task
// runtime and its transfer engines report, as plain numbers, so analyze needs neither; the caller
// fills it from sched::Runtime::counters.
struct TransferCounters {
  std::string direction;  // "host-to-device", "device-to-host", "device-to-device", "host-to-host"
  std::uint64_t bytes = 0;
  std::uint64_t copies = 0;
  bool operator==(const TransferCounters&) const = default;
};

struct RuntimeDeviceActivity {
  std::string device;  // the device label: the runtime's device index
  std::uint64_t queued = 0;
  std::uint64_t running = 0;
  std::uint64_t started = 0;
  std::uint64_t finished = 0;
  std::uint64_t failed = 0;
  double task_seconds = 0;
  double queue_wait_seconds = 0;
  std::vector<TransferCounters> transfers;
  bool operator==(const RuntimeDeviceActivity&) const = default;
};

struct ProcessCounters {
  std::vector<RuntimeDeviceActivity> devices;
  bool operator==(const ProcessCounters&) const = default;
};

struct Snapshot {
  std::int64_t time_unix_nanos = 0;
  std::vector<power::DeviceSample> devices;
  std::optional<power::HostSample> host;
  std::optional<ProcessCounters> process;         // with SamplerOptions::process_counters
  std::optional<power::GovernorStatus> governor;  // with SamplerOptions::governor
  SamplerStats stats;
  bool operator==(const Snapshot&) const = default;
};

}  // namespace acco::analyze
