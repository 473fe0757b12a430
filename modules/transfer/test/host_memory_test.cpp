#include "host_memory.hpp"

#include <gtest/gtest.h>

#include "acco/core/fs.hpp"

namespace acco::transfer::detail {
namespace {

core::ReplayFs machine(std::map<std::string, std::string> files) {
  core::FsRecord record;
  for (auto& [path, content] : files) {
    record.files[path] = {true, std::move(content), {}, {}, {}};
  }
  return core::ReplayFs(record);
}

constexpr const char* kEnabled = "/sys/kernel/mm/transparent_hugepage/enabled";
constexpr const char* kPmdSize = "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size";

TEST(HostMemoryTest, TheHugePageModeIsTheBracketedWord) {
  EXPECT_EQ(transparent_hugepage_mode(machine({{kEnabled, "always [madvise] never\n"}})),
            "madvise");
  EXPECT_EQ(transparent_hugepage_mode(machine({{kEnabled, "[always] madvise never\n"}})), "always");
}

TEST(HostMemoryTest, NoHugePageModeWhenTheKernelHasNone) {
  EXPECT_EQ(transparent_hugepage_mode(machine({})), "");
  EXPECT_EQ(transparent_hugepage_mode(machine({{kEnabled, "garbage"}})), "");
}

TEST(HostMemoryTest, HugePageSizeComesFromSysfsOrIsTwoMiB) {
  EXPECT_EQ(huge_page_bytes(machine({{kPmdSize, "33554432\n"}})), 32U << 20);
  EXPECT_EQ(huge_page_bytes(machine({})), 2U << 20);
  EXPECT_EQ(huge_page_bytes(machine({{kPmdSize, "3000\n"}})), 2U << 20);  // not a power of two
}

TEST(HostMemoryTest, AnonHugePagesAreReadFromTheMappingsOwnBlock) {
  const std::string smaps =
      "7f0000000000-7f0000400000 rw-p 00000000 00:00 0 \n"
      "Size:               4096 kB\n"
      "AnonHugePages:      2048 kB\n"
      "VmFlags: rd wr mr mw me ac \n"
      "7f0000600000-7f0001600000 rw-p 00000000 00:00 0 \n"
      "Size:              16384 kB\n"
      "AnonHugePages:     16384 kB\n"
      "VmFlags: rd wr mr mw me ac hg \n";
  const auto fs = machine({{"/proc/self/smaps", smaps}});
  EXPECT_EQ(anon_huge_page_bytes(fs, reinterpret_cast<void*>(0x7f0000600000)), 16LL << 20);
  EXPECT_EQ(anon_huge_page_bytes(fs, reinterpret_cast<void*>(0x7f0000000000)), 2LL << 20);
  EXPECT_EQ(anon_huge_page_bytes(fs, reinterpret_cast<void*>(0x7f0000200000)), -1);
  EXPECT_EQ(anon_huge_page_bytes(machine({}), reinterpret_cast<void*>(0x7f0000000000)), -1);
}

TEST(HostMemoryTest, NoNodeIsNotBound) {
  int x = 0;
  EXPECT_FALSE(prefer_numa_node(&x, sizeof(x), -1));
  EXPECT_FALSE(prefer_numa_node(&x, sizeof(x), 1 << 20));
}

}  // namespace
}  // namespace acco::transfer::detail
