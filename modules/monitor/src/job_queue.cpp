#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <random>

#include <fcntl.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acco/core/clock.hpp"
#include "acco/core/file.hpp"
#include "acco/core/units.hpp"
#include "acco/exec/binding.hpp"
#include "acco/exec/cgroup.hpp"
#include "acco/exec/spawn.hpp"
#include "acco/monitor/jobs.hpp"

namespace acco::monitor {
namespace {

namespace stdfs = std::filesystem;

constexpr int kJobsApplicationId = 0x6163636f;  // "acco", as the series store
constexpr int kJobsSchemaVersion = 1;

// /proc/PID/stat's 22nd field, the process's start time in clock ticks since boot; 0 when the
// process is gone. The command name (field 2) may hold spaces and parentheses: fields are
// counted after its last ')'.
std::uint64_t start_ticks(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos) {
    return 0;
  }
  const auto fields = units::split(units::trim(std::string_view(text).substr(close + 1)), ' ');
  // fields[0] is field 3 (state); field 22 is fields[19]. A zombie has ended (its parent,
  // which reaps it, is not this daemon when the job was adopted).
  if (fields.size() < 20 || fields[0] == "Z" || fields[0] == "X") {
    return 0;
  }
  const auto ticks = units::parse_int(fields[19]);
  return ticks && *ticks > 0 ? static_cast<std::uint64_t>(*ticks) : 0;
}

std::string random_token() {
  std::random_device random;
  std::string token;
  for (int i = 0; i < 4; ++i) {
    token += fmt::format("{:08x}", random());
  }
  return token;
}

// A Prometheus label value: backslash, double quote and newline escaped.
std::string label_value(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string basename_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

struct JobQueue::Impl {
  JobQueueOptions options;
  std::string token;
  sqlite3* db = nullptr;
  mutable std::mutex mutex;
  std::map<std::int64_t, Job> jobs;
  std::set<std::int64_t> children;  // started by this process (waitpid works); others adopted
  std::map<std::int64_t, std::chrono::steady_clock::time_point> cancelling;
  std::map<std::int64_t, std::string> cgroups;  // the job cgroups this process made

  int lock_fd = -1;  // flock'd for the queue's lifetime: one daemon per directory

  ~Impl() {
    if (db != nullptr) {
      sqlite3_close(db);
    }
    if (lock_fd >= 0) {
      ::close(lock_fd);
    }
  }

  Status exec_sql(const char* sql) const {
    char* error = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
      std::string message = error != nullptr ? error : sqlite3_errmsg(db);
      sqlite3_free(error);
      return fail(Errc::kCannotWrite, fmt::format("the job table: {}", message));
    }
    return {};
  }

  // Writes `job` (insert when its id is 0, which then becomes the row's).
  Status save(Job& job) const {
    const char* sql = job.id == 0 ? "INSERT INTO jobs(doc) VALUES (?1)"
                                  : "UPDATE jobs SET doc = ?1 WHERE id = ?2";
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK) {
      return fail(Errc::kCannotWrite, fmt::format("the job table: {}", sqlite3_errmsg(db)));
    }
    const std::string doc = to_json(job, true).dump();
    sqlite3_bind_text(stmt, 1, doc.c_str(), static_cast<int>(doc.size()), SQLITE_TRANSIENT);
    if (job.id != 0) {
      sqlite3_bind_int64(stmt, 2, job.id);
    }
    const int rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) {
      return fail(Errc::kCannotWrite, fmt::format("the job table: {}", sqlite3_errmsg(db)));
    }
    if (job.id == 0) {
      job.id = sqlite3_last_insert_rowid(db);
    }
    return {};
  }

  void save_logged(Job& job) const {
    (void)save(job);  // the in-memory table stays right; the next change retries the row
  }

  void end(Job& job, std::string state, std::string reason) {
    job.state = std::move(state);
    job.reason = std::move(reason);
    job.ended_unix_nanos = core::now_unix_nanos();
    children.erase(job.id);
    cancelling.erase(job.id);
    if (const auto cg = cgroups.find(job.id); cg != cgroups.end()) {
      exec::remove_cgroup(cg->second);  // emptied now that its process ended
      cgroups.erase(cg);
    }
    save_logged(job);
  }

  // The job's cgroup v2 limits: its CPUs and memory node, and the memory and I/O limits it asked
  // for; the binding lines say what was set or why not. Empty: none made.
  std::string limit(Job& job, const exec::Binding& binding) {
    exec::CgroupLimits limits;
    limits.cpus = binding.cpus;
    limits.memory_node = binding.memory_node;
    if (job.request.memory_max_bytes > 0) {
      limits.memory_max = job.request.memory_max_bytes;
    }
    if (job.request.io_weight > 0) {
      limits.io_weight = job.request.io_weight;
    }
    if (!limits.any()) {
      return {};
    }
    std::string self;
    if (std::ifstream in(options.proc_self_cgroup); in) {
      self.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const auto cg =
        exec::make_cgroup(options.cgroup_root, self, fmt::format("acco-job-{}", job.id), limits);
    if (!cg.path.empty()) {
      cgroups[job.id] = cg.path;
      job.binding.push_back(fmt::format("cgroup {}: {}", cg.path, fmt::join(cg.applied, ", ")));
    }
    for (const auto& why : cg.skipped) {
      job.binding.push_back("not limited: " + why);
    }
    return cg.path;
  }

  void reap() {
    for (auto& [id, job] : jobs) {
      if (job.state != "running") {
        continue;
      }
      const bool cancelled = cancelling.count(id) != 0;
      if (children.count(id) != 0) {
        int status = 0;
        const pid_t got = ::waitpid(job.pid, &status, WNOHANG);
        if (got != job.pid) {
          continue;
        }
        if (WIFEXITED(status)) {
          job.exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
          job.exit_code = 128 + WTERMSIG(status);
        }
        if (cancelled) {
          end(job, "cancelled", "cancelled while running");
        } else if (job.exit_code == 0) {
          end(job, "exited", "");
        } else {
          end(job, "failed",
              WIFSIGNALED(status)
                  ? fmt::format("killed by signal {}", WTERMSIG(status))
                  : fmt::format("exited with status {}", job.exit_code.value_or(-1)));
        }
      } else if (start_ticks(job.pid) != job.start_ticks) {
        end(job, cancelled ? "cancelled" : "lost",
            "ended after the daemon restarted (not its child): its exit status is unknown");
      }
    }
  }

  void escalate_cancels() {
    const auto now = std::chrono::steady_clock::now();
    for (const auto& [id, since] : cancelling) {
      const auto job = jobs.find(id);
      if (job != jobs.end() && job->second.state == "running" && now - since > options.kill_after) {
        ::kill(-job->second.pid, SIGKILL);
      }
    }
  }

  // The binding of `devices`: `acco exec`'s for a device the probed machine holds, else (a
  // simulated device) CUDA_VISIBLE_DEVICES alone.
  exec::Binding binding_for(const Job& job, const std::vector<DeviceLoad>& loads) const {
    const auto accelerators = exec::accelerators(options.machine);
    std::vector<std::string> visible;
    std::vector<int> cpus;
    std::set<int> nodes;
    exec::Binding first;
    bool any = false;
    bool all_real = true;
    for (const auto& id : job.devices) {
      // A whole device by its sample id, or a MIG instance by its UUID.
      const auto load = std::find_if(loads.begin(), loads.end(), [&](const DeviceLoad& l) {
        return l.device == id || std::any_of(l.mig.begin(), l.mig.end(),
                                             [&](const MigSlot& s) { return s.uuid == id; });
      });
      auto acc = load == loads.end() ? accelerators.end()
                                     : std::find_if(accelerators.begin(), accelerators.end(),
                                                    [&](const exec::Accelerator& a) {
                                                      return !load->pci_bus_id.empty() &&
                                                             a.address == load->pci_bus_id;
                                                    });
      if (acc == accelerators.end()) {
        all_real = false;
        visible.push_back(id);
        continue;
      }
      exec::Accelerator device = *acc;
      if (load->device != id) {
        device.mig = id;  // the process sees that instance alone
      }
      auto b = exec::plan_binding(options.machine, device, exec::current_cpus(), job.request.env,
                                  exec::Options{});
      visible.push_back(!device.mig.empty()   ? device.mig
                        : device.uuid.empty() ? std::to_string(device.index)
                                              : device.uuid);
      cpus.insert(cpus.end(), b.cpus.begin(), b.cpus.end());
      nodes.insert(b.memory_node);
      if (!any) {
        first = b;
        any = true;
      }
    }
    exec::Binding out = any ? first : exec::Binding{};
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    out.cpus = all_real ? cpus : std::vector<int>{};
    out.memory_node = all_real && nodes.size() == 1 ? *nodes.begin() : -1;
    std::vector<exec::EnvVar> env;
    for (const auto& var : out.env) {
      if (var.name != "CUDA_VISIBLE_DEVICES" && var.name != "OMP_NUM_THREADS") {
        env.push_back(var);
      }
    }
    env.insert(env.begin(), {"CUDA_VISIBLE_DEVICES", fmt::format("{}", fmt::join(visible, ",")),
                             "the job's devices"});
    if (!any) {
      env.push_back({"CUDA_DEVICE_ORDER", "PCI_BUS_ID", "indices in PCI order"});
      out.notes.push_back(
          "simulated device(s): CUDA_VISIBLE_DEVICES only, CPUs and memory as "
          "inherited");
    } else if (!all_real) {
      out.notes.push_back("some devices are simulated: CPUs and memory as inherited");
    } else if (!out.cpus.empty()) {
      env.push_back({"OMP_NUM_THREADS", std::to_string(out.cpus.size()), "one per CPU bound"});
    }
    env.push_back({"ACCO_JOB_ID", std::to_string(job.id), "the job's id"});
    out.env = env;
    return out;
  }

  void start(Job& job, const Placement& placement, const std::vector<DeviceLoad>& loads) {
    job.devices = placement.devices;
    job.placement = placement.why;
    const auto binding = binding_for(job, loads);
    job.binding.clear();
    for (const auto& var : binding.env) {
      job.binding.push_back(var.name + "=" + var.value);
    }
    if (!binding.cpus.empty()) {
      job.binding.push_back("cpus " + units::format_cpulist(binding.cpus));
    }
    if (binding.memory_node >= 0) {
      job.binding.push_back(fmt::format("memory node {}", binding.memory_node));
    }
    job.binding.insert(job.binding.end(), binding.notes.begin(), binding.notes.end());
    exec::SpawnRequest request;
    request.argv = job.request.argv;
    request.env = job.request.env;
    request.cwd = job.request.cwd;
    request.log_path = job.log_path;
    request.cgroup = limit(job, binding);
    auto pid = exec::spawn(exec::bound(std::move(request), binding));
    job.started_unix_nanos = core::now_unix_nanos();
    if (!pid) {
      end(job, "failed", "could not start: " + pid.error().message);
      return;
    }
    job.pid = *pid;
    job.start_ticks = start_ticks(*pid);
    job.state = "running";
    job.reason = "";
    children.insert(job.id);
    save_logged(job);
  }

  void place_queued(const analyze::Snapshot& round) {
    auto loads = device_loads(round);
    add_mig_slots(loads, options.machine);
    const auto whole = static_cast<std::size_t>(std::count_if(
        loads.begin(), loads.end(), [](const DeviceLoad& l) { return l.mig.empty(); }));
    std::set<std::string> busy;
    for (const auto& [id, job] : jobs) {
      if (job.state == "running") {
        busy.insert(job.devices.begin(), job.devices.end());
      }
    }
    // In submission order; one that does not fit holds those after it (no backfill: without
    // run-time limits it would starve wide jobs).
    std::int64_t blocked_by = 0;
    for (auto& [id, job] : jobs) {
      if (job.state != "queued") {
        continue;
      }
      if (blocked_by != 0) {
        const auto why =
            fmt::format("waits behind job {} (jobs start in submission order)", blocked_by);
        if (job.reason != why) {
          job.reason = why;
          save_logged(job);
        }
        continue;
      }
      std::string why;
      const auto placement = place(job.request, loads, busy, why);
      if (!placement) {
        if (!job.request.mig.empty() ? !mig_profile_exists(loads, job.request.mig)
                                     : static_cast<std::size_t>(job.request.gpus) > whole) {
          end(job, "failed",
              !job.request.mig.empty()
                  ? why
                  : fmt::format("asks for {} device(s); this daemon has {}{}", job.request.gpus,
                                whole, whole < loads.size() ? " not in MIG mode" : ""));
          continue;
        }
        if (job.reason != why) {
          job.reason = why;
          save_logged(job);
        }
        blocked_by = id;
        continue;
      }
      start(job, *placement, loads);
      if (job.state == "running") {
        busy.insert(job.devices.begin(), job.devices.end());
      }
    }
  }
};

