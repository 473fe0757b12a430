#include "transfers.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "acco/bench/run_setup.hpp"
#include "acco/bench/runner.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/transfer/engine.hpp"
#include "acco/transfer/staging_pool.hpp"

#include "buffers.hpp"
#include "errors.hpp"

namespace py = pybind11;

namespace acco::python {
namespace {

// What the Python Engine, its Transfers and Batches share: the engine lives until the last of them
// goes. Engine is not thread-safe; the mutex lets several Python threads use one (each call takes
// it after the GIL is released, so a waiting thread never holds the GIL).
struct EngineState {
  std::shared_ptr<device::Backend> backend;
  std::unique_ptr<transfer::Engine> engine;
  std::mutex mutex;
};

py::dict record_dict(const transfer::CopyRecord& r) {
  py::dict d;
  d["strategy"] = std::string(transfer::to_string(r.strategy));
  d["direction"] = std::string(transfer::to_string(r.direction));
  d["dst_kind"] = device::to_string(r.dst_kind);
  d["src_kind"] = device::to_string(r.src_kind);
  d["bytes"] = r.bytes;
  d["chunks"] = r.chunks;
  d["queues"] = r.queues;
  d["items"] = r.items;
  return d;
}

// acco.Transfer: one copy_async or batch in flight, with the Python objects it reads and writes
// held until it completes.
class PyTransfer {
 public:
  PyTransfer(std::shared_ptr<EngineState> state, transfer::Transfer transfer,
             std::vector<std::unique_ptr<BufferView>> views)
      : state_(std::move(state)), transfer_(std::move(transfer)), views_(std::move(views)) {}
  PyTransfer(const PyTransfer&) = delete;
  PyTransfer& operator=(const PyTransfer&) = delete;
  // A transfer dropped unwaited is waited for here: its memory may not go while a copy uses it.
  // Python's C API, not gil_scoped_release, which may throw: a destructor must not.
  ~PyTransfer() {
    if (!done_) {
      PyThreadState* python = PyEval_SaveThread();
      (void)transfer_.wait();
      PyEval_RestoreThread(python);
    }
  }
  PyTransfer(PyTransfer&&) = delete;
  PyTransfer& operator=(PyTransfer&&) = delete;

  py::dict wait() {
    {
      const py::gil_scoped_release release;
      result_ = transfer_.wait();
    }
    done_ = true;
    views_.clear();  // with the GIL: releases the buffer exports
    Result<transfer::CopyRecord> result = *result_;
    return record_dict(unwrap(std::move(result)));
  }
  [[nodiscard]] bool ready() const { return done_ || transfer_.ready(); }
  [[nodiscard]] py::dict record() const { return record_dict(transfer_.record()); }

 private:
  std::shared_ptr<EngineState> state_;
  transfer::Transfer transfer_;
  std::vector<std::unique_ptr<BufferView>> views_;
  std::optional<Result<transfer::CopyRecord>> result_;
  bool done_ = false;
};

// acco.Batch: copies collected and moved together (Engine.batch()).
class PyBatch {
 public:
  explicit PyBatch(std::shared_ptr<EngineState> state) : state_(std::move(state)) {}

  void add(py::handle dst, py::handle src) {
    auto d = std::make_unique<BufferView>(dst, true, "dst");
    auto s = std::make_unique<BufferView>(src, false, "src");
    d->check_for(state_->engine->device());
    s->check_for(state_->engine->device());
    if (d->bytes() != s->bytes()) {
      throw ErrorException(
          Error{Errc::kInvalidArgument, "batch.add: dst holds " + std::to_string(d->bytes()) +
                                            " bytes, src " + std::to_string(s->bytes())});
    }
    items_.push_back({d->data(), s->data(), d->bytes()});
    views_.push_back(std::move(d));
    views_.push_back(std::move(s));
  }

  std::unique_ptr<PyTransfer> submit() {
    std::optional<transfer::Transfer> submitted;
    {
      const py::gil_scoped_release release;
      const std::lock_guard lock(state_->mutex);
      transfer::Batch batch = state_->engine->batch();
      for (const Item& item : items_) {
        unwrap(batch.add(item.dst, item.src, item.bytes));
      }
      submitted = unwrap(batch.submit());
    }
    items_.clear();
    return std::make_unique<PyTransfer>(state_, std::move(*submitted), std::move(views_));
  }

