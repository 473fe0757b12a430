// What a run of the benchmark needs besides its cases, for any program that runs one: the backend
// by name, the topology its peaks and fingerprint come from, the small sizes of a quick look, and
// the quick bench itself (`acco doctor`, the daemon's periodic bench).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "acco/bench/case.hpp"
#include "acco/bench/result.hpp"
#include "acco/bench/runner.hpp"
#include "acco/core/result.hpp"
#include "acco/core/settings.hpp"
#include "acco/topo/machine.hpp"
#include "acco/transfer/profile.hpp"

namespace acco::bench {

// The emulated link of the host backend when the caller names none (bench, tune, quick_bench).
inline constexpr std::string_view kDefaultLink = "pcie4x16";

// The names of BackendChoice: "auto", "host", "cuda".
[[nodiscard]] const std::vector<std::string>& backend_names();
// One of backend_names(). kInvalidArgument "'NAME' is not one of auto, host, cuda".
[[nodiscard]] Result<BackendChoice> parse_backend(std::string_view name);

// The suites of cases: "transfer", "storage".
[[nodiscard]] const std::vector<std::string>& suite_names();

// A run as `acco bench`'s suite flags ask for it, in their units and with their defaults.
struct RunRequest {
  std::string backend = "auto";    // auto, host, cuda
  int devices = 1;                 // host backend: emulated devices (1-64)
  std::string link{kDefaultLink};  // host backend: emulated link (device::parse_link)
  std::vector<std::string> cases;  // patterns (matches()); empty: every case of the suite
  std::string bytes = "256MiB";    // bandwidth cases' buffer: 4KiB-16GiB
  int reps = 5;                    // timed samples per case (1-1000)
  bool quick = false;              // apply_quick
  std::string suite = "transfer";  // transfer or storage
  std::string file;                // storage: the file read
  std::string create;              // storage: write this size to `file` first (4KiB-1TiB)
};

// The run `request` asks for, and the test file to write first (none when `create_bytes` is 0).
struct RunPlan {
  RunOptions run;
  std::string create_file;
  std::uint64_t create_bytes = 0;
};

// `request` checked: errors name the flag ("--bytes: '1KiB' is not a size from 4KiB to 16GiB",
// "--cases: no case matches (see acco bench --list)"), kInvalidArgument. The storage suite needs
// a regular file of at least 4 KiB unless `create` is given.
[[nodiscard]] Result<RunPlan> run_plan(const RunRequest& request);

// The topology a run's link peaks and fingerprint come from: `settings`' sysroot and pci-ids, no
// NVML; with `data_path` (absolute) also the mount and NVMe namespaces holding it
// (machine.data_dir), matched against the sysroot's mount table. topo::probe's errors.
[[nodiscard]] Result<topo::Machine> probe_machine(const core::Settings& settings,
                                                  const std::string& data_path = "");
// probe_machine for a run of `options`: for the storage suite with the mount under its file
// (storage_path), and the peak of the NVMe link there (topo::storage_link) or why there is none
// ("topology unavailable" when the probe failed) in options.defaults.
[[nodiscard]] Result<topo::Machine> probe_for_run(const core::Settings& settings,
                                                  RunOptions& options);
// `file`, absolute and through its links, for the mount that holds it; as given (made absolute)
// when that fails (the storage cases then report the file's own error).
[[nodiscard]] std::string storage_path(const std::string& file);

// A quick look (`acco bench --quick`, quick_bench): small buffers and few repetitions.
inline constexpr std::uint64_t kQuickBytes = std::uint64_t{64} << 20;
inline constexpr int kQuickReps = 3;
void apply_quick(CaseContext& context);

struct QuickBench {
  BenchRun run;
  std::string note;  // what was measured: "pinned and pageable copies on every GPU, ..."
};
// A short measurement (well under a minute) of `machine`'s device links: pinned and pageable
// host<->device copies on every GPU (the engine with `path_profiles`, keyed as
// CaseContext::path_profiles), or host memory bandwidth alone when no accelerator backend is
// usable. Errors: open_backend's and run_benchmarks'.
[[nodiscard]] Result<QuickBench> quick_bench(const topo::Machine& machine,
                                             std::map<std::string, transfer::Profile> path_profiles,
                                             const Progress& progress = {});

}  // namespace acco::bench
