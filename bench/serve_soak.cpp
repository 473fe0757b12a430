// Soak of the node daemon: a real `acco serve` (simulated accelerators plus two GPUs through the
// fake NVML library, whose power, temperature and utilisation reads fail every few calls and
// recover), its SQLite store growing under a short retention, 50 scrapers on keep-alive
// connections (GET /metrics every 0.5 s, as a 2 Hz Prometheus would) and dashboards polling the
// API the page reads, for 10 minutes by default. Every few seconds it samples the daemon's RSS,
// open descriptors and store size, and the request latencies of that window. Prints a table
// over time and a summary (requests, failed, p50/p99/max latency per endpoint, RSS and
// descriptors after warm-up, store size against the retention), writes JSON
// ("acco.serve-soak/1").
//
// --check fails (exit 1) when a request failed, the daemon died or did not stop cleanly on
// SIGTERM, descriptors grew after warm-up, or RSS grew by more than --max-rss-growth-mib after
// warm-up: invariants, not speeds (CI runs it for 2 minutes). The store's size is reported
// against its retention (SQLite reuses the pages pruned rows free, so it levels off once the
// raw retention has passed, growing only by the minute averages).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "acco/core/file.hpp"
#include "acco/core/stats.hpp"
#include "acco/exec/spawn.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr const char* kSchema = "acco.serve-soak/1";

struct Options {
  double seconds = 600;
  double warmup_seconds = -1;  // default: a quarter of the run, at most 60 s
  double sample_every = 5;
  int scrapers = 50;
  int dashboards = 2;
  int simulate = 8;
  std::string interval = "250ms";
  std::string retention = "raw=1m,minute=10m";
  std::string memory_window = "20s";
  std::string acco = ACCO_SOAK_ACCO;
  std::string fake_nvml = ACCO_SOAK_FAKE_NVML;
  std::string json;
  bool check = false;
  double max_rss_growth_mib = 8;
};

// One window of the run: what the daemon held and how its requests went.
struct Sample {
  double t = 0;  // seconds since the load started
  long rss_kib = 0;
  int fds = 0;
  std::uintmax_t store_bytes = 0;
  std::size_t requests = 0;
  std::size_t failed = 0;
  double p99_ms = 0;
};

// Latencies and failures, by endpoint class, for the whole run and the current window.
class Tally {
 public:
  void add(const std::string& what, double ms, bool ok) {
    const std::lock_guard lock(mutex_);
    auto& e = all_[what];
    e.ms.push_back(ms);
    e.failed += ok ? 0 : 1;
    window_.push_back(ms);
    window_failed_ += ok ? 0 : 1;
    if (!ok && first_failure_.empty()) {
      first_failure_ = what;
    }
  }
  // The window's count, failures and p99 (ms), then a new window.
  std::tuple<std::size_t, std::size_t, double> take_window() {
    const std::lock_guard lock(mutex_);
    const auto p99 = acco::core::stats::percentile(window_, 99);
    std::tuple<std::size_t, std::size_t, double> out{window_.size(), window_failed_,
                                                     p99 ? *p99 : 0.0};
    window_.clear();
    window_failed_ = 0;
    return out;
  }
  struct Endpoint {
    std::vector<double> ms;
    std::size_t failed = 0;
  };
  std::map<std::string, Endpoint> all() const {
    const std::lock_guard lock(mutex_);
    return all_;
  }
  std::string first_failure() const {
    const std::lock_guard lock(mutex_);
    return first_failure_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Endpoint> all_;
  std::vector<double> window_;
  std::size_t window_failed_ = 0;
  std::string first_failure_;
};

double mib(long kib) {
  return static_cast<double>(kib) / 1024.0;
}

long rss_kib(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::atol(line.c_str() + 6);
    }
  }
  return 0;
}

int open_fds(pid_t pid) {
  std::error_code ec;
  int n = 0;
  for (fs::directory_iterator it(fmt::format("/proc/{}/fd", pid), ec), end; !ec && it != end;
       it.increment(ec)) {
    ++n;
  }
  return n;
}

std::uintmax_t store_bytes(const fs::path& store) {
  std::uintmax_t total = 0;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::error_code ec;
    const auto size = fs::file_size(store.string() + suffix, ec);
    total += ec ? 0 : size;
  }
  return total;
}

