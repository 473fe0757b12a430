// An injected syscall layer for the io tests: this test program defines pwrite, pread, fsync,
// ftruncate and close itself (syscall_faults.cpp), passing each call on to the C library's until
// a ScopedSyscallFault is armed; then the calls it names, on descriptors of files under one
// directory, fail with the errno it gives (or, for pread, find their file truncated first), as a
// disk that returns EIO or fills up would make them fail. io_uring's reads and writes go to the
// kernel without the C library: only the pread/pwrite engines are reached (ENOSPC through
// io_uring is the full-tmpfs test's).
#pragma once

#include <atomic>
#include <cerrno>
#include <optional>
#include <string>

#include <sys/types.h>

namespace acco::io::testing {

enum class Call {
  kPwrite,
  kPread,
  kFsync,
  kFtruncate,
  kClose
};

struct SyscallFault {
  Call call = Call::kPwrite;
  int error = EIO;
  int succeed_first = 0;             // matching calls that go through before the first fault
  std::string under;                 // only descriptors of files under this directory
  bool directories = false;          // fsync: a directory's, not a file's
  bool short_first = false;          // pwrite: the first faulty call writes half, the next fails
  std::optional<off_t> truncate_to;  // pread: truncate the file to this size instead of failing
};

// One fault armed at a time, for the life of the object.
class ScopedSyscallFault {
 public:
  explicit ScopedSyscallFault(SyscallFault fault);
  ~ScopedSyscallFault();
  ScopedSyscallFault(const ScopedSyscallFault&) = delete;
  ScopedSyscallFault& operator=(const ScopedSyscallFault&) = delete;
  ScopedSyscallFault(ScopedSyscallFault&&) = delete;
  ScopedSyscallFault& operator=(ScopedSyscallFault&&) = delete;

  // Calls that were faulted (failed, cut short or found their file truncated).
  [[nodiscard]] int hits() const;
};

}  // namespace acco::io::testing
