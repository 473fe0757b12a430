// The storage reader: files read with io_uring (O_DIRECT, registered buffers and files, batched
// submission and completion, one ring per thread) into pinned staging slots, and from there to
// host memory or, through the transfer engine, to device memory, the read of chunk k+1
// overlapping the DMA of chunk k. Falls back, each time saying why, to buffered reads where
// O_DIRECT is refused and to pread where io_uring is not permitted. Methods and figures:
// ../shared/reference/transfer.md b.6, b.7, c.7.
#pragma once

#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"
#include "acco/transfer/engine.hpp"

namespace acco::io {

enum class IoEngine {
  kAuto,     // io_uring, else pread
  kIoUring,  // io_uring only: kUnavailable where it is not permitted
  kPread,    // one pread at a time per thread (the baseline)
};
[[nodiscard]] const char* to_string(IoEngine engine);
// "auto", "io_uring", "pread"; kInvalidArgument naming the forms otherwise.
[[nodiscard]] Result<IoEngine> parse_io_engine(const std::string& text);

struct ReaderOptions {
  // Bytes per read, also the staging slot's size: a multiple of 4 KiB from 4 KiB to 64 MiB.
  // 1 MiB is the common NVMe sweet spot (max_sectors_kb of most drives is 128-1024 KiB).
  std::size_t block_bytes = std::size_t{1} << 20;
  int depth = 16;   // reads in flight per thread (ring), 1..256
  int threads = 1;  // rings, each on its own thread, 1..64
  IoEngine engine = IoEngine::kAuto;
  bool direct = true;          // O_DIRECT where the file system allows it
  bool fixed_buffers = true;   // io_uring_register_buffers on the staging slots
  bool register_files = true;  // io_uring_register_files
  // IORING_SETUP_IOPOLL: only honoured for O_DIRECT reads; the NVMe driver needs poll queues
  // (nvme poll_queues > 0) or the completions never come: kAuto never sets it.
  bool iopoll = false;
  bool operator==(const ReaderOptions&) const = default;
};
// kInvalidArgument naming the first field out of range (also when block x depth x threads, the
// pinned staging, exceeds 2 GiB).
[[nodiscard]] Status validate(const ReaderOptions& options);

// Part of a file: `bytes` from `offset` (nullopt: to the end of the file).
struct FileRange {
  std::string path;
  std::uint64_t offset = 0;
  std::optional<std::uint64_t> bytes;
};

// What a read did. Every fallback is a line in `notes`, once per reason.
struct ReadStats {
  std::uint64_t bytes = 0;  // delivered to the destination
  std::uint64_t reads = 0;  // read requests completed (io_uring SQEs or pread calls)
  double seconds = 0;       // first submission to last delivery
  std::string engine;       // "io_uring" or "pread"
  bool direct = false;      // every file read with O_DIRECT
  bool fixed_buffers = false;
  bool registered_files = false;
  bool iopoll = false;
  int threads = 0;
  int depth = 0;
  std::size_t block_bytes = 0;
  std::vector<std::string> notes;
  [[nodiscard]] double bytes_per_second() const {
    return seconds > 0 ? static_cast<double>(bytes) / seconds : 0;
  }
};
[[nodiscard]] nlohmann::ordered_json to_json(const ReadStats& stats);

// Completion of read_to. Movable; wait() may be called again and returns the same.
class ReadEvent {
 public:
  ReadEvent() = default;
  [[nodiscard]] Result<ReadStats> wait();
  [[nodiscard]] bool ready() const;

 private:
  friend class Reader;
  explicit ReadEvent(std::shared_future<Result<ReadStats>> future) : future_(std::move(future)) {}
  std::shared_future<Result<ReadStats>> future_;
};

// One staging set and its rings for one device. Reads are serialized (one at a time uses the
// staging); a Reader may be used from any thread.
class Reader {
 public:
  // `device` pins the staging slots (Device::register_host on an anonymous mapping, so they are
  // both io_uring-fixed and DMA-able) and must outlive the Reader; `engine`, when given, moves
  // staged chunks to device memory and must belong to `device`. kInvalidArgument for bad options,
  // kDeviceError when staging cannot be pinned, kUnavailable for kIoUring where io_uring is not
  // permitted.
  [[nodiscard]] static Result<std::unique_ptr<Reader>> create(device::Device& device,
                                                              const ReaderOptions& options = {},
                                                              transfer::Engine* engine = nullptr);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Reads the ranges, back to back, into host memory at `dst` (`capacity` bytes). Errors name the
  // file and offset: kNotFound (no such file), kInvalidArgument (a range past the end of its file,
  // more bytes than capacity), kDeviceError (EIO, a short read, a file truncated while being
  // read). On an error the destination holds some of the data; nothing reports success.
  [[nodiscard]] Result<ReadStats> read(void* dst, std::size_t capacity,
                                       const std::vector<FileRange>& ranges);
  // The same with the data discarded once in staging: what the storage path alone delivers.
  [[nodiscard]] Result<ReadStats> read_discard(const std::vector<FileRange>& ranges);
  // The same into device memory of the engine's device, through the engine (kInvalidArgument
  // without one), each chunk's DMA overlapping the next reads.
  [[nodiscard]] Result<ReadStats> read_to_device(void* device_dst, std::size_t capacity,
                                                 const std::vector<FileRange>& ranges);
  // read_to_device in the background: `bytes` from `offset` of `path` (nullopt: to the end).
  [[nodiscard]] ReadEvent read_to(void* device_dst, const std::string& path, std::uint64_t offset,
                                  std::optional<std::uint64_t> bytes);

  [[nodiscard]] const ReaderOptions& options() const;

 private:
  struct State;
  explicit Reader(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// What a directory's file system allows, found by trying: O_DIRECT opens and reads, io_uring
// rings can be created, and the alignment O_DIRECT needs there.
struct DirectIoSupport {
  std::string path;
  bool o_direct = false;
  std::string o_direct_error;  // why not, when not
  bool io_uring = false;
  std::string io_uring_error;
  std::uint32_t memory_alignment = 0;  // bytes; 0 unknown
  std::uint32_t offset_alignment = 0;
  std::string alignment_source;  // "statx" (STATX_DIOALIGN), "logical_block_size", "default"
};
// Creates and removes a small file in `directory`. kNotFound when it does not exist,
// kCannotWrite when no file can be created there.
[[nodiscard]] Result<DirectIoSupport> probe_direct_io(const std::string& directory);

}  // namespace acco::io
