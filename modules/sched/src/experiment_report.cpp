#include "acco/sched/experiment_report.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/core/units.hpp"
#include "acco/report/table.hpp"
#include "acco/sched/record.hpp"

namespace acco::sched {
namespace {

bool critical_path_bound(const Bounds& b) {
  return b.critical_path >= b.area;
}

std::string experiment_header(const Experiment& e) {
  const auto& spec = e.spec;
  std::string shape;
  if (spec.kind == WorkloadKind::kCholesky || spec.kind == WorkloadKind::kLu) {
    shape = fmt::format("{}x{} tiles, {} kernels, ", spec.tiles, spec.tiles, spec.kernels);
  } else if (spec.kind != WorkloadKind::kChain) {
    shape = fmt::format("seed {}, ", spec.seed);
  }
  std::vector<std::string> devices;
  for (std::size_t i = 0; i < e.devices.size(); ++i) {
    const DeviceModel& m = e.devices[i].model;
    devices.push_back(fmt::format("dev{} {} x{:g}", i, m.kind, m.speed));
  }
  return fmt::format("acco schedule: {}, {} tasks ({}time scale {:g}); {} devices: {}; link {}{}",
                     e.workload, e.tasks, shape, spec.time_scale, e.devices.size(),
                     fmt::join(devices, ", "), e.link.empty() ? "as found" : e.link,
                     e.sorted_decision ? "; sorted decision" : "");
}

// "best: dmda, 1.42x faster than eager (1.2 s vs 1.7 s)", or only the best where eager is it or
// did not run; empty for a single run.
std::string best_line(const std::vector<WorkloadOutcome>& runs) {
  if (runs.size() < 2) {
    return {};
  }
  const auto best = std::min_element(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
    return a.makespan_seconds < b.makespan_seconds;
  });
  const auto eager =
      std::find_if(runs.begin(), runs.end(), [](const auto& r) { return r.policy == "eager"; });
  if (eager != runs.end() && eager != best && best->makespan_seconds > 0) {
    return fmt::format("best: {}, {:.2f}x faster than eager ({} vs {})", best->policy,
                       eager->makespan_seconds / best->makespan_seconds,
                       units::format_seconds(best->makespan_seconds),
                       units::format_seconds(eager->makespan_seconds));
  }
  return fmt::format("best: {} ({})", best->policy, units::format_seconds(best->makespan_seconds));
}

}  // namespace

report::Document experiment_report(const Experiment& e) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"policy", "makespan", "bound", "efficiency", "tasks", "moved"};
  for (std::size_t i = 0; i < e.devices.size(); ++i) {
    head.push_back(fmt::format("dev{} busy", i));
  }
  rows.push_back(head);
  for (const auto& r : e.runs) {
    std::vector<std::string> row = {
        r.policy,
        units::format_seconds(r.makespan_seconds),
        fmt::format("{} ({})", units::format_seconds(r.bounds.best()),
                    critical_path_bound(r.bounds) ? "cp" : "area"),
        units::format_percent(r.efficiency),
        r.failed > 0 ? fmt::format("{} ({} failed)", r.tasks, r.failed) : std::to_string(r.tasks),
        units::format_bytes(r.bytes_transferred)};
    for (const auto& dev : r.devices) {
      row.push_back(units::format_percent(dev.busy_ratio));
    }
    rows.push_back(std::move(row));
  }
  report::Document doc;
  doc.add(report::Preformatted{experiment_header(e)});
  doc.add(report::plain_table(rows));
  doc.add(report::Preformatted{best_line(e.runs)});
  for (const auto& r : e.runs) {
    for (const std::string& line : fault_lines(r)) {
      doc.add(report::Note{line});
    }
  }
  return doc;
}

std::vector<std::string> fault_lines(const WorkloadOutcome& r) {
  std::vector<std::string> lines;
  for (const DeviceRecord& d : r.record.devices) {
    if (!d.failed) {
      continue;
    }
    const std::size_t moved = d.moved_away;
    lines.push_back(fmt::format(
        "{}: dev{} failed{}: {}; {} task{} moved to other devices", r.policy, d.device,
        d.failed_at.count() >= 0
            ? fmt::format(" at +{}",
                          units::format_seconds(std::chrono::duration<double>(d.failed_at).count()))
            : std::string(),
        d.failure, moved, moved == 1 ? "" : "s"));
  }
  const auto failed_copies =
      std::count_if(r.record.transfers.begin(), r.record.transfers.end(),
                    [](const TransferRecord& t) { return !t.error.empty(); });
  if (failed_copies > 0) {
    lines.push_back(
        fmt::format("{}: {} cop{} failed (a prefetch is fetched again, a demand copy "
                    "retires its device); the trace marks them",
                    r.policy, failed_copies, failed_copies == 1 ? "y" : "ies"));
  }
  return lines;
}

std::string failure_summary(const WorkloadOutcome& r) {
  for (const auto& t : r.record.tasks) {
    if (t.status == TaskStatus::kFailed) {
      return fmt::format("{}: {} of {} tasks failed; first: {}: {}", r.policy, r.failed, r.tasks,
                         t.name, t.error);
    }
  }
  return fmt::format("{}: {} of {} tasks failed", r.policy, r.failed, r.tasks);
}

}  // namespace acco::sched