// Two GPUs whose power, temperature and utilisation reads fail every few calls and recover.
std::string fake_nvml_config() {
  nlohmann::json gpus = nlohmann::json::array();
  for (int i = 0; i < 2; ++i) {
    gpus.push_back(
        {{"pci", fmt::format("00000000:{:02x}:00.0", 0x18 + i)},
         {"name", "NVIDIA H100 80GB HBM3"},
         {"uuid", fmt::format("GPU-5oak0000-0000-0000-0000-00000000000{}", i)},
         {"memory_total_bytes", 85520809984LL},
         {"flaky", {{"power", 5 + i}, {"temperature", 7}, {"utilization", 3 + i}}},
         {"telemetry",
          {{"temperature", 45 + i},
           {"power_mw", 350000},
           {"energy_mj", 123456789},
           {"power_limits_mw",
            {{"enforced", 700000}, {"default", 700000}, {"min", 200000}, {"max", 700000}}},
           {"clocks_mhz", {{"sm", 1980}, {"memory", 2619}}},
           {"utilization", {{"gpu", 87}, {"memory", 40}}},
           {"memory_used_bytes", 1073741824LL}}}});
  }
  return nlohmann::json{{"driver_version", "580.95.05"}, {"gpus", gpus}}.dump(2);
}

// Waits for the "listening on http://127.0.0.1:PORT/" line in the daemon's log.
int wait_for_port(const fs::path& log, pid_t pid) {
  const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)/");
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < deadline) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    std::smatch m;
    if (std::regex_search(s, m, listening)) {
      return std::stoi(m[1]);
    }
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

struct Load {
  int port = 0;
  Tally tally;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;

  void request(httplib::Client& client, const std::string& path, const std::string& what) {
    const auto begin = Clock::now();
    const auto res = client.Get(path);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
    tally.add(what, ms, res && res->status == 200 && !res->body.empty());
  }

  // Sleeps until `next`, a step of `period` later each time; false once stopped.
  bool pace(Clock::time_point& next, std::chrono::milliseconds period) const {
    next += period;
    while (!stop && Clock::now() < next) {
      std::this_thread::sleep_for(
          std::min<Clock::duration>(next - Clock::now(), std::chrono::milliseconds(50)));
    }
    return !stop;
  }

  void start(int scrapers, int dashboards) {
    for (int i = 0; i < scrapers; ++i) {
      threads.emplace_back([this, i] {
        httplib::Client client("127.0.0.1", port);
        client.set_keep_alive(true);
        client.set_read_timeout(10, 0);
        // Spread over the period, as scrapers that started at different times are.
        std::this_thread::sleep_for(std::chrono::milliseconds(10 * i));
        auto next = Clock::now();
        do {
          request(client, "/metrics", "/metrics");
        } while (pace(next, std::chrono::milliseconds(500)));
      });
    }
    for (int i = 0; i < dashboards; ++i) {
      threads.emplace_back([this] {
        httplib::Client client("127.0.0.1", port);
        client.set_keep_alive(true);
        client.set_read_timeout(10, 0);
        auto next = Clock::now();
        do {
          const auto since =
              std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::system_clock::now().time_since_epoch() - std::chrono::minutes(5))
                  .count();
          request(client, "/api/v1/summary", "/api/v1/summary");
          request(client, fmt::format("/api/v1/series?name=power_watts&since={}", since),
                  "/api/v1/series");
          request(client, "/api/v1/events", "/api/v1/events");
          request(client, "/api/v1/findings", "/api/v1/findings");
        } while (pace(next, std::chrono::milliseconds(1000)));
      });
    }
  }

  void join() {
    stop = true;
    for (auto& t : threads) {
      t.join();
    }
  }
};

struct Verdict {
  bool ok = true;
  std::vector<std::string> reasons;
  void fail(std::string why) {
    ok = false;
    reasons.push_back(std::move(why));
  }
};

struct Started {
  fs::path dir;
  fs::path store;
  fs::path log;
  pid_t pid = 0;
  int port = 0;
};

struct Outcome {
  std::vector<Sample> samples;
  bool died = false;
  int exit_code = -1;
};

