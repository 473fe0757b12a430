#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "acco/core/fs.hpp"

namespace acco::core {
namespace {

namespace stdfs = std::filesystem;

Error from_errno(int err, const std::string& path) {
  const Errc code = (err == ENOENT || err == ENOTDIR) ? Errc::kNotFound
                    : (err == EACCES || err == EPERM) ? Errc::kUnavailable
                                                      : Errc::kInvalidArgument;
  return Error{code, fmt::format("{}: {}", path, std::strerror(err))};
}

class DiskFs final : public Fs {
 public:
  explicit DiskFs(stdfs::path root) : root_(std::move(root)) {}

  Result<std::string> read_file(const std::string& path) const override {
    const auto full = host_path(path);
    // open/read rather than ifstream: sysfs files report size 4096 and some return EIO or
    // EINVAL on read (net speed of a down link), which must become an error, not empty text.
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg)
    const int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return tl::unexpected(from_errno(errno, path));
    }
    std::string content;
    std::array<char, 4096> buffer{};
    while (content.size() < kMaxFileBytes) {
      const auto n = ::read(fd, buffer.data(), buffer.size());
      if (n < 0) {
        if (errno == EINTR) {
          continue;
        }
        const int err = errno;
        ::close(fd);
        return tl::unexpected(from_errno(err, path));
      }
      if (n == 0) {
        break;
      }
      content.append(buffer.data(), static_cast<std::size_t>(n));
    }
    ::close(fd);
    return content;
  }

  Result<std::vector<std::string>> list_dir(const std::string& path) const override {
    std::error_code ec;
    stdfs::directory_iterator it(host_path(path), ec);
    if (ec) {
      return tl::unexpected(from_errno(ec.value(), path));
    }
    std::vector<std::string> names;
    for (const auto& entry : it) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  Result<std::string> read_link(const std::string& path) const override {
    std::error_code ec;
    auto target = stdfs::read_symlink(host_path(path), ec);
    if (ec) {
      return tl::unexpected(from_errno(ec.value(), path));
    }
    return target.string();
  }

  Result<std::string> real_path(const std::string& path) const override {
    // Resolve component by component so absolute link targets stay inside the sysroot.
    stdfs::path resolved = "/";
    std::vector<std::string> pending;
    for (const auto& part : stdfs::path(path).relative_path()) {
      pending.push_back(part.string());
    }
    std::reverse(pending.begin(), pending.end());
    int links_followed = 0;
    while (!pending.empty()) {
      const auto part = pending.back();
      pending.pop_back();
      if (part.empty() || part == ".") {
        continue;
      }
      if (part == "..") {
        resolved = resolved.has_relative_path() ? resolved.parent_path() : resolved;
        continue;
      }
      const auto next = resolved / part;
      std::error_code ec;
      const auto status = stdfs::symlink_status(host_path(next.string()), ec);
      if (ec || !stdfs::exists(status)) {
        return fail(Errc::kNotFound, fmt::format("{}: no such file or directory", path));
      }
      if (!stdfs::is_symlink(status)) {
        resolved = next;
        continue;
      }
      if (++links_followed > 40) {
        return fail(Errc::kInvalidArgument, fmt::format("{}: too many levels of links", path));
      }
      const auto target = stdfs::read_symlink(host_path(next.string()), ec);
      if (ec) {
        return tl::unexpected(from_errno(ec.value(), path));
      }
      if (target.is_absolute()) {
        resolved = "/";
      }
      std::vector<std::string> parts;
      for (const auto& t : target.relative_path()) {
        parts.push_back(t.string());
      }
      pending.insert(pending.end(), parts.rbegin(), parts.rend());
    }
    return resolved.string();
  }

  bool exists(const std::string& path) const override {
    std::error_code ec;
    return stdfs::exists(host_path(path), ec);
  }

 private:
  std::string host_path(const std::string& path) const {
    return (root_ / stdfs::path(path).relative_path()).string();
  }
  stdfs::path root_;
};

}  // namespace

Result<std::unique_ptr<Fs>> make_disk_fs(const std::string& sysroot) {
  std::error_code ec;
  if (sysroot.empty() || !stdfs::is_directory(sysroot, ec)) {
    return fail(
        Errc::kNotFound,
        fmt::format("sysroot '{}': not a directory (expected a tree holding sys/ and proc/)",
                    sysroot));
  }
  return std::unique_ptr<Fs>(std::make_unique<DiskFs>(stdfs::path(sysroot)));
}

}  // namespace acco::core
