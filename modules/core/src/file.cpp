#include "acco/core/file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace acco::core {

namespace {

// The rest of `fd`, blocking again (it was opened without), in chunks, so a pipe that never ends
// stops at the limit instead of filling memory.
Result<std::string> read_blocking(int fd, const std::string& path) {
  const int flags = ::fcntl(fd, F_GETFL);  // NOLINT(cppcoreguidelines-pro-type-vararg)
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg)
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
    return fail(Errc::kUnavailable, fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  }
  std::string text;
  std::string chunk(std::size_t{1} << 20, '\0');
  for (;;) {
    const ssize_t got = ::read(fd, chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      return fail(Errc::kUnavailable,
                  fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
    }
    if (got == 0) {
      break;
    }
    text.append(chunk.data(), static_cast<std::size_t>(got));
    if (text.size() > kMaxInputFileBytes) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("{}: larger than {} GiB, expected an input file of acco's", path,
                              kMaxInputFileBytes >> 30));
    }
  }
  return text;
}

}  // namespace

Result<std::string> read_text_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return fail(Errc::kNotFound, fmt::format("{}: no such file", path));
  }
  if (std::filesystem::is_directory(path, ec)) {
    return fail(Errc::kInvalidArgument, fmt::format("{}: is a directory, expected a file", path));
  }
  const auto type = std::filesystem::status(path, ec).type();
  if (type == std::filesystem::file_type::character || type == std::filesystem::file_type::block ||
      type == std::filesystem::file_type::socket) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: is a device or socket, expected a file", path));
  }
  // Opened without blocking: a named pipe that no one writes would hold open() for ever (and
  // with it a daemon's start); its read then ends at once, an empty input. A pipe with a writer
  // (`--config <(...)`) is read to its end, blocking again once open.
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg)
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return fail(Errc::kUnavailable, fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  }
  // What was opened, not what the name showed a moment before: a file or a pipe only.
  struct stat opened {};
  if (::fstat(fd, &opened) != 0 || !(S_ISREG(opened.st_mode) || S_ISFIFO(opened.st_mode))) {
    ::close(fd);
    return fail(Errc::kInvalidArgument, fmt::format("{}: not a regular file or a pipe", path));
  }
  Result<std::string> text = read_blocking(fd, path);
  ::close(fd);
  return text;
}

namespace {

const char* file_kind(const std::filesystem::file_status& st) {
  namespace stdfs = std::filesystem;
  return stdfs::is_directory(st)    ? "directory"
         : stdfs::is_fifo(st)       ? "pipe"
         : stdfs::is_socket(st)     ? "socket"
         : stdfs::is_block_file(st) ? "block device"
                                    : "character device";
}

}  // namespace

Status check_file_or_absent(const std::string& path) {
  namespace stdfs = std::filesystem;
  std::error_code ec;
  if (!stdfs::exists(stdfs::symlink_status(path, ec))) {
    return {};
  }
  const auto st = stdfs::status(path, ec);
  if (!stdfs::exists(st)) {
    // A link made before the file (SQLite creates the file it names): fine where the file can
    // be created, not where its directory is missing too.
    stdfs::path to = stdfs::read_symlink(path, ec);
    to = to.is_absolute() ? to : stdfs::path(path).parent_path() / to;
    const auto dir = to.has_parent_path() ? to.parent_path() : stdfs::path(".");
    if (stdfs::is_directory(dir, ec)) {
      return {};
    }
    return fail(Errc::kNotFound,
                fmt::format("{}: a symbolic link to '{}', whose directory does not exist", path,
                            to.string()));
  }
  if (stdfs::is_regular_file(st)) {
    return {};
  }
  return fail(Errc::kInvalidArgument,
              fmt::format("{}: is a {}, expected a file", path, file_kind(st)));
}

