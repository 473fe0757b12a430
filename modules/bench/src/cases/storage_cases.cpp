// The storage suite. `storage_read` sweeps block size and queue depth for file -> host (acco's
// reader, O_DIRECT io_uring with registered buffers and files, the data left in staging as fio
// leaves it in its buffers) and runs fio's io_uring engine with the same settings on the same
// file beside each point (results of their own, keys fio_read_*). `storage_to_device` reads the
// file into device memory through the reader's pipeline, at the point of the tune profile or
// else the best of a short sweep, and through the naive path: a buffered read() into pageable
// memory, then a plain copy.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/core/stats.hpp"
#include "acco/core/units.hpp"
#include "acco/io/baseline.hpp"
#include "acco/io/reader.hpp"
#include "acco/transfer/engine.hpp"

#include "cases.hpp"
#include "measure.hpp"

namespace acco::bench::detail {
namespace {

using Nanos = std::chrono::nanoseconds;

struct SweepPlan {
  std::vector<std::size_t> blocks;
  std::vector<int> depths;
};

SweepPlan sweep_plan(bool quick) {
  if (quick) {
    return {{std::size_t{64} << 10, std::size_t{1} << 20}, {1, 32}};
  }
  return {
      {std::size_t{4} << 10, std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{16} << 20},
      {1, 8, 64, 256}};
}

// Staging above this is not swept (the reader refuses more than 2 GiB; fio would allocate it).
constexpr std::size_t kMaxStaging = std::size_t{1} << 30;

// "1MiB_qd32": stable, no spaces (part of case keys).
std::string compact_size(std::size_t bytes) {
  return bytes % (std::size_t{1} << 20) == 0 ? fmt::format("{}MiB", bytes >> 20)
                                             : fmt::format("{}KiB", bytes >> 10);
}

std::string point_name(std::size_t block, int depth) {
  return fmt::format("{}_qd{}", compact_size(block), depth);
}

std::string file_size_problem(const CaseContext& c, std::uint64_t& bytes) {
  if (c.storage_file.empty()) {
    return "needs a file: acco bench --suite storage --file PATH";
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(c.storage_file, ec);
  if (ec) {
    return fmt::format("{}: {}", c.storage_file, ec.message());
  }
  bytes = std::min<std::uint64_t>(size, c.bytes);
  bytes -= bytes % 4096;
  if (bytes < 4096) {
    return fmt::format("{}: expected at least 4 KiB, found {} bytes", c.storage_file, size);
  }
  return {};
}

bool fio_installed() {
  return std::system("command -v fio >/dev/null 2>&1") == 0;
}

// How long each timed sample of either side of the fio comparison reads, again and again over the
// same region: fio's bandwidth is io_bytes over a runtime in whole milliseconds, so a run of a few
// milliseconds (a --quick point used to last 8-40 ms) is quantised; 500 ms puts that under 0.2 %.
constexpr std::chrono::milliseconds kTimedRead{500};
// fio's runtime below this is too coarse to keep (0.5 % of a whole millisecond's resolution).
constexpr double kShortestFioSeconds = 0.2;

// One time-based fio run (--time_based --runtime) over the first `bytes` of `file`: its read rate
// from io_bytes and the runtime in milliseconds, or the reason it failed.
Result<double> run_fio(const std::string& file, std::uint64_t bytes, std::size_t block, int depth) {
  const std::string cmd = fmt::format(
      "fio --name=acco --filename='{}' --rw=read --bs={} --iodepth={} --ioengine=io_uring "
      "--direct=1 --fixedbufs=1 --registerfiles=1 --size={} --numjobs=1 --thread "
      "--time_based --runtime={}ms --output-format=json 2>&1",
      file, block, depth, bytes, kTimedRead.count());
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) {
    return fail(Errc::kUnavailable, "cannot start fio");
  }
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), pipe) != nullptr) {
    if (out.size() < (std::size_t{1} << 20)) {
      out += buf.data();
    }
  }
  const int rc = ::pclose(pipe);
  const auto brace = out.find('{');
  const auto j = brace == std::string::npos
                     ? nlohmann::json()
                     : nlohmann::json::parse(out.substr(brace), nullptr, false);
  if (rc != 0 || j.is_discarded() || !j.contains("jobs") || j["jobs"].empty() ||
      !j["jobs"][0].contains("read")) {
    return fail(
        Errc::kDeviceError,
        fmt::format("fio failed: {}", out.substr(0, std::min<std::size_t>(200, out.size()))));
  }
  const auto& read = j["jobs"][0]["read"];
  const double io_bytes = read.value("io_bytes", 0.0);
  const double seconds = read.value("runtime", 0.0) / 1000;  // fio's runtime is in milliseconds
  if (io_bytes <= 0 || seconds < kShortestFioSeconds) {
    return fail(Errc::kDeviceError,
                fmt::format("fio read {} bytes in {} s: too short to time", io_bytes, seconds));
  }
  return io_bytes / seconds;
}

