// Small builders for bench values used across the module's tests.
#pragma once

#include <string>
#include <utility>

#include "acco/bench/result.hpp"

namespace acco::bench::testing {

// A measured result: median `median`, min/max 1% around it, cov 0.5%.
inline BenchResult measured(std::string case_key, double median, double peak = 0,
                            std::string device = "0000:18:00.0") {
  BenchResult r;
  r.case_key = std::move(case_key);
  r.device = std::move(device);
  r.bytes = 512ULL << 20;
  r.median_bytes_per_second = median;
  r.min_bytes_per_second = median * 0.99;
  r.max_bytes_per_second = median * 1.01;
  r.cov = 0.005;
  r.peak_bytes_per_second = peak;
  r.efficiency = peak > 0 ? median / peak : 0;
  r.verdict = peak > 0 ? "ok" : "unknown";
  r.strategy = "direct";
  r.timer = kTimerDeviceEvents;
  return r;
}

// 4 KiB .. 1 GiB, rising like a link with 10 us of latency and a 55 GB/s asymptote.
inline std::vector<SweepPoint> latency_bound_sweep() {
  std::vector<SweepPoint> sweep;
  for (int e = 12; e <= 30; ++e) {
    const double bytes = static_cast<double>(1ULL << e);
    sweep.push_back({1ULL << e, bytes / (10e-6 + bytes / 55e9)});
  }
  return sweep;
}

// A run on an H200-like machine: a pinned H2D case, a sweep, a latency case and a waived case.
inline BenchRun sample_run() {
  BenchRun run;
  run.created = "2025-03-01T12:00:00Z";
  run.host = "gpu-node-7";
  run.fingerprint = "gpu-node-7-00000000deadbeef";
  run.machine = {{"hostname", "gpu-node-7"},
                 {"kernel", "6.1.0-18-amd64"},
                 {"accelerators",
                  {{{"pci", "0000:18:00.0"},
                    {"name", "NVIDIA H200"},
                    {"vendor_id", "0x10de"},
                    {"device_id", "0x2335"},
                    {"numa_node", 0},
                    {"link_current", "Gen5 x16"},
                    {"link_max", "Gen5 x16"},
                    {"path_bytes_per_second", 63.015e9}}}}};
  run.results.push_back(measured("h2d_pinned_ce", 55.3e9, 63.015e9));
  auto sweep = measured("h2d_pinned_sweep", 54.9e9, 63.015e9);
  sweep.sweep = latency_bound_sweep();
  run.results.push_back(sweep);
  auto latency = measured("h2d_latency", 0, 0);
  latency.bytes = 4;
  latency.min_bytes_per_second = 0;
  latency.max_bytes_per_second = 0;
  latency.latency_seconds = 2.4e-6;
  latency.timer = kTimerHostClock;
  run.results.push_back(latency);
  run.results.push_back(waived("p2p_read_ce", "0000:18:00.0", "needs two GPUs, found one"));
  return run;
}

}  // namespace acco::bench::testing
