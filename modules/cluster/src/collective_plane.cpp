#include "acco/cluster/collective_plane.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "acco/transfer/engine.hpp"

namespace acco::cluster {
namespace {

class HostPlane final : public CollectivePlane {
 public:
  explicit HostPlane(Communicator& comm) : comm_(&comm) {}

  [[nodiscard]] DataPath path() const override { return DataPath::kHost; }
  [[nodiscard]] Status prepare(std::span<const float> send, std::size_t recv_count,
                               float recv_fill) override {
    send_.assign(send.begin(), send.end());
    recv_.assign(recv_count, recv_fill);
    return {};
  }
  [[nodiscard]] Status run(Op op, std::size_t count) override {
    return comm_->run(op, send_.data(), recv_.data(), count);
  }
  [[nodiscard]] Status complete() override { return {}; }
  [[nodiscard]] Result<std::vector<float>> received() override { return recv_; }
  void abandon() override {}

 private:
  Communicator* comm_;
  std::vector<float> send_;
  std::vector<float> recv_;
};

// Bytes of `count` floats, at least one element (devices refuse empty allocations).
std::size_t bytes_of(std::size_t count) {
  return std::max<std::size_t>(count, 1) * sizeof(float);
}

class DevicePlane final : public CollectivePlane {
 public:
  DevicePlane(Communicator& comm, device::Device& device, DataPath path, NcclCommunicator* nccl,
              double nccl_timeout_seconds, std::unique_ptr<device::Queue> queue,
              std::unique_ptr<transfer::Engine> engine)
      : comm_(&comm),
        device_(&device),
        path_(path),
        nccl_(nccl),
        nccl_timeout_seconds_(nccl_timeout_seconds),
        queue_(std::move(queue)),
        engine_(std::move(engine)) {}
  DevicePlane(const DevicePlane&) = delete;
  DevicePlane& operator=(const DevicePlane&) = delete;
  // Nothing may still move into buffers about to be freed.
  ~DevicePlane() override { static_cast<void>(queue_->synchronize()); }

  [[nodiscard]] DataPath path() const override { return path_; }
  [[nodiscard]] bool asynchronous() const override { return path_ == DataPath::kNccl; }

  [[nodiscard]] Status prepare(std::span<const float> send, std::size_t recv_count,
                               float recv_fill) override {
    ACCO_RETURN_IF_ERROR(queue_->synchronize(), "collective buffers");
    release();
    send_count_ = send.size();
    recv_count_ = recv_count;
    ACCO_ASSIGN_OR_RETURN(send_, device_->allocate(bytes_of(send_count_)), "collective buffers");
    ACCO_ASSIGN_OR_RETURN(recv_, device_->allocate(bytes_of(recv_count_)), "collective buffers");
    // Through the queue the collectives use, then waited for: a pageable cudaMemcpy may return
    // before its DMA lands, and this queue's stream does not wait for the legacy one.
    const std::vector<float> fill(recv_count_, recv_fill);
    ACCO_RETURN_IF_ERROR(queue_->copy(send_->data(), send.data(), send_count_ * sizeof(float)),
                         "collective buffers");
    ACCO_RETURN_IF_ERROR(queue_->copy(recv_->data(), fill.data(), recv_count_ * sizeof(float)),
                         "collective buffers");
    ACCO_RETURN_IF_ERROR(queue_->synchronize(), "collective buffers");
    if (path_ == DataPath::kStagedMpi) {
      ACCO_ASSIGN_OR_RETURN(
          host_send_, device_->allocate_host(bytes_of(send_count_), device::MemoryKind::kPinned),
          "collective staging buffers");
      ACCO_ASSIGN_OR_RETURN(
          host_recv_, device_->allocate_host(bytes_of(recv_count_), device::MemoryKind::kPinned),
          "collective staging buffers");
    }
    return {};
  }

