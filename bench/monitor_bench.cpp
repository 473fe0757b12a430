// Monitoring benchmark: (a) what the sampler costs, per round and as a share of one core at 1 Hz,
// with 8 simulated devices and the live host sources, beside dcgm-exporter's default 30 s
// interval for contrast; (b) /metrics under 50 concurrent scrapers for 10 s (wrk, Debian's
// package, run against 127.0.0.1): requests per second, latency percentiles, failed requests and
// the daemon's memory before and after, plain and with --compat=dcgm. Prints a table, writes JSON
// ("acco.mon-bench/1"). Not a test: nothing here asserts a speed.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "acco/core/fs.hpp"
#include "acco/monitor/sampler.hpp"
#include "acco/monitor/server.hpp"
#include "acco/power/host_source.hpp"
#include "acco/power/simulated_device.hpp"

namespace {

constexpr const char* kSchema = "acco.mon-bench/1";

struct Options {
  int devices = 8;
  int rounds = 200;
  double live_seconds = 10;
  int connections = 50;
  int wrk_seconds = 10;
  std::string json;
};

double thread_cpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double process_cpu() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

long rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::stol(line.substr(6));
    }
  }
  return 0;
}

struct Sampling {
  std::unique_ptr<acco::core::Fs> fs;
  std::unique_ptr<acco::monitor::Sampler> sampler;
};

Sampling make_sampler(int devices, bool compat, std::chrono::milliseconds interval) {
  Sampling s;
  s.fs = std::move(*acco::core::make_disk_fs("/"));
  std::vector<std::unique_ptr<acco::power::SensorSource>> sources;
  sources.push_back(std::make_unique<acco::power::SimulatedSource>(
      devices, acco::power::SimulatedScenario::kCycle));
  acco::monitor::SamplerOptions options;
  options.interval = interval;
  options.metrics.dcgm_compat = compat;
  options.metrics.version = "bench";
  s.sampler = std::make_unique<acco::monitor::Sampler>(
      std::move(sources),
      acco::power::make_host_source(
          *s.fs, {.ticks_per_second = acco::power::clock_ticks_per_second(), .clock = {}}),
      options);
  return s;
}

struct WrkResult {
  bool ran = false;
  std::string why;
  double requests_per_second = 0;
  double p50_ms = 0;
  double p90_ms = 0;
  double p99_ms = 0;
  long requests = 0;
  long failed = 0;  // socket errors plus non-2xx answers
  long rss_before_kib = 0;
  long rss_after_kib = 0;
};

double to_ms(const std::string& value, const std::string& unit) {
  const double v = std::stod(value);
  return unit == "us" ? v / 1000 : unit == "s" ? v * 1000 : v;
}

