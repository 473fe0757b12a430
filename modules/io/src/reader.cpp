// The reader's pipeline. Each thread owns a ring and `depth` staging slots; a plan's blocks are
// dealt round robin to the threads. A slot goes free -> reading -> delivered: its useful bytes go
// to the destination (memcpy, nothing, or an engine copy whose Transfer the slot waits for
// before it is read into again), so reads of later blocks overlap the DMA of earlier ones.
#include "acco/io/reader.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "acco/core/names.hpp"
#include "acco/transfer/staging_pool.hpp"

#include "files.hpp"
#include "ring.hpp"

namespace acco::io {

const char* to_string(IoEngine engine) {
  switch (engine) {
    case IoEngine::kAuto:
      return "auto";
    case IoEngine::kIoUring:
      return "io_uring";
    case IoEngine::kPread:
      return "pread";
  }
  return "auto";
}

Result<IoEngine> parse_io_engine(const std::string& text) {
  static constexpr std::array kEngines = {IoEngine::kAuto, IoEngine::kIoUring, IoEngine::kPread};
  if (const auto e = core::find_named(text, kEngines)) {
    return *e;
  }
  return fail(Errc::kInvalidArgument,
              fmt::format("I/O engine '{}': expected {}", text, core::name_list(kEngines)));
}

Status validate(const ReaderOptions& o) {
  constexpr std::size_t kPage = 4096;
  if (o.block_bytes < kPage || o.block_bytes > (std::size_t{64} << 20) ||
      o.block_bytes % kPage != 0) {
    return fail(Errc::kInvalidArgument,
                fmt::format("block size {}: expected a multiple of 4 KiB from 4 KiB to 64 MiB",
                            o.block_bytes));
  }
  if (o.depth < 1 || o.depth > 256) {
    return fail(Errc::kInvalidArgument, fmt::format("depth {}: expected 1 to 256", o.depth));
  }
  if (o.threads < 1 || o.threads > 64) {
    return fail(Errc::kInvalidArgument, fmt::format("threads {}: expected 1 to 64", o.threads));
  }
  const std::size_t staging =
      o.block_bytes * static_cast<std::size_t>(o.depth) * static_cast<std::size_t>(o.threads);
  if (staging > (std::size_t{2} << 30)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("block {} x depth {} x threads {} is {} MiB of pinned staging: "
                            "expected at most 2048 MiB",
                            o.block_bytes, o.depth, o.threads, staging >> 20));
  }
  return {};
}

nlohmann::ordered_json to_json(const ReadStats& s) {
  return {{"bytes", s.bytes},
          {"reads", s.reads},
          {"seconds", s.seconds},
          {"bytes_per_second", s.bytes_per_second()},
          {"engine", s.engine},
          {"direct", s.direct},
          {"fixed_buffers", s.fixed_buffers},
          {"registered_files", s.registered_files},
          {"iopoll", s.iopoll},
          {"threads", s.threads},
          {"depth", s.depth},
          {"block_bytes", s.block_bytes},
          {"notes", s.notes}};
}

Result<ReadStats> ReadEvent::wait() {
  if (!future_.valid()) {
    return ReadStats{};
  }
  return future_.get();
}