  [[nodiscard]] std::size_t items() const { return items_.size(); }

 private:
  struct Item {
    void* dst;
    const void* src;
    std::size_t bytes;
  };
  std::shared_ptr<EngineState> state_;
  std::vector<Item> items_;
  std::vector<std::unique_ptr<BufferView>> views_;
};

// acco.Engine.
class PyEngine {
 public:
  explicit PyEngine(const PyDevice& device) : state_(std::make_shared<EngineState>()) {
    state_->backend = device.backend;
    const py::gil_scoped_release release;  // starting measures a copy and starts threads
    state_->engine = unwrap(transfer::Engine::create(*device.device));
  }

  py::dict copy(py::handle dst, py::handle src) {
    const BufferView d(dst, true, "dst");
    const BufferView s(src, false, "src");
    check_pair(d, s);
    transfer::CopyRecord record;
    {
      const py::gil_scoped_release release;
      const std::lock_guard lock(state_->mutex);
      auto transfer = unwrap(state_->engine->copy(d.data(), s.data(), d.bytes()));
      record = unwrap(transfer.wait());
    }
    return record_dict(record);
  }

  std::unique_ptr<PyTransfer> copy_async(py::handle dst, py::handle src) {
    std::vector<std::unique_ptr<BufferView>> views;
    views.push_back(std::make_unique<BufferView>(dst, true, "dst"));
    views.push_back(std::make_unique<BufferView>(src, false, "src"));
    check_pair(*views[0], *views[1]);
    std::optional<transfer::Transfer> transfer;
    {
      const py::gil_scoped_release release;
      const std::lock_guard lock(state_->mutex);
      transfer =
          unwrap(state_->engine->copy(views[0]->data(), views[1]->data(), views[0]->bytes()));
    }
    return std::make_unique<PyTransfer>(state_, std::move(*transfer), std::move(views));
  }

  std::unique_ptr<PyBatch> batch() { return std::make_unique<PyBatch>(state_); }

