// Transfer engine benchmark on the host backend: the engine's strategies side by side with the
// plain paths they replace, in one run on the same data. (a) a 256 MiB pageable buffer to and
// from the device: engine (pipelined staging) vs stage-then-copy vs the backend's own pageable
// copy; (b) 10,000 copies of 4 KiB: batched vs one by one. Prints a table, writes JSON
// ("acco.xfer-bench/1"). Not a test: nothing here asserts a speed.
//
// On the host backend the emulated DMA is itself a memcpy, so the link can only be reached when
// it is slower than this machine's memcpy. The run measures memcpy first and says which limit
// applies; --link auto sets the link to a fraction of memcpy so the ratios mean something.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "acco/core/file.hpp"
#include "acco/core/stats.hpp"
#include "acco/core/units.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/transfer/engine.hpp"

namespace {

using acco::Errc;
using acco::Error;
using acco::Result;
using acco::Status;
using Clock = std::chrono::steady_clock;

constexpr const char* kSchema = "acco.xfer-bench/1";

struct Options {
  std::string link = "25GB/s";
  double auto_fraction = 0.5;
  std::size_t bytes = std::size_t{256} << 20;
  int reps = 5;
  std::size_t small_count = 10'000;
  std::size_t small_bytes = 4096;
  std::string json;
  std::string profile;
};

struct Stats {
  std::vector<double> seconds;
  double median = 0;
  double min = 0;
  double max = 0;
  double cov = 0;  // standard deviation over mean
};

Stats summarize(std::vector<double> seconds) {
  Stats s;
  // Clock differences are finite and non-negative, so only an empty set has no summary.
  if (auto summary = acco::core::stats::summarize(seconds)) {
    s.median = summary->median;
    s.min = summary->min;
    s.max = summary->max;
    s.cov = summary->cov;
  }
  s.seconds = std::move(seconds);
  return s;
}

// One warm-up, then `reps` timed runs on the host clock: every path here involves the host (a
// pageable end, a synchronous plain copy), so device events would not cover the whole cost.
Result<Stats> time_runs(int reps, const std::function<Status()>& run) {
  ACCO_RETURN_IF_ERROR(run());
  std::vector<double> seconds;
  for (int i = 0; i < reps; ++i) {
    const Clock::time_point start = Clock::now();
    ACCO_RETURN_IF_ERROR(run());
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return summarize(std::move(seconds));
}

// Single-thread memcpy between two pre-faulted buffers of `bytes`, median of 5.
double measure_memcpy(std::size_t bytes) {
  std::vector<std::byte> a(bytes, std::byte{1});
  std::vector<std::byte> b(bytes, std::byte{2});
  std::vector<double> seconds;
  for (int i = 0; i < 6; ++i) {
    const Clock::time_point start = Clock::now();
    std::memcpy(i % 2 == 0 ? b.data() : a.data(), i % 2 == 0 ? a.data() : b.data(), bytes);
    if (i > 0) {  // the first pass warms TLBs and caches
      seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
  }
  return static_cast<double>(bytes) / summarize(seconds).median;
}

void fill(std::byte* data, std::size_t bytes, std::uint64_t seed) {
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (std::size_t i = 0; i < bytes; i += 8) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    const std::uint64_t word = state * 0x2545F4914F6CDD1DULL;
    std::memcpy(data + i, &word, std::min<std::size_t>(8, bytes - i));
  }
}

struct Row {
  Row(std::string key, std::string p, std::string dir, std::size_t n)
      : case_key(std::move(key)), path(std::move(p)), direction(std::move(dir)), bytes(n) {}
  std::string case_key;   // "pageable-h2d"
  std::string path;       // "engine", "stage-then-copy", ...
  std::string direction;  // "host-to-device"
  std::size_t bytes = 0;  // per repetition
  Stats stats;
  std::string strategy;   // what the engine did, "" for plain paths
  nlohmann::json record;  // the engine's record, null for plain paths
  bool verified = false;
  std::string baseline;  // path the speed-up is against
  double speedup = 0;
};

class Bench {
 public:
  Bench(const Options& options, acco::device::Device& device, acco::transfer::Engine& engine)
      : options_(options), device_(device), engine_(engine) {}

  Status run_all() {
    ACCO_RETURN_IF_ERROR(large_copies());
    ACCO_RETURN_IF_ERROR(small_copies());
    return status_;
  }
  [[nodiscard]] const std::vector<Row>& rows() const { return rows_; }

 private:
  // Times one path and keeps its row; after a failure, later rows are skipped and run_all
  // returns the first error.
  void add_row(Row row, const std::function<Status()>& run, const std::function<bool()>& verify,
               const std::function<void()>& reset) {
    if (!status_) {
      return;
    }
    std::fprintf(stderr, "  %s / %s ...\n", row.case_key.c_str(), row.path.c_str());
    reset();
    auto stats = time_runs(options_.reps, run);
    if (!stats) {
      status_ =
          tl::unexpected(std::move(stats.error()).with_context(row.case_key + " " + row.path));
      return;
    }
    row.stats = *stats;
    // Outside the timed region: the last repetition must have moved the right bytes.
    row.verified = verify();
    rows_.push_back(std::move(row));
  }

  // Puts what the engine did in its last copy on the row just added. Kept as a plain record while
  // timing: converting it to JSON per copy would cost more than a small copy does.
  void note_engine() {
    if (status_ && !rows_.empty()) {
      rows_.back().strategy = std::string(acco::transfer::to_string(last_.strategy));
      rows_.back().record = acco::transfer::to_json(last_);
    }
  }

  Status engine_copy(void* dst, const void* src, std::size_t bytes,
                     std::optional<acco::transfer::Strategy> force = std::nullopt) {
    ACCO_ASSIGN_OR_RETURN(auto transfer, engine_.copy(dst, src, bytes, {force}));
    ACCO_ASSIGN_OR_RETURN(last_, transfer.wait());
    return {};
  }

  Status large_copies() {
    const std::size_t n = options_.bytes;
    std::vector<std::byte> source(n);
    std::vector<std::byte> sink(n);
    fill(source.data(), n, 1);
    std::fill(sink.begin(), sink.end(), std::byte{0});
    ACCO_ASSIGN_OR_RETURN(const auto device_buffer, device_.allocate(n));
    ACCO_ASSIGN_OR_RETURN(const auto pinned,
                          device_.allocate_host(n, acco::device::MemoryKind::kPinned));
    auto* dev = static_cast<std::byte*>(device_buffer->data());
    auto* pin = static_cast<std::byte*>(pinned->data());
    std::memset(pin, 0, n);  // fault the pinned pages in now, not in the first timed run
    std::vector<std::byte> scratch(n);

    const auto device_matches_source = [&] {
      if (!device_.copy(scratch.data(), dev, n)) {
        return false;
      }
      return std::memcmp(scratch.data(), source.data(), n) == 0;
    };
    const auto clear_device = [&] {
      std::fill(scratch.begin(), scratch.end(), std::byte{0});
      (void)device_.copy(dev, scratch.data(), n);
    };
    const auto sink_matches_source = [&] {
      return std::memcmp(sink.data(), source.data(), n) == 0;
    };
    const auto clear_sink = [&] { std::fill(sink.begin(), sink.end(), std::byte{0}); };

    // Host to device.
    Row base("pageable-h2d", "", "host-to-device", n);
    // The DMA alone, from pinned memory: the ceiling every pageable path is measured against.
    add_row(
        Row("pinned-h2d", "pinned-dma", "host-to-device", n),
        [&] { return device_.copy(dev, pin, n); }, [] { return true; },
        [&] { std::memcpy(pin, source.data(), n); });
    Row r = base;
    r.path = "backend-pageable";
    add_row(
        r, [&] { return device_.copy(dev, source.data(), n); }, device_matches_source,
        clear_device);
    r = base;
    r.path = "stage-then-copy";
    add_row(
        r,
        [&] {
          std::memcpy(pin, source.data(), n);
          return device_.copy(dev, pin, n);
        },
        device_matches_source, clear_device);
    r = base;
    r.path = "engine";
    r.baseline = "stage-then-copy";
    add_row(
        r, [&] { return engine_copy(dev, source.data(), n); }, device_matches_source, clear_device);
    note_engine();

    // Device to host: the device holds `source` now.
    if (!device_.copy(dev, source.data(), n)) {
      return acco::fail(Errc::kDeviceError, "cannot load the device buffer");
    }
    base = Row("pageable-d2h", "", "device-to-host", n);
    add_row(
        Row("pinned-d2h", "pinned-dma", "device-to-host", n),
        [&] { return device_.copy(pin, dev, n); }, [] { return true; }, [] {});
    r = base;
    r.path = "backend-pageable";
    add_row(
        r, [&] { return device_.copy(sink.data(), dev, n); }, sink_matches_source, clear_sink);
    r = base;
    r.path = "stage-then-copy";
    add_row(
        r,
        [&]() -> Status {
          ACCO_RETURN_IF_ERROR(device_.copy(pin, dev, n), "dma");
          std::memcpy(sink.data(), pin, n);
          return Status{};
        },
        sink_matches_source, clear_sink);
    r = base;
    r.path = "engine";
    r.baseline = "stage-then-copy";
    add_row(
        r, [&] { return engine_copy(sink.data(), dev, n); }, sink_matches_source, clear_sink);
    note_engine();
    return {};
  }

  Status small_copies() {
    const std::size_t count = options_.small_count;
    const std::size_t item = options_.small_bytes;
    const std::size_t n = count * item;
    std::vector<std::byte> source(n);
    std::vector<std::byte> sink(n);
    fill(source.data(), n, 2);
    std::vector<std::byte> scratch(n);
    ACCO_ASSIGN_OR_RETURN(const auto device_buffer, device_.allocate(n));
    auto* dev = static_cast<std::byte*>(device_buffer->data());
    // Items land in a scattered order so nothing can coalesce them by accident: a stride
    // coprime with the count visits every slot once.
    std::size_t stride = 7919;
    while (std::gcd(stride, count) != 1) {
      ++stride;
    }
    const auto slot = [&](std::size_t i) { return ((i * stride) % count) * item; };

    const auto device_ok = [&] {
      if (!device_.copy(scratch.data(), dev, n)) {
        return false;
      }
      for (std::size_t i = 0; i < count; ++i) {
        if (std::memcmp(scratch.data() + slot(i), source.data() + i * item, item) != 0) {
          return false;
        }
      }
      return true;
    };
    const auto clear_device = [&] {
      std::fill(scratch.begin(), scratch.end(), std::byte{0});
      (void)device_.copy(dev, scratch.data(), n);
    };
    const auto sink_ok = [&] {
      for (std::size_t i = 0; i < count; ++i) {
        if (std::memcmp(sink.data() + i * item, source.data() + i * item, item) != 0) {
          return false;
        }
      }
      return true;
    };
    const auto clear_sink = [&] { std::fill(sink.begin(), sink.end(), std::byte{0}); };

    for (const bool to_device : {true, false}) {
      const std::string key = to_device ? "small-h2d" : "small-d2h";
      if (!to_device) {
        // The device holds item i at slot(i); the copies bring them back in order.
        for (std::size_t i = 0; i < count; ++i) {
          std::memcpy(scratch.data() + slot(i), source.data() + i * item, item);
        }
        if (!device_.copy(dev, scratch.data(), n)) {
          return acco::fail(Errc::kDeviceError, "cannot load the device buffer");
        }
      }
      const auto dst = [&](std::size_t i) -> void* {
        return to_device ? static_cast<void*>(dev + slot(i)) : sink.data() + i * item;
      };
      const auto src = [&](std::size_t i) -> const void* {
        return to_device ? static_cast<const void*>(source.data() + i * item) : dev + slot(i);
      };
      const auto verify = to_device ? std::function<bool()>(device_ok) : sink_ok;
      const auto reset = to_device ? std::function<void()>(clear_device) : clear_sink;
      const Row base(key, "", to_device ? "host-to-device" : "device-to-host", n);

      Row r = base;
      r.path = "plain-one-by-one";
      add_row(
          r,
          [&]() -> Status {
            for (std::size_t i = 0; i < count; ++i) {
              ACCO_RETURN_IF_ERROR(device_.copy(dst(i), src(i), item), "copy");
            }
            return {};
          },
          verify, reset);
      // The engine's own choice per copy: zero-copy where device memory is host-mapped.
      r = base;
      r.path = "engine-one-by-one";
      r.baseline = "plain-one-by-one";
      add_row(
          r,
          [&]() -> Status {
            for (std::size_t i = 0; i < count; ++i) {
              ACCO_RETURN_IF_ERROR(engine_copy(dst(i), src(i), item), "copy");
            }
            return {};
          },
          verify, reset);
      note_engine();
      // Each copy through a queue and the link, as on a GPU without a host mapping.
      r = base;
      r.path = "engine-one-by-one-queued";
      r.baseline = "plain-one-by-one";
      add_row(
          r,
          [&]() -> Status {
            for (std::size_t i = 0; i < count; ++i) {
              ACCO_RETURN_IF_ERROR(
                  engine_copy(dst(i), src(i), item, acco::transfer::Strategy::kPipelined), "copy");
            }
            return {};
          },
          verify, reset);
      note_engine();
      r = base;
      r.path = "engine-batched";
      r.baseline = "plain-one-by-one";
      add_row(
          r,
          [&]() -> Status {
            acco::transfer::Batch batch = engine_.batch();
            for (std::size_t i = 0; i < count; ++i) {
              ACCO_RETURN_IF_ERROR(batch.add(dst(i), src(i), item), "add");
            }
            ACCO_ASSIGN_OR_RETURN(auto transfer, batch.submit());
            ACCO_ASSIGN_OR_RETURN(last_, transfer.wait());
            return {};
          },
          verify, reset);
      note_engine();
    }
    return {};
  }

  const Options& options_;
  acco::device::Device& device_;
  acco::transfer::Engine& engine_;
  std::vector<Row> rows_;
  Status status_;
  acco::transfer::CopyRecord last_;
};

double rate(const Row& row) {
  return row.stats.median > 0 ? static_cast<double>(row.bytes) / row.stats.median : 0;
}

void fill_speedups(std::vector<Row>& rows) {
  for (Row& row : rows) {
    if (row.baseline.empty()) {
      continue;
    }
    for (const Row& other : rows) {
      if (other.case_key == row.case_key && other.path == row.baseline && rate(other) > 0) {
        row.speedup = rate(row) / rate(other);
      }
    }
  }
}

std::string gbps(double bytes_per_second) {
  return fmt::format("{:.2f}", bytes_per_second / 1e9);
}

void print_table(const std::vector<Row>& rows, double link) {
  std::printf("\n%-12s %-25s %-10s %9s %9s %9s %6s %8s %7s %8s %s\n", "case", "path", "strategy",
              "median", "min", "max", "CoV", "GB/s", "%link", "speed-up", "ok");
  for (const Row& row : rows) {
    const std::string speedup =
        row.speedup > 0 ? fmt::format("{:.2f}x", row.speedup) : std::string("");
    const std::string link_pct = link > 0 ? fmt::format("{:.0f}%", 100 * rate(row) / link) : "-";
    std::printf(
        "%-12s %-25s %-10s %7.2fms %7.2fms %7.2fms %5.1f%% %8s %7s %8s %s\n", row.case_key.c_str(),
        row.path.c_str(), row.strategy.empty() ? "-" : row.strategy.c_str(), row.stats.median * 1e3,
        row.stats.min * 1e3, row.stats.max * 1e3, row.stats.cov * 100, gbps(rate(row)).c_str(),
        link_pct.c_str(), speedup.c_str(), row.verified ? "yes" : "NO");
  }
  std::printf("speed-up: engine against stage-then-copy; small copies against plain one by one.\n");
}

Result<Options> parse(int argc, char** argv) {
  Options options;
  CLI::App app{
      "acco-transfer-bench: the transfer engine against the plain paths, on the host backend"};
  app.add_option("--link", options.link,
                 "emulated link: pcie4x16, 25GB/s, 25GB/s,2us, unlimited, or auto (a fraction of "
                 "this machine's memcpy rate)")
      ->capture_default_str();
  app.add_option("--link-fraction", options.auto_fraction, "fraction of memcpy for --link auto")
      ->check(CLI::Range(0.05, 1.0))
      ->capture_default_str();
  app.add_option("--bytes", options.bytes, "buffer for the pageable cases")
      ->check(CLI::Range(std::size_t{1} << 20, std::size_t{16} << 30))
      ->capture_default_str();
  app.add_option("--reps", options.reps, "timed repetitions (median, min, max, CoV)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--small-count", options.small_count, "small copies")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
  app.add_option("--small-bytes", options.small_bytes, "bytes per small copy")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--profile", options.profile, "engine profile (JSON) instead of the defaults");
  app.add_option("--json", options.json, "write results to FILE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::printf("%s", app.help().c_str());
    std::exit(0);
  } catch (const CLI::ParseError& e) {
    return acco::fail(Errc::kInvalidArgument, e.what());
  }
  return options;
}

int run(int argc, char** argv) {
  auto options = parse(argc, argv);
  if (!options) {
    std::fprintf(stderr, "acco-transfer-bench: %s\n", options.error().message.c_str());
    return 2;
  }
  std::fprintf(stderr, "measuring memcpy ...\n");
  const double memcpy_rate = measure_memcpy(std::min<std::size_t>(options->bytes, 256 << 20));

  acco::device::EmulatedLink link;
  const bool automatic = options->link == "auto";
  if (automatic) {
    link.bytes_per_second = options->auto_fraction * memcpy_rate;
    link.name = fmt::format("auto ({:.0f}% of memcpy)", options->auto_fraction * 100);
  } else {
    auto parsed = acco::device::parse_link(options->link);
    if (!parsed) {
      std::fprintf(stderr, "acco-transfer-bench: --link: %s\n", parsed.error().message.c_str());
      return 2;
    }
    link = *parsed;
  }
  acco::device::HostBackendOptions backend_options;
  backend_options.link = link;
  backend_options.memory_bytes_per_device = 2 * options->bytes + (std::uint64_t{1} << 30);
  auto backend = acco::device::make_host_backend(backend_options);
  if (!backend) {
    std::fprintf(stderr, "acco-transfer-bench: %s\n", backend.error().message.c_str());
    return 1;
  }
  acco::device::Device& device = *(*backend)->devices().front();
  acco::transfer::Profile profile;
  if (!options->profile.empty()) {
    auto loaded = acco::transfer::load_profile(options->profile);
    if (!loaded) {
      std::fprintf(stderr, "acco-transfer-bench: %s\n", loaded.error().message.c_str());
      return 2;
    }
    profile = *loaded;
  }
  auto engine = acco::transfer::Engine::create(device, profile);
  if (!engine) {
    std::fprintf(stderr, "acco-transfer-bench: %s\n", engine.error().message.c_str());
    return 1;
  }
  const acco::transfer::EngineInfo& info = (*engine)->info();
  const double link_rate = link.bytes_per_second;
  const bool link_bound = link_rate > 0 && link_rate < memcpy_rate;

  std::printf("host memcpy (1 thread):  %s\n", acco::units::format_rate(memcpy_rate).c_str());
  std::printf("emulated link:           %s per direction%s\n",
              link_rate > 0 ? acco::units::format_rate(link_rate).c_str() : "unlimited",
              automatic ? fmt::format(" ({})", link.name).c_str() : "");
  std::printf("limit that applies:      %s\n",
              link_bound ? "the link (slower than memcpy): % of link is meaningful"
                         : "memcpy: the emulated DMA is a memcpy here and cannot reach the link; "
                           "compare paths with each other, or use --link auto");
  const acco::transfer::PoolInfo& pool = info.pool;
  std::printf(
      "engine:                  %d queues, %d host copy thread(s); pool %d x %s %s, aligned %s, "
      "THP %s%s, pinned in %.1f ms (%s)\n",
      info.queues, info.host_copy_threads, pool.slots,
      acco::units::format_bytes(pool.slot_bytes).c_str(), acco::device::to_string(pool.kind),
      acco::units::format_bytes(pool.alignment_bytes).c_str(),
      pool.transparent_hugepage.empty() ? "n/a" : pool.transparent_hugepage.c_str(),
      pool.huge_page_bytes >= 0
          ? fmt::format(", {} on huge pages",
                        acco::units::format_bytes(static_cast<std::uint64_t>(pool.huge_page_bytes)))
                .c_str()
          : "",
      std::chrono::duration<double, std::milli>(pool.setup_time).count(),
      acco::units::format_rate(pool.pin_bytes_per_second()).c_str());

  Bench bench(*options, device, **engine);
  if (Status status = bench.run_all(); !status) {
    std::fprintf(stderr, "acco-transfer-bench: %s\n", status.error().message.c_str());
    return 1;
  }
  std::vector<Row> rows = bench.rows();
  fill_speedups(rows);
  print_table(rows, link_rate);

  if (!options->json.empty()) {
    nlohmann::json results = nlohmann::json::array();
    for (const Row& row : rows) {
      results.push_back({
          {"case", row.case_key},
          {"path", row.path},
          {"direction", row.direction},
          {"device", device.info().name},
          {"bytes", row.bytes},
          {"reps", row.stats.seconds.size()},
          {"seconds", row.stats.seconds},
          {"median_seconds", row.stats.median},
          {"min_seconds", row.stats.min},
          {"max_seconds", row.stats.max},
          {"cov", row.stats.cov},
          {"median_bytes_per_second", rate(row)},
          {"peak_bytes_per_second", link_rate},
          {"efficiency", link_rate > 0 ? rate(row) / link_rate : 0.0},
          {"strategy", row.strategy},
          {"record", row.record},
          {"baseline", row.baseline},
          {"speedup", row.speedup},
          {"verified", row.verified},
      });
    }
    const nlohmann::json out = {
        {"schema", kSchema},
        {"host",
         {{"memcpy_bytes_per_second", memcpy_rate}, {"cpus", std::thread::hardware_concurrency()}}},
        {"link",
         {{"spec", options->link},
          {"name", link.name},
          {"bytes_per_second", link_rate},
          {"latency_seconds", std::chrono::duration<double>(link.latency).count()},
          {"auto", automatic},
          {"auto_fraction", automatic ? options->auto_fraction : 0.0}}},
        {"limit", link_bound ? "link" : "memcpy"},
        {"engine",
         {{"profile", acco::transfer::to_json((*engine)->profile())},
          {"queues", info.queues},
          {"host_copy_threads", info.host_copy_threads},
          {"host_memcpy_bytes_per_second", info.host_memcpy_bytes_per_second},
          {"pool",
           {{"slot_bytes", pool.slot_bytes},
            {"slots", pool.slots},
            {"kind", acco::device::to_string(pool.kind)},
            {"alignment_bytes", pool.alignment_bytes},
            {"transparent_hugepage", pool.transparent_hugepage},
            {"huge_page_bytes", pool.huge_page_bytes},
            {"setup_seconds", std::chrono::duration<double>(pool.setup_time).count()},
            {"pin_seconds", std::chrono::duration<double>(pool.pin_time).count()}}}}},
        {"results", results},
    };
    if (Status written = acco::core::write_file_atomic(options->json, out.dump(2) + "\n");
        !written) {
      std::fprintf(stderr, "acco-transfer-bench: %s\n", written.error().message.c_str());
      return 1;
    }
  }
  const bool all_verified =
      std::all_of(rows.begin(), rows.end(), [](const Row& row) { return row.verified; });
  return all_verified ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  return run(argc, argv);
}
