#include "acco/exec/spawn.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acco/core/units.hpp"

namespace acco::exec {
namespace {

constexpr int kSpawnNodeBits = 1024;

// What the child failed at, written to the pipe with its errno.
enum Step : int {
  kStepBind = 1,
  kStepMemory,
  kStepDirectory,
  kStepExec,
  kStepStdio,
  kStepCgroup
};

std::string resolve(const std::string& name, const Environment& env) {
  if (name.find('/') != std::string::npos) {
    return name;
  }
  const auto path = env.find("PATH");
  for (const auto& dir :
       units::split(path == env.end() ? "/usr/local/bin:/usr/bin:/bin" : path->second, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return {};
}

void report_and_exit(int fd, Step step) {
  const int message[2] = {step, errno};
  (void)!::write(fd, message, sizeof message);
  ::_exit(127);
}

}  // namespace

SpawnRequest bound(SpawnRequest request, const Binding& binding) {
  request.cpus = binding.cpus;
  request.memory_node = binding.memory_node;
  for (const auto& var : binding.env) {
    request.env[var.name] = var.value;
  }
  return request;
}

Result<pid_t> spawn(const SpawnRequest& request) {
  if (request.argv.empty()) {
    return fail(Errc::kInvalidArgument, "spawn: no command to run");
  }
  const std::string& name = request.argv.front();
  const std::string program = resolve(name, request.env);
  if (program.empty()) {
    return fail(Errc::kNotFound, fmt::format("{}: not found on PATH", name));
  }
  // Everything the child needs, built before fork().
  std::vector<std::string> env_text;
  for (const auto& [key, value] : request.env) {
    env_text.push_back(key + "=" + value);
  }
  std::vector<char*> argv;
  for (const auto& arg : request.argv) {
    argv.push_back(const_cast<char*>(arg.c_str()));  // execve's signature, not written to
  }
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& entry : env_text) {
    envp.push_back(entry.data());
  }
  envp.push_back(nullptr);
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (const int cpu : request.cpus) {
    if (cpu >= 0 && cpu < CPU_SETSIZE) {
      CPU_SET(cpu, &cpus);
    }
  }
  std::vector<unsigned long> nodes(kSpawnNodeBits / (8 * sizeof(unsigned long)), 0);
  if (request.memory_node >= 0 && request.memory_node < kSpawnNodeBits) {
    const auto bits = 8 * sizeof(unsigned long);
    nodes[static_cast<std::size_t>(request.memory_node) / bits] |=
        1UL << (static_cast<std::size_t>(request.memory_node) % bits);
  }
  const std::string procs =
      request.cgroup.empty() ? std::string() : request.cgroup + "/cgroup.procs";
  const int log = ::open(request.log_path.empty() ? "/dev/null" : request.log_path.c_str(),
                         O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log < 0) {
    return fail(Errc::kUnavailable, fmt::format("{}: cannot open the log {}: {}", name,
                                                request.log_path, std::strerror(errno)));
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(log);
    return fail(Errc::kUnavailable, fmt::format("{}: pipe: {}", name, std::strerror(error)));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(log);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return fail(Errc::kUnavailable, fmt::format("{}: fork: {}", name, std::strerror(error)));
  }
  if (pid == 0) {
    ::close(pipe_fds[0]);
    ::setsid();
    const int null = ::open("/dev/null", O_RDONLY);
    if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(log, 1) < 0 || ::dup2(log, 2) < 0) {
      report_and_exit(pipe_fds[1], kStepStdio);
    }
    if (!procs.empty()) {  // "0": the writing process, before it can start anything
      const int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0 || ::write(fd, "0", 1) != 1) {
        report_and_exit(pipe_fds[1], kStepCgroup);
      }
      ::close(fd);
    }
    if (!request.cpus.empty() && ::sched_setaffinity(0, sizeof cpus, &cpus) != 0) {
      report_and_exit(pipe_fds[1], kStepBind);
    }
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg): set_mempolicy has no glibc wrapper
    if (request.memory_node >= 0 && request.memory_node < kSpawnNodeBits &&
        ::syscall(SYS_set_mempolicy, MPOL_BIND, nodes.data(), kSpawnNodeBits + 1) != 0) {
      report_and_exit(pipe_fds[1], kStepMemory);
    }
    if (!request.cwd.empty() && ::chdir(request.cwd.c_str()) != 0) {
      report_and_exit(pipe_fds[1], kStepDirectory);
    }
    ::execve(program.c_str(), argv.data(), envp.data());
    report_and_exit(pipe_fds[1], kStepExec);
  }
  ::close(log);
  ::close(pipe_fds[1]);
  int message[2] = {0, 0};
  ssize_t got = 0;
  do {
    got = ::read(pipe_fds[0], message, sizeof message);
  } while (got < 0 && errno == EINTR);
  ::close(pipe_fds[0]);
  if (got <= 0) {
    return pid;  // the pipe closed on exec: the command runs
  }
  int status = 0;
  (void)::waitpid(pid, &status, 0);
  const std::string what = message[0] == kStepBind        ? "cannot bind to its CPUs"
                           : message[0] == kStepMemory    ? "cannot bind its memory"
                           : message[0] == kStepDirectory ? "cannot change to its directory"
                           : message[0] == kStepStdio     ? "cannot set up stdin/stdout"
                           : message[0] == kStepCgroup ? "cannot join its cgroup " + request.cgroup
                                                       : "cannot execute";
  return fail(Errc::kUnavailable,
              fmt::format("{}: {}{}: {}", name, what,
                          message[0] == kStepDirectory ? " " + request.cwd : std::string(),
                          std::strerror(message[1])));
}

}  // namespace acco::exec
