// Helpers for the integration tests that start acco for real: a running `acco serve` as a child
// process (its port read from the "listening on" line), a file's text, and whether a tool is on
// PATH.
#pragma once

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_acco.hpp"  // slurp

namespace acco::testing {

inline bool have(const char* tool) {
  return std::system((std::string("command -v ") + tool + " >/dev/null 2>&1").c_str()) == 0;
}

// A running `acco serve`: started with a clean ACCO_* environment, stderr read until the
// "listening on" line gives the port.
class Daemon {
 public:
  Daemon(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) {
    int err_pipe[2];
    int out_pipe[2];
    if (::pipe(err_pipe) != 0 || ::pipe(out_pipe) != 0) {
      return;
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(err_pipe[1], 2);
      ::dup2(out_pipe[1], 1);
      ::close(err_pipe[0]);
      ::close(out_pipe[0]);
      for (const char* name : {"ACCO_SYSROOT", "ACCO_NVML", "ACCO_NVML_LIBRARY", "ACCO_CONFIG",
                               "ACCO_LISTEN", "ACCO_STORE", "ACCO_HISTORY", "ACCO_STATE_FILE"}) {
        ::unsetenv(name);
      }
      for (const auto& [k, v] : env) {
        ::setenv(k.c_str(), v.c_str(), 1);
      }
      std::vector<std::string> all = {ACCO_BINARY, "serve"};
      all.insert(all.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (auto& a : all) {
        argv.push_back(a.data());
      }
      argv.push_back(nullptr);
      ::execv(ACCO_BINARY, argv.data());
      ::_exit(127);
    }
    ::close(err_pipe[1]);
    ::close(out_pipe[1]);
    err_ = err_pipe[0];
    out_ = out_pipe[0];
    const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)/");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{err_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) {
        continue;
      }
      char buffer[512];
      const ssize_t n = ::read(err_, buffer, sizeof buffer);
      if (n <= 0) {
        break;  // exited before listening
      }
      stderr_.append(buffer, static_cast<std::size_t>(n));
      std::smatch m;
      if (std::regex_search(stderr_, m, listening)) {
        port_ = std::stoi(m[1]);
        break;
      }
    }
  }
  ~Daemon() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (err_ >= 0) {
      ::close(err_);
    }
    if (out_ >= 0) {
      ::close(out_);
    }
  }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] const std::string& early_stderr() const { return stderr_; }

  [[nodiscard]] httplib::Result get(const std::string& path) const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(5, 0);
    return c.Get(path.c_str());
  }

  struct Ended {
    int exit_code = -1;
    double seconds = 0;
    std::string out;
    std::string err;
  };
  // Sends `sig` and waits for the exit (at most 10 s).
  Ended stop(int sig) {
    Ended e;
    const auto start = std::chrono::steady_clock::now();
    ::kill(pid_, sig);
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(10)) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    reaped_ = true;
    e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    e.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    e.out = drain(out_);
    e.err = stderr_ + drain(err_);
    return e;
  }

 private:
  static std::string drain(int fd) {
    std::string s;
    char buffer[4096];
    ssize_t n = 0;
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
    while ((n = ::read(fd, buffer, sizeof buffer)) > 0) {
      s.append(buffer, static_cast<std::size_t>(n));
    }
    return s;
  }

  pid_t pid_ = -1;
  int err_ = -1;
  int out_ = -1;
  int port_ = 0;
  bool reaped_ = false;
  std::string stderr_;
};

}  // namespace acco::testing