  [[nodiscard]] Status run(Op op, std::size_t count) override {
    if (!send_ || !recv_) {
      return fail(Errc::kInvalidArgument, "collective: run before prepare");
    }
    const auto* send = static_cast<const float*>(send_->data());
    auto* recv = static_cast<float*>(recv_->data());
    switch (path_) {
      case DataPath::kNccl: {
        ACCO_ASSIGN_OR_RETURN(void* stream, queue_->native_stream());
        return nccl_->enqueue(op, send, recv, count, stream);
      }
      case DataPath::kCudaAwareMpi:
        if (op == Op::kBroadcast) {
          // The root's own copy on the device (the communicator's memcpy cannot reach it), then
          // the broadcast in place.
          if (comm_->rank() == 0 && count > 0) {
            ACCO_RETURN_IF_ERROR(device_->copy(recv, send, count * sizeof(float)), "broadcast");
          }
          return comm_->run(op, recv, recv, count);
        }
        return comm_->run(op, send, recv, count);
      case DataPath::kStagedMpi:
        return staged(op, count);
      case DataPath::kHost:
        break;
    }
    return fail(Errc::kInvalidArgument, "collective: host path on a device plane");
  }

  [[nodiscard]] Status complete() override {
    if (path_ == DataPath::kNccl) {
      // Polled, as nccl-tests waits (and at least once, even when the queue looks idle): a
      // communicator that failed while its kernels wait for a peer is aborted instead of waited
      // for forever. A peer that failed on its own leaves this rank's kernels waiting for it
      // with no error here (NCCL has no timeout of its own): after the watchdog's time they are
      // aborted too, as PyTorch's NCCL watchdog does.
      ACCO_ASSIGN_OR_RETURN(auto done, queue_->record(), "collective completion");
      const auto start = std::chrono::steady_clock::now();
      for (;;) {
        auto working = nccl_->in_progress();
        if (!working) {
          nccl_->abort();
          return tl::unexpected(std::move(working.error()));
        }
        if (!*working && done->ready()) {
          break;
        }
        const double waited =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (waited > nccl_timeout_seconds_) {
          nccl_->abort();
          return fail(Errc::kDeviceError,
                      fmt::format("NCCL collectives not complete after {:g} s (a peer failed or "
                                  "stopped while they wait for it): aborted by the watchdog "
                                  "(--nccl-timeout)",
                                  nccl_timeout_seconds_));
        }
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    }
    return queue_->synchronize().map_error(
        [](Error e) { return std::move(e).with_context("collective completion"); });
  }

  [[nodiscard]] Result<std::vector<float>> received() override {
    ACCO_RETURN_IF_ERROR(queue_->synchronize(), "collective result");
    std::vector<float> out(recv_count_);
    if (recv_) {
      ACCO_RETURN_IF_ERROR(device_->copy(out.data(), recv_->data(), recv_count_ * sizeof(float)),
                           "collective result");
    }
    return out;
  }

 private:
  // Device to pinned host, the collective between the pinned buffers, pinned host to device:
  // each step waits for the one before, as a staging MPI library does it.
  Status staged(Op op, std::size_t count) {
    ACCO_ASSIGN_OR_RETURN(
        auto down, engine_->copy(host_send_->data(), send_->data(), send_count_ * sizeof(float)));
    ACCO_RETURN_IF_ERROR(down.wait(), "staging device to host");
    ACCO_RETURN_IF_ERROR(comm_->run(op, static_cast<const float*>(host_send_->data()),
                                    static_cast<float*>(host_recv_->data()), count));
    ACCO_ASSIGN_OR_RETURN(
        auto up, engine_->copy(recv_->data(), host_recv_->data(), recv_count_ * sizeof(float)));
    ACCO_RETURN_IF_ERROR(up.wait(), "staging host to device");
    return {};
  }

  void abandon() override {
    if (nccl_ != nullptr) {
      nccl_->abort();
    }
  }

  void release() {
    host_send_.reset();
    host_recv_.reset();
    send_.reset();
    recv_.reset();
  }

  Communicator* comm_;
  device::Device* device_;
  DataPath path_;
  NcclCommunicator* nccl_;
  double nccl_timeout_seconds_;
  std::unique_ptr<device::Queue> queue_;
  std::unique_ptr<transfer::Engine> engine_;  // kStagedMpi only
  std::unique_ptr<device::Buffer> send_;
  std::unique_ptr<device::Buffer> recv_;
  std::unique_ptr<device::Buffer> host_send_;
  std::unique_ptr<device::Buffer> host_recv_;
  std::size_t send_count_ = 0;
  std::size_t recv_count_ = 0;
};

}  // namespace

const char* to_string(Buffers buffers) {
  return buffers == Buffers::kDevice ? "device" : "host";
}

Result<Buffers> parse_buffers(const std::string& text) {
  if (text == "host") {
    return Buffers::kHost;
  }
  if (text == "device") {
    return Buffers::kDevice;
  }
  return fail(Errc::kInvalidArgument, fmt::format("'{}' is not one of host, device", text));
}

const char* to_string(Via via) {
  switch (via) {
    case Via::kAuto:
      return "auto";
    case Via::kNccl:
      return "nccl";
    case Via::kMpi:
      return "mpi";
  }
  return "auto";
}

Result<Via> parse_via(const std::string& text) {
  for (const Via via : {Via::kAuto, Via::kNccl, Via::kMpi}) {
    if (text == to_string(via)) {
      return via;
    }
  }
  return fail(Errc::kInvalidArgument, fmt::format("'{}' is not one of auto, nccl, mpi", text));
}

const char* to_string(DataPath path) {
  switch (path) {
    case DataPath::kHost:
      return "host";
    case DataPath::kNccl:
      return "nccl";
    case DataPath::kCudaAwareMpi:
      return "cuda-aware-mpi";
    case DataPath::kStagedMpi:
      return "staged-mpi";
  }
  return "host";
}

std::string describe(DataPath path, const std::string& backend) {
  const bool mpi = backend == "mpi";
  switch (path) {
    case DataPath::kHost:
      return mpi ? "host buffers over MPI" : "host buffers, one rank (copy)";
    case DataPath::kNccl:
      return "device buffers over NCCL";
    case DataPath::kCudaAwareMpi:
      return mpi ? "device buffers over CUDA-aware MPI" : "device buffers, one rank (copy)";
    case DataPath::kStagedMpi:
      return mpi ? "device buffers staged through pinned host buffers over MPI"
                 : "device buffers staged through pinned host buffers, one rank (copy)";
  }
  return "host buffers";
}

Status check_via(Buffers buffers, Via via) {
  if (buffers == Buffers::kHost && via != Via::kAuto) {
    return fail(Errc::kInvalidArgument,
                fmt::format("--via {}: needs --buffers device (host buffers always go over the "
                            "job's communicator)",
                            to_string(via)));
  }
  return {};
}

Result<DataPath> choose_data_path(const PathQuery& q) {
  ACCO_RETURN_IF_ERROR(check_via(q.buffers, q.via));
  if (q.buffers == Buffers::kHost) {
    return DataPath::kHost;
  }
  if (q.via == Via::kNccl && !q.nccl_bootstrapped) {
    return fail(Errc::kUnavailable, fmt::format("--via nccl: {}", q.nccl_why));
  }
  // NCCL works on GPU memory only: on memory standing in for a device it is taken when asked.
  if (q.via == Via::kNccl || (q.via == Via::kAuto && q.nccl_bootstrapped && q.device_is_gpu)) {
    return DataPath::kNccl;
  }
  if (q.mpi_cuda_aware && q.device_is_gpu) {
    return DataPath::kCudaAwareMpi;
  }
  return DataPath::kStagedMpi;
}

std::unique_ptr<CollectivePlane> host_plane(Communicator& comm) {
  return std::make_unique<HostPlane>(comm);
}

Result<std::unique_ptr<CollectivePlane>> device_plane(Communicator& comm, device::Device& device,
                                                      DataPath path, NcclCommunicator* nccl,
                                                      double nccl_timeout_seconds) {
  if (!(nccl_timeout_seconds > 0)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("NCCL timeout {} s: expected more than 0", nccl_timeout_seconds));
  }
  if (path == DataPath::kHost) {
    return fail(Errc::kInvalidArgument, "device plane: the host path has no device");
  }
  if (path == DataPath::kNccl && nccl == nullptr) {
    return fail(Errc::kInvalidArgument, "device plane: NCCL path without an NCCL communicator");
  }
  ACCO_ASSIGN_OR_RETURN(auto queue, device.create_queue(), "collective queue");
  std::unique_ptr<transfer::Engine> engine;
  if (path == DataPath::kStagedMpi) {
    ACCO_ASSIGN_OR_RETURN(engine, transfer::Engine::create(device), "collective staging");
  }
  return std::unique_ptr<CollectivePlane>(std::make_unique<DevicePlane>(
      comm, device, path, nccl, nccl_timeout_seconds, std::move(queue), std::move(engine)));
}

}  // namespace acco::cluster
