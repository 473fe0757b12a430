#include "runtime.hpp"

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "acco/sched/access.hpp"
#include "acco/sched/policy.hpp"
#include "acco/sched/runtime.hpp"

#include "errors.hpp"
#include "transfers.hpp"

namespace py = pybind11;

namespace acco::python {
namespace {

// Registered data: the array (held, so its memory stays) and what views of its replicas need.
struct Registered {
  py::array array;
  sched::DataHandle handle;
};

// What the implementations reach from the device threads. They capture a pointer to it, never a
// Python object: the runtime may copy or destroy its std::functions without the GIL.
struct RuntimeState {
  std::vector<py::object> callables;             // by index; touched with the GIL only
  std::map<std::size_t, py::object> errors;      // Python exception per submission, GIL only
  std::map<std::size_t, Registered*> by_handle;  // data id -> registration, GIL only
};

// acco.TaskContext: where a task runs and its data there, valid during the call only.
struct PyTaskContext {
  int device = -1;
  std::string kind;
  py::list arrays;  // numpy views of the replicas (host-accessible device memory), or empty
  std::vector<std::uintptr_t> pointers;
};

class PyRuntime {
 public:
  PyRuntime(const std::vector<PyDevice>& devices, const std::string& policy,
            const std::optional<std::vector<std::string>>& kinds)
      : state_(std::make_unique<RuntimeState>()) {
    if (devices.empty()) {
      throw ErrorException(Error{Errc::kInvalidArgument, "devices: expected at least one"});
    }
    if (kinds && kinds->size() != devices.size()) {
      throw ErrorException(
          Error{Errc::kInvalidArgument, "kinds: " + std::to_string(kinds->size()) + " for " +
                                            std::to_string(devices.size()) + " devices"});
    }
    sched::RuntimeOptions options;
    options.policy = unwrap(sched::policy_from_string(policy));
    std::vector<sched::DeviceSpec> specs;
    for (std::size_t i = 0; i < devices.size(); ++i) {
      backends_.push_back(devices[i].backend);
      sched::DeviceSpec spec;
      spec.device = devices[i].device;
      spec.kind = kinds ? (*kinds)[i] : devices[i].device->info().backend;
      host_accessible_.push_back(spec.kind == "host");
      specs.push_back(std::move(spec));
    }
    const py::gil_scoped_release release;
    runtime_ = unwrap(sched::Runtime::create(std::move(specs), options));
  }
  PyRuntime(const PyRuntime&) = delete;
  PyRuntime& operator=(const PyRuntime&) = delete;
  PyRuntime(PyRuntime&&) = delete;
  PyRuntime& operator=(PyRuntime&&) = delete;
  // The runtime waits for its tasks, whose callables need the GIL: released while it goes.
  ~PyRuntime() {
    PyThreadState* python = PyEval_SaveThread();
    runtime_.reset();
    PyEval_RestoreThread(python);
  }

  std::size_t register_data(const py::handle& object) {
    auto array = py::array::ensure(object, py::array::c_style);
    if (!array || !array.writeable() || array.ptr() == nullptr ||
        (py::isinstance<py::array>(object) && !object.is(array))) {
      throw ErrorException(
          Error{Errc::kInvalidArgument, "register: expected a writable C-contiguous numpy array"});
    }
    auto reg = std::make_unique<Registered>();
    reg->array = array;
    void* data = array.mutable_data();
    const auto bytes = static_cast<std::size_t>(array.nbytes());
    {
      const py::gil_scoped_release release;
      reg->handle = unwrap(runtime_->register_data(data, bytes));
    }
    const std::size_t id = reg->handle.id;
    state_->by_handle[id] = reg.get();
    registered_[id] = std::move(reg);
    return id;
  }

  void write_back(std::size_t id) {
    const auto handle = known(id);
    const py::gil_scoped_release release;
    unwrap(runtime_->write_back(handle));
  }

  void unregister(std::size_t id) {
    const auto handle = known(id);
    {
      const py::gil_scoped_release release;
      unwrap(runtime_->unregister(handle));
    }
    state_->by_handle.erase(id);
    registered_.erase(id);
  }

