// One rank, no library: every collective over one rank is a copy of the send buffer (the
// sendrecv ring sends to itself).
#include <chrono>
#include <cstring>
#include <deque>

#include <fmt/format.h>

#include "acco/dist/communicator.hpp"

namespace acco::dist {
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
    inbox_.push_back({0, tag, std::move(data)});
    return {};
  }
  [[nodiscard]] Result<std::optional<Message>> poll() override {
    if (inbox_.empty()) {
      return std::optional<Message>{};
    }
    Message m = std::move(inbox_.front());
    inbox_.pop_front();
    return std::optional<Message>{std::move(m)};
  }
  [[nodiscard]] std::size_t pending_sends() override { return 0; }

 private:
  static constexpr int kMaxTag = 32767;
  std::deque<Message> inbox_;
};

}  // namespace

std::unique_ptr<Communicator> self_communicator() {
  return std::make_unique<SelfCommunicator>();
}

}  // namespace acco::dist
