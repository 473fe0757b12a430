// Page-aligned RAM: what the host backend hands out as device memory, pinned and mapped host
// buffers, and uses for the queues' staging buffers.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>

namespace acco::device::host {

struct FreePages {
  void operator()(std::byte* pages) const { std::free(pages); }
};
using Pages = std::unique_ptr<std::byte[], FreePages>;

[[nodiscard]] std::size_t page_size();
// `bytes` rounded up to whole pages.
[[nodiscard]] std::size_t round_up_to_pages(std::size_t bytes);
// Null when the system is out of memory. bytes > 0.
[[nodiscard]] Pages allocate_pages(std::size_t bytes);

}  // namespace acco::device::host
