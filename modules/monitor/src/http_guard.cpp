#include "http_guard.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

namespace acco::monitor::detail {
namespace {

using Clock = std::chrono::steady_clock;

// cpp-httplib 0.11 refuses a header line past this (CPPHTTPLIB_HEADER_MAX_LENGTH, CRLF included).
constexpr std::size_t kMaxHeaderLine = 8192;
// How often a connection idle between requests looks whether the server is stopping.
constexpr std::chrono::milliseconds kIdleSlice{100};
// When max_waiting connections already wait, a newcomer still gets this long for its bytes
// before it is cut: a client that sends its request at once is never cut.
constexpr std::chrono::milliseconds kGrace{100};

int millis(Clock::duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return static_cast<int>(std::clamp<std::int64_t>(ms, 0, 60'000));
}

// poll(2) for one event; true when it is there within `timeout_ms`.
bool wait_for(socket_t fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  int rc = 0;
  do {
    rc = ::poll(&p, 1, timeout_ms);
  } while (rc < 0 && errno == EINTR);
  return rc > 0;
}

int millis_of(time_t sec, time_t usec) {
  return static_cast<int>(std::min<std::int64_t>(
      static_cast<std::int64_t>(sec) * 1000 + static_cast<std::int64_t>(usec) / 1000, 60'000));
}

void address_of(socket_t fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  if ((peer ? ::getpeername(fd, sa, &len) : ::getsockname(fd, sa, &len)) != 0) {
    return;
  }
  std::array<char, NI_MAXHOST> host{};
  std::array<char, NI_MAXSERV> serv{};
  if (::getnameinfo(sa, len, host.data(), host.size(), serv.data(), serv.size(),
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host.data();
    port = std::atoi(serv.data());
  }
}

}  // namespace

const char* cut_label(Cut cut) {
  switch (cut) {
    case Cut::kRequestDeadline:
      return "request_deadline";
    case Cut::kTooManyWaiting:
      return "too_many_waiting";
    case Cut::kHeaderTooLarge:
      return "header_too_large";
    case Cut::kNone:
      break;
  }
  return "";
}

// One connection's stream: buffered reads through the guards, writes with the write timeout.
class GuardedStream final : public httplib::Stream {
 public:
  GuardedStream(GuardedServer& server, socket_t fd)
      : server_(server),
        fd_(fd),
        read_timeout_ms_(millis_of(server.read_timeout_sec_, server.read_timeout_usec_)),
        write_timeout_ms_(millis_of(server.write_timeout_sec_, server.write_timeout_usec_)) {}

  // Waits up to `idle` for the next request's first byte, looking every kIdleSlice whether the
  // server stops. A new connection's first request counts as waiting on its client.
  bool await_request(bool first, std::chrono::milliseconds idle) {
    if (off_ < len_ || wait_for(fd_, POLLIN, 0)) {
      return true;
    }
    if (first) {
      return wait_counted(Clock::now() + idle);
    }
    return readable_by(Clock::now() + idle);
  }

  // A request starts: its deadline and the header accounting.
  void begin_request() {
    deadline_ = Clock::now() + server_.options_.request_deadline;
    in_headers_ = true;
    line_index_ = 0;
    line_bytes_ = 0;
    header_bytes_ = 0;
    cut_ = Cut::kNone;
    answered_ = false;
  }

  [[nodiscard]] Cut cut() const { return cut_; }
  // Whether the current request got (the start of) an answer.
  [[nodiscard]] bool answered() const { return answered_; }
  void set_cut(Cut cut) { cut_ = cut; }

  bool is_readable() const override { return off_ < len_ || wait_in_request(); }

  bool is_writable() const override { return wait_for(fd_, POLLOUT, write_timeout_ms_); }

  ssize_t read(char* ptr, size_t size) override {
    if (off_ == len_) {
      if (!wait_in_request()) {
        return -1;
      }
      ssize_t n = 0;
      do {
        n = ::recv(fd_, buffer_.data(), buffer_.size(), 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) {
        return n;
      }
      off_ = 0;
      len_ = static_cast<std::size_t>(n);
    }
    const std::size_t n = std::min(size, len_ - off_);
    std::memcpy(ptr, buffer_.data() + off_, n);
    off_ += n;
    if (!account(ptr, n)) {
      return -1;
    }
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) {
      return -1;
    }
    answered_ = true;
    ssize_t n = 0;
    do {
      n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address_of(fd_, true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address_of(fd_, false, ip, port);
  }
  socket_t socket() const override { return fd_; }

 private:
  // Waits for more of a request begun: within its deadline, and only while fewer than
  // max_waiting connections wait.
  bool wait_in_request() const {
    if (wait_for(fd_, POLLIN, 0)) {
      return true;
    }
    const auto read_until = Clock::now() + std::chrono::milliseconds(read_timeout_ms_);
    const bool timely = wait_counted(std::min(deadline_, read_until));
    if (!timely && cut_ == Cut::kNone && Clock::now() >= deadline_) {
      cut_ = Cut::kRequestDeadline;
    }
    return timely;
  }

  // Waits until `until` for bytes as one of the connections waiting on their clients; when
  // max_waiting already do, only kGrace, then the connection is cut.
  bool wait_counted(Clock::time_point until) const {
    std::atomic<std::size_t>& waiting = server_.waiting_;
    if (waiting.fetch_add(1) >= server_.options_.max_waiting) {
      waiting.fetch_sub(1);
      if (wait_for(fd_, POLLIN, millis(std::min<Clock::duration>(until - Clock::now(), kGrace)))) {
        return true;
      }
      if (Clock::now() < until) {
        cut_ = Cut::kTooManyWaiting;
      }
      return false;
    }
    const bool ready = readable_by(until);
    waiting.fetch_sub(1);
    return ready;
  }

  // Whether bytes arrive by `until`, looking every kIdleSlice whether the server stops.
  [[nodiscard]] bool readable_by(Clock::time_point until) const {
    while (server_.svr_sock_ != INVALID_SOCKET) {
      const auto left = until - Clock::now();
      if (left <= Clock::duration::zero()) {
        return false;
      }
      if (wait_for(fd_, POLLIN, millis(std::min<Clock::duration>(left, kIdleSlice)))) {
        return true;
      }
    }
    return false;
  }

  // Counts the request's header bytes as cpp-httplib consumes them; false past the total cap.
  bool account(const char* p, std::size_t n) {
    for (std::size_t i = 0; i < n && in_headers_; ++i) {
      ++header_bytes_;
      ++line_bytes_;
      if (p[i] == '\n') {
        const bool blank = line_bytes_ == 1 || (line_bytes_ == 2 && previous_ == '\r');
        if (blank && line_index_ > 0) {
          in_headers_ = false;  // the body, if any, follows
        } else if (line_index_ > 0 && line_bytes_ > kMaxHeaderLine) {
          cut_ = Cut::kHeaderTooLarge;  // cpp-httplib answers 400; the error handler says 431
        }
        ++line_index_;
        line_bytes_ = 0;
      }
      previous_ = p[i];
      if (header_bytes_ > server_.options_.max_header_bytes) {
        cut_ = Cut::kHeaderTooLarge;
        return false;
      }
    }
    return true;
  }

  GuardedServer& server_;
  socket_t fd_;
  int read_timeout_ms_;
  int write_timeout_ms_;
  std::array<char, 4096> buffer_{};
  std::size_t off_ = 0;
  std::size_t len_ = 0;
  Clock::time_point deadline_ = Clock::time_point::max();
  bool in_headers_ = false;
  std::size_t line_index_ = 0;
  std::size_t line_bytes_ = 0;
  std::size_t header_bytes_ = 0;
  char previous_ = 0;
  bool answered_ = false;
  mutable Cut cut_ = Cut::kNone;  // set while waiting, which is const for is_readable()
};

namespace {
// The stream whose request this thread answers now.
const GuardedStream*& current_stream() {
  thread_local const GuardedStream* stream = nullptr;
  return stream;
}
}  // namespace

GuardedServer::GuardedServer(GuardOptions options) : options_(std::move(options)) {}

Cut GuardedServer::current_cut() {
  const GuardedStream* stream = current_stream();
  return stream != nullptr ? stream->cut() : Cut::kNone;
}

// cpp-httplib's keep-alive loop over a GuardedStream: up to keep_alive_max_count requests, each
// after up to keep_alive_timeout of quiet; the connection ends at a cut.
bool GuardedServer::process_and_close_socket(socket_t sock) {
  // cpp-httplib writes an answer's headers and its body apart: with Nagle's algorithm the body
  // waited for the client's delayed ACK, 40 ms for each small JSON answer on a kept connection.
  int one = 1;
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  GuardedStream stream(*this, sock);
  bool ret = false;
  bool first = true;
  for (auto count = keep_alive_max_count_; count > 0 && svr_sock_ != INVALID_SOCKET; --count) {
    if (!stream.await_request(first, std::chrono::seconds(keep_alive_timeout_sec_))) {
      break;
    }
    stream.begin_request();
    bool closed = false;
    current_stream() = &stream;
    ret = process_request(stream, count == 1, closed, nullptr);
    current_stream() = nullptr;
    if (stream.cut() != Cut::kNone || !ret || closed) {
      break;
    }
    first = false;
  }
  if (stream.cut() != Cut::kNone && options_.on_cut) {
    std::string peer;
    int port = 0;
    stream.get_remote_ip_and_port(peer, port);
    options_.on_cut(stream.cut(), peer, stream.answered());
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ret;
}

}  // namespace acco::monitor::detail
