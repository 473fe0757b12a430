#include "acco/monitor/jobs.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "acco/core/clock.hpp"
#include "acco/core/units.hpp"

namespace acco::monitor {

bool finished(const Job& job) {
  return job.state != "queued" && job.state != "running";
}

std::vector<DeviceLoad> device_loads(const analyze::Snapshot& round) {
  std::vector<DeviceLoad> out;
  for (const auto& d : round.devices) {
    DeviceLoad load;
    load.device = d.device;
    load.uuid = d.uuid;
    load.pci_bus_id = d.pci_bus_id;
    load.lost = d.lost;
    load.utilization = d.utilization_ratio.value_or(0);
    load.temperature = d.temperature_gpu_celsius.value_or(0);
    load.memory_free_bytes = d.memory_free_bytes;
    if (!load.memory_free_bytes && d.memory_total_bytes && d.memory_used_bytes) {
      load.memory_free_bytes =
          *d.memory_total_bytes - std::min(*d.memory_total_bytes, *d.memory_used_bytes);
    }
    if (round.governor) {
      for (const auto& g : round.governor->devices) {
        if (g.device == d.device) {
          load.weight = g.no_new_work ? 0.0 : g.weight;
        }
      }
    }
    out.push_back(load);
  }
  return out;
}

void add_mig_slots(std::vector<DeviceLoad>& loads, const topo::Machine& machine) {
  for (auto& load : loads) {
    for (const auto& gpu : machine.nvml.gpus) {
      const bool same = !load.uuid.empty() ? gpu.uuid == load.uuid
                                           : !load.pci_bus_id.empty() && gpu.pci == load.pci_bus_id;
      if (!same || gpu.mig_enabled != true) {
        continue;
      }
      load.mig.clear();
      for (const auto& instance : gpu.mig_devices) {
        load.mig.push_back({instance.uuid, instance.profile, instance.memory_total_bytes});
      }
    }
  }
}

namespace {

// Placement's order: the governor's weight (highest first), then utilization, temperature, id.
bool ranks_before(const DeviceLoad& a, const DeviceLoad& b) {
  if (a.weight != b.weight) {
    return a.weight > b.weight;
  }
  if (a.utilization != b.utilization) {
    return a.utilization < b.utilization;
  }
  if (a.temperature != b.temperature) {
    return a.temperature < b.temperature;
  }
  const auto x = units::parse_int(a.device);
  const auto y = units::parse_int(b.device);
  return x && y ? *x < *y : a.device < b.device;
}

std::string lowered(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// Why a request waits: "{n} running a job, ..." after its head.
std::string waiting(std::string head, std::size_t running, std::size_t short_memory,
                    std::uint64_t memory_bytes, std::size_t drained, std::size_t lost,
                    std::size_t in_mig = 0) {
  std::vector<std::string> parts;
  if (running > 0) {
    parts.push_back(fmt::format("{} running a job", running));
  }
  if (in_mig > 0) {
    parts.push_back(fmt::format("{} in MIG mode", in_mig));
  }
  if (short_memory > 0) {
    parts.push_back(
        fmt::format("{} with less than {} free", short_memory, units::format_bytes(memory_bytes)));
  }
  if (drained > 0) {
    parts.push_back(fmt::format("{} drained by the governor", drained));
  }
  if (lost > 0) {
    parts.push_back(fmt::format("{} lost", lost));
  }
  return parts.empty() ? head : fmt::format("{} ({})", head, fmt::join(parts, ", "));
}

std::optional<Placement> place_mig(const JobRequest& request,
                                   const std::vector<DeviceLoad>& devices,
                                   const std::set<std::string>& busy, std::string& why) {
  struct Candidate {
    const DeviceLoad* device;
    const MigSlot* slot;
  };
  std::vector<Candidate> fit;
  std::size_t total = 0;
  std::size_t running = 0;
  std::size_t short_memory = 0;
  std::size_t drained = 0;
  std::size_t lost = 0;
  std::set<std::string> profiles;
  const std::string wanted = lowered(request.mig);
  for (const auto& d : devices) {
    for (const auto& slot : d.mig) {
      profiles.insert(slot.profile);
      if (lowered(slot.profile) != wanted) {
        continue;
      }
      ++total;
      if (d.lost) {
        ++lost;
      } else if (busy.count(slot.uuid) != 0) {
        ++running;
      } else if (d.weight <= 0) {
        ++drained;
      } else if (request.memory_bytes > 0 && slot.memory_total_bytes > 0 &&
                 slot.memory_total_bytes < request.memory_bytes) {
        ++short_memory;
      } else {
        fit.push_back({&d, &slot});
      }
    }
  }
  if (fit.empty()) {
    why =
        total == 0
            ? fmt::format("no MIG instance of profile {} on this daemon's devices ({})",
                          request.mig,
                          profiles.empty() ? std::string("no GPU is in MIG mode")
                                           : fmt::format("profiles: {}", fmt::join(profiles, ", ")))
            : waiting(fmt::format("waits for a {} MIG instance: 0 of {} free", request.mig, total),
                      running, short_memory, request.memory_bytes, drained, lost);
    return std::nullopt;
  }
  std::stable_sort(fit.begin(), fit.end(), [](const Candidate& a, const Candidate& b) {
    return a.device != b.device && ranks_before(*a.device, *b.device);
  });
  const Candidate& c = fit.front();
  Placement p;
  p.devices = {c.slot->uuid};
  p.why = fmt::format(
      "MIG {} {} of device {}: {:.0f}% busy, {:.0f} °C, {}{}; {} of {} instance(s) "
      "were free",
      c.slot->profile, c.slot->uuid, c.device->device, c.device->utilization * 100,
      c.device->temperature,
      c.slot->memory_total_bytes > 0 ? units::format_bytes(c.slot->memory_total_bytes)
                                     : std::string("? B"),
      c.device->weight < 1 ? fmt::format(", weight {:.2f}", c.device->weight) : std::string(),
      fit.size(), total);
  return p;
}

}  // namespace

bool mig_profile_exists(const std::vector<DeviceLoad>& devices, const std::string& profile) {
  const std::string wanted = lowered(profile);
  return std::any_of(devices.begin(), devices.end(), [&](const DeviceLoad& d) {
    return std::any_of(d.mig.begin(), d.mig.end(),
                       [&](const MigSlot& s) { return lowered(s.profile) == wanted; });
  });
}

std::optional<Placement> place(const JobRequest& request, const std::vector<DeviceLoad>& devices,
                               const std::set<std::string>& busy, std::string& why) {
  if (!request.mig.empty()) {
    return place_mig(request, devices, busy, why);
  }
  std::vector<const DeviceLoad*> fit;
  std::size_t running = 0;
  std::size_t short_memory = 0;
  std::size_t drained = 0;
  std::size_t lost = 0;
  std::size_t in_mig = 0;
  for (const auto& d : devices) {
    if (d.lost) {
      ++lost;
    } else if (!d.mig.empty()) {
      ++in_mig;
    } else if (busy.count(d.device) != 0) {
      ++running;
    } else if (d.weight <= 0) {
      ++drained;
    } else if (request.memory_bytes > 0 && d.memory_free_bytes &&
               *d.memory_free_bytes < request.memory_bytes) {
      ++short_memory;
    } else {
      fit.push_back(&d);
    }
  }
  const auto wanted = static_cast<std::size_t>(std::max(1, request.gpus));
  if (fit.size() < wanted) {
    why = waiting(
        fmt::format("waits for {} device(s): {} of {} free", wanted, fit.size(), devices.size()),
        running, short_memory, request.memory_bytes, drained, lost, in_mig);
    return std::nullopt;
  }
  std::stable_sort(fit.begin(), fit.end(),
                   [](const DeviceLoad* a, const DeviceLoad* b) { return ranks_before(*a, *b); });
  Placement p;
  std::vector<std::string> reasons;
  for (std::size_t i = 0; i < wanted; ++i) {
    const DeviceLoad& d = *fit[i];
    p.devices.push_back(d.device);
    reasons.push_back(fmt::format(
        "device {}: {:.0f}% busy, {:.0f} °C, {} free{}", d.device, d.utilization * 100,
        d.temperature,
        d.memory_free_bytes ? units::format_bytes(*d.memory_free_bytes) : std::string("? B"),
        d.weight < 1 ? fmt::format(", weight {:.2f}", d.weight) : std::string()));
  }
  p.why = fmt::format("{}; {} of {} device(s) were free", fmt::join(reasons, "; "), fit.size(),
                      devices.size());
  return p;
}

nlohmann::json request_json(const JobRequest& r) {
  return {{"argv", r.argv},
          {"name", r.name},
          {"cwd", r.cwd},
          {"env", r.env},
          {"gpus", r.gpus},
          {"memory_bytes", r.memory_bytes},
          {"mig", r.mig},
          {"memory_max_bytes", r.memory_max_bytes},
          {"io_weight", r.io_weight}};
}

Result<JobRequest> parse_request(const nlohmann::json& body) {
  if (!body.is_object()) {
    return fail(Errc::kInvalidArgument, "a job: expected a JSON object");
  }
  JobRequest r;
  const auto argv = body.find("argv");
  if (argv == body.end() || !argv->is_array() || argv->empty() ||
      !std::all_of(argv->begin(), argv->end(), [](const auto& a) { return a.is_string(); })) {
    return fail(Errc::kInvalidArgument, "a job's argv: expected a non-empty array of strings");
  }
  r.argv = argv->get<std::vector<std::string>>();
  if (r.argv.front().empty()) {
    return fail(Errc::kInvalidArgument, "a job's argv[0]: expected a command, got ''");
  }
  for (const char* key : {"name", "cwd"}) {
    if (body.contains(key) && !body[key].is_string()) {
      return fail(Errc::kInvalidArgument, fmt::format("a job's {}: expected a string", key));
    }
  }
  r.name = body.value("name", "");
  r.cwd = body.value("cwd", "");
  if (body.contains("env")) {
    const auto& env = body["env"];
    if (!env.is_object() ||
        !std::all_of(env.begin(), env.end(), [](const auto& v) { return v.is_string(); })) {
      return fail(Errc::kInvalidArgument, "a job's env: expected an object of strings");
    }
    r.env = env.get<std::map<std::string, std::string>>();
  }
  if (body.contains("gpus")) {
    if (!body["gpus"].is_number_integer() || body["gpus"].get<std::int64_t>() < 1 ||
        body["gpus"].get<std::int64_t>() > 1024) {
      return fail(Errc::kInvalidArgument, "a job's gpus: expected a whole number from 1 to 1024");
    }
    r.gpus = body["gpus"].get<int>();
  }
  if (body.contains("memory_bytes")) {
    if (!body["memory_bytes"].is_number_unsigned() &&
        !(body["memory_bytes"].is_number_integer() &&
          body["memory_bytes"].get<std::int64_t>() == 0)) {
      return fail(Errc::kInvalidArgument, "a job's memory_bytes: expected a byte count");
    }
    r.memory_bytes = body["memory_bytes"].get<std::uint64_t>();
  }
  if (body.contains("memory_max_bytes")) {
    if (!body["memory_max_bytes"].is_number_unsigned() &&
        !(body["memory_max_bytes"].is_number_integer() &&
          body["memory_max_bytes"].get<std::int64_t>() == 0)) {
      return fail(Errc::kInvalidArgument, "a job's memory_max_bytes: expected a byte count");
    }
    r.memory_max_bytes = body["memory_max_bytes"].get<std::uint64_t>();
  }
  if (body.contains("io_weight")) {
    if (!body["io_weight"].is_number_integer() || body["io_weight"].get<std::int64_t>() < 0 ||
        body["io_weight"].get<std::int64_t>() > 10000) {
      return fail(Errc::kInvalidArgument,
                  "a job's io_weight: expected a whole number from 1 to 10000 (0: none)");
    }
    r.io_weight = body["io_weight"].get<int>();
  }
  if (body.contains("mig")) {
    if (!body["mig"].is_string()) {
      return fail(Errc::kInvalidArgument, "a job's mig: expected a MIG profile such as 1g.10gb");
    }
    r.mig = body["mig"].get<std::string>();
    if (!r.mig.empty() && r.gpus != 1) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("a job's mig: one MIG instance per job (a CUDA process sees one), "
                              "not gpus {}",
                              r.gpus));
    }
  }
  return r;
}