WrkResult scrape_load(const Options& o, bool compat) {
  WrkResult r;
  if (std::system("command -v wrk >/dev/null 2>&1") != 0) {
    r.why = "wrk is not installed (Debian package wrk)";
    return r;
  }
  auto s = make_sampler(o.devices, compat, std::chrono::milliseconds(1000));
  s.sampler->start();
  acco::monitor::ServerOptions server_options;
  server_options.port = 0;
  acco::monitor::Server server(*s.sampler, server_options);
  const auto port = server.start();
  if (!port) {
    r.why = port.error().message;
    return r;
  }
  // A first pass warms the pools; memory is read after it so allocator growth on the first
  // requests is not mistaken for a leak.
  const std::string url = fmt::format("http://127.0.0.1:{}/metrics", *port);
  (void)std::system(
      fmt::format("wrk -t2 -c{} -d2s {} >/dev/null 2>&1", o.connections, url).c_str());
  r.rss_before_kib = rss_kib();
  const std::string cmd =
      fmt::format("wrk -t2 -c{} -d{}s --latency {} 2>&1", o.connections, o.wrk_seconds, url);
  FILE* pipe = ::popen(cmd.c_str(), "r");
  std::string out;
  char buffer[512];
  while (pipe != nullptr && std::fgets(buffer, sizeof buffer, pipe) != nullptr) {
    out += buffer;
  }
  if (pipe != nullptr) {
    ::pclose(pipe);
  }
  r.rss_after_kib = rss_kib();
  server.stop();
  s.sampler->stop();
  std::smatch m;
  const auto find = [&](const std::string& pattern) {
    return std::regex_search(out, m, std::regex(pattern));
  };
  if (find(R"(Requests/sec:\s+([0-9.]+))")) {
    r.requests_per_second = std::stod(m[1]);
    r.ran = true;
  } else {
    r.why = "wrk output not understood: " + out.substr(0, 200);
    return r;
  }
  if (find(R"(50%\s+([0-9.]+)(us|ms|s))")) {
    r.p50_ms = to_ms(m[1], m[2]);
  }
  if (find(R"(90%\s+([0-9.]+)(us|ms|s))")) {
    r.p90_ms = to_ms(m[1], m[2]);
  }
  if (find(R"(99%\s+([0-9.]+)(us|ms|s))")) {
    r.p99_ms = to_ms(m[1], m[2]);
  }
  if (find(R"(([0-9]+) requests in)")) {
    r.requests = std::stol(m[1]);
  }
  if (find(R"(Non-2xx or 3xx responses:\s+([0-9]+))")) {
    r.failed += std::stol(m[1]);
  }
  if (find(R"(Socket errors: connect ([0-9]+), read ([0-9]+), write ([0-9]+), timeout ([0-9]+))")) {
    r.failed += std::stol(m[1]) + std::stol(m[2]) + std::stol(m[3]) + std::stol(m[4]);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"acco monitoring benchmark: sampler cost and /metrics under concurrent scrapers"};
  app.add_option("--devices", o.devices, "simulated devices (default 8)");
  app.add_option("--rounds", o.rounds, "back-to-back rounds timed for the per-round cost");
  app.add_option("--live-seconds", o.live_seconds, "seconds of a real 1 Hz run (default 10)");
  app.add_option("--connections", o.connections, "concurrent scrapers (default 50)");
  app.add_option("--wrk-seconds", o.wrk_seconds, "seconds of load per case (default 10)");
  app.add_option("--json", o.json, "write results here");
  CLI11_PARSE(app, argc, argv);

  // (a) per-round cost, back to back on this thread, then a real 1 Hz run.
  auto s = make_sampler(o.devices, false, std::chrono::milliseconds(1000));
  s.sampler->round();  // warm-up
  const double cpu0 = thread_cpu();
  const auto wall0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.rounds; ++i) {
    s.sampler->round();
  }
  const double per_round_cpu = (thread_cpu() - cpu0) / o.rounds;
  const double per_round_wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count() / o.rounds;
  const auto metrics_bytes = s.sampler->latest()->metrics.size();
  s.sampler.reset();

  auto live = make_sampler(o.devices, false, std::chrono::milliseconds(1000));
  const double p0 = process_cpu();
  const auto l0 = std::chrono::steady_clock::now();
  live.sampler->start();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.live_seconds));
  live.sampler->stop();
  const double live_wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - l0).count();
  const double live_share = (process_cpu() - p0) / live_wall;
  const auto live_rounds = live.sampler->latest()->snapshot.stats.rounds;
  live.sampler.reset();

  fmt::print("acco monitor bench: {} simulated devices + host sources (this machine)\n\n",
             o.devices);
  fmt::print("{:<44} {:>14} {:>14}\n", "sampler", "value", "target");
  fmt::print("{:<44} {:>11.1f} us {:>14}\n", "CPU per round (back to back)", per_round_cpu * 1e6,
             "");
  fmt::print("{:<44} {:>11.1f} us {:>14}\n", "wall time per round", per_round_wall * 1e6, "");
  fmt::print("{:<44} {:>12.3f} % {:>14}\n", "share of one core at 1 Hz (per-round CPU)",
             per_round_cpu * 100, "< 1 %");
  fmt::print(
      "{:<44} {:>12.3f} % {:>14}\n",
      fmt::format("process CPU in a {:.0f} s run at 1 Hz ({} rounds)", live_wall, live_rounds),
      live_share * 100, "< 1 %");
  fmt::print("{:<44} {:>11} B {:>14}\n", "/metrics size", metrics_bytes, "");
  fmt::print("{:<44} {:>14} {:>14}\n", "sampling period", "1 s", "dcgm-exporter: 30 s");

  nlohmann::ordered_json cases = nlohmann::ordered_json::array();
  fmt::print("\n{:<10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>14}\n", "/metrics", "req/s",
             "p50", "p90", "p99", "requests", "failed", "RSS before/after");
  for (const bool compat : {false, true}) {
    const auto w = scrape_load(o, compat);
    const std::string name = compat ? "dcgm" : "plain";
    if (!w.ran) {
      fmt::print("{:<10} waived: {}\n", name, w.why);
      cases.push_back({{"case", "scrape_" + name}, {"status", "waived"}, {"reason", w.why}});
      continue;
    }
    fmt::print("{:<10} {:>10.0f} {:>7.2f} ms {:>7.2f} ms {:>7.2f} ms {:>10} {:>8} {:>7} / {} KiB\n",
               name, w.requests_per_second, w.p50_ms, w.p90_ms, w.p99_ms, w.requests, w.failed,
               w.rss_before_kib, w.rss_after_kib);
    cases.push_back({{"case", "scrape_" + name},
                     {"status", "ok"},
                     {"connections", o.connections},
                     {"seconds", o.wrk_seconds},
                     {"requests_per_second", w.requests_per_second},
                     {"latency_p50_ms", w.p50_ms},
                     {"latency_p90_ms", w.p90_ms},
                     {"latency_p99_ms", w.p99_ms},
                     {"requests", w.requests},
                     {"failed", w.failed},
                     {"rss_before_kib", w.rss_before_kib},
                     {"rss_after_kib", w.rss_after_kib},
                     {"target", "p99 < 10 ms, no failed request, memory flat"}});
  }
  fmt::print("\ntargets: p99 < 10 ms with {} scrapers, no failed request, memory flat\n",
             o.connections);
  if (!o.json.empty()) {
    nlohmann::ordered_json j = {{"schema", kSchema},
                                {"devices", o.devices},
                                {"sampler",
                                 {{"cpu_seconds_per_round", per_round_cpu},
                                  {"wall_seconds_per_round", per_round_wall},
                                  {"core_share_at_1hz", per_round_cpu},
                                  {"live_process_core_share", live_share},
                                  {"live_seconds", live_wall},
                                  {"metrics_bytes", metrics_bytes},
                                  {"target_core_share", 0.01}}},
                                {"scrapes", cases}};
    std::ofstream(o.json) << j.dump(2) << "\n";
  }
  return 0;
}