// A private directory, the fake NVML config and `acco serve` started in it; 0 or the exit code.
int start_daemon(const Options& o, Started& d) {
  std::string dir_template = "/tmp/acco-soak-XXXXXX";
  if (::mkdtemp(dir_template.data()) == nullptr) {
    fmt::print(stderr, "acco_serve_soak: cannot make a directory in /tmp\n");
    return 73;
  }
  d.dir = dir_template;
  d.store = d.dir / "store.db";
  d.log = d.dir / "daemon.log";
  const fs::path& dir = d.dir;
  const fs::path& store = d.store;
  const fs::path& log = d.log;
  std::ofstream(dir / "nvml.json") << fake_nvml_config();

  acco::exec::SpawnRequest spawn;
  spawn.argv = {o.acco,
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--simulate",
                std::to_string(o.simulate),
                "--nvml",
                "on",
                "--nvml-library",
                o.fake_nvml,
                "--interval",
                o.interval,
                "--store",
                store.string(),
                "--retention",
                o.retention,
                "--memory-window",
                o.memory_window,
                "--log",
                (dir / "events.jsonl").string()};
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) {
      spawn.env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  spawn.env["ACCO_FAKE_NVML_CONFIG"] = (dir / "nvml.json").string();
  spawn.log_path = log.string();
  const auto pid = acco::exec::spawn(spawn);
  if (!pid) {
    fmt::print(stderr, "acco_serve_soak: {}\n", pid.error().message);
    return 69;
  }
  d.pid = *pid;
  d.port = wait_for_port(log, *pid);
  if (d.port <= 0) {
    fmt::print(stderr, "acco_serve_soak: the daemon did not start; its output ({}):\n",
               log.string());
    std::ifstream in(log);
    std::cerr << in.rdbuf();
    ::kill(*pid, SIGKILL);
    ::waitpid(*pid, nullptr, 0);
    return 69;
  }
  fmt::print(
      "acco serve (pid {}, port {}): {} simulated + 2 fake NVML GPUs with flaky reads, "
      "sampling every {}, store retention {}, memory window {}\n",
      *pid, d.port, o.simulate, o.interval, o.retention, o.memory_window);
  fmt::print("load: {} scrapers at 2 Hz, {} dashboards at 1 Hz, {:.0f} s (warm-up {:.0f} s)\n\n",
             o.scrapers, o.dashboards, o.seconds, o.warmup_seconds);
  fmt::print("{:>7} {:>9} {:>5} {:>10} {:>9} {:>7} {:>9}\n", "t (s)", "RSS (MiB)", "fds",
             "store (KiB)", "requests", "failed", "p99 (ms)");
  return 0;
}

// The load and a sample of the daemon every --sample-every seconds, then SIGTERM.
Outcome soak(const Options& o, const Started& d, Load& load) {
  Outcome r;
  const auto begin = Clock::now();
  load.start(o.scrapers, o.dashboards);
  const auto rounds = static_cast<long>(std::floor(o.seconds / o.sample_every + 1e-9));
  for (long round = 1; round <= rounds; ++round) {
    std::this_thread::sleep_until(
        begin + std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>(static_cast<double>(round) * o.sample_every)));
    int status = 0;
    if (::waitpid(d.pid, &status, WNOHANG) == d.pid) {
      r.died = true;
      break;
    }
    Sample s;
    s.t = std::chrono::duration<double>(Clock::now() - begin).count();
    s.rss_kib = rss_kib(d.pid);
    s.fds = open_fds(d.pid);
    s.store_bytes = store_bytes(d.store);
    std::tie(s.requests, s.failed, s.p99_ms) = load.tally.take_window();
    fmt::print("{:>7.0f} {:>9.1f} {:>5} {:>10} {:>9} {:>7} {:>9.2f}\n", s.t, mib(s.rss_kib), s.fds,
               s.store_bytes / 1024, s.requests, s.failed, s.p99_ms);
    std::fflush(stdout);
    r.samples.push_back(s);
  }
  load.join();
  if (!r.died) {
    ::kill(d.pid, SIGTERM);
    int status = 0;
    ::waitpid(d.pid, &status, 0);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return r;
}

