#include "host_memory.hpp"

#include <climits>
#include <cstdint>
#include <string_view>

#include <fmt/format.h>
#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "acco/core/units.hpp"

namespace acco::transfer::detail {

std::size_t page_bytes() {
  static const std::size_t bytes = [] {
    const long reported = ::sysconf(_SC_PAGESIZE);
    return reported > 0 ? static_cast<std::size_t>(reported) : std::size_t{4096};
  }();
  return bytes;
}

std::size_t huge_page_bytes(const core::Fs& fs) {
  constexpr std::size_t kDefault = std::size_t{2} << 20;
  const auto text = fs.read_file("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
  if (!text) {
    return kDefault;
  }
  const auto value = units::parse_int(units::trim(*text));
  if (!value || *value <= 0 || (*value & (*value - 1)) != 0) {
    return kDefault;
  }
  return static_cast<std::size_t>(*value);
}

std::string transparent_hugepage_mode(const core::Fs& fs) {
  const auto text = fs.read_file("/sys/kernel/mm/transparent_hugepage/enabled");
  if (!text) {
    return "";
  }
  const auto open = text->find('[');
  const auto close = text->find(']', open);
  if (open == std::string::npos || close == std::string::npos) {
    return "";
  }
  return text->substr(open + 1, close - open - 1);
}

long long anon_huge_page_bytes(const core::Fs& fs, const void* start) {
  const auto text = fs.read_file("/proc/self/smaps");
  if (!text) {
    return -1;
  }
  // A mapping's block opens with a line "start-end perms ..." (lowercase hex, no 0x); its fields
  // follow in a fixed order, so the first AnonHugePages after that line is the mapping's own.
  const std::string header = fmt::format("{:x}-", reinterpret_cast<std::uintptr_t>(start));
  std::size_t at = text->starts_with(header) ? 0 : text->find("\n" + header);
  if (at == std::string::npos) {
    return -1;
  }
  constexpr std::string_view kField = "AnonHugePages:";
  at = text->find(kField, at);
  if (at == std::string::npos) {
    return -1;
  }
  std::string_view rest = std::string_view(*text).substr(at + kField.size());
  rest = units::trim(rest.substr(0, rest.find('\n')));
  if (rest.ends_with("kB")) {
    rest = units::trim(rest.substr(0, rest.size() - 2));
  }
  const auto kib = units::parse_int(rest);
  return kib ? *kib * 1024 : -1;
}

bool prefer_numa_node(void* ptr, std::size_t bytes, int node) {
  constexpr int kBitsPerWord = sizeof(unsigned long) * CHAR_BIT;
  constexpr int kWords = 16;  // 1024 nodes, the kernel's MAX_NUMNODES ceiling on x86-64
  if (node < 0 || node >= kBitsPerWord * kWords) {
    return false;
  }
  unsigned long mask[kWords] = {};
  mask[node / kBitsPerWord] = 1UL << (node % kBitsPerWord);
  // MPOL_PREFERRED rather than MPOL_BIND: running out of memory on the node should fall back to
  // another node, not fail the allocation.
  return ::syscall(SYS_mbind, ptr, bytes, MPOL_PREFERRED, mask,
                   static_cast<unsigned long>(kBitsPerWord * kWords), 0U) == 0;
}

}  // namespace acco::transfer::detail
