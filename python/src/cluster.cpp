#include "cluster.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "acco/bench/machine_summary.hpp"
#include "acco/bench/run_setup.hpp"
#include "acco/cluster/communicator.hpp"
#include "acco/cluster/fusion.hpp"
#include "acco/cluster/launcher.hpp"
#include "acco/core/settings.hpp"
#include "acco/tune/tune_profile.hpp"

#include "errors.hpp"

namespace py = pybind11;

namespace acco::python {
namespace {

// The launcher that started this process, read from the environment (no MPI call).
cluster::LaunchInfo launch_info() {
  return unwrap(cluster::detect_launcher(cluster::process_environment()));
}

// A writable, contiguous buffer of 32-bit floats (numpy float32 arrays, tensor.numpy()): its
// element count and address. Raises InvalidArgumentError naming `what` otherwise.
struct Floats {
  py::buffer_info info;
  float* data = nullptr;
  std::size_t count = 0;
};

Floats floats(const py::buffer& buffer, const std::string& what) {
  Floats f{buffer.request(true), nullptr, 0};
  if (f.info.itemsize != sizeof(float) || f.info.format != py::format_descriptor<float>::format()) {
    throw ErrorException(
        Error{Errc::kInvalidArgument,
              what + ": expected float32 elements, got format '" + f.info.format + "'"});
  }
  py::ssize_t expected = f.info.itemsize;
  for (py::ssize_t i = f.info.ndim - 1; i >= 0; --i) {
    const auto dim = static_cast<std::size_t>(i);
    if (f.info.shape[dim] > 1 && f.info.strides[dim] != expected) {
      throw ErrorException(Error{Errc::kInvalidArgument, what + ": expected a contiguous array"});
    }
    expected *= f.info.shape[dim];
  }
  f.data = static_cast<float*>(f.info.ptr);
  f.count = static_cast<std::size_t>(f.info.size);
  return f;
}

// acco.Communicator: the job's ranks (Open MPI under mpirun or srun, else this process alone).
class PyCommunicator {
 public:
  PyCommunicator() {
    const py::gil_scoped_release release;
    comm_ = unwrap(cluster::open_job_communicator());
  }
  [[nodiscard]] cluster::Communicator& get() { return *comm_; }

  void allreduce(const py::buffer& buffer, bool average) {
    Floats f = floats(buffer, "allreduce");
    const py::gil_scoped_release release;
    unwrap(comm_->run(cluster::Op::kAllReduce, f.data, f.data, f.count));
    if (average && comm_->size() > 1) {
      const float ranks = static_cast<float>(comm_->size());
      for (std::size_t i = 0; i < f.count; ++i) {
        f.data[i] /= ranks;
      }
    }
  }

  void broadcast(const py::buffer& buffer, int root) {
    py::buffer_info info = buffer.request(true);
    const auto bytes = static_cast<std::size_t>(info.size * info.itemsize);
    const py::gil_scoped_release release;
    unwrap(comm_->broadcast({static_cast<std::byte*>(info.ptr), bytes}, root));
  }

  void barrier() {
    const py::gil_scoped_release release;
    unwrap(comm_->barrier());
  }

 private:
  std::unique_ptr<cluster::Communicator> comm_;
};

// acco.FusedAllReduce: Horovod's tensor fusion over a communicator. The arrays added stay
// referenced until the flush that reduces them.
class PyFused {
 public:
  PyFused(PyCommunicator& comm, std::uint64_t threshold_bytes)
      : fused_(unwrap(cluster::FusedAllReduce::make(
            comm.get(), cluster::FusionOptions{.threshold_bytes = threshold_bytes}))) {}

  void add(const py::buffer& buffer) {
    Floats f = floats(buffer, "add");
    held_.push_back(buffer);
    const py::gil_scoped_release release;
    unwrap(fused_.add(f.data, f.count));
  }

  void flush() {
    {
      const py::gil_scoped_release release;
      unwrap(fused_.flush());
    }
    held_.clear();
  }

