// Run under mpirun by the integration tests: every rank sends its next rank (in a ring) messages
// with payloads of 8 B to 3 MiB through the MPI communicator, each followed by a plain message,
// and takes the payloads from its previous rank: one in three straight into its memory (the bytes
// checked), one in three left for the next poll to drop, one in three asked for with the wrong
// size (refused, dropped). Every header must meet its own payload, in order, and every send
// must be let go of at the end. Prints "rank R: ok" and exits 0, or names what was wrong and
// exits 1.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "acco/cluster/communicator.hpp"
#include "acco/cluster/launcher.hpp"

namespace {

using acco::cluster::Communicator;
using acco::cluster::Message;

constexpr int kTagHeader = 5;
constexpr int kTagPlain = 6;
constexpr std::size_t kSizes[] = {8, 4096, 65536, 200000, 1 << 20, 3 << 20};
constexpr std::size_t kCount = sizeof kSizes / sizeof kSizes[0];

std::byte pattern(int rank, std::size_t message, std::size_t at) {
  return static_cast<std::byte>((rank * 31 + static_cast<int>(message) * 7 + at) & 0xFFU);
}

std::vector<std::byte> word(std::uint64_t w) {
  std::vector<std::byte> v(sizeof w);
  std::memcpy(v.data(), &w, sizeof w);
  return v;
}

std::uint64_t read_word(const Message& m) {
  std::uint64_t w = 0;
  if (m.data.size() == sizeof w) {
    std::memcpy(&w, m.data.data(), sizeof w);
  }
  return w;
}

int failed(int rank, const std::string& what) {
  std::cerr << "rank " << rank << ": " << what << "\n";
  return 1;
}

int check(Communicator& comm) {
  const int rank = comm.rank();
  const int size = comm.size();
  const int next = (rank + 1) % size;
  const int prev = (rank + size - 1) % size;
  std::vector<std::vector<std::byte>> outgoing;
  outgoing.reserve(kCount);
  for (std::size_t i = 0; i < kCount; ++i) {
    std::vector<std::byte>& payload = outgoing.emplace_back(kSizes[i]);
    for (std::size_t b = 0; b < payload.size(); ++b) {
      payload[b] = pattern(rank, i, b);
    }
    if (auto posted = comm.post_payload(next, kTagHeader, word(i), payload); !posted) {
      return failed(rank, "post_payload: " + posted.error().message);
    }
    if (auto posted = comm.post(next, kTagPlain, word(i)); !posted) {
      return failed(rank, "post: " + posted.error().message);
    }
  }

  std::size_t headers = 0;
  std::size_t plains = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (plains < kCount) {
    if (std::chrono::steady_clock::now() > deadline) {
      return failed(rank, "timed out waiting for messages");
    }
    auto polled = comm.poll();
    if (!polled) {
      return failed(rank, "poll: " + polled.error().message);
    }
    if (!*polled) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      continue;
    }
    const Message& m = **polled;
    const std::uint64_t i = read_word(m);
    if (m.source != prev) {
      return failed(rank, "a message from rank " + std::to_string(m.source));
    }
    if (m.tag == kTagPlain) {
      if (i != plains || headers != plains + 1) {
        return failed(rank, "plain message " + std::to_string(i) + " out of order");
      }
      ++plains;
      continue;
    }
    if (m.tag != kTagHeader || i != headers || i >= kCount || m.payload != kSizes[i]) {
      return failed(rank, "header " + std::to_string(i) + " (tag " + std::to_string(m.tag) +
                              ", payload " + std::to_string(m.payload) + ") out of order");
    }
    ++headers;
    if (i % 3 == 1) {
      continue;  // the next poll drops it
    }
    if (i % 3 == 2) {
      std::vector<std::byte> wrong(m.payload - 1);
      auto refused = comm.take_payload(m, wrong);
      if (refused || refused.error().message.find("into") == std::string::npos) {
        return failed(rank, "a payload of the wrong size was not refused");
      }
      continue;
    }
    std::vector<std::byte> into(m.payload);
    if (auto taken = comm.take_payload(m, into); !taken) {
      return failed(rank, "take_payload: " + taken.error().message);
    }
    for (std::size_t b = 0; b < into.size(); ++b) {
      if (into[b] != pattern(prev, i, b)) {
        return failed(rank, "payload " + std::to_string(i) + ": byte " + std::to_string(b) +
                                " is not what rank " + std::to_string(prev) + " sent");
      }
    }
  }

  for (const auto& payload : outgoing) {
    while (comm.sending_payload(payload.data())) {
      if (std::chrono::steady_clock::now() > deadline) {
        return failed(rank, "a payload was never let go of");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  if (auto done = comm.barrier(); !done) {
    return failed(rank, "barrier: " + done.error().message);
  }
  std::cout << "rank " << rank << ": ok\n";
  return 0;
}

}  // namespace

int main() {
  auto launch = acco::cluster::detect_launcher(acco::cluster::process_environment());
  if (!launch) {
    return failed(-1, launch.error().message);
  }
  auto comm = acco::cluster::open_communicator(*launch);
  if (!comm) {
    return failed(-1, comm.error().message);
  }
  return check(**comm);
}
