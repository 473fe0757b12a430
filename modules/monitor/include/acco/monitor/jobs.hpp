// The daemon's job queue (`acco submit`, `jobs`, `cancel`, `logs`): whole processes placed on
// the least loaded, coolest accelerators with enough free memory, started with the binding
// `acco exec` applies, queued while nothing fits, and kept in an SQLite table so that a daemon
// restart loses no queued job and re-adopts (or reports) running ones. Local only: requests
// come through the daemon's loopback HTTP with a token only the daemon's user can read, and
// every job runs as that user.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "acco/analyze/snapshot.hpp"
#include "acco/core/result.hpp"
#include "acco/report/document.hpp"
#include "acco/topo/machine.hpp"

namespace acco::monitor {

// What `acco submit` asks for.
struct JobRequest {
  std::vector<std::string> argv;
  std::string name;                        // empty: argv[0]'s basename
  std::string cwd;                         // where it starts
  std::map<std::string, std::string> env;  // the submitter's environment
  int gpus = 1;                            // whole devices, 1 or more
  std::uint64_t memory_bytes = 0;          // free device memory each device must have; 0: any
  // A MIG profile ("1g.10gb"): one instance of it (a CUDA process sees one MIG instance, so a
  // job is never given several); empty: whole devices, never a GPU in MIG mode.
  std::string mig = {};
  // cgroup v2 limits where the daemon's cgroup is delegated (exec::make_cgroup; the job's CPU
  // set and memory node are always asked for): host memory (memory.max; 0: none) and an I/O
  // weight (io.weight, 1-10000; 0: none).
  std::uint64_t memory_max_bytes = 0;
  int io_weight = 0;
  bool operator==(const JobRequest&) const = default;
};

// A job as `acco submit`'s flags ask for it; empty or 0: not given.
struct SubmitRequest {
  std::vector<std::string> command;  // required
  std::string name;
  int gpus = 1;            // 1-1024
  std::string memory;      // free device memory: a size
  std::string mig;         // a MIG profile such as 1g.10gb
  std::string memory_max;  // host memory limit: a size above 0
  int io_weight = 0;       // 1-10000
};

// `request` checked into the job to queue, started where this process is (its working directory)
// with its environment; errors name the flag ("--gpus: '0' is not a whole number from 1 to
// 1024", kInvalidArgument).
[[nodiscard]] Result<JobRequest> job_request(const SubmitRequest& request);

// queued -> running -> exited (status 0) | failed (non-zero, a signal, or could not start) |
// cancelled | lost (the daemon restarted and the process was gone: its status is unknown).
struct Job {
  std::int64_t id = 0;
  JobRequest request;
  std::string state = "queued";
  std::vector<std::string> devices = {};  // the sampled devices' ids ("0", "1")
  int pid = 0;                            // while and after running
  std::uint64_t start_ticks = 0;      // /proc/PID/stat's starttime: a recycled PID is not the job
  std::optional<int> exit_code = {};  // a signal N is 128 + N, as a shell reports it
  std::string reason = {};            // why it waits, failed, was cancelled or lost
  std::string placement = {};         // why these devices
  std::vector<std::string> binding = {};  // the environment and notes it started with
  std::int64_t submitted_unix_nanos = 0;
  std::int64_t started_unix_nanos = 0;
  std::int64_t ended_unix_nanos = 0;
  std::string log_path = {};
  bool operator==(const Job&) const = default;
};

[[nodiscard]] bool finished(const Job& job);

// One MIG instance of a device, as NVML listed it when the daemon probed the machine.
struct MigSlot {
  std::string uuid;     // "MIG-5e4c..."
  std::string profile;  // "3g.40gb"
  std::uint64_t memory_total_bytes = 0;
  bool operator==(const MigSlot&) const = default;
};

// One device as placement sees it (from a Snapshot round and the governor's weights).
struct DeviceLoad {
  std::string device;  // the sample's id
  std::string uuid;
  std::string pci_bus_id;
  bool lost = false;
  double utilization = 0;  // 0-1; 0 when unknown
  double temperature = 0;  // °C; 0 when unknown
  std::optional<std::uint64_t> memory_free_bytes;
  double weight = 1;  // the governor's (temperature headroom); 0 while it drains the device
  std::vector<MigSlot> mig = {};  // non-empty: the GPU is in MIG mode, placed by instance
};
[[nodiscard]] std::vector<DeviceLoad> device_loads(const analyze::Snapshot& round);
// Each GPU of `machine` in MIG mode (NVML: mig_enabled) gives the load with its UUID (else its
// PCI address) its instances.
void add_mig_slots(std::vector<DeviceLoad>& loads, const topo::Machine& machine);

// The devices `request` gets among `devices` not in `busy` (each runs one job at a time): those
// with enough free memory (unknown free memory fits), the governor's weight above 0, ranked by
// weight (highest first), then utilization, then temperature, then id; nullopt when fewer than
// request.gpus fit, with `why` saying what is short. A GPU in MIG mode takes MIG jobs only:
// with request.mig, one instance of that profile (its UUID in `busy` while a job runs there,
// as much instance memory as request.memory_bytes), its GPU ranked as above. Pure.
struct Placement {
  std::vector<std::string> devices;
  std::string why;  // "device 1: 0% busy, 41 °C, 79.1 GiB free" or why it waits
};
[[nodiscard]] std::optional<Placement> place(const JobRequest& request,
                                             const std::vector<DeviceLoad>& devices,
                                             const std::set<std::string>& busy, std::string& why);
// Whether some device has a MIG instance of `profile` (any case): a MIG job for a profile no
// device has fails rather than waits.
[[nodiscard]] bool mig_profile_exists(const std::vector<DeviceLoad>& devices,
                                      const std::string& profile);

// {"id", "name", "state", "argv", "cwd", "gpus", "memory_bytes", "mig", "memory_max_bytes",
//  "io_weight", "devices" (a MIG job:
//  its instance's UUID), "pid", "exit_code",
//  "reason", "placement", "binding", "submitted_unix_nanos", "started_unix_nanos",
//  "ended_unix_nanos" (0: not yet), "log"}; the environment only with `with_env` (the table
// keeps it; the API does not show it).
[[nodiscard]] nlohmann::ordered_json to_json(const Job& job, bool with_env = false);
// to_json's document back; kInvalidArgument naming the field.
[[nodiscard]] Result<Job> parse_job(const nlohmann::json& json);
// {"schema": "acco.jobs/1", "jobs": [...]}.
[[nodiscard]] nlohmann::ordered_json jobs_json(const std::vector<Job>& jobs);
// The table `acco jobs` prints: ID, NAME, STATE, DEVICES, PID, EXIT, AGE-free times, REASON.
[[nodiscard]] report::Document jobs_report(const std::vector<Job>& jobs);
// A submit request's body and back; kInvalidArgument naming the field.
[[nodiscard]] nlohmann::json request_json(const JobRequest& request);
[[nodiscard]] Result<JobRequest> parse_request(const nlohmann::json& body);

struct JobQueueOptions {
  std::string dir;  // the table (jobs.sqlite), the token, daemon.json and logs/ live here
  // How a job's devices become its binding: the machine the daemon probed (a simulated device,
  // which it lacks, gets CUDA_VISIBLE_DEVICES only).
  topo::Machine machine = {};
  // SIGTERM, then SIGKILL this long after a cancel.
  std::chrono::milliseconds kill_after{10'000};
  // Where each job's cgroup goes: the unified hierarchy and the daemon's own place in it.
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string proc_self_cgroup = "/proc/self/cgroup";
};

// Thread-safe: the server's threads submit, list and cancel while the sampler's thread ticks.
class JobQueue {
 public:
  // Creates `dir` (0700), opens or creates the table, writes a fresh token (0600), and
  // recovers: running jobs whose process still lives (same PID and start time) are adopted,
  // others become lost. kInvalidArgument when the table is not acco's; kUnavailable when the
  // directory or files cannot be written.
  [[nodiscard]] static Result<std::unique_ptr<JobQueue>> open(JobQueueOptions options);
  ~JobQueue();
  JobQueue(const JobQueue&) = delete;
  JobQueue& operator=(const JobQueue&) = delete;

