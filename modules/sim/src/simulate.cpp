#include "acco/sim/simulate.hpp"

#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "acco/power/governor.hpp"
#include "acco/power/simulated_device.hpp"

#include "wire.hpp"

namespace acco::sim {
namespace {

// The engine program: ACCO_SIM_ENGINE, else beside the running program or in its
// ../libexec/acco (an installed acco), else where this build made it.
std::string engine_path() {
  if (const char* env = std::getenv("ACCO_SIM_ENGINE"); env != nullptr && *env != '\0') {
    return env;
  }
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const auto& candidate : {self.parent_path() / "acco-sim-engine",
                                  self.parent_path() / "../libexec/acco/acco-sim-engine"}) {
      if (std::filesystem::exists(candidate, ec)) {
        return candidate.string();
      }
    }
  }
  return ACCO_SIM_ENGINE_BUILD_PATH;
}

bool write_all(int fd, const std::string& text) {
  std::size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    off += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

Result<SimResult> simulate(const Platform& platform, const sched::Workload& workload,
                           const SimOptions& options) {
  ACCO_RETURN_IF_ERROR(check_platform(platform));
  if (!options.governor.empty()) {
    ACCO_RETURN_IF_ERROR(check_governor(options.governor));
    if (options.cooling.empty()) {
      return fail(Errc::kInvalidArgument,
                  "a governor needs the thermal model: give every device a cooling factor");
    }
  }
  const std::string engine = engine_path();
  if (::access(engine.c_str(), X_OK) != 0) {
    return fail(Errc::kUnavailable,
                fmt::format("the simulation engine {} cannot be run: {} (set ACCO_SIM_ENGINE)",
                            engine, std::strerror(errno)));
  }
  std::string request = request_json(platform, workload, options)
                            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::array<int, 2> in{};
  std::array<int, 2> out{};
  if (::pipe2(in.data(), O_CLOEXEC) != 0 || ::pipe2(out.data(), O_CLOEXEC) != 0) {
    return fail(Errc::kUnavailable, fmt::format("pipe: {}", std::strerror(errno)));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (const int fd : {in[0], in[1], out[0], out[1]}) {
      ::close(fd);
    }
    return fail(Errc::kUnavailable, fmt::format("fork: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    // The engine reads the request on stdin and answers on stdout; only async-signal-safe
    // calls here.
    ::dup2(in[0], STDIN_FILENO);
    ::dup2(out[1], STDOUT_FILENO);
    std::array<char*, 2> argv = {const_cast<char*>(engine.c_str()),  // NOLINT
                                 nullptr};
    ::execv(engine.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  const bool sent = write_all(in[1], request);
  ::close(in[1]);
  std::string().swap(request);  // a million tasks' request is a few hundred MiB
  std::string text;
  std::array<char, 65536> buffer{};
  for (;;) {
    const ssize_t n = ::read(out[0], buffer.data(), buffer.size());
    if (n > 0) {
      text.append(buffer.data(), static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!sent || text.empty()) {
    return fail(Errc::kInternal,
                WIFSIGNALED(status)
                    ? fmt::format("the simulation engine {} was killed by signal {}", engine,
                                  WTERMSIG(status))
                    : fmt::format("the simulation engine {} exited with status {} and no answer",
                                  engine, WEXITSTATUS(status)));
  }
  const auto answer = nlohmann::json::parse(text, nullptr, false);
  if (answer.is_discarded() || !answer.is_object()) {
    return fail(Errc::kInternal, "the simulation engine's answer is not JSON");
  }
  if (answer.contains("error")) {
    return fail(static_cast<Errc>(answer.value("code", static_cast<int>(Errc::kInternal))),
                answer["error"].get<std::string>());
  }
  ACCO_ASSIGN_OR_RETURN(auto result, result_from_json(answer["result"]));
  result.fabric = fabric_bound(platform, workload, options.pinned, options.home);
  if (options.record && answer.contains("records")) {
    ACCO_RETURN_IF_ERROR(read_records(answer["records"], workload, result));
  }
  return result;
}

Status check_governor(const std::string& mode) {
  power::GovernorOptions options;
  ACCO_RETURN_IF_ERROR(power::parse_governor_mode(mode, options));
  const power::SimulatedModel model;
  if (options.mode == power::GovernorMode::kCap &&
      !(options.cap_watts >= model.power_limit_min_watts &&
        options.cap_watts <= model.power_limit_max_watts)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("governor mode '{}': expected a cap from {:g} to {:g} W (the "
                            "simulated device's range)",
                            mode, model.power_limit_min_watts, model.power_limit_max_watts));
  }
  return {};
}

Result<std::vector<SimResult>> simulate_policies(const Platform& platform,
                                                 const sched::Workload& workload,
                                                 const std::vector<sched::PolicyKind>& policies,
                                                 const SimOptions& base, bool record_first) {
  std::vector<SimResult> runs;
  runs.reserve(policies.size());
  for (const auto kind : policies) {
    SimOptions options = base;
    options.policy = kind;
    options.record = record_first && runs.empty();
    ACCO_ASSIGN_OR_RETURN(auto run, simulate(platform, workload, options));
    runs.push_back(std::move(run));
  }
  return runs;
}

sched::RunRecord run_record(const SimResult& r) {
  sched::RunRecord run;
  run.policy = r.policy;
  run.elapsed = std::chrono::nanoseconds(std::llround(r.makespan * 1e9));
  for (std::size_t d = 0; d < r.devices.size(); ++d) {
    sched::DeviceRecord device;
    device.device = static_cast<int>(d);
    device.name = r.devices[d].name;
    device.kind = "sim";
    device.busy = std::chrono::nanoseconds(std::llround(r.devices[d].busy_seconds * 1e9));
    device.tasks = r.devices[d].tasks;
    run.devices.push_back(std::move(device));
  }
  run.tasks = r.task_records;
  run.transfers = r.transfer_records;
  run.tasks_held = run.tasks.size();
  std::map<std::pair<int, int>, sched::LinkRecord> links;
  for (const auto& t : r.transfer_records) {
    auto& link = links[{t.from, t.to}];
    link.from = t.from;
    link.to = t.to;
    link.bytes += t.bytes;
    ++link.transfers;
  }
  for (auto& [key, link] : links) {
    run.links.push_back(link);
  }
  return run;
}

nlohmann::json to_json(const SimResult& r) {
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const auto& d : r.devices) {
    nlohmann::ordered_json device = {
        {"name", d.name}, {"busy_seconds", d.busy_seconds}, {"tasks", d.tasks}};
    if (r.energy_joules > 0) {
      device["energy_joules"] = d.energy_joules;
      device["peak_celsius"] = d.peak_celsius;
      device["clock_share"] = d.clock_share;
    }
    devices.push_back(std::move(device));
  }
  nlohmann::ordered_json links = nlohmann::ordered_json::array();
  for (const auto& l : r.links) {
    links.push_back({{"kind", l.kind},
                     {"bytes", l.bytes},
                     {"busiest", l.busiest},
                     {"busiest_share", l.busiest_share}});
  }
  nlohmann::ordered_json out = {{"policy", r.policy},
                                {"makespan_seconds", r.makespan},
                                {"critical_path_seconds", r.critical_path},
                                {"area_seconds", r.area},
                                {"fabric_bound_seconds", r.fabric},
                                {"bound_seconds", r.bound()},
                                {"efficiency", r.efficiency()},
                                {"tasks", r.tasks},
                                {"copies", r.copies},
                                {"bytes_moved", r.bytes_moved},
                                {"bottleneck", r.bottleneck},
                                {"devices", devices},
                                {"links", links}};
  if (r.energy_joules > 0) {
    out["energy_joules"] = r.energy_joules;
  }
  if (!r.governor.empty()) {
    nlohmann::ordered_json actions = nlohmann::ordered_json::array();
    for (const auto& a : r.governor_actions) {
      actions.push_back({{"time_seconds", a.time_seconds},
                         {"device", a.device},
                         {"action", a.action},
                         {"value", a.value},
                         {"state", a.state},
                         {"reason", a.reason}});
    }
    out["governor"] = r.governor;
    out["governor_actions"] = std::move(actions);
  }
  // Braces would make a one-element array of it.
  return nlohmann::json(out);  // NOLINT(modernize-return-braced-init-list)
}

Result<SimResult> result_from_json(const nlohmann::json& j) {
  try {
    SimResult r;
    r.policy = j.at("policy").get<std::string>();
    r.makespan = j.at("makespan_seconds").get<double>();
    r.critical_path = j.at("critical_path_seconds").get<double>();
    r.area = j.at("area_seconds").get<double>();
    r.fabric = j.value("fabric_bound_seconds", 0.0);
    r.tasks = j.at("tasks").get<std::size_t>();
    r.copies = j.at("copies").get<std::size_t>();
    r.bytes_moved = j.at("bytes_moved").get<double>();
    r.bottleneck = j.at("bottleneck").get<std::string>();
    r.energy_joules = j.value("energy_joules", 0.0);
    for (const auto& d : j.at("devices")) {
      r.devices.push_back({d.at("name").get<std::string>(), d.at("busy_seconds").get<double>(),
                           d.at("tasks").get<std::size_t>(), d.value("energy_joules", 0.0),
                           d.value("peak_celsius", 0.0), d.value("clock_share", 0.0)});
    }
    for (const auto& l : j.at("links")) {
      r.links.push_back({l.at("kind").get<std::string>(), l.at("bytes").get<double>(),
                         l.at("busiest").get<std::string>(), l.at("busiest_share").get<double>()});
    }
    r.governor = j.value("governor", std::string());
    if (const auto it = j.find("governor_actions"); it != j.end()) {
      for (const auto& a : *it) {
        r.governor_actions.push_back(
            {a.at("time_seconds").get<double>(), a.at("device").get<std::string>(),
             a.at("action").get<std::string>(), a.at("value").get<double>(),
             a.at("state").get<std::string>(), a.at("reason").get<std::string>()});
      }
    }
    return r;
  } catch (const nlohmann::json::exception& e) {
    return fail(Errc::kInvalidArgument, fmt::format("a simulation result: {}", e.what()));
  }
}

}  // namespace acco::sim
