// One rank, no library: every collective over one rank is a copy of the send buffer (the
// sendrecv ring sends to itself).
#include <chrono>
#include <cstring>
#include <deque>
#include <optional>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "acco/cluster/communicator.hpp"

namespace acco::cluster {
namespace {

class SelfCommunicator final : public Communicator {
 public:
  [[nodiscard]] int rank() const override { return 0; }
  [[nodiscard]] int size() const override { return 1; }
  [[nodiscard]] int local_rank() const override { return 0; }
  [[nodiscard]] int local_size() const override { return 1; }
  [[nodiscard]] int nodes() const override { return 1; }
  [[nodiscard]] int node() const override { return 0; }
  [[nodiscard]] std::string backend() const override { return "self"; }
  [[nodiscard]] Capabilities capabilities() const override {
    return {"none (one rank, no MPI)", true, false, "no MPI library"};
  }
  [[nodiscard]] double seconds() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  [[nodiscard]] Status barrier() override { return {}; }
  [[nodiscard]] Status run(Op /*op*/, const float* send, float* recv, std::size_t count) override {
    if (count > 0 && (send == nullptr || recv == nullptr)) {
      return fail(Errc::kInvalidArgument, "collective: null buffer");
    }
    if (count > 0 && send != recv) {  // in place (a broadcast's root): already there
      std::memcpy(recv, send, count * sizeof(float));
    }
    return {};
  }
  [[nodiscard]] Result<std::vector<double>> allgather(double value) override {
    return std::vector<double>{value};
  }
  [[nodiscard]] Result<std::vector<std::string>> gather(const std::string& text) override {
    return std::vector<std::string>{text};
  }
  [[nodiscard]] Status broadcast(std::span<std::byte> /*data*/, int root) override {
    if (root != 0) {
      return fail(Errc::kInvalidArgument, fmt::format("broadcast: root {} of 1 rank", root));
    }
    return {};
  }
  [[nodiscard]] Status exchange(int peer, std::span<const std::byte> send,
                                std::span<std::byte> recv) override {
    if (peer != 0) {
      return fail(Errc::kInvalidArgument, fmt::format("exchange: peer {} of 1 rank", peer));
    }
    if (send.size() != recv.size()) {
      return fail(Errc::kInvalidArgument, "exchange: send and receive sizes differ");
    }
    if (!send.empty()) {
      std::memmove(recv.data(), send.data(), send.size());
    }
    return {};
  }
  [[nodiscard]] Status post(int peer, int tag, std::vector<std::byte> data) override {
    if (peer != 0) {
      return fail(Errc::kInvalidArgument, fmt::format("post: peer {} of 1 rank", peer));
    }
    if (tag < 0 || tag > kMaxTag) {
      return fail(Errc::kInvalidArgument, fmt::format("post: tag {} outside 0..{}", tag, kMaxTag));
    }
    inbox_.push_back({{0, tag, std::move(data), 0}, {}});
    return {};
  }
  [[nodiscard]] Result<std::optional<Message>> poll() override {
    owed_.reset();  // a payload not taken: dropped
    if (inbox_.empty()) {
      return std::optional<Message>{};
    }
    Incoming in = std::move(inbox_.front());
    inbox_.pop_front();
    if (in.message.payload > 0) {
      owed_ = std::move(in.payload);
    }
    return std::optional<Message>{std::move(in.message)};
  }
  [[nodiscard]] std::size_t pending_sends() override { return 0; }

  // To itself the payload is copied when posted: the caller may change its memory at once.
  [[nodiscard]] Status post_payload(int peer, int tag, std::vector<std::byte> header,
                                    std::span<const std::byte> payload) override {
    ACCO_RETURN_IF_ERROR(post(peer, tag, std::move(header)));
    inbox_.back().message.payload = payload.size();
    inbox_.back().payload.assign(payload.begin(), payload.end());
    return {};
  }
  [[nodiscard]] bool sending_payload(const void* /*payload*/) override { return false; }
  [[nodiscard]] Status take_payload(const Message& m, std::span<std::byte> into) override {
    if (!owed_ || owed_->size() != m.payload || m.payload == 0) {
      return fail(Errc::kInvalidArgument,
                  "take_payload: the message is not the last one polled with a payload");
    }
    std::vector<std::byte> payload = std::move(*owed_);
    owed_.reset();
    if (into.size() != payload.size()) {
      return fail(Errc::kInvalidArgument, fmt::format("take_payload: {} bytes from rank 0 into {} "
                                                      "bytes",
                                                      payload.size(), into.size()));
    }
    std::memcpy(into.data(), payload.data(), payload.size());
    return {};
  }

 private:
  static constexpr int kMaxTag = 32767;
  struct Incoming {
    Message message;
    std::vector<std::byte> payload;
  };
  std::deque<Incoming> inbox_;
  std::optional<std::vector<std::byte>> owed_;  // the last polled message's payload
};

}  // namespace

std::unique_ptr<Communicator> self_communicator() {
  return std::make_unique<SelfCommunicator>();
}

}  // namespace acco::cluster
