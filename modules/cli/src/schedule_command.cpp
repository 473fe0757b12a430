#include "schedule_command.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "acco/core/json.hpp"
#include "acco/core/units.hpp"
#include "acco/dev/cuda_backend.hpp"
#include "acco/dev/host_backend.hpp"
#include "acco/sched/perf_model.hpp"
#include "acco/sched/record.hpp"
#include "acco/sched/workload_run.hpp"

#include "text_report.hpp"

namespace acco::cli {
namespace {

using Json = nlohmann::ordered_json;

// The devices a run uses, with what the workload and the report need to know of each.
struct Devices {
  std::unique_ptr<dev::Backend> backend;
  std::vector<dev::Device*> devices;
  std::vector<sched::DeviceModel> models;  // kind and speed per device
  std::string link;                        // host: the emulated link; cuda: empty
};

Outcome fail_with(int code, const std::string& message) {
  return {"", fmt::format("acco: {}\n", message), code};
}

// One entry for every device, or one per device (parse_args checked the host count).
template <typename T>
Result<std::vector<T>> per_device(std::string_view flag, const std::vector<T>& given, T fallback,
                                  std::size_t devices) {
  if (given.empty()) {
    return std::vector<T>(devices, fallback);
  }
  if (given.size() == 1) {
    return std::vector<T>(devices, given.front());
  }
  if (given.size() != devices) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: {} values for {} devices (give one per device, or one for all)",
                            flag, given.size(), devices));
  }
  return given;
}

// Host devices with the emulated link and speed factors, or every GPU. kUnavailable or
// kUnsupported when CUDA cannot be used; kInvalidArgument for lists of the wrong length.
Result<Devices> open_devices(const ScheduleOptions& s) {
  Devices out;
  if (s.cuda) {
    auto cuda = dev::make_cuda_backend();
    if (!cuda) {
      return tl::unexpected(std::move(cuda.error()).with_context("--devices cuda"));
    }
    out.backend = std::move(*cuda);
    if (out.backend->devices().empty()) {
      return fail(Errc::kUnavailable, "--devices cuda: the CUDA backend found no GPU");
    }
  } else {
    auto link = dev::parse_link(s.link);
    if (!link) {
      return tl::unexpected(std::move(link.error()).with_context("--link"));
    }
    dev::HostBackendOptions host;
    host.devices = s.devices;
    host.link = *link;
    auto speeds = per_device("--speeds", s.speeds, 1.0, static_cast<std::size_t>(s.devices));
    if (!speeds) {
      return tl::unexpected(speeds.error());
    }
    host.speed_factors = *speeds;
    if (s.memory_bytes > 0) {
      host.memory_bytes_per_device = s.memory_bytes;
    }
    auto backend = dev::make_host_backend(host);
    if (!backend) {
      return tl::unexpected(std::move(backend.error()).with_context("host devices"));
    }
    out.backend = std::move(*backend);
    out.link = link->name;
  }
  out.devices = out.backend->devices();
  const auto n = out.devices.size();
  auto kinds = per_device("--kinds", s.kinds, std::string("gpu"), n);
  if (!kinds) {
    return tl::unexpected(kinds.error());
  }
  auto speeds = per_device("--speeds", s.speeds, 1.0, n);
  if (!speeds) {
    return tl::unexpected(speeds.error());
  }
  for (std::size_t d = 0; d < n; ++d) {
    out.models.push_back({(*kinds)[d], (*speeds)[d]});
  }
  return out;
}

std::vector<sched::DeviceSpec> device_specs(const Devices& d, const ScheduleOptions& s) {
  std::vector<sched::DeviceSpec> specs;
  for (std::size_t i = 0; i < d.devices.size(); ++i) {
    sched::DeviceSpec spec;
    spec.device = d.devices[i];
    spec.kind = d.models[i].kind;
    spec.memory_budget_bytes = s.memory_bytes;
    specs.push_back(std::move(spec));
  }
  return specs;
}

// The most bytes one task touches: a budget below it leaves that task nowhere to run.
std::uint64_t largest_task_bytes(const sched::Workload& w, std::string& type) {
  std::uint64_t largest = 0;
  for (const auto& t : w.tasks) {
    std::set<std::size_t> data;
    for (const auto& access : t.accesses) {
      data.insert(access.first);
    }
    std::uint64_t bytes = 0;
    for (const std::size_t i : data) {
      bytes += w.data_bytes[i];
    }
    if (bytes > largest) {
      largest = bytes;
      type = t.type;
    }
  }
  return largest;
}

// The directory must exist before minutes of runs; the write itself is atomic and may still fail.
Status check_output_dir(std::string_view flag, const std::string& path) {
  auto dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) {
    dir = ".";
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return fail(Errc::kNotFound, fmt::format("{}: cannot write {}: directory {} does not exist",
                                             flag, path, dir.string()));
  }
  return {};
}

bool critical_path_bound(const sched::Bounds& b) {
  return b.critical_path >= b.area;
}

std::string percent_text(double fraction) {
  return fmt::format("{:.0f}%", fraction * 100);
}

