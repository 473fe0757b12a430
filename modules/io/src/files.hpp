// Files opened for reading: O_DIRECT where the file system takes it (else buffered, with the
// reason), their size and the alignment O_DIRECT needs (statx STATX_DIOALIGN, else the block
// device's logical block size, else 4 KiB).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/io/reader.hpp"

namespace acco::io::detail {

struct Alignment {
  std::uint32_t memory = 4096;
  std::uint32_t offset = 4096;
  std::string source = "default";  // "statx", "logical_block_size", "default"
  bool direct_supported = true;    // statx said 0: this file cannot be read with O_DIRECT
};

// open(2) without a mode (the one vararg call of the module): the descriptor, or -1 and errno.
[[nodiscard]] int open_file(const std::string& path, int flags);

// statx of an open file; `fd` must be valid.
[[nodiscard]] Alignment direct_io_alignment(int fd);

class OpenFile {
 public:
  // kNotFound (no such file), kInvalidArgument (not a regular file), kUnavailable (no
  // permission). With `direct`, O_DIRECT is tried first; `note` says why it was not used.
  [[nodiscard]] static Result<OpenFile> open(const std::string& path, bool direct);
  OpenFile(OpenFile&& other) noexcept;
  OpenFile& operator=(OpenFile&& other) noexcept;
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  ~OpenFile();

  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::uint64_t size() const { return size_; }
  [[nodiscard]] bool direct() const { return direct_; }
  [[nodiscard]] const Alignment& alignment() const { return alignment_; }
  [[nodiscard]] const std::string& note() const { return note_; }
  // The size now (a file truncated while being read has shrunk).
  [[nodiscard]] std::uint64_t current_size() const;

 private:
  OpenFile() = default;
  int fd_ = -1;
  std::string path_;
  std::uint64_t size_ = 0;
  bool direct_ = false;
  Alignment alignment_;
  std::string note_;
};

// One read of a plan: `length` bytes of file `file` from `file_offset` (both aligned when the
// file is O_DIRECT) into a staging slot, of which [skip, skip + useful) goes to `dst_offset`.
struct Block {
  int file = 0;
  std::uint64_t file_offset = 0;
  std::size_t length = 0;
  std::size_t skip = 0;
  std::size_t useful = 0;
  std::uint64_t dst_offset = 0;
};

struct Plan {
  std::vector<OpenFile> files;
  std::vector<Block> blocks;
  std::uint64_t bytes = 0;
  std::vector<std::string> notes;
};

// Opens every file once (a path named twice is opened once), checks each range against its
// file's size, and cuts the ranges into blocks of at most `block_bytes`, aligned for O_DIRECT
// (the unaligned head and tail of a range are read whole and trimmed).
[[nodiscard]] Result<Plan> make_plan(const std::vector<FileRange>& ranges, std::size_t block_bytes,
                                     bool direct);

}  // namespace acco::io::detail