  sched::TaskId submit(const py::object& fn, const std::vector<std::size_t>& reads,
                       const std::vector<std::size_t>& writes,
                       const std::vector<std::size_t>& read_writes, double flops, double bytes,
                       const std::optional<std::string>& kind, const std::string& name,
                       const std::vector<sched::TaskId>& depends_on, int priority) {
    auto codelet = std::make_shared<sched::Codelet>();
    codelet->type = name.empty() ? std::string(py::str(fn.attr("__name__"))) : name;
    // One callable for every device kind, or a dict of callables by kind.
    std::vector<std::pair<std::string, py::object>> by_kind;
    if (py::isinstance<py::dict>(fn)) {
      for (const auto& [k, v] : fn.cast<py::dict>()) {
        by_kind.emplace_back(py::str(k), py::reinterpret_borrow<py::object>(v));
      }
      codelet->type = name.empty() ? "task" : name;
    } else if (kind) {
      by_kind.emplace_back(*kind, fn);
    } else {
      for (const auto& k : kinds()) {
        by_kind.emplace_back(k, fn);
      }
    }
    const std::size_t submission = submissions_++;
    std::vector<std::size_t> data;  // the data id of each access, in the task's order
    data.insert(data.end(), reads.begin(), reads.end());
    data.insert(data.end(), writes.begin(), writes.end());
    data.insert(data.end(), read_writes.begin(), read_writes.end());
    for (auto& [k, callable] : by_kind) {
      const std::size_t index = state_->callables.size();
      state_->callables.push_back(callable);
      codelet->implementations.emplace_back(
          k, [state = state_.get(), index, submission, data, this](sched::TaskContext& ctx) {
            run_callable(*state, index, submission, data, ctx);
          });
    }
    sched::Task task;
    task.codelet = std::move(codelet);
    task.name = name;
    task.cost.flops = flops;
    task.cost.bytes = bytes;
    task.depends_on = depends_on;
    task.priority = priority;
    const auto add = [&](const std::vector<std::size_t>& ids, sched::Access access) {
      for (const std::size_t id : ids) {
        task.accesses.emplace_back(known(id), access);
      }
    };
    add(reads, sched::Access::kRead);
    add(writes, sched::Access::kWrite);
    add(read_writes, sched::Access::kReadWrite);
    sched::TaskId id = 0;
    {
      const py::gil_scoped_release release;
      id = unwrap(runtime_->submit(std::move(task)));
    }
    submission_of_[id] = submission;
    return id;
  }

  // Waits without the GIL; a failure since the last call raises the first failed task's own
  // Python exception (or InternalError with the runtime's line when it raised none).
  void wait_all() {
    Status status;
    {
      const py::gil_scoped_release release;
      status = runtime_->wait_all();
    }
    if (status) {
      return;
    }
    const auto failures = runtime_->failures();
    for (std::size_t i = reported_; i < failures.size(); ++i) {
      const auto submission = submission_of_.find(failures[i].task);
      if (submission == submission_of_.end()) {
        continue;
      }
      const auto error = state_->errors.find(submission->second);
      if (error != state_->errors.end()) {
        reported_ = failures.size();
        const py::object exception = error->second;
        PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception.ptr())), exception.ptr());
        throw py::error_already_set();
      }
    }
    reported_ = failures.size();
    unwrap(std::move(status));
  }

  [[nodiscard]] py::list failures() const {
    py::list out;
    for (const auto& f : runtime_->failures()) {
      py::dict d;
      d["task"] = f.task;
      d["name"] = f.name;
      d["error"] = f.error;
      out.append(d);
    }
    return out;
  }

  [[nodiscard]] std::string explain(sched::TaskId task) const {
    return unwrap(runtime_->explain(task));
  }
  [[nodiscard]] std::string policy() const { return std::string(to_string(runtime_->policy())); }
  void set_policy(const std::string& name) {
    runtime_->set_policy(unwrap(sched::policy_from_string(name)));
  }
  [[nodiscard]] int devices() const { return runtime_->devices(); }

 private:
  [[nodiscard]] sched::DataHandle known(std::size_t id) const {
    const auto it = registered_.find(id);
    if (it == registered_.end()) {
      throw ErrorException(
          Error{Errc::kInvalidArgument, "data " + std::to_string(id) + ": not registered"});
    }
    return it->second->handle;
  }

  [[nodiscard]] std::vector<std::string> kinds() const {
    std::vector<std::string> out;
    for (const auto& d : runtime_->counters().devices) {
      if (std::find(out.begin(), out.end(), d.kind) == out.end()) {
        out.push_back(d.kind);
      }
    }
    return out;
  }

  // On a device thread: the callable with the GIL, its exception kept for wait_all and turned
  // into the task's failure.
  void run_callable(RuntimeState& state, std::size_t index, std::size_t submission,
                    const std::vector<std::size_t>& data, sched::TaskContext& ctx) {
    const py::gil_scoped_acquire gil;
    try {
      auto context = std::make_unique<PyTaskContext>();
      context->device = ctx.device();
      context->kind = ctx.kind();
      const bool host = host_accessible_.at(static_cast<std::size_t>(ctx.device()));
      for (std::size_t i = 0; i < ctx.accesses(); ++i) {
        context->pointers.push_back(reinterpret_cast<std::uintptr_t>(ctx.data(i)));
      }
      py::object ctx_object = py::cast(std::move(context));
      auto& c = ctx_object.cast<PyTaskContext&>();
      if (host) {
        for (std::size_t i = 0; i < ctx.accesses(); ++i) {
          c.arrays.append(replica_view(*state.by_handle.at(data.at(i)), ctx, i, ctx_object));
        }
      }
      state.callables.at(index)(ctx_object);
    } catch (py::error_already_set& e) {
      // One line, as every failure the runtime lists: "KeyError: 'missing'".
      const std::string message =
          std::string(py::str(e.type().attr("__name__"))) + ": " + std::string(py::str(e.value()));
      state.errors[submission] = e.value();
      throw std::runtime_error(message);
    }
  }

  // A numpy view of access i's replica with the registered array's dtype and shape; `base` (the
  // context) is its owner, so numpy does not copy.
  static py::array replica_view(const Registered& reg, const sched::TaskContext& ctx, std::size_t i,
                                const py::object& base) {
    std::vector<py::ssize_t> shape(reg.array.shape(), reg.array.shape() + reg.array.ndim());
    return {reg.array.dtype(), shape, std::vector<py::ssize_t>{}, ctx.data(i), base};
  }

  std::unique_ptr<RuntimeState> state_;
  std::vector<std::shared_ptr<device::Backend>> backends_;
  std::vector<bool> host_accessible_;
  std::map<std::size_t, std::unique_ptr<Registered>> registered_;
  std::map<sched::TaskId, std::size_t> submission_of_;
  std::size_t submissions_ = 0;
  std::size_t reported_ = 0;
  std::unique_ptr<sched::Runtime> runtime_;  // last: destroyed first, before what it uses
};

}  // namespace
}  // namespace acco::python