std::string link_text(const Devices& d, std::size_t i) {
  if (!d.link.empty()) {
    return d.link;
  }
  const double rate = d.devices[i]->info().link_bytes_per_second;
  return rate > 0 ? units::format_rate(rate) : "unknown";
}

Json workload_json(const ScheduleOptions& s, const sched::Workload& w) {
  const auto& spec = s.workload;
  Json j = {{"name", w.name}, {"tasks", w.tasks.size()}};
  if (spec.name == "cholesky" || spec.name == "lu") {
    j["tiles"] = spec.tiles;
  }
  j["kernels"] = spec.kernels;
  j["time_scale"] = spec.time_scale;
  j["seed"] = spec.seed;
  if (spec.name == "independent") {
    j["skew"] = spec.skew;
  }
  if (spec.name == "random") {
    j["alpha"] = spec.alpha;
    j["out_degree"] = spec.out_degree;
    j["ccr"] = spec.ccr;
    j["beta"] = spec.beta;
  }
  return j;
}

Json devices_json(const Devices& d) {
  Json out = Json::array();
  for (std::size_t i = 0; i < d.devices.size(); ++i) {
    const auto& info = d.devices[i]->info();
    out.push_back(
        {{"device", i},
         {"name", info.name},
         {"kind", d.models[i].kind},
         {"speed", d.models[i].speed},
         {"link", link_text(d, i)},
         {"link_bytes_per_second",
          info.link_bytes_per_second > 0 ? Json(info.link_bytes_per_second) : Json(nullptr)}});
  }
  return out;
}

Json run_json(const sched::WorkloadOutcome& r) {
  Json busy = Json::array();
  for (const auto& d : r.devices) {
    busy.push_back(
        {{"device", d.device}, {"kind", d.kind}, {"busy_ratio", d.busy_ratio}, {"tasks", d.tasks}});
  }
  const auto node = [](sched::NodeId n) {
    return n == sched::kHostNode ? std::string("host") : fmt::format("dev{}", n - 1);
  };
  Json links = Json::array();
  for (const sched::LinkRecord& l : r.record.links) {
    links.push_back({{"from", node(l.from)},
                     {"to", node(l.to)},
                     {"bytes", l.bytes},
                     {"transfers", l.transfers}});
  }
  return {{"policy", r.policy},
          {"makespan_seconds", r.makespan_seconds},
          {"bound_seconds", r.bounds.best()},
          {"bound_kind", critical_path_bound(r.bounds) ? "critical_path" : "area"},
          {"critical_path_seconds", r.bounds.critical_path},
          {"area_seconds", r.bounds.area},
          {"efficiency", r.efficiency},
          {"tasks", r.tasks},
          {"failed_tasks", r.failed},
          {"bytes_transferred", r.bytes_transferred},
          {"busy", busy},
          {"links", links}};
}

std::string json_report(const ScheduleOptions& s, const sched::Workload& w, const Devices& d,
                        const std::vector<sched::WorkloadOutcome>& runs) {
  Json j = {{"schema", "acco.schedule/1"},
            {"workload", workload_json(s, w)},
            {"devices", devices_json(d)},
            {"sorted_decision", s.sorted_decision}};
  const Json first = run_json(runs.front());
  for (const auto& [key, value] : first.items()) {
    j[key] = value;
  }
  Json all = Json::array();
  for (const auto& r : runs) {
    all.push_back(run_json(r));
  }
  j["runs"] = all;
  return j.dump(2) + "\n";
}

std::string header_text(const ScheduleOptions& s, const sched::Workload& w, const Devices& d) {
  const auto& spec = s.workload;
  std::string shape;
  if (spec.name == "cholesky" || spec.name == "lu") {
    shape = fmt::format("{}x{} tiles, {} kernels, ", spec.tiles, spec.tiles, spec.kernels);
  } else if (spec.name != "chain") {
    shape = fmt::format("seed {}, ", spec.seed);
  }
  std::vector<std::string> devices;
  for (std::size_t i = 0; i < d.devices.size(); ++i) {
    devices.push_back(fmt::format("dev{} {} x{:g}", i, d.models[i].kind, d.models[i].speed));
  }
  return fmt::format("acco schedule: {}, {} tasks ({}time scale {:g}); {} devices: {}; link {}{}\n",
                     w.name, w.tasks.size(), shape, spec.time_scale, d.devices.size(),
                     fmt::join(devices, ", "), d.link.empty() ? "as found" : d.link,
                     s.sorted_decision ? "; sorted decision" : "");
}

