#include "acco/core/process.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <string>
#include <utility>

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

namespace acco::core {
namespace {

// Dies of `signal` as if it had never been blocked: its default action (terminate) on this
// thread, where it is unblocked. The exit status then says which signal ended the process.
[[noreturn]] void die_of(int signal) {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;  // NOLINT(cppcoreguidelines-pro-type-union-access)
  sigemptyset(&action.sa_mask);
  sigaction(signal, &action, nullptr);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, signal);
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  raise(signal);
  _exit(128 + signal);  // not reached: the signal's default action ends the process
}

// A descriptor that reads SIGINT and SIGTERM, which the SignalScope has blocked; -1 on failure.
int interrupt_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return signalfd(-1, &set, SFD_CLOEXEC);
}

}  // namespace

InterruptWatch::InterruptWatch(std::function<void(int)> on_first)
    : on_first_(std::move(on_first)),
      signals_(interrupt_signals()),
      wake_(eventfd(0, EFD_CLOEXEC)) {
  if (signals_ >= 0 && wake_ >= 0) {
    watcher_ = std::thread([this] { watch(); });
  }
}

InterruptWatch::~InterruptWatch() {
  if (watcher_.joinable()) {
    const std::uint64_t one = 1;
    static_cast<void>(write(wake_, &one, sizeof one));
    watcher_.join();
  }
  for (const int fd : {signals_, wake_}) {
    if (fd >= 0) {
      close(fd);
    }
  }
}

void InterruptWatch::watch() {
  for (;;) {
    std::array<pollfd, 2> fds{{{signals_, POLLIN, 0}, {wake_, POLLIN, 0}}};
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      return;  // without the watch, signals stay blocked and the command stops at its checks
    }
    if (fds[1].revents != 0) {
      return;
    }
    signalfd_siginfo info{};
    if (read(signals_, &info, sizeof info) != static_cast<ssize_t>(sizeof info)) {
      continue;
    }
    const int signal = static_cast<int>(info.ssi_signo);
    if (int none = 0; first_.compare_exchange_strong(none, signal)) {
      if (on_first_) {
        on_first_(signal);
      }
      continue;
    }
    die_of(signal);
  }
}

std::string hostname() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) {
    return "localhost";
  }
  return name.data();
}

}  // namespace acco::core
