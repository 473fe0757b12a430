#include "acco/io/baseline.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "files.hpp"

namespace acco::io {

Result<bool> fill_test_file(const std::string& path, std::uint64_t bytes) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) >= bytes) {
    return false;
  }
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
    return fail(
        Errc::kCannotWrite,
        fmt::format("{}: exists and is not a regular file (expected the test file's path)", path));
  }
  const std::string temp = path + ".acco-tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    std::vector<char> chunk(std::size_t{1} << 20);
    std::uint64_t x = 0x9E3779B97F4A7C15ULL;  // xorshift64: every chunk different
    for (std::uint64_t done = 0; out && done < bytes; done += chunk.size()) {
      for (auto& c : chunk) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c = static_cast<char>(x);
      }
      out.write(chunk.data(),
                static_cast<std::streamsize>(std::min<std::uint64_t>(chunk.size(), bytes - done)));
    }
    out.flush();
    if (!out) {
      std::filesystem::remove(temp, ec);
      return fail(Errc::kCannotWrite, fmt::format("{}: cannot write the test file", temp));
    }
  }
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    const std::string why = ec.message();  // before remove() sets `ec` again
    std::filesystem::remove(temp, ec);
    return fail(Errc::kCannotWrite, fmt::format("cannot rename {} to {}: {}", temp, path, why));
  }
  return true;
}

Status read_buffered(const std::string& path, void* dst, std::uint64_t bytes) {
  const int fd = detail::open_file(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return fail(Errc::kNotFound, fmt::format("{}: {}", path, std::strerror(errno)));
  }
  auto* out = static_cast<char*>(dst);
  std::uint64_t got = 0;
  int error = 0;
  while (got < bytes) {
    const ssize_t n = ::read(fd, out + got, bytes - got);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      error = n < 0 ? errno : 0;
      break;
    }
    got += static_cast<std::uint64_t>(n);
  }
  ::close(fd);
  if (got != bytes) {
    return fail(Errc::kDeviceError,
                fmt::format("{}: offset {}: {} (expected {} bytes)", path, got,
                            error != 0 ? std::strerror(error) : "end of file", bytes));
  }
  return {};
}

bool drop_page_cache() {
  ::sync();
  std::ofstream out("/proc/sys/vm/drop_caches");
  out << "1\n";
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace acco::io