  [[nodiscard]] py::dict stats() const {
    py::dict d;
    d["queued"] = fused_.stats().queued;
    d["collectives"] = fused_.stats().collectives;
    d["fused_bytes"] = fused_.stats().fused_bytes;
    return d;
  }
  [[nodiscard]] std::size_t pending() const { return fused_.pending(); }

 private:
  cluster::FusedAllReduce fused_;
  std::vector<py::object> held_;
};

// The fusion entry `acco bench --collective allreduce --save-fusion` saved for `link_class` in
// this machine's tune profile (in `tune_dir`, empty: the default directory), or None when there
// is no profile, no such entry, or the machine cannot be probed.
py::object tuned_fusion(const std::string& link_class, const std::string& tune_dir) {
  std::optional<tune::FusionTuning> found;
  std::string path;
  {
    const py::gil_scoped_release release;
    core::Settings settings;
    settings.define("sysroot", "/", "");
    settings.define("pci-ids", "", "");
    auto machine = bench::probe_machine(settings);
    auto dir = tune::tune_directory_or(tune_dir);
    if (machine && dir) {
      path = tune::profile_path(*dir, bench::machine_fingerprint(*machine));
      if (auto profile = tune::load_tune_profile(path); profile) {
        if (const auto* f = tune::find_fusion(*profile, link_class)) {
          found = *f;
        }
      }
    }
  }
  if (!found) {
    return py::none();
  }
  py::dict d;
  d["link_class"] = found->link_class;
  d["threshold_bytes"] = found->threshold_bytes;
  d["ranks"] = found->ranks;
  d["measured"] = found->measured;
  d["path"] = path;
  return d;
}

}  // namespace

void bind_cluster(py::module_& m) {
  m.def("_tuned_fusion", &tuned_fusion, py::arg("link_class"), py::arg("tune_dir") = "",
        "The fusion threshold saved in this machine's tune profile for a link class, or None.");
  m.def(
      "_launch",
      [] {
        const auto l = launch_info();
        py::dict d;
        d["rank"] = l.rank;
        d["size"] = l.size;
        d["local_rank"] = l.local_rank ? py::cast(*l.local_rank) : py::none();
        d["local_size"] = l.local_size ? py::cast(*l.local_size) : py::none();
        d["launcher"] = l.evidence;
        return d;
      },
      "The launcher's rank, size and local rank from the environment (no MPI call).");

  py::class_<PyCommunicator>(m, "Communicator", R"(The ranks of this job: Open MPI when a launcher
(mpirun, srun) started the process, else this process alone. One per process: use
acco.communicator(), which opens it once.)")
      .def(py::init<>())
      .def_property_readonly("rank", [](PyCommunicator& c) { return c.get().rank(); })
      .def_property_readonly("size", [](PyCommunicator& c) { return c.get().size(); })
      .def_property_readonly("local_rank", [](PyCommunicator& c) { return c.get().local_rank(); })
      .def_property_readonly("local_size", [](PyCommunicator& c) { return c.get().local_size(); })
      .def_property_readonly("backend", [](PyCommunicator& c) { return c.get().backend(); })
      .def("allreduce", &PyCommunicator::allreduce, py::arg("array"), py::arg("average") = false,
           "Sums a float32 array over the ranks in place (average=True: divides by the size).")
      .def("broadcast", &PyCommunicator::broadcast, py::arg("array"), py::arg("root") = 0,
           "Copies rank `root`'s array into every rank's, in place (any dtype, same size).")
      .def("barrier", &PyCommunicator::barrier)
      .def(
          "fused", [](PyCommunicator& c, std::uint64_t threshold) { return PyFused(c, threshold); },
          py::arg("threshold_bytes") = std::uint64_t{64} << 20, py::keep_alive<0, 1>(),
          "A FusedAllReduce on this communicator (Horovod's tensor fusion).");

  py::class_<PyFused>(m, "FusedAllReduce", R"(Allreduces queued one by one and run as few
collectives: each array holds its sum after the flush that covers it. Every rank must add the
same arrays (sizes) in the same order.)")
      .def("add", &PyFused::add, py::arg("array"))
      .def("flush", &PyFused::flush)
      .def_property_readonly("pending", &PyFused::pending)
      .def("stats", &PyFused::stats);
}

}  // namespace acco::python
