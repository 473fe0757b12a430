// The collective benchmark of a job end to end (collective_bench.hpp): the expected peak from
// every node, this rank's device, NCCL, the data plane the ranks agree on, then the timed sweep
// (collective_bench.cpp).
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "acco/cluster/agreement.hpp"
#include "acco/cluster/collective_bench.hpp"
#include "acco/cluster/expected_peak.hpp"
#include "acco/cluster/qdisc.hpp"

namespace acco::cluster {
namespace {

// Every node's fastest port, gathered on rank 0 from each node's local rank 0.
Result<ExpectedPeak> node_peak(Communicator& comm, const std::optional<topo::Machine>& machine) {
  NodeLink mine;
  if (machine) {
    // A shaped port (tbf) carries no more than its shaping; a namespace that refuses rtnetlink
    // is judged by the interfaces' speeds alone.
    const auto limits = root_qdisc_limits();
    mine = fastest_link(
        *machine, limits ? std::span<const QdiscLimit>(*limits) : std::span<const QdiscLimit>());
  }
  const std::string text = fmt::format("{}\t{}", comm.local_rank() == 0 ? 1 : 0, encode(mine));
  ACCO_ASSIGN_OR_RETURN(const auto all, comm.gather(text));
  std::vector<NodeLink> nodes;
  for (const std::string& t : all) {
    if (t.rfind("1\t", 0) != 0) {
      continue;
    }
    ACCO_ASSIGN_OR_RETURN(auto link, decode_node_link(t.substr(2)));
    nodes.push_back(std::move(link));
  }
  return expected_peak(nodes);
}

// This rank's device of the backend: one per rank of a node (local rank modulo the devices, as
// nccl-tests runs one GPU per process), made current. kUnavailable when ranks of this node would
// share a GPU (NCCL refuses two ranks on one device).
Result<device::Device*> open_device(Communicator& comm, const CollectiveBenchOptions& o,
                                    std::shared_ptr<device::Backend>& backend) {
  if (!o.open_backend) {
    return fail(Errc::kInvalidArgument, "device buffers: no backend to open the devices of");
  }
  ACCO_ASSIGN_OR_RETURN(backend, o.open_backend());
  const auto devices = backend->devices();
  if (devices.empty()) {
    return fail(Errc::kUnavailable, "no device");
  }
  const auto local = static_cast<std::size_t>(comm.local_rank());
  device::Device* device = devices[local % devices.size()];
  if (device->info().backend == "cuda" &&
      static_cast<std::size_t>(comm.local_size()) > devices.size()) {
    return fail(Errc::kUnavailable,
                fmt::format("{} ranks on this node for {} GPU(s): start one rank per GPU",
                            comm.local_size(), devices.size()));
  }
  ACCO_RETURN_IF_ERROR(device->make_current());
  return device;
}

// The plane of the path every rank chose (the same on all of them, or an error).
Result<std::unique_ptr<CollectivePlane>> make_plane(Communicator& comm,
                                                    const CollectiveBenchOptions& o,
                                                    device::Device* device, NcclSession& nccl) {
  PathQuery q;
  q.buffers = o.buffers;
  q.via = o.via;
  q.nccl_bootstrapped = nccl.report.bootstrapped();
  q.nccl_why = to_text(nccl.report);
  q.mpi_cuda_aware = comm.capabilities().cuda_aware;
  q.device_is_gpu = device != nullptr && device->info().backend == "cuda";
  ACCO_ASSIGN_OR_RETURN(const DataPath path, choose_data_path(q));
  ACCO_ASSIGN_OR_RETURN(const auto paths, comm.allgather(static_cast<double>(path)));
  for (const double other : paths) {
    if (other != static_cast<double>(path)) {
      return fail(Errc::kUnavailable,
                  "--buffers device: the ranks found different data paths (GPUs on some nodes "
                  "only?); choose one with --via mpi");
    }
  }
  if (path == DataPath::kHost) {
    return host_plane(comm);
  }
  auto plane = device_plane(comm, *device, path, nccl.comm.get(), o.nccl_timeout_seconds);
  ACCO_RETURN_IF_ERROR(agree(comm, plane));
  return plane;
}

// Through MPI, device buffers also cross the device's link (PCIe) to and from host memory;
// staged, down and back up one after the other, so at most half its rate is left.
ExpectedPeak device_bound(ExpectedPeak peak, DataPath path, const device::DeviceInfo& info) {
  const bool staged = path == DataPath::kStagedMpi;
  const double link = info.link_bytes_per_second / (staged ? 2 : 1);
  if (path == DataPath::kNccl || link <= 0 ||
      (peak.bytes_per_second > 0 && peak.bytes_per_second <= link)) {
    return peak;
  }
  return {link, fmt::format("the link of {} at {:.1f} GB/s, {}", info.name,
                            info.link_bytes_per_second / 1e9,
                            staged ? "crossed down and back up one after the other (half)"
                                   : "crossed to and from host memory")};
}

}  // namespace

std::function<Result<std::shared_ptr<device::Backend>>()> backend_opener(
    bench::BackendChoice choice, device::HostBackendOptions host) {
  return [choice, host = std::move(host)]() -> Result<std::shared_ptr<device::Backend>> {
    ACCO_ASSIGN_OR_RETURN(auto opened, bench::open_backend(choice, host));
    return std::move(opened.backend);
  };
}

Result<CollectiveRun> run_collective_bench(Communicator& comm, const CollectiveBenchOptions& o,
                                           const ProgressLine& progress) {
  ACCO_ASSIGN_OR_RETURN(const ExpectedPeak peak, node_peak(comm, o.machine));
  // The device first: NCCL's init joins the device current on this thread. Every rank must have
  // one before any goes on (a rank that stopped alone would leave the others waiting).
  std::shared_ptr<device::Backend> backend;
  device::Device* device = nullptr;
  if (o.buffers == Buffers::kDevice) {
    auto chosen = open_device(comm, o, backend);
    ACCO_RETURN_IF_ERROR(agree(comm, chosen), "--buffers device");
    device = *chosen;
  }
  ACCO_ASSIGN_OR_RETURN(auto nccl, open_nccl(comm, o.nccl_library, o.nccl_timeout_seconds));
  if (device == nullptr) {
    nccl.comm.reset();  // host buffers: NCCL is only reported, its threads not kept
  }
  ACCO_ASSIGN_OR_RETURN(auto plane, make_plane(comm, o, device, nccl));
  ExpectedPeak bound = peak;
  if (device != nullptr) {
    bound = device_bound(bound, plane->path(), device->info());
  }
  ACCO_ASSIGN_OR_RETURN(auto run, run_collectives(comm, *plane, o.collectives, bound, progress));
  run.nccl = std::move(nccl.report);
  run.device = device != nullptr ? device->info().name : std::string();
  return run;
}

}  // namespace acco::cluster
