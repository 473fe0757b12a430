// The writer's pipeline: chunk k is filled into a staging slot (a memcpy from host memory or an
// engine copy from device memory), then written at its offset of a temporary file; several slots
// let the fills of later chunks overlap the writes of earlier ones. The temporary file is renamed
// over the target only when everything is written (and synced, per the policy).
#include "acco/io/writer.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acco/core/names.hpp"
#include "acco/transfer/staging_pool.hpp"

#include "files.hpp"
#include "ring.hpp"

namespace acco::io {

const char* to_string(FsyncPolicy policy) {
  switch (policy) {
    case FsyncPolicy::kNone:
      return "none";
    case FsyncPolicy::kFile:
      return "file";
    case FsyncPolicy::kFileAndDir:
      return "file+dir";
  }
  return "file+dir";
}

Result<FsyncPolicy> parse_fsync_policy(const std::string& text) {
  static constexpr std::array kPolicies = {FsyncPolicy::kNone, FsyncPolicy::kFile,
                                           FsyncPolicy::kFileAndDir};
  if (const auto p = core::find_named(text, kPolicies)) {
    return *p;
  }
  return fail(Errc::kInvalidArgument,
              fmt::format("fsync policy '{}': expected {}", text, core::name_list(kPolicies)));
}

Status validate(const WriterOptions& o) {
  ReaderOptions r;
  r.block_bytes = o.block_bytes;
  r.depth = o.depth;
  return validate(r);
}

namespace {

// Fills a slot with chunk bytes [offset, offset + bytes) of the source; a Transfer to wait for
// before the slot is written out, when the fill is a DMA.
using Fill = std::function<Result<std::optional<transfer::Transfer>>(
    std::byte* slot, std::uint64_t offset, std::size_t bytes)>;

struct WSlot {
  std::byte* data = nullptr;
  int buffer_index = -1;
  std::uint64_t offset = 0;  // in the file
  std::size_t length = 0;    // bytes of data
  std::size_t padded = 0;    // bytes written (length rounded up for O_DIRECT)
  std::size_t done = 0;
  std::optional<transfer::Transfer> filling;
};

std::string write_error(const std::string& path, std::uint64_t offset, int error) {
  if (error == ENOSPC || error == EDQUOT) {
    return fmt::format("{}: no space left on the device writing at offset {} ({})", path, offset,
                       std::strerror(error));
  }
  return fmt::format("{}: write at offset {} failed: {}", path, offset, std::strerror(error));
}

// The temporary file beside the target: removed unless committed.
class TempFile {
 public:
  TempFile() = default;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    if (!path_.empty()) {
      ::unlink(path_.c_str());
    }
  }

  // kNotFound (no such directory), kCannotWrite (cannot create a file there).
  Status create(const std::string& target, bool direct, std::string& note) {
    const std::filesystem::path t(target);
    const std::filesystem::path dir = t.has_parent_path() ? t.parent_path() : ".";
    std::string pattern = (dir / ("." + t.filename().string() + ".acco-tmp-XXXXXX")).string();
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0) {
      const int e = errno;
      if (e == ENOENT || e == ENOTDIR) {
        return fail(Errc::kNotFound, fmt::format("{}: no such directory {}", target, dir.string()));
      }
      return fail(Errc::kCannotWrite, fmt::format("{}: cannot create a file in {}: {}", target,
                                                  dir.string(), std::strerror(e)));
    }
    path_ = pattern;
    fd_ = fd;
    // mkstemp makes 0600: a replaced file keeps its mode, a new one gets 0644.
    struct stat st {};
    const mode_t mode = ::stat(target.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
    (void)::fchmod(fd_, mode);
    if (direct) {
      const int dfd = detail::open_file(path_, O_WRONLY | O_CLOEXEC | O_DIRECT);
      const detail::Alignment a = detail::direct_io_alignment(fd_);
      if (dfd < 0) {
        note = fmt::format("O_DIRECT refused for {} ({}): buffered writes", dir.string(),
                           std::strerror(errno));
      } else if (!a.direct_supported || a.memory > 4096 || a.offset > 4096) {
        ::close(dfd);
        note = fmt::format("O_DIRECT not usable in {}: buffered writes", dir.string());
      } else {
        ::close(fd_);
        fd_ = dfd;
        direct_ = true;
        alignment_ = a.offset;
      }
    }
    return {};
  }

