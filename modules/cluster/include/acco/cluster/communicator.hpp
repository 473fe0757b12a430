// The processes of one job and the collectives between them, behind a narrow interface: Open MPI
// when acco was built with it (ACCO_WITH_MPI) and a launcher started this process, else the
// process alone (one rank). Host buffers of 32-bit floats, laid out as nccl-tests lays them out
// (`count` elements per rank):
//   allreduce      send count, recv count (sum); send == recv reduces in place
//   allgather      send count, recv count x ranks (rank r's block at r x count)
//   reducescatter  send count x ranks, recv count (block `rank` of the sum)
//   alltoall       send count x ranks (block j to rank j), recv count x ranks (block r from r)
//   broadcast      recv count on every rank, rank 0's send copied there (or already there:
//                  send == recv on rank 0)
//   sendrecv       send count to rank + 1, recv count from rank - 1 (a ring)
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "acco/cluster/collective.hpp"
#include "acco/cluster/launcher.hpp"
#include "acco/core/result.hpp"

namespace acco::cluster {

// What the MPI library offers, for the capability report.
struct Capabilities {
  std::string library;  // "Open MPI v4.1.4, ..." (MPI_Get_library_version, first line)
  bool thread_multiple = false;
  bool cuda_aware = false;        // MPIX_Query_cuda_support() where the library has it
  std::string cuda_aware_source;  // how that was decided
  bool operator==(const Capabilities&) const = default;
};

// A point-to-point message as it arrived. `payload`: the size of a payload that follows it
// (post_payload), still with the library until take_payload.
struct Message {
  int source = 0;
  int tag = 0;
  std::vector<std::byte> data;
  std::size_t payload = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  // Among the ranks on this node (MPI_Comm_split_type MPI_COMM_TYPE_SHARED).
  [[nodiscard]] virtual int local_rank() const = 0;
  [[nodiscard]] virtual int local_size() const = 0;
  [[nodiscard]] virtual int nodes() const = 0;  // ranks with local rank 0
  // This rank's node, 0 to nodes() - 1, numbered in the order of the nodes' lowest ranks.
  [[nodiscard]] virtual int node() const = 0;
  [[nodiscard]] virtual std::string backend() const = 0;  // "mpi" or "self"
  [[nodiscard]] virtual Capabilities capabilities() const = 0;
  [[nodiscard]] virtual double seconds() const = 0;  // a wall clock (MPI_Wtime)

  [[nodiscard]] virtual Status barrier() = 0;
  // One collective, blocking, layouts above. kInvalidArgument for a null buffer with count > 0,
  // kDeviceError with the library's message when it fails.
  [[nodiscard]] virtual Status run(Op op, const float* send, float* recv, std::size_t count) = 0;
  // Every rank's value, in rank order, on every rank.
  [[nodiscard]] virtual Result<std::vector<double>> allgather(double value) = 0;
  // Every rank's text on rank 0 (in rank order); an empty list on the others.
  [[nodiscard]] virtual Result<std::vector<std::string>> gather(const std::string& text) = 0;
  // Rank `root`'s bytes into `data` on every rank (the same size everywhere).
  [[nodiscard]] virtual Status broadcast(std::span<std::byte> data, int root) = 0;
  // Sends `send` to `peer` and receives as many bytes from it into `recv`, both at once (the two
  // ranks call it naming each other; a rank naming itself copies). kInvalidArgument for a peer
  // out of range or sizes that differ.
  [[nodiscard]] virtual Status exchange(int peer, std::span<const std::byte> send,
                                        std::span<std::byte> recv) = 0;

  // Messages for protocols (the distributed runtime), apart from the collectives: `data` goes to
  // `peer` (itself included) with `tag` (0 to 32767) and the call returns without waiting for
  // the peer; messages from one rank with one tag arrive in the order posted. kInvalidArgument
  // for a peer out of range, a bad tag or more than 2 GiB; kDeviceError when the library fails.
  [[nodiscard]] virtual Status post(int peer, int tag, std::vector<std::byte> data) = 0;
  // The next message that has arrived from any rank with any tag, or nullopt when none has; also
  // moves the posted sends on. Call it often: a protocol is driven by polling.
  [[nodiscard]] virtual Result<std::optional<Message>> poll() = 0;
  // Sends posted and not yet taken by the library (0 once all have gone).
  [[nodiscard]] virtual std::size_t pending_sends() = 0;

  // A message in two parts: `header` as post's data and `payload` sent from where it lies,
  // without a copy (bulk data: the distributed runtime's task inputs), both posted at once (MPI:
  // the payload first, so a payload that cannot be sent is never announced). The payload must
  // stay valid and unchanged while sending_payload(payload.data()) is true. The peer's poll()
  // returns the header with Message::payload set to the payload's size, and the peer receives
  // the payload with take_payload straight into its own memory. The errors of post, and
  // kUnsupported where the library's tags cannot mark a header that has a payload (MPI_TAG_UB
  // below tag + 32768; Open MPI's and MPICH's are far above).
  [[nodiscard]] virtual Status post_payload(int peer, int tag, std::vector<std::byte> header,
                                            std::span<const std::byte> payload) = 0;
  // True while a payload posted from `payload` has not gone yet (moves the posted sends on).
  [[nodiscard]] virtual bool sending_payload(const void* payload) = 0;
  // The payload of `m`, the message poll() returned last, into `into` (as many bytes as
  // m.payload); it waits until the payload has arrived (it was posted with its header). A
  // payload not taken before the next poll() is received and dropped there. kInvalidArgument,
  // the payload dropped, for a size that differs; kInvalidArgument for a message that is not
  // the last one polled or whose payload was taken.
  [[nodiscard]] virtual Status take_payload(const Message& m, std::span<std::byte> into) = 0;
};

// The communicator for this process: MPI when built with it and `launch` names a launcher, else
// one rank. MPI is initialised here (MPI_THREAD_MULTIPLE requested) and finalised when the last
// communicator is destroyed; a second call returns kUnavailable. kUnavailable, naming the
// launcher, when a launcher started the process but acco was built without MPI.
[[nodiscard]] Result<std::unique_ptr<Communicator>> open_communicator(const LaunchInfo& launch);

// The communicator of the job that started this process: detect_launcher on the process's
// environment (its errors with "launcher environment: " in front), then open_communicator.
[[nodiscard]] Result<std::unique_ptr<Communicator>> open_job_communicator();

// Open MPI's MPI_Finalize waits for every rank, so a rank that failed alone would print nothing
// until its peers end too. A program that prints after its work returns calls
// defer_mpi_finalize() first: the last communicator then leaves MPI running, and finish_mpi(),
// called once the output is out, finalises it. Both do nothing without MPI.
void defer_mpi_finalize();
void finish_mpi();

// The one-rank communicator (used without a launcher; tests use it directly).
[[nodiscard]] std::unique_ptr<Communicator> self_communicator();

}  // namespace acco::cluster
