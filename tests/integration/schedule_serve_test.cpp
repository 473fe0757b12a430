// `acco schedule --serve`: the runtime's queues and tasks and the transfer engines' bytes on
// /metrics while the schedule runs, and the command's normal output and exit once it ends.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon.hpp"

namespace acco::testing {
namespace {

using ::testing::HasSubstr;

// A running `acco schedule ...`: stderr read until its serving line gives the port; wait()
// collects the rest of both streams and the exit code.
class Schedule {
 public:
  explicit Schedule(const std::vector<std::string>& args) {
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
      for (const char* name : {"ACCO_SYSROOT", "ACCO_NVML", "ACCO_NVML_LIBRARY", "ACCO_CONFIG"}) {
        ::unsetenv(name);
      }
      std::vector<std::string> all = {ACCO_BINARY, "schedule"};
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
    ::fcntl(out_, F_SETFL, O_NONBLOCK);
    const std::regex serving("serving on http://127\\.0\\.0\\.1:([0-9]+)/");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{err_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) {
        continue;
      }
      char buffer[512];
      const ssize_t n = ::read(err_, buffer, sizeof buffer);
      if (n <= 0) {
        break;  // exited before serving
      }
      err_text_.append(buffer, static_cast<std::size_t>(n));
      std::smatch m;
      if (std::regex_search(err_text_, m, serving)) {
        port_ = std::stoi(m[1]);
        break;
      }
    }
    ::fcntl(err_, F_SETFL, O_NONBLOCK);
  }
  ~Schedule() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    for (const int fd : {err_, out_}) {
      if (fd >= 0) {
        ::close(fd);
      }
    }
  }
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;

  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] const std::string& early_stderr() const { return err_text_; }
  [[nodiscard]] bool running() {
    drain();
    int status = 0;
    if (reaped_ || ::waitpid(pid_, &status, WNOHANG) == 0) {
      return !reaped_;
    }
    reaped_ = true;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return false;
  }

  struct Ended {
    int exit_code = -1;
    std::string out;
    std::string err;
  };
  // Waits for the exit (at most 60 s, then kills it).
  Ended wait() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (running()) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    drain();
    return {exit_code_, out_text_, err_text_};
  }

 private:
  // Reads what both pipes hold now, so a long output never blocks the child.
  void drain() {
    char buffer[4096];
    ssize_t n = 0;
    while (out_ >= 0 && (n = ::read(out_, buffer, sizeof buffer)) > 0) {
      out_text_.append(buffer, static_cast<std::size_t>(n));
    }
    while (err_ >= 0 && (n = ::read(err_, buffer, sizeof buffer)) > 0) {
      err_text_.append(buffer, static_cast<std::size_t>(n));
    }
  }

  pid_t pid_ = -1;
  int err_ = -1;
  int out_ = -1;
  int port_ = 0;
  bool reaped_ = false;
  int exit_code_ = -1;
  std::string out_text_;
  std::string err_text_;
};

// The sum of every sample of `family` in `text` whose labels contain `label` ("" for any).
double sum_of(const std::string& text, const std::string& family, const std::string& label = "") {
  const std::regex sample("^" + family + "\\{([^}]*)\\} ([0-9.eE+-]+)$");
  std::istringstream lines(text);
  std::string line;
  double sum = 0;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_match(line, m, sample) && m[1].str().find(label) != std::string::npos) {
      sum += std::stod(m[2]);
    }
  }
  return sum;
}

TEST(ScheduleServeTest, AScrapeDuringTheRunShowsTheRuntimesTasksAndTheEnginesBytes) {
  // About 1.5 s of emulated kernels per run, two runs (calibration, measured): time for dozens
  // of scrapes at 50 ms.
  Schedule s({"--workload", "cholesky", "--tiles", "8", "--devices", "host:2", "--kinds", "cpu,cpu",
              "--serve", "127.0.0.1:0", "--serve-interval", "50ms"});
  ASSERT_GT(s.port(), 0) << s.early_stderr();
  EXPECT_THAT(s.early_stderr(), HasSubstr("(metrics at /metrics)"));

  std::string seen;  // the last scrape with tasks and bytes in it
  int scrapes = 0;
  while (s.running()) {
    httplib::Client c("127.0.0.1", s.port());
    c.set_read_timeout(5, 0);
    if (auto r = c.Get("/metrics"); r && r->status == 200) {
      ++scrapes;
      EXPECT_THAT(r->get_header_value("Content-Type"), HasSubstr("text/plain; version=0.0.4"));
      if (sum_of(r->body, "acco_runtime_tasks_total", "state=\"started\"") > 0 &&
          sum_of(r->body, "acco_transfer_bytes_total") > 0) {
        seen = r->body;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const auto ended = s.wait();
  EXPECT_EQ(ended.exit_code, 0) << ended.err;
  EXPECT_THAT(ended.out, HasSubstr("acco schedule: cholesky"));
  EXPECT_GT(scrapes, 0);
  ASSERT_FALSE(seen.empty()) << "no scrape showed started tasks and moved bytes in " << scrapes;

  EXPECT_THAT(seen, HasSubstr("# TYPE acco_runtime_tasks_total counter"));
  EXPECT_THAT(seen, HasSubstr("# TYPE acco_runtime_queue_depth gauge"));
  EXPECT_THAT(seen, HasSubstr("acco_runtime_running_tasks{device=\"1\"}"));
  EXPECT_THAT(seen, HasSubstr("acco_transfer_bytes_total{device=\"0\",direction=\"host-to-"
                              "device\"}"));
  EXPECT_GT(sum_of(seen, "acco_transfer_bytes_total", "direction=\"host-to-device\""), 0);
  EXPECT_GT(sum_of(seen, "acco_transfer_copies_total"), 0);
  EXPECT_GE(sum_of(seen, "acco_runtime_tasks_total", "state=\"started\""),
            sum_of(seen, "acco_runtime_tasks_total", "state=\"finished\""));
  if (have("promtool")) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("acco_schedule_serve_" + std::to_string(::getpid()) + ".prom");
    { std::ofstream(path) << seen; }
    EXPECT_EQ(
        std::system(("promtool check metrics < " + path.string() + " > /dev/null 2>&1").c_str()),
        0);
    std::filesystem::remove(path);
  }
  // The server stopped with the command.
  httplib::Client after("127.0.0.1", s.port());
  after.set_connection_timeout(1, 0);
  EXPECT_FALSE(after.Get("/metrics"));
}

TEST(ScheduleServeTest, ABadServeAddressIsAUsageError) {
  Schedule s({"--tiles", "2", "--serve", "not-an-address:x"});
  const auto ended = s.wait();
  EXPECT_EQ(ended.exit_code, 64) << ended.err;
  EXPECT_THAT(ended.err, HasSubstr("--serve"));
}

}  // namespace
}  // namespace acco::testing
