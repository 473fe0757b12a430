// acco.probe and acco.bench: the documents `acco probe --json` and `acco bench --json` print, from
// the same module calls, as Python values.
#include "documents.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "acco/bench/result.hpp"
#include "acco/bench/run_setup.hpp"
#include "acco/bench/runner.hpp"
#include "acco/core/settings.hpp"
#include "acco/core/units.hpp"
#include "acco/device/cuda_backend.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/doctor/doctor.hpp"
#include "acco/doctor/live_machine.hpp"
#include "acco/topo/json.hpp"
#include "acco/topo/probe.hpp"
#include "acco/tune/saved_profile.hpp"

#include "errors.hpp"
#include "to_python.hpp"

namespace py = pybind11;

namespace acco::python {
namespace {

topo::NvmlMode nvml_mode(const std::string& mode) {
  if (mode == "auto") {
    return topo::NvmlMode::kAuto;
  }
  if (mode == "on") {
    return topo::NvmlMode::kOn;
  }
  if (mode == "off") {
    return topo::NvmlMode::kOff;
  }
  throw ErrorException(
      Error{Errc::kInvalidArgument, "nvml: '" + mode + "' is not one of auto, on, off"});
}

py::object probe(const std::optional<std::string>& sysroot,
                 const std::optional<std::string>& snapshot, const std::string& nvml,
                 const std::optional<std::string>& pci_ids) {
  topo::ProbeRequest request;
  request.sysroot = sysroot.value_or("/");
  request.from_snapshot = snapshot.value_or("");
  request.nvml = nvml_mode(nvml);
  request.pci_ids = pci_ids.value_or("");
  nlohmann::ordered_json document;
  {
    const py::gil_scoped_release release;
    auto result = unwrap(topo::probe(request));
    document = topo::probe_json(result.machine, result.findings);
    if (doctor::is_live(request)) {
      document["cuda_driver"] = doctor::to_json(doctor::read_cuda_driver());
    }
  }
  return to_python(document);
}

py::object doctor(bool with_bench, const std::optional<std::string>& sysroot,
                  const std::optional<std::string>& snapshot, const std::string& nvml,
                  const std::optional<std::string>& tune_dir) {
  doctor::Options options;
  options.probe.sysroot = sysroot.value_or("/");
  options.probe.from_snapshot = snapshot.value_or("");
  options.probe.nvml = nvml_mode(nvml);
  options.tune_dir = tune_dir.value_or("");
  if (!with_bench) {
    options.skip_bench = "bench=False";
  }
  nlohmann::ordered_json document;
  {
    const py::gil_scoped_release release;
    document = doctor::to_json(unwrap(doctor::run(std::move(options))));
  }
  return to_python(document);
}

bench::BackendChoice backend_choice(const std::string& name) {
  return unwrap(bench::parse_backend(name));
}

struct BenchArgs {
  std::optional<std::vector<std::string>> cases;
  bool quick = true;
  std::string backend = "auto";
  int devices = 1;
  std::string link = std::string(bench::kDefaultLink);
  std::optional<std::string> bytes;
  std::optional<int> reps;
  std::optional<std::string> sysroot;
  py::object profile;  // None: the one saved for this machine; False: none; a str: that file
};

py::object run_bench(const BenchArgs& args) {
  if (args.devices < 1 || args.devices > 64) {
    throw ErrorException(Error{Errc::kInvalidArgument, "devices: " + std::to_string(args.devices) +
                                                           " is not between 1 and 64"});
  }
  bench::RunOptions options;
  options.backend = backend_choice(args.backend);
  options.host.devices = args.devices;
  options.host.link = unwrap(device::parse_link(args.link));
  if (args.bytes) {
    const auto bytes = units::parse_bytes(*args.bytes);
    if (!bytes || *bytes < 4096 || *bytes > (std::uint64_t{16} << 30)) {
      throw ErrorException(Error{Errc::kInvalidArgument,
                                 "bytes: '" + *args.bytes + "' is not a size from 4KiB to 16GiB"});
    }
    options.defaults.bytes = *bytes;
  }
  if (args.reps) {
    if (*args.reps < 1 || *args.reps > 1000) {
      throw ErrorException(Error{Errc::kInvalidArgument, "reps: " + std::to_string(*args.reps) +
                                                             " is not between 1 and 1000"});
    }
    options.defaults.reps = *args.reps;
  }
  if (args.quick) {
    bench::apply_quick(options.defaults);
  }
  options.patterns = args.cases.value_or(std::vector<std::string>{});
  tune::ProfileChoice choice;
  if (py::isinstance<py::bool_>(args.profile)) {
    if (args.profile.cast<bool>()) {
      throw ErrorException(Error{Errc::kInvalidArgument,
                                 "profile: expected None (the saved one), False (none) or a file"});
    }
    choice.none = true;
  } else if (!args.profile.is_none()) {
    choice.file = py::str(args.profile);
  }
  core::Settings settings;
  settings.define("sysroot", "/", "topology from DIR/sys (for link peaks)");
  settings.define("pci-ids", "", "PCI ID database");
  if (args.sysroot) {
    unwrap(settings.set("sysroot", *args.sysroot, core::SetBy::kFlag));
  }
  nlohmann::ordered_json document;
  {
    const py::gil_scoped_release release;
    // As `acco bench`: without a topology the peaks come from the backend alone.
    auto machine = bench::probe_for_run(settings, options);
    const topo::Machine* known = machine ? &*machine : nullptr;
    auto profile = unwrap(tune::load_profile(choice, known));
    options.defaults.path_profiles = std::move(profile.engines);
    options.defaults.reader_options = profile.reader;
    const auto run = unwrap(bench::run_benchmarks(options, known, {}));
    document = bench::to_json(run);
  }
  return to_python(document);
}

}  // namespace

void bind_documents(py::module_& m) {
  m.def("probe", &probe, py::arg("sysroot") = py::none(), py::arg("snapshot") = py::none(),
        py::arg("nvml") = "auto", py::arg("pci_ids") = py::none(),
        R"(The machine's links and what is wrong with them: the acco.probe/1 document
`acco probe --json` prints, as a dict.

sysroot: read SYSROOT/sys and SYSROOT/proc instead of the live /sys and /proc.
snapshot: replay a snapshot written by `acco probe --snapshot` instead.
nvml: query NVML: "auto" (for the live machine), "on", "off".
pci_ids: name devices from this PCI ID database.
Raises NotFoundError (no such sysroot or snapshot), InvalidArgumentError (a malformed one).)");
  m.def("doctor", &doctor, py::arg("bench") = false, py::arg("sysroot") = py::none(),
        py::arg("snapshot") = py::none(), py::arg("nvml") = "auto",
        py::arg("tune_dir") = py::none(),
        R"(The doctor's assessment: the document `acco doctor --json` prints, as a dict (the probe's
fields, "quick_bench", "fix_first" and "summary", one line saying what to fix first).

bench: also run the quick bench of the data paths (seconds; the live machine only).
sysroot, snapshot, nvml: the machine to assess, as acco.probe takes them.
tune_dir: where acco tune saved its profiles (None: $XDG_STATE_HOME/acco/tune).
Raises NotFoundError (no such sysroot or snapshot), InvalidArgumentError (a malformed one).)");
  m.def(
      "bench",
      [](std::optional<std::vector<std::string>> cases, bool quick, std::string backend,
         int devices, std::string link, std::optional<std::string> bytes, std::optional<int> reps,
         std::optional<std::string> sysroot, py::object profile) {
        BenchArgs args;
        args.cases = std::move(cases);
        args.quick = quick;
        args.backend = std::move(backend);
        args.devices = devices;
        args.link = std::move(link);
        args.bytes = std::move(bytes);
        args.reps = reps;
        args.sysroot = std::move(sysroot);
        args.profile = std::move(profile);
        return run_bench(args);
      },
      py::arg("cases") = py::none(), py::arg("quick") = true, py::arg("backend") = "auto",
      py::arg("devices") = 1, py::arg("link") = std::string(bench::kDefaultLink),
      py::arg("bytes") = py::none(), py::arg("reps") = py::none(), py::arg("sysroot") = py::none(),
      py::arg("profile") = py::none(),
      R"(Measures the transfer paths: the acco.bench/1 document `acco bench --json` prints, as a
dict. Nothing is written to the bench history.

cases: only cases matching these patterns (["h2d_*", "sweep_*"]); None: all.
quick: small buffers and few repetitions (64 MiB, 3 reps), as `acco bench --quick`.
backend: "auto" (CUDA when a GPU is usable, else emulated host devices), "host", "cuda".
devices, link: the host backend's emulated devices and link ("pcie4x16", "25GB/s,2us").
bytes, reps: buffer size ("256MiB") and timed samples of bandwidth cases (before quick applies).
sysroot: the topology for link peaks.
profile: None: the tune profile saved for this machine; False: none; a path: that file.
Raises InvalidArgumentError (a pattern that matches no case, a bad link or size),
UnavailableError (backend="cuda" without a usable GPU).)");
}

}  // namespace acco::python
