// One io_uring (liburing) for one thread: created with a depth, optionally IOPOLL, with fixed
// buffers and files registered on it; reads prepared in a batch and submitted with one syscall,
// completions reaped in batches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <liburing.h>
#include <sys/uio.h>

#include "acco/core/result.hpp"

namespace acco::io::detail {

struct Completion {
  std::uint64_t user_data = 0;
  int result = 0;  // bytes, or -errno
};

class Ring {
 public:
  // kUnavailable with the reason when the kernel refuses (EPERM under seccomp or
  // kernel.io_uring_disabled, ENOSYS), kInvalidArgument for a flag it does not know.
  [[nodiscard]] static Result<std::unique_ptr<Ring>> create(unsigned entries, bool iopoll);
  ~Ring();
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  // The reason on failure (ENOMEM: RLIMIT_MEMLOCK; EOPNOTSUPP: memory not anonymous).
  [[nodiscard]] Status register_buffers(const std::vector<iovec>& buffers);
  [[nodiscard]] Status register_files(const std::vector<int>& fds);
  void unregister_files();
  [[nodiscard]] bool fixed_buffers() const { return fixed_buffers_; }
  [[nodiscard]] bool fixed_files() const { return fixed_files_; }

  // Queues one read; `buffer_index` >= 0 reads into that registered buffer (READ_FIXED);
  // `file` is the registered index when files are registered, else the descriptor.
  void prepare_read(int file, void* dst, unsigned bytes, std::uint64_t offset, int buffer_index,
                    std::uint64_t user_data);
  // The same for a write from `src` (WRITE_FIXED with a registered buffer).
  void prepare_write(int file, const void* src, unsigned bytes, std::uint64_t offset,
                     int buffer_index, std::uint64_t user_data);
  // Submits what was prepared.
  [[nodiscard]] Status submit();
  // Waits for at least one completion, then takes every one available (up to 256).
  [[nodiscard]] Status reap(std::vector<Completion>& out);

 private:
  Ring() = default;
  io_uring ring_{};
  std::vector<io_uring_cqe*> batch_ = std::vector<io_uring_cqe*>(256);
  bool fixed_buffers_ = false;
  bool fixed_files_ = false;
};

}  // namespace acco::io::detail