// The rates of `r` (bytes per second, one per timed sample), its peak and verdict.
Status finish_from_rates(BenchResult& r, const std::vector<double>& rates, double peak) {
  ACCO_ASSIGN_OR_RETURN(const auto summary, summarize(rates));
  set_rates(r, summary);
  r.peak_bytes_per_second = peak;
  assess(r, PathKind::kStorageRead);
  return {};
}

// Samples of `bytes` read in `seconds` each, turned into the result's rates and verdict.
Status finish_rates(BenchResult& r, std::uint64_t bytes, const std::vector<double>& seconds,
                    double peak) {
  std::vector<Nanos> samples;
  samples.reserve(seconds.size());
  for (const double s : seconds) {
    samples.emplace_back(static_cast<Nanos::rep>(s * 1e9));
  }
  return finish(r, bytes, samples, peak, PathKind::kStorageRead);
}

BenchResult base(const std::string& key, std::uint64_t bytes, const std::string& strategy) {
  BenchResult r;
  r.case_key = key;
  r.device = "host";
  r.bytes = bytes;
  r.timer = kTimerHostClock;
  r.strategy = strategy;
  return r;
}

class StorageReadCase final : public Case {
 public:
  std::string key() const override { return "storage_read"; }
  std::string suite() const override { return "storage"; }
  std::string description() const override {
    return "file -> host: acco's io_uring reader (O_DIRECT, registered buffers and files) over "
           "block sizes and depths, fio beside each point (fio_read_*)";
  }
  std::string applies_to(const CaseContext& c) const override {
    std::uint64_t bytes = 0;
    return file_size_problem(c, bytes);
  }
  std::vector<BenchResult> run(const CaseContext& c) override {
    std::uint64_t bytes = 0;
    (void)file_size_problem(c, bytes);
    const bool fio = fio_installed();
    std::vector<BenchResult> out;
    const SweepPlan plan = sweep_plan(c.quick);
    for (const std::size_t block : plan.blocks) {
      for (const int depth : plan.depths) {
        if (block * static_cast<std::size_t>(depth) > kMaxStaging) {
          continue;
        }
        auto [ours, theirs] = side_by_side(c, bytes, block, depth, fio);
        out.push_back(std::move(ours));
        out.push_back(std::move(theirs));
      }
    }
    return out;
  }

