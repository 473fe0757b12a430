// Task runtime overhead: acco's sched::Runtime against StarPU, side by side in one run on the
// same machine, with empty tasks so only the runtime's own cost is left. Two workloads: N
// independent tasks with no data, and a chain of N tasks all RW on one registered 8-byte datum.
// Per-task time is (first submit .. return of wait_all) / N on the host's steady clock, so
// submission, dependency inference, placement and execution are all inside it. Prints a table
// and two verdicts for the targets, writes JSON ("acco.sched-overhead/1"). Not a test:
// nothing here fails on a speed.
//
// StarPU is the Debian package (1.3) found by pkg-config; without it the bench runs acco alone.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "acco/core/clock.hpp"
#include "acco/core/file.hpp"
#include "acco/core/stats.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/sched/runtime.hpp"

#ifdef ACCO_BENCH_WITH_STARPU
#include <starpu.h>
#endif

namespace {

using acco::Errc;
using acco::Result;
using acco::Status;
using Clock = std::chrono::steady_clock;

constexpr const char* kSchema = "acco.sched-overhead/1";
// The targets: at most half of StarPU's per-task time, and 1 us per task for a dmda
// decision over 8 devices.
constexpr double kTargetRatio = 0.5;
constexpr double kTargetDmda8Nanoseconds = 1000;
// StarPU's side: two CPU workers, as in the reference measurement (scheduler.md, Appendix).
constexpr int kStarpuWorkers = 2;

struct Options {
  std::size_t tasks = 200'000;
  int reps = 3;
  std::string json;
  bool skip_starpu = false;
  std::string workload;              // empty: both
  std::vector<std::string> configs;  // "policy:devices"; empty: the default set
};

enum class Workload {
  kIndependent,
  kRwChain
};

const char* to_string(Workload w) {
  return w == Workload::kIndependent ? "independent" : "rw-chain";
}

struct Stats {
  std::vector<double> ns_per_task;  // one per repetition, in run order
  double median = 0;
  double min = 0;
  double max = 0;
};

Stats summarize(std::vector<double> ns_per_task) {
  Stats s;
  if (auto summary = acco::core::stats::summarize(ns_per_task)) {
    s.median = summary->median;
    s.min = summary->min;
    s.max = summary->max;
  }
  s.ns_per_task = std::move(ns_per_task);
  return s;
}

struct Row {
  Workload workload = Workload::kIndependent;
  std::string runtime;  // "acco", "starpu"
  std::string policy;   // "eager", "dmda", "ws"
  int devices = 0;      // acco: emulated host devices; StarPU: CPU workers
  std::size_t tasks = 0;
  Stats stats;
  double ratio = 0;  // acco median / StarPU's same-policy median; 0 when there is none
};

// A warm-up batch of tasks/10 (so acco's performance models are calibrated and both runtimes
// have grown their structures), then `reps` timed batches of `tasks`.
Result<Stats> time_batches(const Options& options,
                           const std::function<Result<double>(std::size_t)>& batch) {
  const std::size_t warmup = std::max<std::size_t>(1, options.tasks / 10);
  ACCO_RETURN_IF_ERROR(batch(warmup), "warm-up");
  std::vector<double> ns;
  for (int r = 0; r < options.reps; ++r) {
    ACCO_ASSIGN_OR_RETURN(const double seconds, batch(options.tasks), fmt::format("rep {}", r + 1));
    ns.push_back(seconds * 1e9 / static_cast<double>(options.tasks));
  }
  return summarize(std::move(ns));
}

// ---- acco ----------------------------------------------------------------------------------

struct AccoConfig {
  acco::sched::PolicyKind policy;
  int devices;
};

Result<Stats> run_acco(const AccoConfig& config, Workload workload, const Options& options) {
  namespace sched = acco::sched;
  const std::string who =
      fmt::format("acco {} x{}", sched::to_string(config.policy), config.devices);
  acco::device::HostBackendOptions host;
  host.devices = config.devices;
  ACCO_ASSIGN_OR_RETURN(host.link, acco::device::parse_link("unlimited"), who);
  ACCO_ASSIGN_OR_RETURN(auto backend, acco::device::make_host_backend(host), who);
  std::vector<sched::DeviceSpec> specs;
  for (acco::device::Device* device : backend->devices()) {
    sched::DeviceSpec spec;
    spec.device = device;
    specs.push_back(std::move(spec));
  }
  sched::RuntimeOptions runtime_options;
  runtime_options.policy = config.policy;
  runtime_options.keep_task_records = false;
  // Declared after the backend, so destroyed before it: the runtime's threads use its devices.
  ACCO_ASSIGN_OR_RETURN(std::unique_ptr<sched::Runtime> runtime,
                        sched::Runtime::create(std::move(specs), runtime_options), who);

  auto codelet = std::make_shared<sched::Codelet>();
  codelet->type = "empty";
  codelet->implementations.emplace_back("host", [](sched::TaskContext&) {});
  std::shared_ptr<const sched::Codelet> shared = codelet;

  std::uint64_t datum = 0;
  std::optional<sched::DataHandle> handle;
  if (workload == Workload::kRwChain) {
    ACCO_ASSIGN_OR_RETURN(handle, runtime->register_data(&datum, sizeof(datum)), who);
  }

  auto stats = time_batches(options, [&](std::size_t n) -> Result<double> {
    const Clock::time_point start = Clock::now();
    for (std::size_t i = 0; i < n; ++i) {
      sched::Task task;
      task.codelet = shared;
      if (handle) {
        task.accesses.emplace_back(*handle, acco::sched::Access::kReadWrite);
      }
      ACCO_RETURN_IF_ERROR(runtime->submit(std::move(task)));
    }
    ACCO_RETURN_IF_ERROR(runtime->wait_all());
    return std::chrono::duration<double>(Clock::now() - start).count();
  });
  if (!stats) {
    return tl::unexpected(std::move(stats.error()).with_context(who));
  }
  if (handle) {
    ACCO_RETURN_IF_ERROR(runtime->unregister(*handle), who);
  }
  return stats;
}

// ---- StarPU --------------------------------------------------------------------------------

#ifdef ACCO_BENCH_WITH_STARPU

void starpu_empty(void** /*buffers*/, void* /*arg*/) {}

std::string starpu_version() {
  int major = 0;
  int minor = 0;
  int release = 0;
  starpu_get_version(&major, &minor, &release);
  return fmt::format("{}.{}.{}", major, minor, release);
}

// One starpu_init .. starpu_shutdown per policy, as StarPU reads its policy at init.
Result<Stats> run_starpu(const std::string& policy, Workload workload, const Options& options) {
  const std::string who = fmt::format("starpu {}", policy);
  starpu_conf conf;
  if (int ret = starpu_conf_init(&conf); ret != 0) {
    return acco::fail(Errc::kUnavailable,
                      fmt::format("{}: starpu_conf_init: {}", who, std::strerror(-ret)));
  }
  conf.ncpus = kStarpuWorkers;
  conf.ncuda = 0;
  conf.nopencl = 0;
  conf.sched_policy_name = policy.c_str();
  if (int ret = starpu_init(&conf); ret != 0) {
    return acco::fail(Errc::kUnavailable,
                      fmt::format("{}: starpu_init: {}", who, std::strerror(-ret)));
  }
  // No performance model: the dm* policies then take their greedy fallback, as in the
  // reference measurement.
  starpu_codelet codelet;
  starpu_codelet_init(&codelet);
  codelet.cpu_funcs[0] = starpu_empty;
  codelet.nbuffers = workload == Workload::kRwChain ? 1 : 0;
  codelet.modes[0] = STARPU_RW;
  codelet.name = "empty";

  std::uint64_t datum = 0;
  starpu_data_handle_t handle = nullptr;
  if (workload == Workload::kRwChain) {
    starpu_variable_data_register(&handle, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&datum),
                                  sizeof(datum));
  }
  auto stats = time_batches(options, [&](std::size_t n) -> Result<double> {
    const Clock::time_point start = Clock::now();
    for (std::size_t i = 0; i < n; ++i) {
      starpu_task* task = starpu_task_create();
      task->cl = &codelet;
      if (handle != nullptr) {
        task->handles[0] = handle;
      }
      if (int ret = starpu_task_submit(task); ret != 0) {
        starpu_task_destroy(task);
        starpu_task_wait_for_all();
        return acco::fail(Errc::kInternal,
                          fmt::format("starpu_task_submit: {}", std::strerror(-ret)));
      }
    }
    if (int ret = starpu_task_wait_for_all(); ret != 0) {
      return acco::fail(Errc::kInternal,
                        fmt::format("starpu_task_wait_for_all: {}", std::strerror(-ret)));
    }
    return std::chrono::duration<double>(Clock::now() - start).count();
  });
  if (handle != nullptr) {
    starpu_data_unregister(handle);
  }
  starpu_shutdown();
  if (!stats) {
    return tl::unexpected(std::move(stats.error()).with_context(who));
  }
  return stats;
}

