// probe_direct_io: what a directory's file system allows, by trying it on a scratch file.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acco/io/reader.hpp"

#include "files.hpp"
#include "ring.hpp"

namespace acco::io {
namespace {

constexpr std::size_t kProbeBytes = 8192;

struct Unlink {
  explicit Unlink(std::string p) : path(std::move(p)) {}
  std::string path;
  Unlink(const Unlink&) = delete;
  Unlink& operator=(const Unlink&) = delete;
  Unlink(Unlink&&) = delete;
  Unlink& operator=(Unlink&&) = delete;
  ~Unlink() {
    if (!path.empty()) {
      ::unlink(path.c_str());
    }
  }
};

struct Close {
  explicit Close(int f) : fd(f) {}
  int fd = -1;
  Close(const Close&) = delete;
  Close& operator=(const Close&) = delete;
  Close(Close&&) = delete;
  Close& operator=(Close&&) = delete;
  ~Close() {
    if (fd >= 0) {
      ::close(fd);
    }
  }
};

}  // namespace

Result<DirectIoSupport> probe_direct_io(const std::string& directory) {
  struct stat st {};
  if (::stat(directory.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return fail(Errc::kNotFound, fmt::format("{}: expected an existing directory", directory));
  }
  DirectIoSupport out;
  out.path = directory;
  std::string pattern = directory + "/.acco-direct-io-XXXXXX";
  Close scratch{::mkstemp(pattern.data())};
  if (scratch.fd < 0) {
    return fail(Errc::kCannotWrite, fmt::format("{}: cannot create a scratch file: {}", directory,
                                                std::strerror(errno)));
  }
  const Unlink remove{pattern};
  const std::vector<char> data(kProbeBytes, 'a');
  if (::write(scratch.fd, data.data(), data.size()) != static_cast<ssize_t>(data.size()) ||
      ::fsync(scratch.fd) != 0) {
    return fail(Errc::kCannotWrite, fmt::format("{}: cannot write a scratch file: {}", directory,
                                                std::strerror(errno)));
  }
  const detail::Alignment a = detail::direct_io_alignment(scratch.fd);
  out.alignment_source = a.source;
  if (a.direct_supported) {
    out.memory_alignment = a.memory;
    out.offset_alignment = a.offset;
  }

  Close direct{detail::open_file(pattern, O_RDONLY | O_CLOEXEC | O_DIRECT)};
  if (direct.fd < 0) {
    out.o_direct_error = fmt::format("open(O_DIRECT): {}", std::strerror(errno));
  } else {
    void* raw = nullptr;
    if (::posix_memalign(&raw, 4096, 4096) != 0) {
      return fail(Errc::kInternal, "probe: out of memory");
    }
    const std::unique_ptr<void, decltype(&std::free)> buffer(raw, &std::free);
    const ssize_t n = ::pread(direct.fd, buffer.get(), 4096, 4096);
    if (n == 4096) {
      out.o_direct = true;
    } else {
      out.o_direct_error = n < 0 ? fmt::format("pread(O_DIRECT): {}", std::strerror(errno))
                                 : fmt::format("pread(O_DIRECT) returned {} of 4096 bytes", n);
    }
  }

  auto ring = detail::Ring::create(4, false);
  if (ring) {
    out.io_uring = true;
  } else {
    out.io_uring_error = ring.error().message;
  }
  return out;
}

}  // namespace acco::io
