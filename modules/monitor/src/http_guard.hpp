#pragma once
// cpp-httplib's server with guards against clients that hold its threads: cpp-httplib 0.11
// serves a connection on one pool thread and times out each read alone, so a client that sends a
// byte a second (slowloris) holds a thread for as long as it likes, and 64 of them hold them all.
// GuardedServer serves each connection itself (the same keep-alive loop, over its own stream)
// and adds what servers such as Apache's mod_reqtimeout and nginx's client_header_timeout do:
// - a request must arrive whole within `request_deadline` of its first byte;
// - at most `max_waiting` connections may wait at once for a request they have not sent whole
//   (a new connection's first request included; a keep-alive connection idle after an answer is
//   not counted): past it a connection that would wait is closed at once, so slow clients can
//   hold at most that many of the pool's threads;
// - headers past `max_header_bytes` in all, or a header line past cpp-httplib's 8 KiB, are
//   answered 431 (cpp-httplib says 400).
// Each cut is reported to `on_cut` with its reason, on the connection's thread; a cut inside the
// headers is answered by cpp-httplib's error handler, where current_cut() says why.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

#include <httplib.h>

namespace acco::monitor::detail {

enum class Cut {
  kNone,
  kRequestDeadline,  // the request did not arrive whole in time
  kTooManyWaiting,   // max_waiting connections were already waiting on their clients
  kHeaderTooLarge,   // a header line past 8 KiB or headers past max_header_bytes
};

// "request_deadline", "too_many_waiting", "header_too_large" (metric labels); "" for kNone.
const char* cut_label(Cut cut);

struct GuardOptions {
  std::chrono::milliseconds request_deadline{5000};
  std::size_t max_waiting = 32;
  std::size_t max_header_bytes = std::size_t{64} * 1024;
  // Told of each cut: its reason, the peer's address ("127.0.0.1") and whether the request was
  // answered (a cut in the request line or before it is not).
  std::function<void(Cut cut, const std::string& peer, bool answered)> on_cut;
};

class GuardedServer : public httplib::Server {
 public:
  explicit GuardedServer(GuardOptions options);

  // What cut the request this thread is answering now (for the error handler); kNone outside a
  // request or when nothing did.
  static Cut current_cut();

 private:
  bool process_and_close_socket(socket_t sock) override;

  GuardOptions options_;
  std::atomic<std::size_t> waiting_{0};
  friend class GuardedStream;
};

}  // namespace acco::monitor::detail