 private:
  // acco's reader and fio at one point, their repeats interleaved with the order alternating
  // (acco fio, fio acco, ...), so a drift of the disk's rate (a virtio disk follows its host's
  // load and cache) falls on both sides alike. A side that fails is reported alone; the other
  // goes on.
  static std::pair<BenchResult, BenchResult> side_by_side(const CaseContext& c, std::uint64_t bytes,
                                                          std::size_t block, int depth, bool fio) {
    const std::string name = point_name(block, depth);
    const std::string ours_key = "storage_read_" + name;
    const std::string fio_key = "fio_read_" + name;
    io::ReaderOptions o;
    o.block_bytes = block;
    o.depth = depth;
    auto reader = io::Reader::create(*c.device, o);
    std::optional<Error> ours_error;
    std::optional<Error> fio_error;
    if (!reader) {
      ours_error = reader.error();
    }
    std::vector<double> ours_rates;
    std::vector<double> fio_rates;
    io::ReadStats last;
    // As fio's --time_based: the same region read again and again for kTimedRead, timed from
    // each pass's first submission to its last delivery (fio's runtime too leaves out its set-up).
    const auto read_ours = [&](bool timed) {
      double seconds = 0;
      double delivered = 0;
      const double wanted = timed ? std::chrono::duration<double>(kTimedRead).count() : 0;
      do {
        if (ours_error) {
          return;
        }
        auto got = (*reader)->read_discard({{c.storage_file, 0, bytes}});
        if (!got) {
          ours_error = got.error();
          return;
        }
        seconds += got->seconds;
        delivered += static_cast<double>(got->bytes);
        last = *got;
      } while (seconds < wanted);
      if (timed && seconds > 0) {
        ours_rates.push_back(delivered / seconds);
      }
    };
    const auto run_theirs = [&] {
      if (!fio || fio_error) {
        return;
      }
      auto bw = run_fio(c.storage_file, bytes, block, depth);
      if (!bw || *bw <= 0) {
        fio_error = bw ? Error{Errc::kDeviceError, "fio reported no bandwidth"} : bw.error();
        return;
      }
      fio_rates.push_back(*bw);
    };
    for (int i = 0; i < c.warmup; ++i) {
      read_ours(false);
    }
    for (int i = 0; i < c.reps; ++i) {
      if (i % 2 == 0) {
        read_ours(true);
        run_theirs();
      } else {
        run_theirs();
        read_ours(true);
      }
    }
    BenchResult ours =
        ours_error
            ? failed(ours_key, "host", *ours_error)
            : base(ours_key, bytes,
                   fmt::format("{}{}{}, {} x {}, time-based {} ms", last.engine,
                               last.direct ? " O_DIRECT" : "", last.fixed_buffers ? " fixed" : "",
                               compact_size(block), depth, kTimedRead.count()));
    if (!ours_error) {
      if (!last.notes.empty()) {
        ours.strategy += "; " + last.notes.front();
      }
      ours = rated(std::move(ours), c, ours_rates);
    }
    BenchResult theirs =
        !fio ? waived(fio_key, "host", "fio is not installed (Debian package fio)")
        : fio_error
            ? failed(fio_key, "host", *fio_error)
            : rated(base(fio_key, bytes,
                         fmt::format("fio io_uring direct fixedbufs registerfiles, {} x {}, "
                                     "time-based {} ms",
                                     compact_size(block), depth, kTimedRead.count())),
                    c, fio_rates);
    return {std::move(ours), std::move(theirs)};
  }

  // The rates and verdict of `r` from its samples, against the storage peak.
  static BenchResult rated(BenchResult r, const CaseContext& c, const std::vector<double>& rates) {
    if (auto s = finish_from_rates(r, rates, c.storage_peak_bytes_per_second); !s) {
      return failed(r.case_key, "host", s.error());
    }
    r.peak_source = c.storage_peak_source;
    return r;
  }
};

class StorageToDeviceCase final : public Case {
 public:
  std::string key() const override { return "storage_to_device"; }
  std::string suite() const override { return "storage"; }
  std::string description() const override {
    return "file -> device: the reader's pipeline (reads overlapping the DMA) against a "
           "buffered read() into pageable memory then a plain copy (storage_h2d_naive)";
  }
  std::string applies_to(const CaseContext& c) const override {
    std::uint64_t bytes = 0;
    return file_size_problem(c, bytes);
  }
  std::vector<BenchResult> run(const CaseContext& c) override {
    std::uint64_t bytes = 0;
    (void)file_size_problem(c, bytes);
    // The staging is pinned memory, so the engine copies as on the h2d_pinned path.
    auto engine = transfer::Engine::create(*c.device, c.profile_for("h2d_pinned"));
    auto dst = c.device->allocate(bytes);
    if (!engine || !dst) {
      const Error e = !engine ? engine.error() : dst.error();
      return {failed("storage_h2d", c.device_name(), e),
              failed("storage_h2d_naive", c.device_name(), e)};
    }
    std::vector<BenchResult> out;
    out.push_back(pipeline(c, **engine, **dst, bytes));
    out.push_back(naive(c, **dst, bytes));
    return out;
  }

