// Linux memory facts and calls the staging pool needs: the transparent huge page mode, huge page
// size, NUMA binding and how much of a mapping the kernel backs with huge pages.
#pragma once

#include <cstddef>
#include <string>

#include "acco/core/fs.hpp"

namespace acco::transfer::detail {

[[nodiscard]] std::size_t page_bytes();
// The PMD huge page size from sysfs; 2 MiB when unreadable (x86-64, and arm64 with 4 KiB pages).
[[nodiscard]] std::size_t huge_page_bytes(const core::Fs& fs);
// The bracketed word of /sys/kernel/mm/transparent_hugepage/enabled ("always", "madvise",
// "never"); "" when unreadable (no THP support compiled into the kernel).
[[nodiscard]] std::string transparent_hugepage_mode(const core::Fs& fs);
// Bytes of the mapping that starts at `start` backed by anonymous huge pages, from
// /proc/self/smaps; -1 when the mapping or the field cannot be found.
[[nodiscard]] long long anon_huge_page_bytes(const core::Fs& fs, const void* start);
// Prefers `node` for the pages of [ptr, ptr + bytes) not yet touched. A raw mbind(2) system call:
// <numaif.h> wrappers live in libnuma, which acco does not depend on. False when the kernel
// refuses (no NUMA support, node offline).
[[nodiscard]] bool prefer_numa_node(void* ptr, std::size_t bytes, int node);

}  // namespace acco::transfer::detail