namespace acco::python {

void bind_runtime(py::module_& m) {
  py::class_<PyTaskContext>(m, "TaskContext",
                            "Where a task runs and its data there; valid during the call only.")
      .def_readonly("device", &PyTaskContext::device, "The runtime's index of the device.")
      .def_readonly("kind", &PyTaskContext::kind, "The device's kind (\"host\", \"cuda\").")
      .def_readonly("arrays", &PyTaskContext::arrays,
                    "The task's data on the device as numpy arrays (reads, then writes, then "
                    "read_writes), shaped as registered; empty where device memory is not host "
                    "memory (a GPU): use pointers.")
      .def_readonly("pointers", &PyTaskContext::pointers,
                    "The device addresses of the task's data, in the same order.");

  py::class_<PyRuntime>(m, "Runtime",
                        R"(The task runtime: tasks with Python callables as implementations, placed
over devices by a policy ("dmda": where the performance models say the task ends first; also
eager, round-robin, least-loaded, ws (work stealing), heft), their data moved by each device's
transfer engine. Callables run on the devices' threads, each holding the GIL while it runs.)")
      .def(py::init<const std::vector<PyDevice>&, const std::string&,
                    const std::optional<std::vector<std::string>>&>(),
           py::arg("devices"), py::arg("policy") = "dmda", py::arg("kinds") = py::none(),
           "kinds: each device's implementation key; its backend's name by default.")
      .def("register", &PyRuntime::register_data, py::arg("array"),
           "Hands a writable C-contiguous numpy array to the runtime; returns its data id. Leave "
           "it alone until write_back or unregister.")
      .def("write_back", &PyRuntime::write_back, py::arg("data"),
           "Waits for the tasks writing it, then makes the array valid again.")
      .def("unregister", &PyRuntime::unregister, py::arg("data"), "write_back, then forgets it.")
      .def("submit", &PyRuntime::submit, py::arg("fn"),
           py::arg("reads") = std::vector<std::size_t>{},
           py::arg("writes") = std::vector<std::size_t>{},
           py::arg("read_writes") = std::vector<std::size_t>{}, py::arg("flops") = 0.0,
           py::arg("bytes") = 0.0, py::arg("kind") = py::none(), py::arg("name") = "",
           py::arg("depends_on") = std::vector<sched::TaskId>{}, py::arg("priority") = 0,
           "Submits fn(ctx) (or a dict of callables by device kind) on the data ids given; "
           "returns the task id. flops and bytes are the cost hint for the model's prior.")
      .def("wait_all", &PyRuntime::wait_all,
           "Waits (without the GIL) for every task; raises the first failed task's exception "
           "(the other tasks' results stay), failures() lists them all.")
      .def("failures", &PyRuntime::failures)
      .def("explain", &PyRuntime::explain, py::arg("task"),
           "Why the task went where it did: \"dmda: dev1 ends at ...\".")
      .def_property("policy", &PyRuntime::policy, &PyRuntime::set_policy)
      .def_property_readonly("devices", &PyRuntime::devices);
}

}  // namespace acco::python