 private:
  // Median rate and samples of one reader point into device memory, and its strategy.
  struct Point {
    double median = 0;
    std::vector<double> seconds;
    std::string strategy;
  };
  static Result<Point> point(const CaseContext& c, transfer::Engine& engine, device::Buffer& dst,
                             std::uint64_t bytes, const io::ReaderOptions& o) {
    ACCO_ASSIGN_OR_RETURN(auto reader, io::Reader::create(*c.device, o, &engine));
    Point p;
    for (int i = 0; i < c.warmup + c.reps; ++i) {
      ACCO_ASSIGN_OR_RETURN(
          const auto s, reader->read_to_device(dst.data(), bytes, {{c.storage_file, 0, bytes}}));
      if (i >= c.warmup) {
        p.seconds.push_back(s.seconds);
      }
      if (i == 0) {
        p.strategy = fmt::format("{}{} -> engine, {} x {}", s.engine, s.direct ? " O_DIRECT" : "",
                                 compact_size(o.block_bytes), o.depth);
      }
    }
    p.median = static_cast<double>(bytes) / core::stats::median(p.seconds);
    return p;
  }

  static BenchResult pipeline(const CaseContext& c, transfer::Engine& engine, device::Buffer& dst,
                              std::uint64_t bytes) {
    Point best;
    if (c.reader_options) {
      // The point acco tune chose for this machine's reader.
      auto p = point(c, engine, dst, bytes, *c.reader_options);
      if (!p) {
        return failed("storage_h2d", c.device_name(), p.error());
      }
      best = std::move(*p);
      best.strategy +=
          fmt::format(" x {} thread{}, from the tune profile", c.reader_options->threads,
                      c.reader_options->threads == 1 ? "" : "s");
    } else {
      // A short sweep picks the point: blocks of 1 and 4 MiB at depths 8 and 32.
      best.median = -1;
      for (const std::size_t block : {std::size_t{1} << 20, std::size_t{4} << 20}) {
        for (const int depth : {8, 32}) {
          io::ReaderOptions o;
          o.block_bytes = block;
          o.depth = depth;
          auto p = point(c, engine, dst, bytes, o);
          if (!p) {
            return failed("storage_h2d", c.device_name(), p.error());
          }
          if (p->median > best.median) {
            best = std::move(*p);
          }
        }
      }
    }
    BenchResult r = base("storage_h2d", bytes, best.strategy);
    r.device = c.device_name();
    // The slower of the drive's link and the device's.
    double peak = c.storage_peak_bytes_per_second;
    r.peak_source = c.storage_peak_source;
    if (c.peak_bytes_per_second > 0 && peak > c.peak_bytes_per_second) {
      peak = c.peak_bytes_per_second;
      r.peak_source = fmt::format("the device's link, {}, below the drive's: {}",
                                  units::format_rate(peak), c.storage_peak_source);
    }
    if (auto s = finish_rates(r, bytes, best.seconds, peak); !s) {
      return failed("storage_h2d", c.device_name(), s.error());
    }
    return r;
  }

  static BenchResult naive(const CaseContext& c, device::Buffer& dst, std::uint64_t bytes) {
    std::vector<double> seconds;
    bool dropped = true;
    std::vector<char> pageable(bytes);
    for (int i = 0; i < c.reps; ++i) {
      dropped = io::drop_page_cache() && dropped;
      const auto start = std::chrono::steady_clock::now();
      if (auto s = io::read_buffered(c.storage_file, pageable.data(), bytes); !s) {
        return failed("storage_h2d_naive", c.device_name(), s.error());
      }
      if (auto s = c.device->copy(dst.data(), pageable.data(), bytes); !s) {
        return failed("storage_h2d_naive", c.device_name(), s.error());
      }
      seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    BenchResult r =
        base("storage_h2d_naive", bytes,
             dropped ? "buffered read() + plain copy, page cache dropped"
                     : "buffered read() + plain copy, page cache not dropped (not permitted)");
    r.device = c.device_name();
    if (auto s = finish_rates(r, bytes, seconds, 0); !s) {
      return failed("storage_h2d_naive", c.device_name(), s.error());
    }
    return r;
  }
};

}  // namespace

std::unique_ptr<Case> storage_read_case() {
  return std::make_unique<StorageReadCase>();
}
std::unique_ptr<Case> storage_to_device_case() {
  return std::make_unique<StorageToDeviceCase>();
}

}  // namespace acco::bench::detail
