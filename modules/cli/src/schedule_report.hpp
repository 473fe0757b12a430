// The reports of `acco schedule`: the text table and the acco.schedule/1 JSON document.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "acco/device/device.hpp"
#include "acco/monitor/thermal_run.hpp"
#include "acco/sched/workload.hpp"
#include "acco/sched/workload_run.hpp"
#include "acco/transfer/profile.hpp"

#include "schedule_command.hpp"

namespace acco::cli {

// The devices a run uses, with what the workload and the report need to know of each.
struct ScheduleDevices {
  std::unique_ptr<device::Backend> backend;
  std::vector<device::Device*> devices;
  std::vector<sched::DeviceModel> models;  // kind and speed per device
  std::string link;                        // host: the emulated link; cuda: empty
  // Per device, the tune profile's engine settings (its h2d_pinned entry); unset: the defaults.
  std::vector<std::optional<transfer::Profile>> transfer_profiles;
};

// The runtime's view of the devices: kind, the --memory budget, the tuned engine profile.
[[nodiscard]] std::vector<sched::DeviceSpec> device_specs(const ScheduleDevices& d,
                                                          const ScheduleOptions& s);

// `thermal` (--simulate-thermal) holds one entry per run, in the order of `runs`.
[[nodiscard]] std::string schedule_json(const ScheduleOptions& s, const sched::Workload& w,
                                        const ScheduleDevices& d,
                                        const std::vector<sched::WorkloadOutcome>& runs,
                                        const std::vector<monitor::ThermalOutcome>& thermal = {});
[[nodiscard]] std::string schedule_text(const ScheduleOptions& s, const sched::Workload& w,
                                        const ScheduleDevices& d,
                                        const std::vector<sched::WorkloadOutcome>& runs,
                                        const std::vector<monitor::ThermalOutcome>& thermal = {});
// The first failure of a run, for the one-line note on standard error.
[[nodiscard]] std::string failure_note(const sched::WorkloadOutcome& run);

}  // namespace acco::cli