JobQueue::JobQueue(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JobQueue::~JobQueue() = default;

Result<std::unique_ptr<JobQueue>> JobQueue::open(JobQueueOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  const std::string& dir = impl->options.dir;
  const auto cannot = [&](const std::string& what, const std::string& why) {
    return fail(Errc::kCannotWrite, fmt::format("the jobs directory {}: {}: {}", dir, what, why));
  };
  std::error_code ec;
  stdfs::create_directories(stdfs::path(dir) / "logs", ec);
  if (ec) {
    return cannot("cannot create it", ec.message());
  }
  stdfs::permissions(dir, stdfs::perms::owner_all, ec);  // 0700: the token and logs are private
  // A second daemon on the same directory would replace the first one's token.
  const std::string lock = (stdfs::path(dir) / "lock").string();
  impl->lock_fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (impl->lock_fd < 0) {
    return cannot("lock", std::strerror(errno));
  }
  if (::flock(impl->lock_fd, LOCK_EX | LOCK_NB) != 0) {
    return fail(Errc::kUnavailable,
                fmt::format("the jobs directory {} is in use by another acco serve --jobs (stop "
                            "it, or give this one another --jobs-dir)",
                            dir));
  }
  const std::string table = (stdfs::path(dir) / "jobs.sqlite").string();
  ACCO_RETURN_IF_ERROR(core::check_file_or_absent(table));
  if (sqlite3_open_v2(table.c_str(), &impl->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                      nullptr) != SQLITE_OK) {
    return cannot("jobs.sqlite", impl->db == nullptr ? "out of memory" : sqlite3_errmsg(impl->db));
  }
  sqlite3_busy_timeout(impl->db, 2000);
  // application_id says the file is acco's; user_version its schema.
  sqlite3_stmt* stmt = nullptr;
  int app = 0;
  int version = 0;
  int tables = 0;
  for (auto [sql, out] :
       {std::pair{"PRAGMA application_id", &app}, std::pair{"PRAGMA user_version", &version},
        std::pair{"SELECT count(*) FROM sqlite_master", &tables}}) {
    if (sqlite3_prepare_v2(impl->db, sql, -1, &stmt, nullptr) != SQLITE_OK ||
        sqlite3_step(stmt) != SQLITE_ROW) {
      const std::string why = sqlite3_errmsg(impl->db);
      sqlite3_finalize(stmt);
      return fail(Errc::kInvalidArgument,
                  fmt::format("{} is not an acco job table: {}", table, why));
    }
    *out = sqlite3_column_int(stmt, 0);
    sqlite3_finalize(stmt);
  }
  if (tables == 0) {
    ACCO_RETURN_IF_ERROR(impl->exec_sql(
        "PRAGMA application_id = 1633903471; PRAGMA user_version = 1; "
        "CREATE TABLE jobs (id INTEGER PRIMARY KEY AUTOINCREMENT, doc TEXT NOT NULL);"));
  } else if (app != kJobsApplicationId || version != kJobsSchemaVersion) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{} is not an acco job table (application_id {}, schema {})", table,
                            app, version));
  }
  if (sqlite3_prepare_v2(impl->db, "SELECT id, doc FROM jobs ORDER BY id", -1, &stmt, nullptr) !=
      SQLITE_OK) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{} is not an acco job table: {}", table, sqlite3_errmsg(impl->db)));
  }
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1));
    auto job = parse_job(nlohmann::json::parse(text != nullptr ? text : "", nullptr, false));
    if (!job) {
      const auto id = sqlite3_column_int64(stmt, 0);
      sqlite3_finalize(stmt);
      return fail(Errc::kInvalidArgument,
                  fmt::format("{}: job {}: {}", table, id, job.error().message));
    }
    impl->jobs[job->id] = *job;
  }
  sqlite3_finalize(stmt);
  // Recovery: a running job's process lives on after its daemon (its own session); one whose
  // PID now names another process (or none) is lost.
  for (auto& [id, job] : impl->jobs) {
    if (job.state == "running" && (job.pid <= 0 || start_ticks(job.pid) != job.start_ticks)) {
      impl->end(job, "lost",
                fmt::format("was running as PID {} when the daemon stopped and is gone: its exit "
                            "status is unknown",
                            job.pid));
    }
  }
  impl->token = random_token();
  const std::string token_path = (stdfs::path(dir) / "token").string();
  ACCO_RETURN_IF_ERROR(core::write_file_atomic(token_path, impl->token + "\n"));
  stdfs::permissions(token_path, stdfs::perms::owner_read | stdfs::perms::owner_write, ec);
  return std::unique_ptr<JobQueue>(new JobQueue(std::move(impl)));
}