// StarPU writes calibration and sampling files under $STARPU_HOME/.starpu: keep them out of the
// user's home, in a directory removed at the end of the run.
class StarpuHome {
 public:
  static Result<StarpuHome> create() {
    std::string pattern = (std::filesystem::temp_directory_path() / "acco-starpu-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return acco::fail(Errc::kUnavailable,
                        fmt::format("mkdtemp {}: {}", pattern, std::strerror(errno)));
    }
    setenv("STARPU_HOME", pattern.c_str(), 1);
    setenv("STARPU_SILENT", "1", 1);
    return StarpuHome(pattern);
  }
  StarpuHome(StarpuHome&& other) noexcept : path_(std::exchange(other.path_, {})) {}
  StarpuHome& operator=(StarpuHome&&) = delete;
  StarpuHome(const StarpuHome&) = delete;
  StarpuHome& operator=(const StarpuHome&) = delete;
  ~StarpuHome() {
    if (!path_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(path_, ignored);
    }
  }

 private:
  explicit StarpuHome(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

#endif

// ---- report --------------------------------------------------------------------------------

const Row* find_row(const std::vector<Row>& rows, Workload workload, const std::string& runtime,
                    const std::string& policy) {
  for (const Row& row : rows) {
    if (row.workload == workload && row.runtime == runtime && row.policy == policy) {
      return &row;
    }
  }
  return nullptr;
}

void fill_ratios(std::vector<Row>& rows) {
  for (Row& row : rows) {
    if (row.runtime != "acco") {
      continue;
    }
    // Same policy and the same number of workers: StarPU runs with 2.
    const Row* peer = find_row(rows, row.workload, "starpu", row.policy);
    if (peer != nullptr && peer->devices == row.devices && peer->stats.median > 0) {
      row.ratio = row.stats.median / peer->stats.median;
    }
  }
}

struct Verdict {
  std::string target;
  Workload workload = Workload::kIndependent;
  bool measured = false;
  bool met = false;
  std::string detail;
};

// Target 1, per workload: the acco configuration with the lowest ratio against StarPU's
// same-policy figure.
Verdict half_of_starpu(const std::vector<Row>& rows, Workload workload) {
  Verdict v{"acco per-task time <= half of StarPU's", workload, false, false, ""};
  const Row* best = nullptr;
  for (const Row& row : rows) {
    if (row.workload == workload && row.runtime == "acco" && row.ratio > 0 &&
        (best == nullptr || row.ratio < best->ratio)) {
      best = &row;
    }
  }
  if (best == nullptr) {
    v.detail = "no StarPU figures";
    return v;
  }
  const Row* peer = find_row(rows, workload, "starpu", best->policy);
  v.measured = true;
  v.met = best->ratio <= kTargetRatio;
  v.detail =
      fmt::format("acco {} x{} {:.0f} ns vs starpu {} {:.0f} ns = {:.2f}x", best->policy,
                  best->devices, best->stats.median, peer->policy, peer->stats.median, best->ratio);
  return v;
}

Verdict dmda_over_8(const std::vector<Row>& rows, Workload workload) {
  Verdict v{"dmda over 8 devices <= 1 us/task", workload, false, false, ""};
  for (const Row& row : rows) {
    if (row.workload == workload && row.runtime == "acco" && row.policy == "dmda" &&
        row.devices == 8) {
      v.measured = true;
      v.met = row.stats.median <= kTargetDmda8Nanoseconds;
      v.detail = fmt::format("acco dmda x8 {:.0f} ns", row.stats.median);
    }
  }
  if (!v.measured) {
    v.detail = "no dmda x8 figure";
  }
  return v;
}

void print_table(const std::vector<Row>& rows) {
  std::printf("\n%-12s %-14s %-12s %8s %10s %10s %10s %12s\n", "workload", "runtime/policy",
              "devices", "N", "median", "min", "max", "vs StarPU");
  for (const Row& row : rows) {
    const std::string devices =
        fmt::format("{} {}", row.devices, row.runtime == "acco" ? "devices" : "workers");
    const std::string ratio = row.ratio > 0 ? fmt::format("{:.2f}x", row.ratio) : "-";
    std::printf("%-12s %-14s %-12s %8zu %7.0f ns %7.0f ns %7.0f ns %12s\n", to_string(row.workload),
                fmt::format("{} {}", row.runtime, row.policy).c_str(), devices.c_str(), row.tasks,
                row.stats.median, row.stats.min, row.stats.max, ratio.c_str());
  }
  std::printf(
      "per task: (first submit .. wait_all returns) / N; median, min and max of the reps. "
      "vs StarPU: acco median / StarPU median, same policy and workload.\n\n");
}

void print_verdicts(const std::vector<Verdict>& verdicts) {
  for (const std::string& target : {std::string("acco per-task time <= half of StarPU's"),
                                    std::string("dmda over 8 devices <= 1 us/task")}) {
    std::string line = "target: " + target + ":";
    for (const Verdict& v : verdicts) {
      if (v.target == target) {
        line += fmt::format(" {} {} ({});", to_string(v.workload),
                            !v.measured ? "n/a"
                            : v.met     ? "MET"
                                        : "MISSED",
                            v.detail);
      }
    }
    line.pop_back();
    std::printf("%s\n", line.c_str());
  }
}

nlohmann::json to_json(const Row& row) {
  return {
      {"workload", to_string(row.workload)},
      {"runtime", row.runtime},
      {"policy", row.policy},
      {row.runtime == "acco" ? "devices" : "workers", row.devices},
      {"tasks", row.tasks},
      {"reps", row.stats.ns_per_task.size()},
      {"ns_per_task", row.stats.ns_per_task},
      {"median_ns_per_task", row.stats.median},
      {"min_ns_per_task", row.stats.min},
      {"max_ns_per_task", row.stats.max},
      {"baseline", row.ratio > 0 ? nlohmann::json("starpu " + row.policy) : nlohmann::json()},
      {"ratio_vs_starpu", row.ratio > 0 ? nlohmann::json(row.ratio) : nlohmann::json()},
  };
}

Result<std::vector<AccoConfig>> parse_configs(const std::vector<std::string>& texts) {
  std::vector<AccoConfig> out;
  for (const std::string& text : texts) {
    const std::size_t colon = text.find(':');
    const std::string policy = text.substr(0, colon);
    auto kind = acco::sched::policy_from_string(policy);
    int devices = 0;
    bool ok = colon != std::string::npos && kind.has_value();
    if (ok) {
      const std::string count = text.substr(colon + 1);
      char* end = nullptr;
      errno = 0;
      const long n = std::strtol(count.c_str(), &end, 10);
      ok = !count.empty() && *end == '\0' && errno == 0 && n >= 1 && n <= 64;
      devices = static_cast<int>(n);
    }
    if (!ok) {
      return acco::fail(Errc::kInvalidArgument,
                        fmt::format("--config {}: expected POLICY:DEVICES with a policy name and "
                                    "1..64 devices, e.g. dmda:8",
                                    text));
    }
    out.push_back({*kind, devices});
  }
  return out;
}

Result<Options> parse(int argc, char** argv) {
  Options options;
  CLI::App app{
      "acco-sched-overhead-bench: per-task overhead of acco's task runtime against StarPU, with "
      "empty tasks"};
  app.add_option("--tasks", options.tasks, "tasks per timed batch (N)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100'000'000}))
      ->capture_default_str();
  app.add_option("--reps", options.reps, "timed batches per configuration (median, min, max)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--json", options.json, "write results to FILE");
  app.add_flag("--skip-starpu", options.skip_starpu, "run acco only");
  app.add_option("--workload", options.workload, "run one workload only")
      ->check(CLI::IsMember({"independent", "rw-chain"}));
  app.add_option("--config", options.configs,
                 "acco configurations as POLICY:DEVICES (repeatable; default eager:2 dmda:2 "
                 "dmda:8 ws:2)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::printf("%s", app.help().c_str());
    std::exit(0);
  } catch (const CLI::ParseError& e) {
    return acco::fail(Errc::kInvalidArgument, e.what());
  }
  // Fail before minutes of measuring, not at the end.
  if (!options.json.empty()) {
    const std::filesystem::path dir = std::filesystem::path(options.json).parent_path();
    std::error_code ec;
    if (!dir.empty() && !std::filesystem::is_directory(dir, ec)) {
      return acco::fail(Errc::kInvalidArgument, fmt::format("--json {}: {} is not a directory",
                                                            options.json, dir.string()));
    }
  }
  return options;
}

int run(int argc, char** argv) {
  auto options = parse(argc, argv);
  if (!options) {
    std::fprintf(stderr, "acco-sched-overhead-bench: %s\n", options.error().message.c_str());
    return 2;
  }
  const std::string started = acco::core::utc_timestamp(std::chrono::system_clock::now());
  const unsigned cpus = std::thread::hardware_concurrency();

#ifdef ACCO_BENCH_WITH_STARPU
  const bool starpu_built = true;
  const std::string version = starpu_version();
#else
  const bool starpu_built = false;
  const std::string version;
#endif
  std::string starpu_state = !starpu_built          ? "not found at build time"
                             : options->skip_starpu ? "skipped (--skip-starpu)"
                                                    : "measured";
  std::printf("started:  %s\n", started.c_str());
  std::printf("cpus:     %u (std::thread::hardware_concurrency)\n", cpus);
  std::printf("starpu:   %s\n", starpu_built ? fmt::format("{} ({})", version, starpu_state).c_str()
                                             : "StarPU was not found: running acco only");
  std::printf("tasks:    %zu per batch, %d reps, warm-up %zu\n", options->tasks, options->reps,
              std::max<std::size_t>(1, options->tasks / 10));
  std::fflush(stdout);  // before the progress lines on stderr

  using acco::sched::PolicyKind;
  std::vector<AccoConfig> acco_configs = {{PolicyKind::kEager, 2},
                                          {PolicyKind::kDmda, 2},
                                          {PolicyKind::kDmda, 8},
                                          {PolicyKind::kWorkStealing, 2}};
  if (!options->configs.empty()) {
    auto parsed = parse_configs(options->configs);
    if (!parsed) {
      std::fprintf(stderr, "acco-sched-overhead-bench: %s\n", parsed.error().message.c_str());
      return 2;
    }
    acco_configs = std::move(*parsed);
  }

#ifdef ACCO_BENCH_WITH_STARPU
  const std::vector<std::string> starpu_policies = {"eager", "dmda"};
  std::optional<StarpuHome> home;
  if (!options->skip_starpu) {
    auto created = StarpuHome::create();
    if (!created) {
      std::fprintf(stderr, "acco-sched-overhead-bench: %s\n", created.error().message.c_str());
      return 1;
    }
    home.emplace(std::move(*created));
  }
#endif

  std::vector<Row> rows;
  for (Workload workload : {Workload::kIndependent, Workload::kRwChain}) {
    if (!options->workload.empty() && options->workload != to_string(workload)) {
      continue;
    }
#ifdef ACCO_BENCH_WITH_STARPU
    if (!options->skip_starpu) {
      for (const std::string& policy : starpu_policies) {
        std::fprintf(stderr, "%s: starpu %s ...\n", to_string(workload), policy.c_str());
        auto stats = run_starpu(policy, workload, *options);
        if (!stats) {
          std::fprintf(stderr, "acco-sched-overhead-bench: %s\n", stats.error().message.c_str());
          return 1;
        }
        rows.push_back({workload, "starpu", policy, kStarpuWorkers, options->tasks, *stats, 0});
      }
    }
#endif
    for (const AccoConfig& config : acco_configs) {
      const std::string policy(acco::sched::to_string(config.policy));
      std::fprintf(stderr, "%s: acco %s x%d ...\n", to_string(workload), policy.c_str(),
                   config.devices);
      auto stats = run_acco(config, workload, *options);
      if (!stats) {
        std::fprintf(stderr, "acco-sched-overhead-bench: %s\n", stats.error().message.c_str());
        return 1;
      }
      rows.push_back({workload, "acco", policy, config.devices, options->tasks, *stats, 0});
    }
  }
  fill_ratios(rows);
  print_table(rows);
  std::vector<Verdict> verdicts;
  for (Workload workload : {Workload::kIndependent, Workload::kRwChain}) {
    verdicts.push_back(half_of_starpu(rows, workload));
  }
  for (Workload workload : {Workload::kIndependent, Workload::kRwChain}) {
    verdicts.push_back(dmda_over_8(rows, workload));
  }
  print_verdicts(verdicts);

  if (!options->json.empty()) {
    nlohmann::json results = nlohmann::json::array();
    for (const Row& row : rows) {
      results.push_back(to_json(row));
    }
    nlohmann::json targets = nlohmann::json::array();
    for (const Verdict& v : verdicts) {
      targets.push_back({{"target", v.target},
                         {"workload", to_string(v.workload)},
                         {"measured", v.measured},
                         {"met", v.measured ? nlohmann::json(v.met) : nlohmann::json()},
                         {"detail", v.detail}});
    }
    const nlohmann::json out = {
        {"schema", kSchema},
        {"started", started},
        {"host", {{"cpus", cpus}}},
        {"starpu",
         {{"built", starpu_built},
          {"version", starpu_built ? nlohmann::json(version) : nlohmann::json()},
          {"state", starpu_state},
          {"workers", kStarpuWorkers}}},
        {"tasks", options->tasks},
        {"reps", options->reps},
        {"warmup_tasks", std::max<std::size_t>(1, options->tasks / 10)},
        {"results", results},
        {"verdicts", targets},
    };
    if (Status written = acco::core::write_file_atomic(options->json, out.dump(2) + "\n");
        !written) {
      std::fprintf(stderr, "acco-sched-overhead-bench: %s\n", written.error().message.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run(argc, argv);
}