std::string text_report(const ScheduleOptions& s, const sched::Workload& w, const Devices& d,
                        const std::vector<sched::WorkloadOutcome>& runs) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"policy", "makespan", "bound", "efficiency", "tasks", "moved"};
  for (std::size_t i = 0; i < d.devices.size(); ++i) {
    head.push_back(fmt::format("dev{} busy", i));
  }
  rows.push_back(head);
  for (const auto& r : runs) {
    std::vector<std::string> row = {
        r.policy,
        units::format_seconds(r.makespan_seconds),
        fmt::format("{} ({})", units::format_seconds(r.bounds.best()),
                    critical_path_bound(r.bounds) ? "cp" : "area"),
        percent_text(r.efficiency),
        r.failed > 0 ? fmt::format("{} ({} failed)", r.tasks, r.failed) : std::to_string(r.tasks),
        units::format_bytes(r.bytes_transferred)};
    for (const auto& dev : r.devices) {
      row.push_back(percent_text(dev.busy_ratio));
    }
    rows.push_back(std::move(row));
  }
  std::string out = header_text(s, w, d) + aligned_table(rows);
  if (runs.size() > 1) {
    const auto best = std::min_element(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
      return a.makespan_seconds < b.makespan_seconds;
    });
    const auto eager =
        std::find_if(runs.begin(), runs.end(), [](const auto& r) { return r.policy == "eager"; });
    if (eager != runs.end() && eager != best && best->makespan_seconds > 0) {
      out += fmt::format("best: {}, {:.2f}x faster than eager ({} vs {})\n", best->policy,
                         eager->makespan_seconds / best->makespan_seconds,
                         units::format_seconds(best->makespan_seconds),
                         units::format_seconds(eager->makespan_seconds));
    } else {
      out += fmt::format("best: {} ({})\n", best->policy,
                         units::format_seconds(best->makespan_seconds));
    }
  }
  return out;
}

// The first failure of a run, for the one-line note on standard error.
std::string failure_note(const sched::WorkloadOutcome& r) {
  for (const auto& t : r.record.tasks) {
    if (t.status == sched::TaskStatus::kFailed) {
      return fmt::format("acco: {}: {} of {} tasks failed; first: {}: {}\n", r.policy, r.failed,
                         r.tasks, t.name, t.error);
    }
  }
  return fmt::format("acco: {}: {} of {} tasks failed\n", r.policy, r.failed, r.tasks);
}

}  // namespace

Outcome run_schedule(const Options& o) {
  const ScheduleOptions& s = o.schedule;
  auto devices = open_devices(s);
  if (!devices) {
    const int code = devices.error().code == Errc::kInvalidArgument ? kExitUsage : kExitUnavailable;
    return fail_with(code, devices.error().message);
  }
  auto workload = sched::make_workload(s.workload, devices->models);
  if (!workload) {
    return fail_with(kExitUsage, workload.error().message);
  }
  if (s.memory_bytes > 0) {
    std::string type;
    const auto needed = largest_task_bytes(*workload, type);
    if (needed > s.memory_bytes) {
      return fail_with(kExitUsage, fmt::format("--memory: {} cannot hold the {} a {} task touches",
                                               units::format_bytes(s.memory_bytes),
                                               units::format_bytes(needed), type));
    }
  }
  if (!s.models.empty()) {
    if (auto models = sched::PerfModels::load(s.models); !models) {
      return fail_with(exit_code_for(models.error()), "--models: " + models.error().message);
    }
    if (auto dir = check_output_dir("--models", s.models); !dir) {
      return fail_with(kExitCantCreate, dir.error().message);
    }
  }
  if (!s.trace.empty()) {
    if (auto dir = check_output_dir("--trace", s.trace); !dir) {
      return fail_with(kExitCantCreate, dir.error().message);
    }
  }

  std::vector<sched::WorkloadOutcome> runs;
  for (std::size_t i = 0; i < s.policies.size(); ++i) {
    const auto policy = std::string(sched::to_string(s.policies[i]));
    if (o.progress) {
      o.progress(fmt::format("[{}/{}] {}: {} task(s), {} calibration run(s)", i + 1,
                             s.policies.size(), policy, workload->tasks.size(), s.calibrate));
    }
    sched::RuntimeOptions options;
    options.policy = s.policies[i];
    options.knobs.sorted_decision = s.sorted_decision;
    if (!s.models.empty()) {
      options.model_file = s.models;
    }
    sched::WorkloadRunOptions run;
    run.calibration_runs = s.calibrate;
    auto outcome = sched::run_workload(*workload, device_specs(*devices, s), options, run);
    if (!outcome) {
      const int code = outcome.error().code == Errc::kInvalidArgument
                           ? kExitUsage
                           : exit_code_for(outcome.error());
      return fail_with(code, fmt::format("{}: {}", policy, outcome.error().message));
    }
    if (!s.models.empty()) {
      if (auto saved = outcome->models.save(s.models); !saved) {
        return fail_with(kExitCantCreate, "--models: " + saved.error().message);
      }
    }
    runs.push_back(std::move(*outcome));
  }

  Outcome out;
  if (!s.trace.empty()) {
    const auto trace = sched::chrome_trace(runs.front().record).dump();
    if (auto written = core::write_file_atomic(s.trace, trace); !written) {
      return fail_with(kExitCantCreate, "--trace: " + written.error().message);
    }
    out.err += fmt::format("acco: trace of {} written to {}\n", runs.front().policy, s.trace);
  }
  out.out = o.format == Format::kJson ? json_report(s, *workload, *devices, runs)
                                      : text_report(s, *workload, *devices, runs);
  for (const auto& r : runs) {
    if (r.failed > 0) {
      out.err += failure_note(r);
      out.exit_code = kExitTasksFailed;
    }
  }
  return out;
}

}  // namespace acco::cli