// The summary, the verdict and the JSON; the exit code.
int summarize(const Options& o, const Started& d, const Load& load, const Outcome& r) {
  const std::vector<Sample>& samples = r.samples;
  const bool died = r.died;
  const int exit_code = r.exit_code;
  const fs::path& log = d.log;
  const fs::path& dir = d.dir;
  // Summary and verdict.
  Verdict verdict;
  nlohmann::ordered_json endpoints = nlohmann::ordered_json::object();
  fmt::print("\n{:<18} {:>9} {:>7} {:>9} {:>9} {:>9}\n", "endpoint", "requests", "failed",
             "p50 (ms)", "p99 (ms)", "max (ms)");
  std::size_t total = 0;
  std::size_t failed = 0;
  for (const auto& [what, e] : load.tally.all()) {
    const auto summary = acco::core::stats::summarize(e.ms);
    const double p50 = summary ? summary->median : 0;
    const double p99 = summary && summary->p99 ? *summary->p99 : (summary ? summary->max : 0);
    const double max = summary ? summary->max : 0;
    fmt::print("{:<18} {:>9} {:>7} {:>9.2f} {:>9.2f} {:>9.2f}\n", what, e.ms.size(), e.failed, p50,
               p99, max);
    endpoints[what] = {{"requests", e.ms.size()},
                       {"failed", e.failed},
                       {"p50_ms", p50},
                       {"p99_ms", p99},
                       {"max_ms", max}};
    total += e.ms.size();
    failed += e.failed;
  }
  if (failed > 0) {
    verdict.fail(fmt::format("{} of {} requests failed (first: {})", failed, total,
                             load.tally.first_failure()));
  }
  if (died) {
    verdict.fail("the daemon died during the run (its output: " + log.string() + ")");
  } else if (exit_code != 0) {
    verdict.fail(fmt::format("the daemon exited {} on SIGTERM", exit_code));
  }
  const auto after_warmup = std::find_if(samples.begin(), samples.end(),
                                         [&](const Sample& s) { return s.t >= o.warmup_seconds; });
  nlohmann::ordered_json flat = nullptr;
  if (after_warmup != samples.end() && std::next(after_warmup) != samples.end()) {
    const auto [min_rss, max_rss] =
        std::minmax_element(after_warmup, samples.end(),
                            [](const Sample& a, const Sample& b) { return a.rss_kib < b.rss_kib; });
    const auto [min_fds, max_fds] =
        std::minmax_element(after_warmup, samples.end(),
                            [](const Sample& a, const Sample& b) { return a.fds < b.fds; });
    const double rss_growth_mib = mib(samples.back().rss_kib - after_warmup->rss_kib);
    const int fd_growth = samples.back().fds - after_warmup->fds;
    fmt::print(
        "\nafter warm-up ({:.0f} s): RSS {:.1f} -> {:.1f} MiB (range {:.1f}-{:.1f}), "
        "descriptors {} -> {} (range {}-{})\n",
        after_warmup->t, mib(after_warmup->rss_kib), mib(samples.back().rss_kib),
        mib(min_rss->rss_kib), mib(max_rss->rss_kib), after_warmup->fds, samples.back().fds,
        min_fds->fds, max_fds->fds);
    // Descriptors: the scrapers' connections are open all along; a few may be reconnecting.
    if (fd_growth > 4) {
      verdict.fail(fmt::format("descriptors grew by {} after warm-up", fd_growth));
    }
    if (rss_growth_mib > o.max_rss_growth_mib) {
      verdict.fail(fmt::format("RSS grew by {:.1f} MiB after warm-up (allowed {:.0f})",
                               rss_growth_mib, o.max_rss_growth_mib));
    }
    flat = {{"from_seconds", after_warmup->t},
            {"rss_kib", {after_warmup->rss_kib, samples.back().rss_kib}},
            {"rss_kib_range", {min_rss->rss_kib, max_rss->rss_kib}},
            {"fds", {after_warmup->fds, samples.back().fds}},
            {"fds_range", {min_fds->fds, max_fds->fds}}};
  } else {
    verdict.fail("too short a run to see after the warm-up");
  }
  const std::uintmax_t store_peak =
      samples.empty()
          ? 0
          : std::max_element(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) {
              return a.store_bytes < b.store_bytes;
            })->store_bytes;
  fmt::print("store: {} KiB at the end, {} KiB at most (retention {})\n",
             samples.empty() ? 0 : samples.back().store_bytes / 1024, store_peak / 1024,
             o.retention);
  fmt::print("requests: {} answered, {} failed; daemon exit on SIGTERM: {}\n", total, failed,
             died ? std::string("died before") : std::to_string(exit_code));
  for (const auto& why : verdict.reasons) {
    fmt::print("NOT MET: {}\n", why);
  }

  if (!o.json.empty()) {
    nlohmann::ordered_json j;
    j["schema"] = kSchema;
    j["options"] = {{"seconds", o.seconds},
                    {"warmup_seconds", o.warmup_seconds},
                    {"scrapers", o.scrapers},
                    {"dashboards", o.dashboards},
                    {"simulate", o.simulate},
                    {"fake_nvml_gpus", 2},
                    {"interval", o.interval},
                    {"retention", o.retention},
                    {"memory_window", o.memory_window}};
    j["endpoints"] = endpoints;
    j["samples"] = nlohmann::ordered_json::array();
    for (const auto& s : samples) {
      j["samples"].push_back({{"t", s.t},
                              {"rss_kib", s.rss_kib},
                              {"fds", s.fds},
                              {"store_bytes", s.store_bytes},
                              {"requests", s.requests},
                              {"failed", s.failed},
                              {"p99_ms", s.p99_ms}});
    }
    j["after_warmup"] = flat;
    j["store_peak_bytes"] = store_peak;
    j["daemon_exit"] = died ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(exit_code);
    j["met"] = verdict.ok;
    j["not_met"] = verdict.reasons;
    std::ofstream(o.json) << j.dump(2) << "\n";
  }
  std::error_code ec;
  if (verdict.ok) {
    fs::remove_all(dir, ec);
  } else {
    fmt::print("kept for a look: {}\n", dir.string());
  }
  return o.check && !verdict.ok ? 1 : 0;
}

}  // namespace