nlohmann::ordered_json to_json(const Job& job, bool with_env) {
  nlohmann::ordered_json j = {
      {"id", job.id},
      {"name", job.request.name},
      {"state", job.state},
      {"argv", job.request.argv},
      {"cwd", job.request.cwd},
      {"gpus", job.request.gpus},
      {"memory_bytes", job.request.memory_bytes},
      {"mig", job.request.mig},
      {"memory_max_bytes", job.request.memory_max_bytes},
      {"io_weight", job.request.io_weight},
      {"devices", job.devices},
      {"pid", job.pid == 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(job.pid)},
      {"start_ticks", job.start_ticks},
      {"exit_code",
       job.exit_code ? nlohmann::ordered_json(*job.exit_code) : nlohmann::ordered_json()},
      {"reason", job.reason},
      {"placement", job.placement},
      {"binding", job.binding},
      {"submitted_unix_nanos", job.submitted_unix_nanos},
      {"started_unix_nanos", job.started_unix_nanos},
      {"ended_unix_nanos", job.ended_unix_nanos},
      {"log", job.log_path}};
  if (with_env) {
    j["env"] = job.request.env;
  }
  return j;
}

Result<Job> parse_job(const nlohmann::json& json) {
  if (!json.is_object()) {
    return fail(Errc::kInvalidArgument, "a job: expected a JSON object");
  }
  try {
    Job job;
    nlohmann::json request = {{"argv", json.at("argv")},
                              {"name", json.at("name")},
                              {"cwd", json.at("cwd")},
                              {"gpus", json.at("gpus")},
                              {"memory_bytes", json.at("memory_bytes")},
                              {"mig", json.value("mig", "")},
                              {"memory_max_bytes", json.value("memory_max_bytes", 0)},
                              {"io_weight", json.value("io_weight", 0)}};
    if (json.contains("env")) {
      request["env"] = json["env"];
    }
    ACCO_ASSIGN_OR_RETURN(job.request, parse_request(request));
    job.id = json.at("id").get<std::int64_t>();
    job.state = json.at("state").get<std::string>();
    job.devices = json.at("devices").get<std::vector<std::string>>();
    job.pid = json.at("pid").is_null() ? 0 : json.at("pid").get<int>();
    job.start_ticks = json.value("start_ticks", std::uint64_t{0});
    if (!json.at("exit_code").is_null()) {
      job.exit_code = json.at("exit_code").get<int>();
    }
    job.reason = json.at("reason").get<std::string>();
    job.placement = json.at("placement").get<std::string>();
    job.binding = json.at("binding").get<std::vector<std::string>>();
    job.submitted_unix_nanos = json.at("submitted_unix_nanos").get<std::int64_t>();
    job.started_unix_nanos = json.at("started_unix_nanos").get<std::int64_t>();
    job.ended_unix_nanos = json.at("ended_unix_nanos").get<std::int64_t>();
    job.log_path = json.at("log").get<std::string>();
    return job;
  } catch (const nlohmann::json::exception& e) {
    return fail(Errc::kInvalidArgument, fmt::format("a job: {}", e.what()));
  }
}