  // Truncates the padding, syncs per the policy, renames over `target`.
  Status commit(const std::string& target, std::uint64_t bytes, FsyncPolicy policy) {
    if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) {
      return fail(Errc::kCannotWrite,
                  fmt::format("{}: ftruncate: {}", target, std::strerror(errno)));
    }
    if (policy != FsyncPolicy::kNone && ::fsync(fd_) != 0) {
      return fail(Errc::kCannotWrite, fmt::format("{}: fsync: {}", target, std::strerror(errno)));
    }
    // A network or FUSE file system (NFS above all) may report a lost write only here, when no
    // fsync came first; the descriptor is gone either way.
    if (::close(std::exchange(fd_, -1)) != 0) {
      return fail(Errc::kCannotWrite, fmt::format("{}: close: {}", target, std::strerror(errno)));
    }
    if (::rename(path_.c_str(), target.c_str()) != 0) {
      return fail(Errc::kCannotWrite,
                  fmt::format("{}: rename from {}: {}", target, path_, std::strerror(errno)));
    }
    path_.clear();
    if (policy == FsyncPolicy::kFileAndDir) {
      const std::filesystem::path t(target);
      const std::string dir = t.has_parent_path() ? t.parent_path().string() : ".";
      const int dfd = detail::open_file(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dfd < 0 || ::fsync(dfd) != 0) {
        const int e = errno;
        if (dfd >= 0) {
          ::close(dfd);
        }
        return fail(Errc::kCannotWrite, fmt::format("{}: written, but fsync of {} failed: {}",
                                                    target, dir, std::strerror(e)));
      }
      ::close(dfd);
    }
    return {};
  }

  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] bool direct() const { return direct_; }
  [[nodiscard]] std::uint64_t alignment() const { return alignment_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool direct_ = false;
  std::uint64_t alignment_ = 1;
};

}  // namespace

struct Writer::State {
  transfer::Engine* engine = nullptr;
  WriterOptions options;
  std::unique_ptr<transfer::StagingPool> pool;
  std::vector<transfer::StagingPool::Slot> taken;
  std::unique_ptr<detail::Ring> ring;
  std::vector<std::string> notes;
  std::mutex mutex;

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  State(State&&) = delete;
  State& operator=(State&&) = delete;
  ~State() {
    ring.reset();
    for (const auto& s : taken) {
      pool->release(s.index);
    }
  }

  Result<WriteStats> write(const std::string& path, std::uint64_t bytes, const Fill& fill);
  Status run_ring(TempFile& file, const std::string& path, std::uint64_t bytes, const Fill& fill,
                  WriteStats& stats) const;
  Status run_pwrite(TempFile& file, const std::string& path, std::uint64_t bytes, const Fill& fill,
                    WriteStats& stats);
};

namespace {

// Rounds a slot's data up to the file's O_DIRECT alignment with zeros (cut by the final
// ftruncate).
void pad(WSlot& s, std::uint64_t alignment) {
  s.padded = static_cast<std::size_t>((s.length + alignment - 1) / alignment * alignment);
  std::memset(s.data + s.length, 0, s.padded - s.length);
}

// The io_uring loop of one write: slots go free -> filling (a memcpy done at once, or a DMA) ->
// writing -> free, in file order.
class WritePipeline {
 public:
  WritePipeline(detail::Ring& ring, const std::vector<transfer::StagingPool::Slot>& taken,
                TempFile& file, const std::string& path, std::size_t block, const Fill& fill,
                WriteStats& stats)
      : ring_(ring),
        file_(file),
        path_(path),
        block_(block),
        fill_(fill),
        stats_(stats),
        alignment_(file.direct() ? file.alignment() : 1) {
    for (std::size_t i = 0; i < taken.size(); ++i) {
      slots_.push_back(WSlot{taken[i].data, ring.fixed_buffers() ? static_cast<int>(i) : -1, 0, 0,
                             0, 0, std::nullopt});
      free_.push_back(static_cast<int>(i));
    }
  }

  Status run(std::uint64_t bytes) {
    Status status;
    std::uint64_t next = 0;
    while (status && (next < bytes || !filling_.empty() || inflight_ > 0)) {
      status = start_fills(next, bytes);
      if (status) {
        status = write_filled();
      }
      if (status && inflight_ > 0) {
        status = ring_.reap(done_);
        if (status) {
          status = complete_all();
        }
      }
    }
    drain();
    return status;
  }