Result<Job> JobQueue::submit(JobRequest request) {
  Impl& q = *impl_;
  if (request.argv.empty() || request.argv.front().empty()) {
    return fail(Errc::kInvalidArgument, "a job needs a command");
  }
  if (request.name.empty()) {
    request.name = basename_of(request.argv.front());
  }
  std::lock_guard lock(q.mutex);
  Job job;
  job.request = std::move(request);
  job.submitted_unix_nanos = core::now_unix_nanos();
  job.reason = "waits for the next sampling round";
  ACCO_RETURN_IF_ERROR(q.save(job));
  job.log_path = (stdfs::path(q.options.dir) / "logs" / fmt::format("{}.log", job.id)).string();
  q.save_logged(job);
  q.jobs[job.id] = job;
  return job;
}

std::vector<Job> JobQueue::jobs() const {
  std::lock_guard lock(impl_->mutex);
  std::vector<Job> out;
  for (const auto& [id, job] : impl_->jobs) {
    out.push_back(job);
  }
  return out;
}

Result<Job> JobQueue::cancel(std::int64_t id) {
  Impl& q = *impl_;
  std::lock_guard lock(q.mutex);
  const auto it = q.jobs.find(id);
  if (it == q.jobs.end()) {
    return fail(Errc::kNotFound, fmt::format("no job {}", id));
  }
  Job& job = it->second;
  if (job.state == "queued") {
    q.end(job, "cancelled", "cancelled before it started");
  } else if (job.state == "running" && q.cancelling.count(id) == 0) {
    ::kill(-job.pid, SIGTERM);  // its whole session
    q.cancelling[id] = std::chrono::steady_clock::now();
    job.reason = fmt::format(
        "cancelling: SIGTERM sent, SIGKILL after {}",
        units::format_seconds(std::chrono::duration<double>(q.options.kill_after).count()));
    q.save_logged(job);
  }
  return job;
}