  // `count` copies of src into dst, each waited for, timed in C++ alone: what Engine.copy costs
  // without Python (bench/python_overhead.py compares the two). Seconds in all.
  double time_copies(py::handle dst, py::handle src, std::size_t count) {
    const BufferView d(dst, true, "dst");
    const BufferView s(src, false, "src");
    check_pair(d, s);
    const py::gil_scoped_release release;
    const std::lock_guard lock(state_->mutex);
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < count; ++i) {
      auto transfer = unwrap(state_->engine->copy(d.data(), s.data(), d.bytes()));
      (void)unwrap(transfer.wait());
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  [[nodiscard]] PyDevice device() const { return {state_->backend, &state_->engine->device()}; }

  [[nodiscard]] py::dict counters() const {
    const auto c = state_->engine->counters();
    py::dict d;
    const auto direction = [](const transfer::DirectionCounters& dc) {
      py::dict x;
      x["copies"] = dc.copies;
      x["bytes"] = dc.bytes;
      return x;
    };
    d["host_to_host"] = direction(c.host_to_host);
    d["host_to_device"] = direction(c.host_to_device);
    d["device_to_host"] = direction(c.device_to_host);
    d["device_to_device"] = direction(c.device_to_device);
    d["batches"] = c.batches;
    return d;
  }

 private:
  // Memory this engine can copy (check_for), and as many bytes at both ends.
  void check_pair(const BufferView& d, const BufferView& s) const {
    d.check_for(state_->engine->device());
    s.check_for(state_->engine->device());
    if (d.bytes() != s.bytes()) {
      throw ErrorException(
          Error{Errc::kInvalidArgument, "copy: dst holds " + std::to_string(d.bytes()) +
                                            " bytes, src " + std::to_string(s.bytes())});
    }
  }

  std::shared_ptr<EngineState> state_;
};

std::vector<PyDevice> open_devices(const std::string& backend, int host_devices,
                                   const std::string& link) {
  if (host_devices < 1 || host_devices > 64) {
    throw ErrorException(
        Error{Errc::kInvalidArgument,
              "host_devices: " + std::to_string(host_devices) + " is not between 1 and 64"});
  }
  const auto choice = unwrap(bench::parse_backend(backend));
  device::HostBackendOptions host;
  host.devices = host_devices;
  host.link = unwrap(device::parse_link(link));
  std::shared_ptr<device::Backend> opened;
  {
    const py::gil_scoped_release release;
    opened = unwrap(bench::open_backend(choice, host)).backend;
  }
  std::vector<PyDevice> out;
  for (device::Device* d : opened->devices()) {
    out.push_back(PyDevice{opened, d});
  }
  return out;
}

// The pinned memory behind a pinned_empty array: a one-slot staging pool of the device (aligned,
// on its NUMA node, pinned once), owned by the array's capsule.
struct PinnedOwner {
  std::shared_ptr<device::Backend> backend;
  std::unique_ptr<transfer::StagingPool> pool;
  transfer::StagingPool::Slot slot;
  PinnedOwner() = default;
  PinnedOwner(const PinnedOwner&) = delete;
  PinnedOwner& operator=(const PinnedOwner&) = delete;
  PinnedOwner(PinnedOwner&&) = delete;
  PinnedOwner& operator=(PinnedOwner&&) = delete;
  ~PinnedOwner() {
    if (pool) {
      pool->release(slot.index);
    }
  }
};

py::array pinned_empty(const std::vector<py::ssize_t>& shape, const py::dtype& dtype,
                       const PyDevice& device) {
  std::size_t bytes = static_cast<std::size_t>(dtype.itemsize());
  for (const py::ssize_t n : shape) {
    if (n < 0) {
      throw ErrorException(
          Error{Errc::kInvalidArgument, "shape: negative dimension " + std::to_string(n)});
    }
    bytes *= static_cast<std::size_t>(n);
  }
  auto owner = std::make_unique<PinnedOwner>();
  owner->backend = device.backend;
  {
    const py::gil_scoped_release release;
    transfer::StagingPoolOptions options;
    options.slot_bytes = std::max<std::size_t>(bytes, 1);
    options.slots = 1;
    owner->pool = unwrap(transfer::StagingPool::create(*device.device, options));
    owner->slot = owner->pool->acquire();
  }
  void* data = owner->slot.data;
  py::capsule base(owner.release(), [](void* p) { delete static_cast<PinnedOwner*>(p); });
  return {dtype, shape, std::vector<py::ssize_t>{}, data, base};
}

}  // namespace

void bind_transfers(py::module_& m) {
  py::class_<PyDevice>(m, "Device", "One device: a GPU, or an emulated host device.")
      .def_property_readonly("index", [](const PyDevice& d) { return d.device->info().index; })
      .def_property_readonly("name", [](const PyDevice& d) { return d.device->info().name; })
      .def_property_readonly("backend", [](const PyDevice& d) { return d.device->info().backend; })
      .def_property_readonly(
          "pci", [](const PyDevice& d) { return d.device->info().pci; },
          "PCI address; empty for an emulated device.")
      .def_property_readonly("numa_node",
                             [](const PyDevice& d) { return d.device->info().numa_node; })
      .def_property_readonly("memory_bytes",
                             [](const PyDevice& d) { return d.device->info().memory_bytes; })
      .def_property_readonly(
          "link_bytes_per_second",
          [](const PyDevice& d) { return d.device->info().link_bytes_per_second; },
          "The link's peak per direction; 0 when unknown or unlimited.")
      .def(
          "allocate",
          [](const PyDevice& d, std::size_t bytes) {
            DeviceBuffer b{d.backend, d.device, nullptr};
            const py::gil_scoped_release release;
            b.buffer = unwrap(d.device->allocate(bytes));
            return b;
          },
          py::arg("nbytes"),
          "Device memory of `nbytes` bytes, an acco.DeviceBuffer, freed when the last reference "
          "goes. InvalidArgumentError for 0 bytes, DeviceError when the device is out of memory.")
      .def("__repr__", [](const PyDevice& d) {
        return "<acco.Device " + std::to_string(d.device->info().index) + " '" +
               d.device->info().name + "' (" + d.device->info().backend + ")>";
      });

  py::class_<DeviceBuffer>(m, "DeviceBuffer",
                           "Memory of one device (Device.allocate), a source or destination of "
                           "Engine copies.")
      .def_property_readonly("nbytes", [](const DeviceBuffer& b) { return b.buffer->size(); })
      .def_property_readonly(
          "__cuda_array_interface__",
          [](const DeviceBuffer& b) {
            if (b.device->info().backend != "cuda") {
              throw py::attribute_error("__cuda_array_interface__: memory of " +
                                        b.device->info().name + " is not a GPU's");
            }
            py::dict cai;
            cai["shape"] = py::make_tuple(b.buffer->size());
            cai["typestr"] = "|u1";
            cai["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(b.buffer->data()), false);
            cai["strides"] = py::none();
            cai["version"] = 3;
            cai["stream"] = py::none();  // acco syncs its own copies: copy() or Transfer.wait()
            return cai;
          },
          "On a GPU: the buffer as bytes to CuPy, Numba or torch (torch.as_tensor(buffer, "
          "device='cuda')), without a copy.")
      .def_property_readonly(
          "ptr",
          [](const DeviceBuffer& b) { return reinterpret_cast<std::uintptr_t>(b.buffer->data()); },
          "The device address.");

  m.def("_open_devices", &open_devices, py::arg("backend") = "auto", py::arg("host_devices") = 1,
        py::arg("link") = std::string(bench::kDefaultLink));

  py::class_<PyTransfer>(m, "Transfer",
                         "A copy or batch in flight (Engine.copy_async, Batch.submit).")
      .def("wait", &PyTransfer::wait,
           "Blocks (without the GIL) until every part is done; returns what the copy did (a dict: "
           "strategy, direction, dst_kind, src_kind, bytes, chunks, queues, items) or raises the "
           "first part's error. May be called again.")
      .def("ready", &PyTransfer::ready, "Whether it has completed.")
      .def_property_readonly("record", &PyTransfer::record, "What the copy does, known at submit.");

  py::class_<PyBatch>(m, "Batch",
                      "Copies collected and moved together: small host<->device items packed into "
                      "staging slots. As a context manager, submitted and waited for on exit.")
      .def("add", &PyBatch::add, py::arg("dst"), py::arg("src"),
           "Adds one copy of src into dst (same size in bytes); nothing moves until submit().")
      .def("submit", &PyBatch::submit,
           "Moves every item added and empties the batch; returns the Transfer.")
      .def("__len__", &PyBatch::items)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__",
           [](PyBatch& self, const py::object& type, const py::object&, const py::object&) {
             if (type.is_none()) {
               self.submit()->wait();
             }
             return false;
           });

  py::class_<PyEngine>(m, "Engine",
                       R"(The transfer engine of one device: moves bytes between host and device
memory as fast as the link allows, choosing per copy between direct DMA, pipelined staging,
batching and pinning a reused buffer.

Sources and destinations are numpy arrays, torch tensors (CPU, or a GPU's with the CUDA backend,
through __dlpack__), acco.DeviceBuffer, or any C-contiguous object with the buffer protocol; a
copy moves dst.nbytes bytes, which must equal src's. The GIL is released while a copy runs or is
waited for. One Engine may be shared by threads (calls take turns).)")
      .def(py::init<const PyDevice&>(), py::arg("device"),
           "Starts an engine on `device`. DeviceError when its queues or staging memory cannot "
           "be created.")
      .def("copy", &PyEngine::copy, py::arg("dst"), py::arg("src"),
           "Copies src into dst and waits; returns what the copy did (see Transfer.wait). "
           "InvalidArgumentError for sizes that differ, read-only or non-contiguous memory.")
      .def("copy_async", &PyEngine::copy_async, py::arg("dst"), py::arg("src"),
           "Starts copying src into dst; returns a Transfer. dst and src are held until it "
           "completes (an unwaited Transfer waits when it is dropped).")
      .def("batch", &PyEngine::batch, "A Batch of this engine.")
      .def_property_readonly("device", &PyEngine::device)
      .def("_time_copies", &PyEngine::time_copies, py::arg("dst"), py::arg("src"), py::arg("count"))
      .def("counters", &PyEngine::counters,
           "What the engine has moved: copies and bytes per direction, and batches.");

  m.def("_pinned_empty", &pinned_empty, py::arg("shape"), py::arg("dtype"), py::arg("device"));
}

}  // namespace acco::python
