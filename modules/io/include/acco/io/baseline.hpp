// What the storage benchmarks share beside the reader: the file they read, written on request,
// the naive path they measure against (one buffered read() after another into pageable memory),
// and dropping the page cache where that is permitted.
#pragma once

#include <cstdint>
#include <string>

#include "acco/core/result.hpp"

namespace acco::io {

// Makes `path` a regular file of at least `bytes` bytes: left alone when it already is one (false
// returned), else `bytes` of pseudo-random data (a file of zeros would flatter compressing
// storage) written under "<path>.acco-tmp" and renamed over `path`, so an interrupted write
// leaves no short file (true returned). kCannotWrite naming the file otherwise.
[[nodiscard]] Result<bool> fill_test_file(const std::string& path, std::uint64_t bytes);

// The naive path: the first `bytes` of `path` into `dst` with buffered read() calls, the way a
// program without acco loads a file. kNotFound when the file cannot be opened, kDeviceError naming
// the file and offset when it ends early or a read fails.
[[nodiscard]] Status read_buffered(const std::string& path, void* dst, std::uint64_t bytes);

// sync(), then "1" into /proc/sys/vm/drop_caches; false when not permitted (not root, a
// read-only /proc in a container): the caller says the cache was not dropped.
[[nodiscard]] bool drop_page_cache();

}  // namespace acco::io
