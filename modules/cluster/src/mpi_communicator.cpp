// The MPI communicator: the only file that includes mpi.h. Errors come back as return codes
// (MPI_ERRORS_RETURN on every communicator), turned into kDeviceError with MPI's message.
#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <list>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <mpi.h>

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include "acco/cluster/communicator.hpp"

namespace acco::cluster {
namespace {

// One MPI per process: MPI_Init may run once, so a second communicator is refused.
std::atomic<bool>& opened() {
  static std::atomic<bool> flag{false};
  return flag;
}
// defer_mpi_finalize() was called; a communicator that owned MPI left it to finish_mpi().
std::atomic<bool>& finalize_deferred() {
  static std::atomic<bool> flag{false};
  return flag;
}
std::atomic<bool>& finalize_owed() {
  static std::atomic<bool> flag{false};
  return flag;
}

std::string mpi_message(int code) {
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int length = 0;
  if (MPI_Error_string(code, text.data(), &length) != MPI_SUCCESS) {
    return fmt::format("MPI error {}", code);
  }
  return {text.data(), static_cast<std::size_t>(length)};
}

Status check(int code, const char* what) {
  if (code == MPI_SUCCESS) {
    return {};
  }
  return fail(Errc::kDeviceError, fmt::format("{}: {}", what, mpi_message(code)));
}

Capabilities read_capabilities(int provided) {
  Capabilities c;
  std::array<char, MPI_MAX_LIBRARY_VERSION_STRING> version{};
  int length = 0;
  if (MPI_Get_library_version(version.data(), &length) == MPI_SUCCESS) {
    c.library = std::string(version.data(), static_cast<std::size_t>(length));
    // The first line; some builds count the terminating NUL in `length`.
    c.library = c.library.substr(0, c.library.find_first_of(std::string_view("\r\n\0", 3)));
  }
  c.thread_multiple = provided >= MPI_THREAD_MULTIPLE;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  c.cuda_aware = MPIX_Query_cuda_support() == 1;
  c.cuda_aware_source = "MPIX_Query_cuda_support()";
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
  c.cuda_aware_source =
      "the MPI library was built without CUDA support (MPIX_CUDA_AWARE_SUPPORT 0): device "
      "buffers go through pinned host staging";
#else
  c.cuda_aware_source = "the MPI library does not say (no MPIX_CUDA_AWARE_SUPPORT)";
#endif
  return c;
}

class MpiCommunicator final : public Communicator {
 public:
  static Result<std::unique_ptr<Communicator>> open() {
    int initialized = 0;
    int finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (finalized != 0) {
      return fail(Errc::kUnavailable, "MPI was finalized in this process; it cannot start again");
    }
    int provided = MPI_THREAD_SINGLE;
    if (initialized == 0) {
      ACCO_RETURN_IF_ERROR(check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided),
                                 "MPI_Init_thread"));
    } else {
      MPI_Query_thread(&provided);
    }
    auto c = std::unique_ptr<MpiCommunicator>(new MpiCommunicator(initialized == 0, provided));
    ACCO_RETURN_IF_ERROR(c->start());
    return std::unique_ptr<Communicator>(std::move(c));
  }

