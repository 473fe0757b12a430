#include "files.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace acco::io::detail {
namespace {

std::uint32_t read_sys_number(const std::string& path) {
  std::ifstream in(path);
  long long v = 0;
  if (in >> v && v > 0 && v <= (1 << 20)) {
    return static_cast<std::uint32_t>(v);
  }
  return 0;
}

}  // namespace

int open_file(const std::string& path, int flags) {
  return ::open(path.c_str(), flags);  // NOLINT(cppcoreguidelines-pro-type-vararg)
}

Alignment direct_io_alignment(int fd) {
  Alignment a;
  struct statx sx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN | STATX_SIZE, &sx) == 0) {
    if ((sx.stx_mask & STATX_DIOALIGN) != 0) {
      a.source = "statx";
      if (sx.stx_dio_mem_align == 0 || sx.stx_dio_offset_align == 0) {
        a.direct_supported = false;  // the kernel says: no O_DIRECT on this file
        return a;
      }
      a.memory = sx.stx_dio_mem_align;
      a.offset = sx.stx_dio_offset_align;
      return a;
    }
    // Older kernels: the logical block size of the device the file lives on (a partition's
    // queue is its disk's).
    const std::string dev = fmt::format("/sys/dev/block/{}:{}", sx.stx_dev_major, sx.stx_dev_minor);
    std::uint32_t lbs = read_sys_number(dev + "/queue/logical_block_size");
    if (lbs == 0) {
      lbs = read_sys_number(dev + "/../queue/logical_block_size");
    }
    if (lbs != 0) {
      a.memory = lbs;
      a.offset = lbs;
      a.source = "logical_block_size";
    }
  }
  return a;
}

Result<OpenFile> OpenFile::open(const std::string& path, bool direct) {
  OpenFile f;
  f.path_ = path;
  const auto plain = [&]() -> Status {
    f.fd_ = open_file(path, O_RDONLY | O_CLOEXEC);
    if (f.fd_ < 0) {
      const int e = errno;
      if (e == ENOENT || e == ENOTDIR) {
        return fail(Errc::kNotFound, fmt::format("{}: no such file", path));
      }
      if (e == EACCES || e == EPERM) {
        return fail(Errc::kUnavailable, fmt::format("{}: permission denied", path));
      }
      return fail(Errc::kDeviceError, fmt::format("{}: cannot open: {}", path, std::strerror(e)));
    }
    return {};
  };
  if (direct) {
    f.fd_ = open_file(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
    if (f.fd_ >= 0) {
      f.direct_ = true;
    } else if (errno == EINVAL || errno == EOPNOTSUPP) {
      f.note_ =
          fmt::format("O_DIRECT refused for {} ({}): buffered reads", path, std::strerror(errno));
    }
  }
  if (f.fd_ < 0) {
    ACCO_RETURN_IF_ERROR(plain());
  }
  struct stat st {};
  if (::fstat(f.fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    return fail(Errc::kInvalidArgument, fmt::format("{}: expected a regular file", path));
  }
  f.size_ = static_cast<std::uint64_t>(st.st_size);
  f.alignment_ = direct_io_alignment(f.fd_);
  if (f.direct_ && !f.alignment_.direct_supported) {
    ::close(f.fd_);
    f.fd_ = -1;
    f.direct_ = false;
    f.note_ = fmt::format("O_DIRECT not supported for {} (statx DIOALIGN 0): buffered reads", path);
    ACCO_RETURN_IF_ERROR(plain());
  }
  if (f.direct_ && f.alignment_.memory > 4096) {
    ::close(f.fd_);
    f.fd_ = -1;
    f.direct_ = false;
    f.note_ = fmt::format(
        "O_DIRECT for {} needs {}-byte aligned memory (staging has 4096): "
        "buffered reads",
        path, f.alignment_.memory);
    ACCO_RETURN_IF_ERROR(plain());
  }
  return f;
}

OpenFile::OpenFile(OpenFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      size_(other.size_),
      direct_(other.direct_),
      alignment_(std::move(other.alignment_)),
      note_(std::move(other.note_)) {}

OpenFile& OpenFile::operator=(OpenFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    size_ = other.size_;
    direct_ = other.direct_;
    alignment_ = std::move(other.alignment_);
    note_ = std::move(other.note_);
  }
  return *this;
}

OpenFile::~OpenFile() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

std::uint64_t OpenFile::current_size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    return 0;
  }
  return static_cast<std::uint64_t>(st.st_size);
}

Result<Plan> make_plan(const std::vector<FileRange>& ranges, std::size_t block_bytes, bool direct) {
  Plan plan;
  std::map<std::string, int> index;
  for (const FileRange& r : ranges) {
    if (r.path.empty()) {
      return fail(Errc::kInvalidArgument, "read: expected a file path, got an empty one");
    }
    auto [it, added] = index.try_emplace(r.path, static_cast<int>(plan.files.size()));
    if (added) {
      ACCO_ASSIGN_OR_RETURN(auto f, OpenFile::open(r.path, direct));
      if (!f.note().empty()) {
        plan.notes.push_back(f.note());
      }
      plan.files.push_back(std::move(f));
    }
    const OpenFile& f = plan.files[static_cast<std::size_t>(it->second)];
    const std::uint64_t bytes = r.bytes.value_or(r.offset <= f.size() ? f.size() - r.offset : 0);
    if (r.offset > f.size() || bytes > f.size() - r.offset) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("{}: range at offset {} for {} bytes runs past the end of the file "
                              "({} bytes)",
                              r.path, r.offset, bytes, f.size()));
    }
    const std::uint64_t al =
        f.direct() ? std::max<std::uint64_t>(f.alignment().offset, 1) : std::uint64_t{1};
    if (block_bytes % al != 0) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("{}: block size {} is not a multiple of the file's O_DIRECT "
                              "alignment {}",
                              r.path, block_bytes, al));
    }
    const std::uint64_t begin = r.offset;
    const std::uint64_t end = r.offset + bytes;
    const std::uint64_t aligned_end = (end + al - 1) / al * al;
    for (std::uint64_t pos = begin / al * al; pos < end; pos += block_bytes) {
      Block b;
      b.file = it->second;
      b.file_offset = pos;
      b.length = static_cast<std::size_t>(std::min<std::uint64_t>(block_bytes, aligned_end - pos));
      const std::uint64_t from = std::max(pos, begin);
      const std::uint64_t to = std::min<std::uint64_t>(pos + b.length, end);
      b.skip = static_cast<std::size_t>(from - pos);
      b.useful = static_cast<std::size_t>(to - from);
      b.dst_offset = plan.bytes + (from - begin);
      plan.blocks.push_back(b);
    }
    plan.bytes += bytes;
  }
  return plan;
}

}  // namespace acco::io::detail
