#include "ring.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace acco::io::detail {

Result<std::unique_ptr<Ring>> Ring::create(unsigned entries, bool iopoll) {
  std::unique_ptr<Ring> r(new Ring());
  io_uring_params params{};
  params.flags = iopoll ? IORING_SETUP_IOPOLL : 0;
  const int rc = io_uring_queue_init_params(entries, &r->ring_, &params);
  if (rc < 0) {
    const int e = -rc;
    if (e == EINVAL) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("io_uring_setup: {} (depth {}{})", std::strerror(e), entries,
                              iopoll ? ", IOPOLL" : ""));
    }
    return fail(Errc::kUnavailable,
                fmt::format("io_uring not permitted here ({}{})", std::strerror(e),
                            e == EPERM ? ": seccomp or kernel.io_uring_disabled" : ""));
  }
  return r;
}

Ring::~Ring() {
  io_uring_queue_exit(&ring_);
}

Status Ring::register_buffers(const std::vector<iovec>& buffers) {
  const int rc =
      io_uring_register_buffers(&ring_, buffers.data(), static_cast<unsigned>(buffers.size()));
  if (rc < 0) {
    return fail(Errc::kUnsupported,
                fmt::format("registered buffers refused ({}{})", std::strerror(-rc),
                            -rc == ENOMEM ? ": RLIMIT_MEMLOCK too low" : ""));
  }
  fixed_buffers_ = true;
  return {};
}

Status Ring::register_files(const std::vector<int>& fds) {
  const int rc = io_uring_register_files(&ring_, fds.data(), static_cast<unsigned>(fds.size()));
  if (rc < 0) {
    return fail(Errc::kUnsupported,
                fmt::format("registered files refused ({})", std::strerror(-rc)));
  }
  fixed_files_ = true;
  return {};
}

void Ring::unregister_files() {
  if (fixed_files_) {
    (void)io_uring_unregister_files(&ring_);
    fixed_files_ = false;
  }
}

void Ring::prepare_read(int file, void* dst, unsigned bytes, std::uint64_t offset, int buffer_index,
                        std::uint64_t user_data) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) {
    // The caller never has more reads in flight than entries; flush and retry once.
    (void)io_uring_submit(&ring_);
    sqe = io_uring_get_sqe(&ring_);
  }
  if (buffer_index >= 0 && fixed_buffers_) {
    io_uring_prep_read_fixed(sqe, file, dst, bytes, offset, buffer_index);
  } else {
    io_uring_prep_read(sqe, file, dst, bytes, offset);
  }
  if (fixed_files_) {
    sqe->flags |= IOSQE_FIXED_FILE;
  }
  io_uring_sqe_set_data64(sqe, user_data);
}

void Ring::prepare_write(int file, const void* src, unsigned bytes, std::uint64_t offset,
                         int buffer_index, std::uint64_t user_data) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) {
    (void)io_uring_submit(&ring_);
    sqe = io_uring_get_sqe(&ring_);
  }
  if (buffer_index >= 0 && fixed_buffers_) {
    io_uring_prep_write_fixed(sqe, file, src, bytes, offset, buffer_index);
  } else {
    io_uring_prep_write(sqe, file, src, bytes, offset);
  }
  if (fixed_files_) {
    sqe->flags |= IOSQE_FIXED_FILE;
  }
  io_uring_sqe_set_data64(sqe, user_data);
}

Status Ring::submit() {
  const int rc = io_uring_submit(&ring_);
  if (rc < 0) {
    return fail(Errc::kDeviceError, fmt::format("io_uring_submit: {}", std::strerror(-rc)));
  }
  return {};
}

Status Ring::reap(std::vector<Completion>& out) {
  out.clear();
  io_uring_cqe* cqe = nullptr;
  int rc = 0;
  do {
    rc = io_uring_wait_cqe(&ring_, &cqe);
  } while (rc == -EINTR);
  if (rc < 0) {
    return fail(Errc::kDeviceError, fmt::format("io_uring_wait_cqe: {}", std::strerror(-rc)));
  }
  const unsigned n =
      io_uring_peek_batch_cqe(&ring_, batch_.data(), static_cast<unsigned>(batch_.size()));
  for (unsigned i = 0; i < n; ++i) {
    out.push_back({io_uring_cqe_get_data64(batch_[i]), batch_[i]->res});
  }
  io_uring_cq_advance(&ring_, n);
  return {};
}

}  // namespace acco::io::detail