  ~MpiCommunicator() override {
    // Posted sends nobody waits for any more (an error path): cancelled, so MPI_Finalize does
    // not wait for a peer that stopped receiving.
    for (Outgoing& o : outgoing_) {
      MPI_Cancel(&o.request);
      MPI_Request_free(&o.request);
    }
    if (messages_ != MPI_COMM_NULL) {
      MPI_Comm_free(&messages_);
    }
    if (payloads_ != MPI_COMM_NULL) {
      MPI_Comm_free(&payloads_);
    }
    if (node_ != MPI_COMM_NULL) {
      MPI_Comm_free(&node_);
    }
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owns_mpi_ && finalized == 0) {
      if (finalize_deferred()) {
        finalize_owed() = true;
      } else {
        MPI_Finalize();
      }
    }
    opened() = false;
  }
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] int local_rank() const override { return local_rank_; }
  [[nodiscard]] int local_size() const override { return local_size_; }
  [[nodiscard]] int nodes() const override { return nodes_; }
  [[nodiscard]] int node() const override { return node_index_; }
  [[nodiscard]] std::string backend() const override { return "mpi"; }
  [[nodiscard]] Capabilities capabilities() const override { return capabilities_; }
  [[nodiscard]] double seconds() const override { return MPI_Wtime(); }

  [[nodiscard]] Status barrier() override {
    return check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  }

  [[nodiscard]] Status run(Op op, const float* send, float* recv, std::size_t count) override {
    if (count > 0 && (send == nullptr || recv == nullptr)) {
      return fail(Errc::kInvalidArgument, fmt::format("{}: null buffer", to_string(op)));
    }
    if (count > static_cast<std::size_t>(INT_MAX) / static_cast<std::size_t>(size_)) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("{}: {} elements per rank is more than MPI's int counts take",
                              to_string(op), count));
    }
    const int n = static_cast<int>(count);
    switch (op) {
      case Op::kAllReduce:  // send == recv: in place
        return check(MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, n, MPI_FLOAT, MPI_SUM,
                                   MPI_COMM_WORLD),
                     "MPI_Allreduce");
      case Op::kAllGather:
        return check(MPI_Allgather(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, MPI_COMM_WORLD),
                     "MPI_Allgather");
      case Op::kReduceScatter:
        return check(MPI_Reduce_scatter_block(send, recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
                     "MPI_Reduce_scatter_block");
      case Op::kAllToAll:
        return check(MPI_Alltoall(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, MPI_COMM_WORLD),
                     "MPI_Alltoall");
      case Op::kBroadcast:
        if (rank_ == 0 && count > 0 && send != recv) {  // in place: the root's data is there
          std::memcpy(recv, send, count * sizeof(float));
        }
        return check(MPI_Bcast(recv, n, MPI_FLOAT, 0, MPI_COMM_WORLD), "MPI_Bcast");
      case Op::kSendRecv: {
        const int next = (rank_ + 1) % size_;
        const int prev = (rank_ + size_ - 1) % size_;
        return check(MPI_Sendrecv(send, n, MPI_FLOAT, next, kSendRecvTag, recv, n, MPI_FLOAT, prev,
                                  kSendRecvTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                     "MPI_Sendrecv");
      }
    }
    return fail(Errc::kInvalidArgument, "collective: unknown operation");
  }

  [[nodiscard]] Result<std::vector<double>> allgather(double value) override {
    std::vector<double> all(static_cast<std::size_t>(size_));
    ACCO_RETURN_IF_ERROR(
        check(MPI_Allgather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD),
              "MPI_Allgather"));
    return all;
  }

  [[nodiscard]] Result<std::vector<std::string>> gather(const std::string& text) override {
    if (text.size() > static_cast<std::size_t>(INT_MAX)) {
      return fail(Errc::kInvalidArgument, "gather: text over 2 GiB");
    }
    const int mine = static_cast<int>(text.size());
    std::vector<int> lengths(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
    ACCO_RETURN_IF_ERROR(
        check(MPI_Gather(&mine, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD),
              "MPI_Gather"));
    std::vector<int> offsets(lengths.size());
    std::size_t total = 0;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      if (total + static_cast<std::size_t>(lengths[i]) > static_cast<std::size_t>(INT_MAX)) {
        return fail(Errc::kInvalidArgument, "gather: texts over 2 GiB in all");
      }
      offsets[i] = static_cast<int>(total);
      total += static_cast<std::size_t>(lengths[i]);
    }
    std::string all(total, '\0');
    ACCO_RETURN_IF_ERROR(check(MPI_Gatherv(text.data(), mine, MPI_CHAR, all.data(), lengths.data(),
                                           offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD),
                               "MPI_Gatherv"));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      out.push_back(
          all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i])));
    }
    return out;
  }

  [[nodiscard]] Status broadcast(std::span<std::byte> data, int root) override {
    if (root < 0 || root >= size_) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("broadcast: root {} of {} ranks", root, size_));
    }
    if (data.size() > static_cast<std::size_t>(INT_MAX)) {
      return fail(Errc::kInvalidArgument, "broadcast: more than 2 GiB");
    }
    return check(
        MPI_Bcast(data.data(), static_cast<int>(data.size()), MPI_BYTE, root, MPI_COMM_WORLD),
        "MPI_Bcast");
  }

  [[nodiscard]] Status exchange(int peer, std::span<const std::byte> send,
                                std::span<std::byte> recv) override {
    if (peer < 0 || peer >= size_) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("exchange: peer {} of {} ranks", peer, size_));
    }
    if (send.size() != recv.size()) {
      return fail(Errc::kInvalidArgument, "exchange: send and receive sizes differ");
    }
    if (send.size() > static_cast<std::size_t>(INT_MAX)) {
      return fail(Errc::kInvalidArgument, "exchange: more than 2 GiB");
    }
    const int n = static_cast<int>(send.size());
    return check(MPI_Sendrecv(send.data(), n, MPI_BYTE, peer, kExchangeTag, recv.data(), n,
                              MPI_BYTE, peer, kExchangeTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                 "MPI_Sendrecv (exchange)");
  }

  [[nodiscard]] Status post(int peer, int tag, std::vector<std::byte> data) override {
    ACCO_RETURN_IF_ERROR(check_post(peer, tag, data.size()));
    Outgoing& o = outgoing_.emplace_back();
    o.data = std::move(data);
    // Completed by MPI_Test in progress() (poll, pending_sends) or cancelled by the destructor,
    // which the MPI checker cannot follow through the list.
    const int n = static_cast<int>(o.data.size());
    // NOLINTNEXTLINE(clang-analyzer-optin.mpi.MPI-Checker)
    const int code = MPI_Isend(o.data.data(), n, MPI_BYTE, peer, tag, messages_, &o.request);
    Status sent = check(code, "MPI_Isend (post)");
    if (!sent) {
      outgoing_.pop_back();
    }
    return sent;
  }

  [[nodiscard]] Result<std::optional<Message>> poll() override {
    ACCO_RETURN_IF_ERROR(progress());
    ACCO_RETURN_IF_ERROR(drop_owed_payload());
    int flag = 0;
    MPI_Message handle = MPI_MESSAGE_NULL;
    MPI_Status status;
    ACCO_RETURN_IF_ERROR(
        check(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, messages_, &flag, &handle, &status),
              "MPI_Improbe (poll)"));
    if (flag == 0) {
      return std::optional<Message>{};
    }
    int count = 0;
    ACCO_RETURN_IF_ERROR(check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count (poll)"));
    Message m;
    m.source = status.MPI_SOURCE;
    m.tag = status.MPI_TAG;
    m.data.resize(static_cast<std::size_t>(count));
    ACCO_RETURN_IF_ERROR(check(
        MPI_Mrecv(m.data.data(), count, MPI_BYTE, &handle, MPI_STATUS_IGNORE), "MPI_Mrecv (poll)"));
    if (m.tag >= kPayloadFlag) {
      // A header: its payload's size at the end, the payload on its way on payloads_.
      std::uint64_t bytes = 0;
      if (m.data.size() < sizeof bytes) {
        // Its payload cannot be told apart from the next one's: no payload is taken after it.
        broken_ = true;
        return fail(Errc::kDeviceError,
                    fmt::format("poll: a payload header of {} bytes from rank {}", m.data.size(),
                                m.source));
      }
      std::memcpy(&bytes, m.data.data() + m.data.size() - sizeof bytes, sizeof bytes);
      m.data.resize(m.data.size() - sizeof bytes);
      m.tag -= kPayloadFlag;
      m.payload = static_cast<std::size_t>(bytes);
      owed_ = Owed{m.source, m.payload};
    }
    return std::optional<Message>{std::move(m)};
  }

  [[nodiscard]] Status post_payload(int peer, int tag, std::vector<std::byte> header,
                                    std::span<const std::byte> payload) override {
    if (broken_) {
      return fail(Errc::kDeviceError,
                  "post_payload: headers and payloads are out of step since an earlier failure");
    }
    ACCO_RETURN_IF_ERROR(check_post(peer, tag, header.size() + sizeof(std::uint64_t)));
    ACCO_RETURN_IF_ERROR(check_post(peer, tag, payload.size()));
    if (tag + kPayloadFlag > tag_ub_) {
      return fail(Errc::kUnsupported,
                  fmt::format("post_payload: this MPI's tags end at {} (MPI_TAG_UB); a header "
                              "with a payload on tag {} needs tag {}",
                              tag_ub_, tag, tag + kPayloadFlag));
    }
    // The payload first: if it cannot be sent, no header announces it.
    Outgoing& p = outgoing_.emplace_back();
    p.payload = payload.data();
    // NOLINTNEXTLINE(clang-analyzer-optin.mpi.MPI-Checker)
    Status sent = check(MPI_Isend(payload.data(), static_cast<int>(payload.size()), MPI_BYTE, peer,
                                  0, payloads_, &p.request),
                        "MPI_Isend (post_payload)");
    if (!sent) {
      outgoing_.pop_back();
      return sent;
    }
    const auto bytes = static_cast<std::uint64_t>(payload.size());
    const auto* b = reinterpret_cast<const std::byte*>(&bytes);
    header.insert(header.end(), b, b + sizeof bytes);
    Outgoing& h = outgoing_.emplace_back();
    h.data = std::move(header);
    // NOLINTNEXTLINE(clang-analyzer-optin.mpi.MPI-Checker)
    sent = check(MPI_Isend(h.data.data(), static_cast<int>(h.data.size()), MPI_BYTE, peer,
                           tag + kPayloadFlag, messages_, &h.request),
                 "MPI_Isend (post_payload header)");
    if (!sent) {
      outgoing_.pop_back();
      // The payload went without its header: the peer's payloads from this rank are out of
      // step from here on, so no later payload is sent (and this error ends the job: every
      // caller's does).
      broken_ = true;
      return sent;
    }
    return {};
  }

  [[nodiscard]] bool sending_payload(const void* payload) override {
    (void)progress();
    return std::any_of(outgoing_.begin(), outgoing_.end(),
                       [&](const Outgoing& o) { return o.payload == payload; });
  }

  [[nodiscard]] Status take_payload(const Message& m, std::span<std::byte> into) override {
    if (broken_) {
      return fail(Errc::kDeviceError,
                  "take_payload: headers and payloads are out of step since an earlier failure");
    }
    if (!owed_ || owed_->source != m.source || owed_->bytes != m.payload || m.payload == 0) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("take_payload: the message from rank {} is not the last one polled "
                              "with a payload",
                              m.source));
    }
    if (into.size() != m.payload) {
      ACCO_RETURN_IF_ERROR(drop_owed_payload());
      return fail(Errc::kInvalidArgument,
                  fmt::format("take_payload: {} bytes from rank {} into {} bytes", m.payload,
                              m.source, into.size()));
    }
    owed_.reset();
    MPI_Status status;
    ACCO_RETURN_IF_ERROR(check(MPI_Recv(into.data(), static_cast<int>(into.size()), MPI_BYTE,
                                        m.source, 0, payloads_, &status),
                               "MPI_Recv (take_payload)"));
    return check_payload_size(status, m.payload, m.source);
  }

  [[nodiscard]] std::size_t pending_sends() override {
    (void)progress();
    return outgoing_.size();
  }

 private:
  static constexpr int kMaxTag = 32767;  // the least MPI_TAG_UB the standard allows
  // Added to a header's tag when a payload follows it (Open MPI's MPI_TAG_UB is 2^31 - 1).
  static constexpr int kPayloadFlag = 32768;
  static constexpr int kSendRecvTag = 7001;
  static constexpr int kExchangeTag = 7002;

  MpiCommunicator(bool owns_mpi, int provided)
      : owns_mpi_(owns_mpi), capabilities_(read_capabilities(provided)) {}

  Status start() {
    ACCO_RETURN_IF_ERROR(check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
                               "MPI_Comm_set_errhandler"));
    ACCO_RETURN_IF_ERROR(check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank"));
    ACCO_RETURN_IF_ERROR(check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size"));
    ACCO_RETURN_IF_ERROR(check(
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_),
        "MPI_Comm_split_type"));
    ACCO_RETURN_IF_ERROR(check(MPI_Comm_rank(node_, &local_rank_), "MPI_Comm_rank (node)"));
    ACCO_RETURN_IF_ERROR(check(MPI_Comm_size(node_, &local_size_), "MPI_Comm_size (node)"));
    const int leader = local_rank_ == 0 ? 1 : 0;
    ACCO_RETURN_IF_ERROR(check(MPI_Allreduce(&leader, &nodes_, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                               "MPI_Allreduce (nodes)"));
    // The leaders before this node's leader, in world rank order; rank 0's result is undefined.
    int before = 0;
    ACCO_RETURN_IF_ERROR(check(MPI_Exscan(&leader, &before, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                               "MPI_Exscan (node)"));
    node_index_ = rank_ == 0 ? 0 : before;
    ACCO_RETURN_IF_ERROR(check(MPI_Comm_dup(MPI_COMM_WORLD, &messages_), "MPI_Comm_dup"));
    ACCO_RETURN_IF_ERROR(check(MPI_Comm_set_errhandler(messages_, MPI_ERRORS_RETURN),
                               "MPI_Comm_set_errhandler (messages)"));
    ACCO_RETURN_IF_ERROR(check(MPI_Comm_dup(MPI_COMM_WORLD, &payloads_), "MPI_Comm_dup"));
    ACCO_RETURN_IF_ERROR(check(MPI_Comm_set_errhandler(payloads_, MPI_ERRORS_RETURN),
                               "MPI_Comm_set_errhandler (payloads)"));
    int* tag_ub = nullptr;
    int has_tag_ub = 0;
    if (MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, static_cast<void*>(&tag_ub), &has_tag_ub) ==
            MPI_SUCCESS &&
        has_tag_ub != 0 && tag_ub != nullptr) {
      tag_ub_ = *tag_ub;
    }
    return check(MPI_Bcast(&node_index_, 1, MPI_INT, 0, node_), "MPI_Bcast (node)");
  }

  // Tests the posted sends and drops those done, their buffers with them.
  Status progress() {
    for (auto it = outgoing_.begin(); it != outgoing_.end();) {
      int done = 0;
      ACCO_RETURN_IF_ERROR(check(MPI_Test(&it->request, &done, MPI_STATUS_IGNORE), "MPI_Test"));
      it = done != 0 ? outgoing_.erase(it) : std::next(it);
    }
    return {};
  }

  // The checks every post makes: a peer of the job, a tag of the protocols', at most 2 GiB.
  [[nodiscard]] Status check_post(int peer, int tag, std::size_t bytes) const {
    if (peer < 0 || peer >= size_) {
      return fail(Errc::kInvalidArgument, fmt::format("post: peer {} of {} ranks", peer, size_));
    }
    if (tag < 0 || tag > kMaxTag) {
      return fail(Errc::kInvalidArgument, fmt::format("post: tag {} outside 0..{}", tag, kMaxTag));
    }
    if (bytes > static_cast<std::size_t>(INT_MAX)) {
      return fail(Errc::kInvalidArgument, "post: more than 2 GiB");
    }
    return {};
  }

  // The payload of the message poll() returned last, not taken yet: received and dropped
  // before the next message, so each header meets its own payload (a rank's payloads arrive in
  // the order of its headers).
  Status drop_owed_payload() {
    if (!owed_) {
      return {};
    }
    const Owed owed = *owed_;
    owed_.reset();
    std::vector<std::byte> dropped(owed.bytes);
    MPI_Status status;
    ACCO_RETURN_IF_ERROR(check(MPI_Recv(dropped.data(), static_cast<int>(dropped.size()), MPI_BYTE,
                                        owed.source, 0, payloads_, &status),
                               "MPI_Recv (a payload not taken)"));
    return check_payload_size(status, owed.bytes, owed.source);
  }

  // A payload shorter than its header said (a longer one is MPI's truncation error): the two
  // streams are out of step.
  Status check_payload_size(const MPI_Status& status, std::size_t expected, int source) {
    int count = 0;
    ACCO_RETURN_IF_ERROR(check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count"));
    if (static_cast<std::size_t>(count) != expected) {
      broken_ = true;
      return fail(Errc::kDeviceError,
                  fmt::format("payload from rank {}: {} bytes, its header said {}", source, count,
                              expected));
    }
    return {};
  }

  struct Outgoing {
    MPI_Request request = MPI_REQUEST_NULL;
    std::vector<std::byte> data;
    const void* payload = nullptr;  // a payload sent from the caller's memory
  };
  struct Owed {
    int source = 0;
    std::size_t bytes = 0;
  };
  std::list<Outgoing> outgoing_;  // a list: MPI holds pointers into each element's buffer
  std::optional<Owed> owed_;
  bool broken_ = false;  // a header and its payload parted: no payload is sent or taken
  int tag_ub_ = kMaxTag;
  MPI_Comm messages_ = MPI_COMM_NULL;  // post/poll apart from the collectives' tags
  MPI_Comm payloads_ = MPI_COMM_NULL;  // post_payload's payloads, tag 0
  bool owns_mpi_ = false;
  Capabilities capabilities_;
  MPI_Comm node_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  int nodes_ = 1;
  int node_index_ = 0;
};

}  // namespace

void defer_mpi_finalize() {
  finalize_deferred() = true;
}

void finish_mpi() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalize_owed().exchange(false) && finalized == 0) {
    MPI_Finalize();
  }
}

Result<std::unique_ptr<Communicator>> open_communicator(const LaunchInfo& launch) {
  if (launch.launcher == Launcher::kNone) {
    return self_communicator();
  }
  if (opened().exchange(true)) {
    return fail(Errc::kUnavailable, "MPI is already open in this process");
  }
  auto c = MpiCommunicator::open();
  if (!c) {
    opened() = false;
  }
  return c;
}

}  // namespace acco::cluster