 private:
  Status start_fills(std::uint64_t& next, std::uint64_t bytes) {
    while (next < bytes && !free_.empty()) {
      const int i = free_.front();
      free_.pop_front();
      WSlot& s = slots_[static_cast<std::size_t>(i)];
      s.offset = next;
      s.length = static_cast<std::size_t>(std::min<std::uint64_t>(block_, bytes - next));
      s.done = 0;
      next += s.length;
      ACCO_ASSIGN_OR_RETURN(s.filling, fill_(s.data, s.offset, s.length));
      filling_.push_back(i);
    }
    return {};
  }

  void submit_write(int i) {
    WSlot& s = slots_[static_cast<std::size_t>(i)];
    ring_.prepare_write(file_.fd(), s.data + s.done, static_cast<unsigned>(s.padded - s.done),
                        s.offset + s.done, s.buffer_index, static_cast<std::uint64_t>(i));
    ++inflight_;
  }

  // Writes the filled slots in order; waits for a DMA only when no write is in flight to wait
  // for instead.
  Status write_filled() {
    int queued = 0;
    while (!filling_.empty()) {
      WSlot& s = slots_[static_cast<std::size_t>(filling_.front())];
      if (s.filling && !s.filling->ready() && inflight_ > 0) {
        break;
      }
      if (s.filling) {
        auto r = s.filling->wait();
        s.filling.reset();
        if (!r) {
          return tl::unexpected(r.error());
        }
      }
      pad(s, alignment_);
      submit_write(filling_.front());
      filling_.pop_front();
      ++queued;
    }
    return queued > 0 ? ring_.submit() : Status{};
  }

  Status complete(int i, int result, bool& resubmitted) {
    WSlot& s = slots_[static_cast<std::size_t>(i)];
    if (result <= 0) {
      return fail(Errc::kCannotWrite,
                  write_error(path_, s.offset + s.done, result < 0 ? -result : EIO));
    }
    s.done += static_cast<std::size_t>(result);
    if (s.done < s.padded) {
      submit_write(i);
      resubmitted = true;
    } else {
      free_.push_back(i);
    }
    return {};
  }

  // Every completion is counted, also after an error, and every rest asked for is submitted:
  // drain() waits for exactly what is in flight.
  Status complete_all() {
    bool resubmitted = false;
    Status status;
    for (const auto& c : done_) {
      --inflight_;
      ++stats_.writes;
      if (status) {
        status = complete(static_cast<int>(c.user_data), c.result, resubmitted);
      }
    }
    if (resubmitted) {
      Status submitted = ring_.submit();
      if (status && !submitted) {
        status = submitted;
      }
    }
    return status;
  }

  // Nothing may still write from a slot or DMA into one.
  void drain() {
    if (inflight_ > 0) {
      (void)ring_.submit();  // anything prepared but not yet submitted
    }
    while (inflight_ > 0 && ring_.reap(done_)) {
      inflight_ -= static_cast<int>(done_.size());
    }
    for (const int i : filling_) {
      if (auto& t = slots_[static_cast<std::size_t>(i)].filling) {
        (void)t->wait();
      }
    }
  }

  detail::Ring& ring_;
  TempFile& file_;
  const std::string& path_;
  std::size_t block_;
  const Fill& fill_;
  WriteStats& stats_;
  std::uint64_t alignment_;
  std::vector<WSlot> slots_;
  std::deque<int> free_;
  std::deque<int> filling_;
  std::vector<detail::Completion> done_;
  int inflight_ = 0;
};

}  // namespace

Status Writer::State::run_ring(TempFile& file, const std::string& path, std::uint64_t bytes,
                               const Fill& fill, WriteStats& stats) const {
  return WritePipeline(*ring, taken, file, path, options.block_bytes, fill, stats).run(bytes);
}

Status Writer::State::run_pwrite(TempFile& file, const std::string& path, std::uint64_t bytes,
                                 const Fill& fill, WriteStats& stats) {
  const std::uint64_t al = file.direct() ? file.alignment() : 1;
  WSlot s{taken.front().data, -1, 0, 0, 0, 0, std::nullopt};
  for (std::uint64_t next = 0; next < bytes; next += s.length) {
    s.offset = next;
    s.length = static_cast<std::size_t>(std::min<std::uint64_t>(options.block_bytes, bytes - next));
    ACCO_ASSIGN_OR_RETURN(auto t, fill(s.data, s.offset, s.length));
    if (t) {
      ACCO_RETURN_IF_ERROR(t->wait());
    }
    pad(s, al);
    for (s.done = 0; s.done < s.padded;) {
      const ssize_t n = ::pwrite(file.fd(), s.data + s.done, s.padded - s.done,
                                 static_cast<off_t>(s.offset + s.done));
      if (n < 0 && errno == EINTR) {
        continue;
      }
      ++stats.writes;
      if (n <= 0) {
        return fail(Errc::kCannotWrite, write_error(path, s.offset + s.done, n < 0 ? errno : EIO));
      }
      s.done += static_cast<std::size_t>(n);
    }
  }
  return {};
}