  [[nodiscard]] Result<Job> submit(JobRequest request);
  [[nodiscard]] std::vector<Job> jobs() const;
  // kNotFound for an unknown id; a finished job is answered as it is.
  [[nodiscard]] Result<Job> cancel(std::int64_t id);
  // The last `max_bytes` of the job's output. kNotFound for an unknown id.
  [[nodiscard]] Result<std::string> logs(std::int64_t id, std::size_t max_bytes) const;
  // Reaps ended processes, escalates cancels, then starts queued jobs in order on the devices
  // `round` shows free. Called once per sampling round.
  void tick(const analyze::Snapshot& round);
  [[nodiscard]] const std::string& token() const;
  // acco_jobs{state} and acco_job_device_info{job,device} for /metrics.
  [[nodiscard]] std::string metrics() const;

 private:
  struct Impl;
  explicit JobQueue(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Where the jobs directory is when nothing names one: $XDG_STATE_HOME/acco/jobs, else
// ~/.local/state/acco/jobs. kUnavailable when neither variable is set.
[[nodiscard]] Result<std::string> default_jobs_dir();

// The daemon's address, written to DIR/daemon.json ({"url", "pid"}, 0600) once it listens, so
// that the commands find it; removed when it stops.
[[nodiscard]] Status write_daemon_file(const std::string& dir, const std::string& url);
void remove_daemon_file(const std::string& dir);

// The client side: `url` empty means DIR/daemon.json's; the token is always DIR/token's.
// kUnavailable naming what is missing (no daemon file: "start acco serve --jobs"; no token)
// or unreachable; the daemon's own error (its HTTP status mapped back) otherwise.
struct JobClient {
  std::string dir;
  std::string url;
  std::chrono::milliseconds timeout{5000};
  [[nodiscard]] Result<Job> submit(const JobRequest& request) const;
  [[nodiscard]] Result<std::vector<Job>> jobs() const;
  [[nodiscard]] Result<Job> cancel(std::int64_t id) const;
  [[nodiscard]] Result<std::string> logs(std::int64_t id) const;
};

}  // namespace acco::monitor