Status check_output_file(const std::string& path) {
  namespace stdfs = std::filesystem;
  const auto cannot = [&](const std::string& why) {
    return fail(Errc::kCannotWrite, fmt::format("cannot write {}: {}", path, why));
  };
  if (auto s = check_file_or_absent(path); !s) {  // a directory, a pipe, a dangling link
    return fail(Errc::kCannotWrite, std::move(s.error().message));
  }
  std::error_code ec;
  // The file replaced is the one the links lead to (write_file_atomic), in its directory.
  stdfs::path target(path);
  if (stdfs::is_symlink(stdfs::symlink_status(target, ec))) {
    const stdfs::path to = stdfs::read_symlink(target, ec);
    target = to.is_absolute() ? to : target.parent_path() / to;
  }
  const stdfs::path dir = target.has_parent_path() ? target.parent_path() : stdfs::path(".");
  if (!stdfs::is_directory(dir, ec)) {
    return cannot(fmt::format("directory {} does not exist", dir.string()));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return cannot(fmt::format("directory {} is not writable ({})", dir.string(),
                              std::generic_category().message(errno)));
  }
  if (stdfs::exists(target, ec) && ::access(target.c_str(), W_OK) != 0) {
    return cannot(
        fmt::format("the file is not writable ({})", std::generic_category().message(errno)));
  }
  return {};
}

Status check_output_directory(const std::string& path) {
  auto dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) {
    dir = ".";
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return fail(Errc::kCannotWrite,
                fmt::format("cannot write {}: directory {} does not exist", path, dir.string()));
  }
  return {};
}

Status write_output_file(const std::string& path, std::string_view content) {
  if (auto written = write_file_atomic(path, content); !written) {
    Error error = std::move(written.error());
    error.code = Errc::kCannotWrite;
    return tl::unexpected(std::move(error));
  }
  return {};
}

Status write_file_atomic(const std::string& path, std::string_view content) {
  namespace stdfs = std::filesystem;
  std::error_code ec;
  // A symbolic link is written through (the file it names is replaced, the link kept); anything
  // but a regular file (a device, a pipe, a socket, a directory) is refused, never replaced.
  stdfs::path target(path);
  for (int hops = 0; stdfs::is_symlink(stdfs::symlink_status(target, ec)); ++hops) {
    constexpr int kMaxHops = 40;  // as the kernel's ELOOP
    const stdfs::path next = stdfs::read_symlink(target, ec);
    if (ec || hops >= kMaxHops) {
      return fail(Errc::kUnavailable, fmt::format("{}: cannot follow the link: {}", path,
                                                  ec ? ec.message() : "too many levels"));
    }
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  const auto st = stdfs::status(target, ec);
  if (stdfs::exists(st) && !stdfs::is_regular_file(st)) {
    return fail(Errc::kUnavailable,
                fmt::format("{}: exists and is not a regular file (a {}): not replaced", path,
                            file_kind(st)));
  }
  // A file the user made read-only is not replaced behind their back (rename would), and a file
  // replaced keeps its permissions.
  struct stat old {};
  const bool replacing = stdfs::exists(st) && ::stat(target.c_str(), &old) == 0;
  if (replacing && ::access(target.c_str(), W_OK) != 0) {
    return fail(Errc::kUnavailable,
                fmt::format("{}: cannot write: {} (not replaced)", path, std::strerror(errno)));
  }
  const auto dir = target.has_parent_path() ? target.parent_path() : stdfs::path(".");
  if (!stdfs::is_directory(dir, ec)) {
    return fail(Errc::kNotFound,
                fmt::format("{}: directory '{}' does not exist", path, dir.string()));
  }
  std::string tmp = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    return fail(Errc::kUnavailable,
                fmt::format("{}: cannot create: {}", path, std::strerror(errno)));
  }
  const auto cleanup_fail = [&](int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return fail(Errc::kUnavailable, fmt::format("{}: cannot write: {}", path, std::strerror(err)));
  };
  std::size_t written = 0;
  while (written < content.size()) {
    const auto n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return cleanup_fail(errno);
    }
    written += static_cast<std::size_t>(n);
  }
  // mkstemp creates 0600; a report or snapshot is meant to be shared, so a new file gets the
  // usual 0644, a replaced one its own permissions (no set-id bits) and, where acco may give
  // it (root), its owner: root rewriting a user's 0600 file must not lock the user out.
  const mode_t mode = replacing ? (old.st_mode & 0777) : 0644;
  if (replacing && ::geteuid() == 0) {
    (void)::fchown(fd, old.st_uid, old.st_gid);
  }
  if (::fchmod(fd, mode) != 0 || ::fsync(fd) != 0) {
    return cleanup_fail(errno);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return fail(Errc::kUnavailable, fmt::format("{}: cannot write: {}", path, std::strerror(err)));
  }
  return {};
}

}  // namespace acco::core
