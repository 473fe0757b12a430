#include "host/pages.hpp"

#include <unistd.h>

namespace acco::device::host {

std::size_t page_size() {
  static const std::size_t size = [] {
    const long reported = sysconf(_SC_PAGESIZE);
    return reported > 0 ? static_cast<std::size_t>(reported) : std::size_t{4096};
  }();
  return size;
}

std::size_t round_up_to_pages(std::size_t bytes) {
  const std::size_t page = page_size();
  return (bytes + page - 1) / page * page;
}

Pages allocate_pages(std::size_t bytes) {
  const std::size_t rounded = round_up_to_pages(bytes);
  if (rounded < bytes) {
    return nullptr;
  }
  // aligned_alloc rather than mmap so that ASan still sees overruns of these buffers.
  return Pages(static_cast<std::byte*>(std::aligned_alloc(page_size(), rounded)));
}

}  // namespace acco::device::host
