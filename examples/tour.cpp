// A tour of acco as a library: what `acco probe`, `acco bench --quick`, `acco schedule` and
// `acco serve` do, done by a program that includes only acco's public headers and links its
// modules. It runs on any machine: the probe reads this one (or the sysroot given as the first
// argument), the bench and the scheduled workload use two emulated host devices behind an
// emulated PCIe Gen4 x16 link, and the daemon serves two simulated GPUs for 3 seconds on a free
// port of 127.0.0.1 while a client reads them back over HTTP.
//
//   acco_tour [SYSROOT]
//
// Exit status 0 when every step worked, 1 with the failing step's error on stderr otherwise.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "acco/bench/runner.hpp"
#include "acco/core/stop.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/monitor/client.hpp"
#include "acco/monitor/daemon.hpp"
#include "acco/sched/experiment.hpp"
#include "acco/topo/probe.hpp"

namespace {

// The probe: the machine model and the checks' findings, as `acco probe` reports them.
acco::Status probe(const std::string& sysroot) {
  acco::topo::ProbeRequest request;
  request.sysroot = sysroot;
  request.nvml = acco::topo::NvmlMode::kOff;
  ACCO_ASSIGN_OR_RETURN(const auto probed, acco::topo::probe(request), "probe");
  const acco::topo::Machine& machine = probed.machine;
  fmt::print("probe: {}, {} NUMA node(s), {} PCI device(s), {} finding(s)\n", machine.hostname,
             machine.numa_nodes.size(), machine.pci_devices.size(), probed.findings.size());
  for (const acco::topo::Finding& finding : probed.findings) {
    fmt::print("  {}: {}\n", finding.rule, finding.message);
  }
  return {};
}

// A quick bench of pinned copies in both directions on two emulated devices.
acco::Status bench() {
  acco::bench::RunOptions options;
  options.backend = acco::bench::BackendChoice::kHost;
  options.host.devices = 2;
  ACCO_ASSIGN_OR_RETURN(options.host.link, acco::device::parse_link("pcie4x16"), "bench");
  options.patterns = {"h2d_pinned_*", "d2h_pinned_*"};
  options.defaults.bytes = std::uint64_t{8} << 20;
  options.defaults.reps = 3;
  options.defaults.warmup = 1;
  ACCO_ASSIGN_OR_RETURN(const auto run, acco::bench::run_benchmarks(options, nullptr, {}), "bench");
  for (const acco::bench::BenchResult& result : run.results) {
    fmt::print("bench: {:20} {:18} {} {:.2f} GB/s\n", result.case_key, result.device, result.status,
               result.median_bytes_per_second / 1e9);
    if (result.status == acco::bench::kStatusError) {
      return acco::fail(acco::Errc::kDeviceError,
                        "bench: " + result.case_key + " failed: " + result.reason);
    }
  }
  return {};
}

// A tiled Cholesky factorisation scheduled on the two devices by two policies in turn.
acco::Status schedule() {
  acco::sched::ExperimentDevices devices;
  acco::device::HostBackendOptions host;
  host.devices = 2;
  ACCO_ASSIGN_OR_RETURN(host.link, acco::device::parse_link("pcie4x16"), "schedule");
  ACCO_ASSIGN_OR_RETURN(devices.backend, acco::device::make_host_backend(host), "schedule");
  devices.devices = devices.backend->devices();
  devices.link = host.link.name;
  devices.models.assign(devices.devices.size(), acco::sched::DeviceModel{"gpu", 1.0});

  acco::sched::ExperimentOptions options;
  options.spec.kind = acco::sched::WorkloadKind::kCholesky;
  options.spec.tiles = 4;
  options.spec.tile_bytes = std::size_t{64} << 10;
  options.policies = {acco::sched::PolicyKind::kDmda, acco::sched::PolicyKind::kEager};
  ACCO_ASSIGN_OR_RETURN(const auto workload,
                        acco::sched::make_workload(options.spec, devices.models), "schedule");
  ACCO_ASSIGN_OR_RETURN(const auto experiment,
                        acco::sched::run_experiment(workload, devices, options), "schedule");
  for (const acco::sched::WorkloadOutcome& run : experiment.runs) {
    fmt::print("schedule: {}, {} task(s), makespan {:.3f} s, efficiency {:.0f}%, {} failed\n",
               run.policy, run.tasks, run.makespan_seconds, run.efficiency * 100, run.failed);
  }
  return {};
}

// The node daemon on two simulated GPUs, sampled every 200 ms for 3 seconds, read back by a
// client the way `acco top --from` reads it.
acco::Status serve() {
  using namespace std::chrono_literals;
  acco::monitor::DaemonOptions options;
  options.server.port = 0;  // a free port
  options.interval = 200ms;
  options.sources.nvml_mode = "off";
  options.sources.simulate = 2;
  ACCO_ASSIGN_OR_RETURN(auto daemon, acco::monitor::Daemon::create(std::move(options)), "serve");
  ACCO_ASSIGN_OR_RETURN(const auto started, daemon.start(), "serve");
  fmt::print("serve: listening on 127.0.0.1:{}, {} device(s)\n", started.port, started.devices);

  std::this_thread::sleep_for(1s);
  const acco::monitor::ServerUrl url{"127.0.0.1", started.port};
  ACCO_ASSIGN_OR_RETURN(const auto snapshot, acco::monitor::fetch_snapshot(url, 2s), "serve");
  for (const auto& device : snapshot.devices) {
    fmt::print("serve: device {} ({}): {:.0f} W\n", device.device, device.model,
               device.power_watts.value_or(0));
  }
  const acco::core::StopFlag never;  // nothing stops it early: it ends after 3 s
  ACCO_ASSIGN_OR_RETURN(const auto summary, daemon.run(never, 3s), "serve");
  fmt::print("serve: stopped by {} after {} round(s)\n", summary.stopped_by, summary.rounds);
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string sysroot = argc > 1 ? argv[1] : "/";
  acco::Status status = probe(sysroot);
  if (status) {
    status = bench();
  }
  if (status) {
    status = schedule();
  }
  if (status) {
    status = serve();
  }
  if (!status) {
    fmt::print(stderr, "acco_tour: {}\n", status.error().message);
    return 1;
  }
  return 0;
}