nlohmann::ordered_json jobs_json(const std::vector<Job>& jobs) {
  auto list = nlohmann::ordered_json::array();
  for (const auto& job : jobs) {
    list.push_back(to_json(job));
  }
  return {{"schema", "acco.jobs/1"}, {"jobs", list}};
}

namespace {

std::string elapsed(const Job& job, std::int64_t now) {
  if (job.started_unix_nanos == 0) {
    return "-";
  }
  const auto end = job.ended_unix_nanos != 0 ? job.ended_unix_nanos : now;
  return units::format_seconds(static_cast<double>(end - job.started_unix_nanos) / 1e9);
}

}  // namespace

report::Document jobs_report(const std::vector<Job>& jobs) {
  report::Document doc;
  if (jobs.empty()) {
    doc.add(report::Preformatted{"no jobs"});
    return doc;
  }
  report::Table table;
  table.columns = {{"ID", report::Align::kRight},
                   {"NAME"},
                   {"STATE"},
                   {"DEVICES"},
                   {"PID", report::Align::kRight},
                   {"EXIT", report::Align::kRight},
                   {"TIME", report::Align::kRight},
                   {"REASON"}};
  table.style = report::TableStyle::layout(0, 2);
  const auto now = core::now_unix_nanos();
  for (const auto& job : jobs) {
    table.rows.push_back(
        {std::to_string(job.id), job.request.name, job.state,
         job.devices.empty() ? std::string("-") : fmt::format("{}", fmt::join(job.devices, ",")),
         job.pid == 0 ? std::string("-") : std::to_string(job.pid),
         job.exit_code ? std::to_string(*job.exit_code) : std::string("-"), elapsed(job, now),
         job.reason});
  }
  doc.add(table);
  return doc;
}

}  // namespace acco::monitor