Result<WriteStats> Writer::State::write(const std::string& path, std::uint64_t bytes,
                                        const Fill& fill) {
  const std::lock_guard lock(mutex);
  const auto start = std::chrono::steady_clock::now();
  WriteStats stats;
  stats.notes = notes;
  stats.engine = ring ? "io_uring" : "pwrite";
  stats.fsync = to_string(options.fsync);
  TempFile file;
  std::string note;
  ACCO_RETURN_IF_ERROR(file.create(path, options.direct, note));
  if (!note.empty()) {
    stats.notes.push_back(note);
  }
  stats.direct = file.direct();
  ACCO_RETURN_IF_ERROR(ring ? run_ring(file, path, bytes, fill, stats)
                            : run_pwrite(file, path, bytes, fill, stats));
  ACCO_RETURN_IF_ERROR(file.commit(path, bytes, options.fsync));
  stats.bytes = bytes;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

Result<std::unique_ptr<Writer>> Writer::create(device::Device& device, const WriterOptions& options,
                                               transfer::Engine* engine) {
  ACCO_RETURN_IF_ERROR(validate(options));
  if (engine != nullptr && &engine->device() != &device) {
    return fail(Errc::kInvalidArgument, "writer: the engine belongs to another device");
  }
  auto state = std::make_unique<State>();
  state->engine = engine;
  state->options = options;
  transfer::StagingPoolOptions pool_options;
  pool_options.slot_bytes = options.block_bytes;
  pool_options.slots = options.depth;
  ACCO_ASSIGN_OR_RETURN(state->pool, transfer::StagingPool::create(device, pool_options));
  std::vector<iovec> buffers;
  for (int i = 0; i < options.depth; ++i) {
    state->taken.push_back(state->pool->acquire());
    buffers.push_back(iovec{state->taken.back().data, options.block_bytes});
  }
  if (options.engine != IoEngine::kPread) {
    auto ring = detail::Ring::create(static_cast<unsigned>(options.depth), false);
    if (ring) {
      state->ring = std::move(*ring);
      if (auto r = state->ring->register_buffers(buffers); !r) {
        state->notes.push_back(r.error().message + ": unregistered writes");
      }
    } else if (options.engine == IoEngine::kIoUring) {
      return tl::unexpected(ring.error());
    } else {
      state->notes.push_back(ring.error().message + ": pwrite");
    }
  }
  return std::unique_ptr<Writer>(new Writer(std::move(state)));
}

Writer::Writer(std::unique_ptr<State> state) : state_(std::move(state)) {}
Writer::~Writer() = default;

Result<WriteStats> Writer::write(const std::string& path, const void* src, std::uint64_t bytes) {
  if (src == nullptr && bytes > 0) {
    return fail(Errc::kInvalidArgument, "write: expected a source, got null");
  }
  const auto* in = static_cast<const std::byte*>(src);
  const Fill fill = [in](std::byte* slot, std::uint64_t offset,
                         std::size_t n) -> Result<std::optional<transfer::Transfer>> {
    std::memcpy(slot, in + offset, n);
    return std::nullopt;
  };
  return state_->write(path, bytes, fill);
}

Result<WriteStats> Writer::write_from_device(const std::string& path, const void* device_src,
                                             std::uint64_t bytes) {
  if (state_->engine == nullptr) {
    return fail(Errc::kInvalidArgument,
                "write_from_device: the writer was created without an engine");
  }
  if (device_src == nullptr && bytes > 0) {
    return fail(Errc::kInvalidArgument, "write_from_device: expected a source, got null");
  }
  const auto* in = static_cast<const std::byte*>(device_src);
  transfer::Engine* engine = state_->engine;
  const Fill fill = [in, engine](std::byte* slot, std::uint64_t offset,
                                 std::size_t n) -> Result<std::optional<transfer::Transfer>> {
    ACCO_ASSIGN_OR_RETURN(auto t, engine->copy(slot, in + offset, n));
    return std::optional<transfer::Transfer>(std::move(t));
  };
  return state_->write(path, bytes, fill);
}

}  // namespace acco::io
