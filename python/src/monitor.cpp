#include "monitor.hpp"

#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "acco/analyze/analyze.hpp"
#include "acco/analyze/json.hpp"
#include "acco/analyze/recording.hpp"
#include "acco/analyze/trace_analysis.hpp"
#include "acco/monitor/sampler.hpp"
#include "acco/monitor/sources.hpp"

#include "errors.hpp"
#include "to_python.hpp"

namespace py = pybind11;

namespace acco::python {
namespace {

// acco.Monitor: a monitor::Sampler over the sources `acco serve` reads.
class PyMonitor {
 public:
  PyMonitor(double interval, int simulate, const std::string& nvml,
            const std::optional<std::string>& sysroot, bool host, std::size_t history) {
    if (!(interval >= 0.01 && interval <= 3600)) {
      throw ErrorException(Error{
          Errc::kInvalidArgument,
          "interval: " + std::to_string(interval) + " s is not between 0.01 and 3600 seconds"});
    }
    if (simulate < 0 || simulate > 64) {
      throw ErrorException(Error{Errc::kInvalidArgument, "simulate: " + std::to_string(simulate) +
                                                             " is not between 0 and 64"});
    }
    if (nvml != "auto" && nvml != "on" && nvml != "off") {
      throw ErrorException(
          Error{Errc::kInvalidArgument, "nvml: '" + nvml + "' is not one of auto, on, off"});
    }
    monitor::SourceOptions options;
    options.nvml_mode = nvml;
    options.simulate = simulate;
    options.host = host;
    monitor::SamplerOptions sampler;
    sampler.interval = std::chrono::milliseconds(std::llround(interval * 1000));
    sampler.history_rounds = history;
    const py::gil_scoped_release release;
    auto sources = unwrap(monitor::make_sources(sysroot.value_or("/"), options));
    fs_ = std::move(sources.fs);
    nvml_note_ = sources.nvml_note;
    sampler_ = std::make_unique<monitor::Sampler>(std::move(sources.devices),
                                                  std::move(sources.host), sampler);
  }
  PyMonitor(const PyMonitor&) = delete;
  PyMonitor& operator=(const PyMonitor&) = delete;
  PyMonitor(PyMonitor&&) = delete;
  PyMonitor& operator=(PyMonitor&&) = delete;
  ~PyMonitor() {
    PyThreadState* python = PyEval_SaveThread();
    sampler_.reset();  // stops its thread
    PyEval_RestoreThread(python);
  }

  py::object sample() {
    std::shared_ptr<const monitor::Published> latest;
    {
      const py::gil_scoped_release release;
      sampler_->round();
      latest = sampler_->latest();
    }
    return to_python(analyze::to_json(latest->snapshot));
  }

  void start() {
    const py::gil_scoped_release release;
    sampler_->start();
  }
  void stop() {
    const py::gil_scoped_release release;
    sampler_->stop();
  }

  py::list samples(double since) const {
    const auto rounds = sampler_->since(static_cast<std::int64_t>(std::llround(since * 1e9)));
    py::list out;
    for (const auto& round : rounds) {
      out.append(to_python(analyze::to_json(round->snapshot)));
    }
    return out;
  }

  [[nodiscard]] const std::string& nvml_note() const { return nvml_note_; }

 private:
  std::unique_ptr<core::Fs> fs_;  // what the sources read through; outlives them
  std::string nvml_note_;
  std::unique_ptr<monitor::Sampler> sampler_;
};

py::object analyze_file(const std::string& path, double window,
                        const std::optional<std::string>& device) {
  if (!(window > 0)) {
    throw ErrorException(Error{Errc::kInvalidArgument, "window: expected seconds above 0"});
  }
  nlohmann::ordered_json document;
  {
    const py::gil_scoped_release release;
    auto recording = unwrap(analyze::read_recording(path));
    if (recording.trace) {
      document = analyze::to_json(unwrap(analyze::analyze_trace(*recording.trace, path)));
    } else {
      analyze::AnalyzeOptions options;
      options.window_seconds = window;
      options.device = device.value_or("");
      document = analyze::to_json(analyze::analyze_recording(recording, options, path));
    }
  }
  return to_python(document);
}

}  // namespace

void bind_monitor(py::module_& m) {
  py::class_<PyMonitor>(m, "Monitor",
                        R"(The sensors `acco serve` samples: NVML GPUs (when the library loads),
simulated devices and the host, one round (a snapshot: devices, host, process, sampler) per
interval, as plain dicts in the format of `acco record`'s lines. As a context manager it
samples on a thread of its own between enter and exit.)")
      .def(py::init<double, int, const std::string&, const std::optional<std::string>&, bool,
                    std::size_t>(),
           py::arg("interval") = 1.0, py::arg("simulate") = 0, py::arg("nvml") = "auto",
           py::arg("sysroot") = py::none(), py::arg("host") = true, py::arg("history") = 3600,
           "interval: seconds between rounds; simulate: simulated GPUs added; nvml: auto, on "
           "(UnavailableError without the library), off; sysroot: where the host is read; "
           "history: rounds kept.")
      .def("sample", &PyMonitor::sample, "Takes one round now and returns it.")
      .def("start", &PyMonitor::start, "Takes one round, then one per interval on a thread.")
      .def("stop", &PyMonitor::stop, "Ends the thread after the round in progress.")
      .def("samples", &PyMonitor::samples, py::arg("since") = 0.0,
           "The rounds kept, oldest first, taken at or after `since` (Unix seconds).")
      .def_property_readonly("nvml", &PyMonitor::nvml_note,
                             "\"on\", \"off\" or \"unavailable (<why>)\".")
      .def("__enter__",
           [](py::object self) {
             self.cast<PyMonitor&>().start();
             return self;
           })
      .def("__exit__",
           [](PyMonitor& self, const py::object&, const py::object&, const py::object&) {
             self.stop();
             return false;
           });

  m.def("analyze", &analyze_file, py::arg("path"), py::arg("window") = 30.0,
        py::arg("device") = py::none(),
        R"(A recording's verdicts per device and window: the document `acco analyze --json`
prints, as a dict. `path` is an `acco record` file, nvidia-smi CSV/dmon/-q output, Prometheus
scrapes, or an acco Chrome trace (then its idle gaps). NotFoundError for a missing file,
InvalidArgumentError naming the line of a malformed one.)");
}

}  // namespace acco::python
