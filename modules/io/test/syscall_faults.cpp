// The definitions of syscall_faults.hpp, for 64-bit glibc: with _FILE_OFFSET_BITS=64 on a
// 32-bit target, pread/pwrite/ftruncate would be the *64 symbols and these would clash.
#if defined(_FILE_OFFSET_BITS) && _FILE_OFFSET_BITS == 64 && !defined(__LP64__)
#error "syscall_faults.cpp assumes 64-bit off_t without _FILE_OFFSET_BITS redirection"
#endif
// The definitions of syscall_faults.hpp. A symbol defined in the program comes before the C
// library's (and a sanitizer's interceptor) for every caller, the io library included; the real
// function is the next definition, found with dlsym(RTLD_NEXT).
#include "syscall_faults.hpp"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

namespace acco::io::testing {
namespace {

std::atomic<bool> g_armed{false};
std::mutex g_mutex;
SyscallFault g_fault;
int g_seen = 0;
int g_hits = 0;
bool g_cut_short = false;

template <typename F>
F real(const char* name) {
  void* f = ::dlsym(RTLD_NEXT, name);
  if (f == nullptr) {
    std::fprintf(stderr, "syscall_faults: no %s after this program's\n", name);
    std::abort();
  }
  return reinterpret_cast<F>(f);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

// What an armed fault does to this call.
enum class Action {
  kPass,
  kFail,
  kShort,
  kTruncate
};
struct Decision {
  Action action = Action::kPass;
  int error = 0;          // kFail: the errno
  off_t truncate_to = 0;  // kTruncate: the size
};

bool under(int fd, const std::string& dir, bool directories) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode) != directories) {
    return false;
  }
  std::array<char, PATH_MAX> link{};
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(proc.c_str(), link.data(), link.size() - 1);
  if (n <= 0) {
    return false;
  }
  const std::string path(link.data(), static_cast<std::size_t>(n));
  const std::string prefix = dir.ends_with('/') ? dir : dir + '/';
  return path == dir || path.compare(0, prefix.size(), prefix) == 0;
}

Decision decide(Call call, int fd) {
  if (!g_armed.load(std::memory_order_acquire)) {
    return {};
  }
  const std::lock_guard lock(g_mutex);
  if (g_fault.call != call || !under(fd, g_fault.under, g_fault.directories) ||
      g_seen++ < g_fault.succeed_first) {
    return {};
  }
  if (g_fault.truncate_to) {
    if (g_hits > 0) {
      return {};  // once: the file stays as short as it was cut
    }
    ++g_hits;
    return {Action::kTruncate, 0, *g_fault.truncate_to};
  }
  ++g_hits;
  if (g_fault.short_first && !std::exchange(g_cut_short, true)) {
    return {Action::kShort};
  }
  return {Action::kFail, g_fault.error};
}

}  // namespace

ScopedSyscallFault::ScopedSyscallFault(SyscallFault fault) {
  const std::lock_guard lock(g_mutex);
  g_fault = std::move(fault);
  g_seen = 0;
  g_hits = 0;
  g_cut_short = false;
  g_armed.store(true, std::memory_order_release);
}

ScopedSyscallFault::~ScopedSyscallFault() {
  g_armed.store(false, std::memory_order_release);
}

int ScopedSyscallFault::hits() const {
  const std::lock_guard lock(g_mutex);
  return g_hits;
}

}  // namespace acco::io::testing

namespace faults = acco::io::testing;

// NOLINTBEGIN(readability-inconsistent-declaration-parameter-name,misc-use-anonymous-namespace)
extern "C" {

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  static const auto next = faults::real<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
  const auto d = faults::decide(faults::Call::kPwrite, fd);
  switch (d.action) {
    case faults::Action::kFail:
      errno = d.error;
      return -1;
    case faults::Action::kShort:
      return next(fd, buf, count / 2 > 0 ? count / 2 : count, offset);
    default:
      return next(fd, buf, count, offset);
  }
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off64_t offset) {
  return pwrite(fd, buf, count, offset);
}

ssize_t pread(int fd, void* buf, size_t count, off_t offset) {
  static const auto next = faults::real<ssize_t (*)(int, void*, size_t, off_t)>("pread");
  const auto d = faults::decide(faults::Call::kPread, fd);
  switch (d.action) {
    case faults::Action::kFail:
      errno = d.error;
      return -1;
    case faults::Action::kTruncate: {
      // Through another descriptor: the reader's is read-only, and ftruncate needs one open for
      // writing.
      const std::string proc = "/proc/self/fd/" + std::to_string(fd);
      if (::truncate(proc.c_str(), d.truncate_to) != 0) {
        std::perror("syscall_faults: truncate");
      }
      return next(fd, buf, count, offset);
    }
    default:
      return next(fd, buf, count, offset);
  }
}

ssize_t pread64(int fd, void* buf, size_t count, off64_t offset) {
  return pread(fd, buf, count, offset);
}

int fsync(int fd) {
  static const auto next = faults::real<int (*)(int)>("fsync");
  if (const auto d = faults::decide(faults::Call::kFsync, fd); d.action == faults::Action::kFail) {
    errno = d.error;
    return -1;
  }
  return next(fd);
}

int ftruncate(int fd, off_t length) noexcept {
  static const auto next = faults::real<int (*)(int, off_t)>("ftruncate");
  if (const auto d = faults::decide(faults::Call::kFtruncate, fd);
      d.action == faults::Action::kFail) {
    errno = d.error;
    return -1;
  }
  return next(fd, length);
}

int close(int fd) {
  static const auto next = faults::real<int (*)(int)>("close");
  if (const auto d = faults::decide(faults::Call::kClose, fd); d.action == faults::Action::kFail) {
    // As Linux does: the descriptor is released even when close reports an error.
    next(fd);
    errno = d.error;
    return -1;
  }
  return next(fd);
}

}  // extern "C"
// NOLINTEND(readability-inconsistent-declaration-parameter-name,misc-use-anonymous-namespace)