Result<std::string> JobQueue::logs(std::int64_t id, std::size_t max_bytes) const {
  std::string path;
  {
    std::lock_guard lock(impl_->mutex);
    const auto it = impl_->jobs.find(id);
    if (it == impl_->jobs.end()) {
      return fail(Errc::kNotFound, fmt::format("no job {}", id));
    }
    path = it->second.log_path;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::string();  // not started yet
  }
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::size_t>(std::max<std::streamoff>(0, in.tellg()));
  const auto from = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(from));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void JobQueue::tick(const analyze::Snapshot& round) {
  std::lock_guard lock(impl_->mutex);
  impl_->reap();
  impl_->escalate_cancels();
  impl_->place_queued(round);
}

const std::string& JobQueue::token() const {
  return impl_->token;
}

std::string JobQueue::metrics() const {
  std::lock_guard lock(impl_->mutex);
  std::map<std::string, int> states = {{"queued", 0}, {"running", 0},   {"exited", 0},
                                       {"failed", 0}, {"cancelled", 0}, {"lost", 0}};
  std::string devices;
  for (const auto& [id, job] : impl_->jobs) {
    ++states[job.state];
    if (job.state == "running") {
      for (const auto& d : job.devices) {
        devices += fmt::format("acco_job_device_info{{job=\"{}\",name=\"{}\",device=\"{}\"}} 1\n",
                               id, label_value(job.request.name), d);
      }
    }
  }
  std::string out =
      "# HELP acco_jobs Jobs in the daemon's queue, by state\n# TYPE acco_jobs gauge\n";
  for (const auto& [state, count] : states) {
    out += fmt::format("acco_jobs{{state=\"{}\"}} {}\n", state, count);
  }
  out +=
      "# HELP acco_job_device_info 1 for each device a running job holds\n"
      "# TYPE acco_job_device_info gauge\n" +
      devices;
  return out;
}

Result<std::string> default_jobs_dir() {
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && *xdg != '\0') {
    return (stdfs::path(xdg) / "acco" / "jobs").string();
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return (stdfs::path(home) / ".local" / "state" / "acco" / "jobs").string();
  }
  return fail(Errc::kUnavailable,
              "cannot place the jobs directory: neither XDG_STATE_HOME nor HOME is set (give "
              "--jobs-dir)");
}

Status write_daemon_file(const std::string& dir, const std::string& url) {
  const std::string path = (stdfs::path(dir) / "daemon.json").string();
  nlohmann::ordered_json j = {{"url", url}, {"pid", ::getpid()}};
  ACCO_RETURN_IF_ERROR(core::write_file_atomic(path, j.dump() + "\n"));
  std::error_code ec;
  stdfs::permissions(path, stdfs::perms::owner_read | stdfs::perms::owner_write, ec);
  return {};
}

void remove_daemon_file(const std::string& dir) {
  std::error_code ec;
  stdfs::remove(stdfs::path(dir) / "daemon.json", ec);
}

}  // namespace acco::monitor