bool ReadEvent::ready() const {
  return !future_.valid() || future_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

namespace {

using detail::Block;
using detail::Completion;
using detail::Plan;
using detail::Ring;

// Delivers a block's useful bytes from its slot; the Transfer, when there is one, must finish
// before the slot is read into again.
using Deliver =
    std::function<Result<std::optional<transfer::Transfer>>(const Block&, const std::byte* data)>;

struct Slot {
  std::byte* data = nullptr;
  int buffer_index = -1;  // in its ring's registered buffers
  std::size_t block = 0;  // index into the plan
  std::size_t done = 0;   // bytes read so far
  std::optional<transfer::Transfer> pending;
};

struct Worker {
  std::unique_ptr<Ring> ring;  // null: pread
  std::vector<Slot> slots;
};

std::string read_error(const detail::OpenFile& f, std::uint64_t offset, int error) {
  std::string hint;
  if (error == EINVAL && f.direct()) {
    hint =
        fmt::format(" (O_DIRECT needs {}-byte aligned offsets and lengths)", f.alignment().offset);
  }
  return fmt::format("{}: read at offset {} failed: {}{}", f.path(), offset, std::strerror(error),
                     hint);
}

// Called when a block's read returned 0 bytes before its useful bytes were in.
Error short_read(const detail::OpenFile& f, const Block& b, std::size_t done) {
  const std::uint64_t now = f.current_size();
  const std::uint64_t at = b.file_offset + done;
  if (now < f.size()) {
    return Error{Errc::kDeviceError,
                 fmt::format("{}: truncated while being read (now {} bytes, was {}): nothing "
                             "past offset {}",
                             f.path(), now, f.size(), at)};
  }
  return Error{Errc::kDeviceError,
               fmt::format("{}: short read at offset {}: end of data before the {} bytes the file "
                           "size promised",
                           f.path(), at, b.skip + b.useful - done)};
}

class Pipeline {
 public:
  Pipeline(const Plan& plan, Worker& worker, std::vector<std::size_t> blocks,
           const Deliver& deliver, std::atomic<bool>& abort, std::atomic<std::uint64_t>& reads)
      : plan_(plan),
        w_(worker),
        blocks_(std::move(blocks)),
        deliver_(deliver),
        abort_(abort),
        reads_(reads) {}

  Status run() {
    Status s = w_.ring ? run_ring() : run_pread();
    // Nothing may still write into a slot or read from one once this returns.
    drain();
    if (!s) {
      abort_.store(true);
    }
    return s;
  }

 private:
  Status finish_oldest_dma() {
    const int s = dma_.front();
    dma_.pop_front();
    auto r = w_.slots[static_cast<std::size_t>(s)].pending->wait();
    w_.slots[static_cast<std::size_t>(s)].pending.reset();
    free_.push_back(s);
    if (!r) {
      return tl::unexpected(r.error());
    }
    return {};
  }

  Status collect_ready_dma() {
    while (!dma_.empty() && w_.slots[static_cast<std::size_t>(dma_.front())].pending->ready()) {
      ACCO_RETURN_IF_ERROR(finish_oldest_dma());
    }
    return {};
  }

  Status deliver(int s) {
    Slot& slot = w_.slots[static_cast<std::size_t>(s)];
    const Block& b = plan_.blocks[slot.block];
    ACCO_ASSIGN_OR_RETURN(auto transfer, deliver_(b, slot.data));
    if (transfer) {
      slot.pending = std::move(*transfer);
      dma_.push_back(s);
    } else {
      free_.push_back(s);
    }
    return {};
  }

  void prepare(int s) {
    Slot& slot = w_.slots[static_cast<std::size_t>(s)];
    const Block& b = plan_.blocks[slot.block];
    const auto& f = plan_.files[static_cast<std::size_t>(b.file)];
    const int file = w_.ring->fixed_files() ? b.file : f.fd();
    w_.ring->prepare_read(file, slot.data + slot.done, static_cast<unsigned>(b.length - slot.done),
                          b.file_offset + slot.done, slot.buffer_index,
                          static_cast<std::uint64_t>(s));
    ++inflight_;
  }

  // A completion: the slot's block advanced by `result` bytes, or failed.
  Status complete(int s, int result, bool& resubmitted) {
    --inflight_;
    reads_.fetch_add(1, std::memory_order_relaxed);
    Slot& slot = w_.slots[static_cast<std::size_t>(s)];
    const Block& b = plan_.blocks[slot.block];
    const auto& f = plan_.files[static_cast<std::size_t>(b.file)];
    if (result < 0) {
      return fail(Errc::kDeviceError, read_error(f, b.file_offset + slot.done, -result));
    }
    slot.done += static_cast<std::size_t>(result);
    const std::size_t need = b.skip + b.useful;
    if (slot.done >= need) {
      return deliver(s);
    }
    if (result == 0) {
      return tl::unexpected(short_read(f, b, slot.done));
    }
    if (f.direct() && slot.done % f.alignment().offset != 0) {
      return fail(Errc::kDeviceError,
                  fmt::format("{}: O_DIRECT read at offset {} returned {} bytes, not a multiple "
                              "of the {}-byte alignment",
                              f.path(), b.file_offset, slot.done, f.alignment().offset));
    }
    prepare(s);  // the rest of the block
    resubmitted = true;
    return {};
  }

  // Queues reads of the next blocks into free slots, up to the depth; submits them.
  Status queue_reads(std::size_t& next, int depth) {
    int queued = 0;
    while (next < blocks_.size() && !free_.empty() && inflight_ < depth) {
      const int s = free_.front();
      free_.pop_front();
      w_.slots[static_cast<std::size_t>(s)].block = blocks_[next++];
      w_.slots[static_cast<std::size_t>(s)].done = 0;
      prepare(s);
      ++queued;
    }
    return queued > 0 ? w_.ring->submit() : Status{};
  }

  // Every completion is counted, also after an error, and every read asked for again is
  // submitted: drain() waits for exactly what is in flight.
  Status complete_all(const std::vector<Completion>& done) {
    bool resubmitted = false;
    Status status;
    for (const Completion& c : done) {
      if (status) {
        status = complete(static_cast<int>(c.user_data), c.result, resubmitted);
      } else {
        --inflight_;
      }
    }
    if (resubmitted) {
      Status submitted = w_.ring->submit();
      if (status && !submitted) {
        status = submitted;
      }
    }
    return status;
  }

  Status run_ring() {
    for (std::size_t i = 0; i < w_.slots.size(); ++i) {
      free_.push_back(static_cast<int>(i));
    }
    const int depth = static_cast<int>(w_.slots.size());
    std::vector<Completion> done;
    std::size_t next = 0;
    while (next < blocks_.size() || inflight_ > 0) {
      if (abort_.load(std::memory_order_relaxed)) {
        return fail(Errc::kInternal, "stopped: another thread's read failed");
      }
      ACCO_RETURN_IF_ERROR(collect_ready_dma());
      if (free_.empty() && inflight_ == 0) {
        ACCO_RETURN_IF_ERROR(finish_oldest_dma());
      }
      ACCO_RETURN_IF_ERROR(queue_reads(next, depth));
      if (inflight_ == 0) {
        continue;
      }
      ACCO_RETURN_IF_ERROR(w_.ring->reap(done));
      ACCO_RETURN_IF_ERROR(complete_all(done));
    }
    return {};
  }

  Status run_pread() {
    for (std::size_t i = 0; i < w_.slots.size(); ++i) {
      free_.push_back(static_cast<int>(i));
    }
    for (const std::size_t index : blocks_) {
      if (abort_.load(std::memory_order_relaxed)) {
        return fail(Errc::kInternal, "stopped: another thread's read failed");
      }
      ACCO_RETURN_IF_ERROR(collect_ready_dma());
      if (free_.empty()) {
        ACCO_RETURN_IF_ERROR(finish_oldest_dma());
      }
      const int s = free_.front();
      free_.pop_front();
      Slot& slot = w_.slots[static_cast<std::size_t>(s)];
      slot.block = index;
      slot.done = 0;
      const Block& b = plan_.blocks[index];
      const auto& f = plan_.files[static_cast<std::size_t>(b.file)];
      bool more = true;
      while (more) {
        const ssize_t n = ::pread(f.fd(), slot.data + slot.done, b.length - slot.done,
                                  static_cast<off_t>(b.file_offset + slot.done));
        if (n < 0 && errno == EINTR) {
          continue;
        }
        ACCO_RETURN_IF_ERROR(complete_pread(s, n < 0 ? -errno : static_cast<int>(n), more));
      }
    }
    return {};
  }

  // One pread returned: the block is delivered (more = false), or the rest is to be read.
  Status complete_pread(int s, int result, bool& more) {
    reads_.fetch_add(1, std::memory_order_relaxed);
    Slot& slot = w_.slots[static_cast<std::size_t>(s)];
    const Block& b = plan_.blocks[slot.block];
    const auto& f = plan_.files[static_cast<std::size_t>(b.file)];
    if (result < 0) {
      return fail(Errc::kDeviceError, read_error(f, b.file_offset + slot.done, -result));
    }
    slot.done += static_cast<std::size_t>(result);
    if (slot.done >= b.skip + b.useful) {
      more = false;
      return deliver(s);
    }
    if (result == 0) {
      return tl::unexpected(short_read(f, b, slot.done));
    }
    more = true;
    return {};
  }

  void drain() {
    std::vector<Completion> done;
    if (inflight_ > 0 && w_.ring) {
      (void)w_.ring->submit();  // anything prepared but not yet submitted
    }
    while (inflight_ > 0 && w_.ring) {
      if (!w_.ring->reap(done)) {
        break;
      }
      inflight_ -= static_cast<int>(done.size());
    }
    inflight_ = 0;
    while (!dma_.empty()) {
      (void)finish_oldest_dma();
    }
  }

  const Plan& plan_;
  Worker& w_;
  std::vector<std::size_t> blocks_;
  const Deliver& deliver_;
  std::atomic<bool>& abort_;
  std::atomic<std::uint64_t>& reads_;
  std::deque<int> free_;
  std::deque<int> dma_;
  int inflight_ = 0;
};

}  // namespace

struct Reader::State {
  device::Device* device = nullptr;
  transfer::Engine* engine = nullptr;
  ReaderOptions options;
  std::unique_ptr<transfer::StagingPool> pool;
  std::vector<transfer::StagingPool::Slot> taken;
  std::vector<Worker> workers;
  std::vector<std::string> notes;  // from create, reported with every read
  bool fixed_buffers = false;
  std::mutex mutex;  // one read at a time
  std::mutex engine_mutex;

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  State(State&&) = delete;
  State& operator=(State&&) = delete;
  ~State() {
    workers.clear();  // rings first: they hold the slots registered
    for (const auto& s : taken) {
      pool->release(s.index);
    }
  }

  Result<ReadStats> read(const std::vector<FileRange>& ranges, std::uint64_t capacity,
                         const Deliver& deliver);
};

Result<ReadStats> Reader::State::read(const std::vector<FileRange>& ranges, std::uint64_t capacity,
                                      const Deliver& deliver) {
  const std::lock_guard lock(mutex);
  const auto start = std::chrono::steady_clock::now();
  ACCO_ASSIGN_OR_RETURN(auto plan, detail::make_plan(ranges, options.block_bytes, options.direct));
  if (plan.bytes > capacity) {
    return fail(
        Errc::kInvalidArgument,
        fmt::format("read: {} bytes asked for, the destination holds {}", plan.bytes, capacity));
  }
  ReadStats stats;
  stats.notes = notes;
  for (auto& n : plan.notes) {
    if (std::find(stats.notes.begin(), stats.notes.end(), n) == stats.notes.end()) {
      stats.notes.push_back(std::move(n));
    }
  }
  stats.engine = workers.front().ring ? "io_uring" : "pread";
  stats.direct = std::all_of(plan.files.begin(), plan.files.end(),
                             [](const detail::OpenFile& f) { return f.direct(); });
  if (options.iopoll && workers.front().ring && !stats.direct) {
    return fail(Errc::kInvalidArgument,
                "read: IOPOLL needs O_DIRECT, and a file here is read buffered");
  }
  stats.fixed_buffers = fixed_buffers;
  stats.iopoll = options.iopoll && workers.front().ring != nullptr;
  stats.threads = options.threads;
  stats.depth = options.depth;
  stats.block_bytes = options.block_bytes;

  std::vector<int> fds;
  for (const auto& f : plan.files) {
    fds.push_back(f.fd());
  }
  bool registered = options.register_files && workers.front().ring != nullptr;
  for (auto& w : workers) {
    if (registered && w.ring) {
      if (auto r = w.ring->register_files(fds); !r) {
        stats.notes.push_back(r.error().message + ": plain descriptors");
        registered = false;
      }
    }
  }
  if (!registered) {
    for (auto& w : workers) {
      if (w.ring) {
        w.ring->unregister_files();
      }
    }
  }
  stats.registered_files = registered;

  std::atomic<bool> abort{false};
  std::atomic<std::uint64_t> reads{0};
  const auto threads = workers.size();
  std::vector<std::vector<std::size_t>> dealt(threads);
  for (std::size_t i = 0; i < plan.blocks.size(); ++i) {
    dealt[i % threads].push_back(i);
  }
  std::vector<Status> results(threads);
  {
    std::vector<std::thread> pool_threads;
    for (std::size_t t = 1; t < threads; ++t) {
      pool_threads.emplace_back([&, t] {
        results[t] = Pipeline(plan, workers[t], std::move(dealt[t]), deliver, abort, reads).run();
      });
    }
    results[0] = Pipeline(plan, workers[0], std::move(dealt[0]), deliver, abort, reads).run();
    for (auto& th : pool_threads) {
      th.join();
    }
  }
  for (auto& w : workers) {
    if (w.ring) {
      w.ring->unregister_files();
    }
  }
  // The first real error: "stopped" follow-ups only when nothing else failed.
  const Status* first = nullptr;
  for (const auto& r : results) {
    if (!r && (first == nullptr || (*first).error().code == Errc::kInternal)) {
      first = &r;
    }
  }
  if (first != nullptr) {
    return tl::unexpected(first->error());
  }
  stats.bytes = plan.bytes;
  stats.reads = reads.load();
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

Result<std::unique_ptr<Reader>> Reader::create(device::Device& device, const ReaderOptions& options,
                                               transfer::Engine* engine) {
  ACCO_RETURN_IF_ERROR(validate(options));
  if (engine != nullptr && &engine->device() != &device) {
    return fail(Errc::kInvalidArgument, "reader: the engine belongs to another device");
  }
  auto state = std::make_unique<State>();
  state->device = &device;
  state->engine = engine;
  state->options = options;
  transfer::StagingPoolOptions pool_options;
  pool_options.slot_bytes = options.block_bytes;
  pool_options.slots = options.depth * options.threads;
  ACCO_ASSIGN_OR_RETURN(state->pool, transfer::StagingPool::create(device, pool_options));
  for (int i = 0; i < pool_options.slots; ++i) {
    state->taken.push_back(state->pool->acquire());
  }

  bool uring = options.engine != IoEngine::kPread;
  state->fixed_buffers = uring && options.fixed_buffers;
  state->workers.resize(static_cast<std::size_t>(options.threads));
  for (int t = 0; t < options.threads; ++t) {
    Worker& w = state->workers[static_cast<std::size_t>(t)];
    std::vector<iovec> buffers;
    for (int i = 0; i < options.depth; ++i) {
      const auto& s =
          state->taken[static_cast<std::size_t>(t) * static_cast<std::size_t>(options.depth) +
                       static_cast<std::size_t>(i)];
      w.slots.push_back(Slot{s.data, i, 0, 0, std::nullopt});
      buffers.push_back(iovec{s.data, options.block_bytes});
    }
    if (!uring) {
      continue;
    }
    auto ring = Ring::create(static_cast<unsigned>(options.depth), options.iopoll);
    if (!ring) {
      if (options.engine == IoEngine::kIoUring || ring.error().code == Errc::kInvalidArgument) {
        return tl::unexpected(ring.error());
      }
      state->notes.push_back(ring.error().message + ": pread");
      uring = false;
      state->fixed_buffers = false;
      for (auto& other : state->workers) {
        other.ring.reset();
      }
      continue;
    }
    w.ring = std::move(*ring);
    if (state->fixed_buffers) {
      if (auto r = w.ring->register_buffers(buffers); !r) {
        state->notes.push_back(r.error().message + ": unregistered reads");
        state->fixed_buffers = false;
      }
    }
  }
  if (!state->fixed_buffers) {
    for (auto& w : state->workers) {
      for (auto& s : w.slots) {
        s.buffer_index = -1;
      }
    }
  }
  return std::unique_ptr<Reader>(new Reader(std::move(state)));
}

Reader::Reader(std::unique_ptr<State> state) : state_(std::move(state)) {}
Reader::~Reader() = default;

const ReaderOptions& Reader::options() const {
  return state_->options;
}

Result<ReadStats> Reader::read(void* dst, std::size_t capacity,
                               const std::vector<FileRange>& ranges) {
  if (dst == nullptr) {
    return fail(Errc::kInvalidArgument, "read: expected a destination, got null");
  }
  auto* out = static_cast<std::byte*>(dst);
  const Deliver deliver =
      [out](const Block& b, const std::byte* data) -> Result<std::optional<transfer::Transfer>> {
    std::memcpy(out + b.dst_offset, data + b.skip, b.useful);
    return std::nullopt;
  };
  return state_->read(ranges, capacity, deliver);
}

Result<ReadStats> Reader::read_discard(const std::vector<FileRange>& ranges) {
  const Deliver deliver = [](const Block&,
                             const std::byte*) -> Result<std::optional<transfer::Transfer>> {
    return std::nullopt;
  };
  return state_->read(ranges, UINT64_MAX, deliver);
}

Result<ReadStats> Reader::read_to_device(void* device_dst, std::size_t capacity,
                                         const std::vector<FileRange>& ranges) {
  if (state_->engine == nullptr) {
    return fail(Errc::kInvalidArgument, "read_to_device: the reader was created without an engine");
  }
  if (device_dst == nullptr) {
    return fail(Errc::kInvalidArgument, "read_to_device: expected a destination, got null");
  }
  auto* out = static_cast<std::byte*>(device_dst);
  State* st = state_.get();
  const Deliver deliver = [out, st](
                              const Block& b,
                              const std::byte* data) -> Result<std::optional<transfer::Transfer>> {
    if (b.useful == 0) {
      return std::nullopt;
    }
    const std::lock_guard lock(st->engine_mutex);
    ACCO_ASSIGN_OR_RETURN(auto t, st->engine->copy(out + b.dst_offset, data + b.skip, b.useful));
    return std::optional<transfer::Transfer>(std::move(t));
  };
  return state_->read(ranges, capacity, deliver);
}

ReadEvent Reader::read_to(void* device_dst, const std::string& path, std::uint64_t offset,
                          std::optional<std::uint64_t> bytes) {
  std::vector<FileRange> ranges = {FileRange{path, offset, bytes}};
  return ReadEvent(std::async(std::launch::async, [this, device_dst, ranges] {
                     return read_to_device(device_dst, SIZE_MAX, ranges);
                   }).share());
}

}  // namespace acco::io
