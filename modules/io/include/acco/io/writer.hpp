// Checkpoint writes: host or device memory to a file through pinned staging, the reverse of the
// reader's pipeline (the DMA of chunk k+1 overlaps the write of chunk k), with O_DIRECT where the
// file system takes it. The file is written under a temporary name beside the target and renamed
// over it only when every byte is in, so the target is complete or untouched, never half
// written; how durable the result is before write() returns is the caller's choice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"
#include "acco/io/reader.hpp"
#include "acco/transfer/engine.hpp"

namespace acco::io {

enum class FsyncPolicy {
  kNone,        // rename when written; the data reaches the disk when the kernel flushes it
  kFile,        // fsync the file before the rename: the contents survive a crash once renamed
  kFileAndDir,  // and fsync the directory after it: the new name survives a crash too
};
[[nodiscard]] const char* to_string(FsyncPolicy policy);
// "none", "file", "file+dir"; kInvalidArgument naming the forms otherwise.
[[nodiscard]] Result<FsyncPolicy> parse_fsync_policy(const std::string& text);

struct WriterOptions {
  std::size_t block_bytes = std::size_t{1} << 20;  // as ReaderOptions
  int depth = 8;                                   // writes in flight, 1..256
  IoEngine engine = IoEngine::kAuto;
  bool direct = true;
  FsyncPolicy fsync = FsyncPolicy::kFileAndDir;
};
[[nodiscard]] Status validate(const WriterOptions& options);

struct WriteStats {
  std::uint64_t bytes = 0;
  std::uint64_t writes = 0;
  double seconds = 0;  // first write to the rename (and its fsyncs)
  std::string engine;  // "io_uring" or "pwrite"
  bool direct = false;
  std::string fsync;
  std::vector<std::string> notes;
  [[nodiscard]] double bytes_per_second() const {
    return seconds > 0 ? static_cast<double>(bytes) / seconds : 0;
  }
};

// One write at a time; usable from any thread.
class Writer {
 public:
  // As Reader::create; `engine` moves device memory into staging.
  [[nodiscard]] static Result<std::unique_ptr<Writer>> create(device::Device& device,
                                                              const WriterOptions& options = {},
                                                              transfer::Engine* engine = nullptr);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Writes `bytes` from host memory at `src` to `path`. Errors name the file and the offset:
  // kNotFound (no such directory), kCannotWrite (no permission, ENOSPC, EIO); then the target
  // is as it was before and no temporary file is left.
  [[nodiscard]] Result<WriteStats> write(const std::string& path, const void* src,
                                         std::uint64_t bytes);
  // The same from device memory of the engine's device (kInvalidArgument without an engine).
  [[nodiscard]] Result<WriteStats> write_from_device(const std::string& path,
                                                     const void* device_src, std::uint64_t bytes);

 private:
  struct State;
  explicit Writer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace acco::io