static int run(int argc, char** argv) {
  Options o;
  CLI::App app{"acco serve under 50 scrapers and dashboards for a long run"};
  app.add_option("--seconds", o.seconds, "how long the load runs (default 600)")
      ->check(CLI::Range(5.0, 86400.0));
  app.add_option("--warmup", o.warmup_seconds,
                 "seconds before RSS and descriptors should stay flat (default a quarter of the "
                 "run, at most 60)");
  app.add_option("--sample-every", o.sample_every, "seconds between samples (default 5)")
      ->check(CLI::Range(1.0, 600.0));
  app.add_option("--scrapers", o.scrapers, "keep-alive /metrics scrapers at 2 Hz (default 50)")
      ->check(CLI::Range(1, 60));
  app.add_option("--dashboards", o.dashboards, "dashboards polling the API at 1 Hz (default 2)")
      ->check(CLI::Range(0, 8));
  app.add_option("--simulate", o.simulate, "simulated accelerators beside 2 fake NVML GPUs")
      ->check(CLI::Range(0, 64));
  app.add_option("--interval", o.interval, "the daemon's sampling period (default 250ms)");
  app.add_option("--retention", o.retention, "the store's retention (default raw=1m,minute=10m)");
  app.add_option("--memory-window", o.memory_window,
                 "the daemon's in-memory rounds (default 20s: full before the warm-up ends)");
  app.add_option("--acco", o.acco, "the acco binary");
  app.add_option("--fake-nvml", o.fake_nvml, "the fake libnvidia-ml.so.1 the tests build");
  app.add_option("--json", o.json, "write the results here");
  app.add_flag("--check", o.check,
               "exit 1 on a failed request, a dead daemon, or descriptors or RSS growing after "
               "warm-up");
  app.add_option("--max-rss-growth-mib", o.max_rss_growth_mib,
                 "RSS growth after warm-up that --check allows (default 8)");
  CLI11_PARSE(app, argc, argv);
  if (o.warmup_seconds < 0) {
    o.warmup_seconds = std::min(60.0, o.seconds / 4);
  }
  if (!o.json.empty()) {
    if (auto checked = acco::core::check_output_file(o.json); !checked) {
      fmt::print(stderr, "acco_serve_soak: {}\n", checked.error().message);
      return 73;
    }
  }
  try {
    Started daemon;
    if (const int failed = start_daemon(o, daemon); failed != 0) {
      return failed;
    }
    Load load;
    load.port = daemon.port;
    const Outcome outcome = soak(o, daemon, load);
    return summarize(o, daemon, load, outcome);
  } catch (const std::exception& e) {
    fmt::print(stderr, "acco_serve_soak: {}\n", e.what());
    return 70;
  }
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (...) {
    std::fputs("acco_serve_soak: unexpected failure\n", stderr);
    return 70;
  }
}
