#include "acco/sched/experiment.hpp"

#include <set>
#include <utility>

#include <fmt/format.h>

#include "acco/core/units.hpp"

namespace acco::sched {

std::vector<DeviceSpec> device_specs(const ExperimentDevices& d) {
  std::vector<DeviceSpec> specs;
  for (std::size_t i = 0; i < d.devices.size(); ++i) {
    DeviceSpec spec;
    spec.device = d.devices[i];
    spec.kind = d.models[i].kind;
    spec.memory_budget_bytes = d.memory_budget_bytes;
    if (i < d.transfer_profiles.size()) {
      spec.transfer_profile = d.transfer_profiles[i];
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

LargestTask largest_task(const Workload& w) {
  LargestTask largest;
  for (const auto& t : w.tasks) {
    std::set<std::size_t> data;
    for (const auto& access : t.accesses) {
      data.insert(access.first);
    }
    std::uint64_t bytes = 0;
    for (const std::size_t i : data) {
      bytes += w.data_bytes[i];
    }
    if (bytes > largest.bytes) {
      largest = {bytes, t.type};
    }
  }
  return largest;
}

Experiment describe_experiment(const Workload& workload, const ExperimentDevices& d,
                               const ExperimentOptions& options) {
  Experiment e;
  e.spec = options.spec;
  e.workload = workload.name;
  e.tasks = workload.tasks.size();
  e.link = d.link;
  e.sorted_decision = options.sorted_decision;
  for (std::size_t i = 0; i < d.devices.size(); ++i) {
    const auto& info = d.devices[i]->info();
    ExperimentDevice device;
    device.name = info.name;
    device.model = d.models[i];
    device.link_bytes_per_second = info.link_bytes_per_second;
    if (!d.link.empty()) {
      device.link = d.link;
    } else {
      device.link = info.link_bytes_per_second > 0 ? units::format_rate(info.link_bytes_per_second)
                                                   : "unknown";
    }
    e.devices.push_back(std::move(device));
  }
  return e;
}

Result<Experiment> run_experiment(const Workload& workload, const ExperimentDevices& devices,
                                  const ExperimentOptions& o, const ProgressLine& progress) {
  Experiment e = describe_experiment(workload, devices, o);
  for (std::size_t i = 0; i < o.policies.size(); ++i) {
    const auto policy = std::string(to_string(o.policies[i]));
    if (progress) {
      progress(fmt::format("[{}/{}] {}: {} task(s), {} calibration run(s)", i + 1,
                           o.policies.size(), policy, workload.tasks.size(), o.calibration_runs));
    }
    RuntimeOptions options;
    options.policy = o.policies[i];
    options.knobs.sorted_decision = o.sorted_decision;
    if (!o.models.empty()) {
      options.model_file = o.models;
    }
    WorkloadRunOptions run;
    run.calibration_runs = o.calibration_runs;
    run.observe = o.observe;
    auto outcome = run_workload(workload, device_specs(devices), options, run);
    if (!outcome) {
      return tl::unexpected(std::move(outcome.error()).with_context(policy));
    }
    if (!o.models.empty()) {
      if (auto saved = outcome->models.save(o.models); !saved) {
        return fail(Errc::kCannotWrite, saved.error().message);
      }
    }
    e.runs.push_back(std::move(*outcome));
  }
  return e;
}

}  // namespace acco::sched
