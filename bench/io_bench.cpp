// Storage benchmark, side by side in one run on the same file:
//  (a) file -> host: acco's reader (io_uring, O_DIRECT, registered buffers and files, data left
//      in staging) against fio's io_uring engine with the same block size, depth and flags
//      (direct=1 fixedbufs=1 registerfiles=1, Debian's fio, run only when installed), per block
//      size and queue depth;
//  (b) file -> device over an emulated link (host backend, 25 GB/s by default): the reader's
//      pipeline (reads overlapping the DMA of earlier chunks) against the naive path, a buffered
//      read() of the whole file into pageable memory and then a plain copy, against
//      min(disk rate, link rate), the disk rate measured at the same settings (the best of (a))
//      in the same loop.
// The page cache is dropped before every buffered case when this process may (root); the table
// says whether it could. Prints tables and writes JSON ("acco.io-bench/1"). Not a test.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "acco/core/result.hpp"
#include "acco/core/units.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/io/baseline.hpp"
#include "acco/io/reader.hpp"
#include "acco/transfer/engine.hpp"

namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kSchema = "acco.io-bench/1";

struct Options {
  std::string file = "acco-io-bench.dat";
  std::string create = "1GiB";  // written when the file is missing or smaller
  std::vector<std::string> blocks = {"64KiB", "1MiB", "4MiB"};
  std::vector<int> depths = {1, 8, 32};
  std::string link = "25GB/s";
  int reps = 3;  // each point measured this often, alternating with fio, the best kept
  std::string json;
};

struct Point {
  std::string key;
  std::string what;
  std::size_t block = 0;
  int depth = 0;
  double bytes_per_second = 0;
  std::string why;  // not measured: why
  Json detail;
  std::vector<double> samples = {};  // every run's rate, for the noise band
  std::string warning = {};          // measured, but too short to time (fio's whole milliseconds)
};

Point ours_to_host(acco::device::Device& device, const std::string& file, std::size_t block,
                   int depth, int reps) {
  Point p{fmt::format("read_{}_qd{}", block, depth), "acco io_uring", block, depth, 0, {}, {}};
  acco::io::ReaderOptions o;
  o.block_bytes = block;
  o.depth = depth;
  auto reader = acco::io::Reader::create(device, o);
  if (!reader) {
    p.why = reader.error().message;
    return p;
  }
  for (int r = 0; r < reps; ++r) {
    auto s = (*reader)->read_discard({{file, 0, std::nullopt}});
    if (!s) {
      p.why = s.error().message;
      return p;
    }
    p.samples.push_back(s->bytes_per_second());
    if (s->bytes_per_second() > p.bytes_per_second) {
      p.bytes_per_second = s->bytes_per_second();
      p.detail = acco::io::to_json(*s);
    }
  }
  return p;
}

Point fio_to_host(const std::string& file, std::uint64_t size, std::size_t block, int depth,
                  int reps) {
  Point p{fmt::format("fio_read_{}_qd{}", block, depth), "fio io_uring", block, depth, 0, {}, {}};
  if (std::system("command -v fio >/dev/null 2>&1") != 0) {
    p.why = "fio is not installed (Debian package fio)";
    return p;
  }
  const std::string cmd = fmt::format(
      "fio --name=acco --filename={} --rw=read --bs={} --iodepth={} --ioengine=io_uring "
      "--direct=1 --fixedbufs=1 --registerfiles=1 --size={} --numjobs=1 --thread "
      "--output-format=json 2>&1",
      file, block, depth, size);
  for (int r = 0; r < reps; ++r) {
    FILE* pipe = ::popen(cmd.c_str(), "r");
    if (pipe == nullptr) {
      p.why = "cannot run fio";
      return p;
    }
    std::string out;
    std::array<char, 4096> buf{};
    while (std::fgets(buf.data(), static_cast<int>(buf.size()), pipe) != nullptr) {
      out += buf.data();
    }
    ::pclose(pipe);
    const auto brace = out.find('{');
    const auto j =
        brace == std::string::npos ? Json() : Json::parse(out.substr(brace), nullptr, false);
    if (j.is_discarded() || !j.contains("jobs") || j["jobs"].empty()) {
      p.why = "fio output not understood: " + out.substr(0, 200);
      return p;
    }
    const auto& read = j["jobs"][0]["read"];
    const double bw = read.value("bw_bytes", 0.0);
    // fio times in whole milliseconds: under 200 ms its rate is off by more than 0.5 %.
    if (const double ms = read.value("runtime", 0.0); ms < 200) {
      p.warning =
          fmt::format("fio ran {:.0f} ms, too short to time to 0.5 % (use a larger --create)", ms);
    }
    p.samples.push_back(bw);
    p.bytes_per_second = std::max(p.bytes_per_second, bw);
  }
  return p;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The ratio's band from both sides' spreads over their runs, [ours min / fio max, ours max / fio
// min], and "same within noise" when the spreads overlap (as acco bench's peer ratio).
std::string ratio_band(const Point& ours, const Point& fio) {
  if (!ours.why.empty() || !fio.why.empty() || ours.samples.empty() || fio.samples.empty()) {
    return {};
  }
  const auto [omin, omax] = std::minmax_element(ours.samples.begin(), ours.samples.end());
  const auto [fmin, fmax] = std::minmax_element(fio.samples.begin(), fio.samples.end());
  if (*fmin <= 0 || *fmax <= 0) {
    return {};
  }
  const bool overlap = *omin <= *fmax && *fmin <= *omax;
  return fmt::format("({:.2f}-{:.2f}){}", *omin / *fmax, *omax / *fmin,
                     overlap ? " same within noise" : "");
}

void print_point(const std::string& block, int depth, const Point& ours, const Point& fio) {
  const auto rate = [](const Point& p) {
    return p.why.empty() ? acco::units::format_rate(p.bytes_per_second) : std::string("-");
  };
  fmt::print("  {:>8} {:>5} {:>14} {:>14} {:>8} {}\n", block, depth, rate(ours), rate(fio),
             ours.why.empty() && fio.why.empty() && fio.bytes_per_second > 0
                 ? fmt::format("{:.2f}", ours.bytes_per_second / fio.bytes_per_second)
                 : "-",
             ratio_band(ours, fio));
  for (const Point* p : {&ours, &fio}) {
    if (!p->why.empty()) {
      fmt::print("    {}: {}\n", p->what, p->why);
    } else if (!p->warning.empty()) {
      fmt::print("    {}: {}\n", p->what, p->warning);
    }
  }
}

// `best` becomes `p` when `p` is faster or failed (a failure is kept); every run's rate stays in
// `samples`.
void keep_best(Point& best, const Point& p) {
  if (!best.why.empty()) {
    return;
  }
  auto samples = std::move(best.samples);
  samples.insert(samples.end(), p.samples.begin(), p.samples.end());
  const std::string warning = best.warning.empty() ? p.warning : best.warning;
  if (!p.why.empty() || p.bytes_per_second > best.bytes_per_second) {
    best = p;
  }
  best.samples = std::move(samples);
  best.warning = warning;
}

struct BestPoint {
  double disk_rate = 0;  // the best of acco and fio at any point
  double rate = 0;       // acco's best
  std::size_t block = std::size_t{1} << 20;
  int depth = 8;
};

// (a) file -> host: every block size and depth, acco then fio; the table, the JSON points.
acco::Result<BestPoint> host_sweep(const Options& o, acco::device::Device& device,
                                   std::uint64_t bytes, Json& out) {
  BestPoint best;
  fmt::print(
      "(a) file -> host: {} ({}), O_DIRECT, best of {} (acco and fio alternating); in brackets the "
      "ratio's band from both sides' runs (min and max)\n",
      o.file, acco::units::format_bytes(bytes), o.reps);
  fmt::print("  {:>8} {:>5} {:>14} {:>14} {:>8}\n", "block", "depth", "acco", "fio", "acco/fio");
  Json host_points = Json::array();
  for (const auto& b : o.blocks) {
    const auto block = acco::units::parse_bytes(b);
    if (!block) {
      return acco::fail(acco::Errc::kUsage, fmt::format("--blocks '{}': expected a size", b));
    }
    for (const int depth : o.depths) {
      // One run of each per round, the order alternating, so a drift of the disk's rate falls
      // on both sides alike.
      Point ours = ours_to_host(device, o.file, *block, depth, 1);
      Point fio = fio_to_host(o.file, bytes, *block, depth, 1);
      for (int r = 1; r < o.reps; ++r) {
        if (r % 2 == 0) {
          keep_best(ours, ours_to_host(device, o.file, *block, depth, 1));
          keep_best(fio, fio_to_host(o.file, bytes, *block, depth, 1));
        } else {
          keep_best(fio, fio_to_host(o.file, bytes, *block, depth, 1));
          keep_best(ours, ours_to_host(device, o.file, *block, depth, 1));
        }
      }
      best.disk_rate =
          std::max(best.disk_rate, std::max(ours.bytes_per_second, fio.bytes_per_second));
      if (ours.bytes_per_second > best.rate) {
        best.rate = ours.bytes_per_second;
        best.block = *block;
        best.depth = depth;
      }
      print_point(b, depth, ours, fio);
      for (const Point* p : {&ours, &fio}) {
        host_points.push_back({{"key", p->key},
                               {"what", p->what},
                               {"block_bytes", p->block},
                               {"depth", p->depth},
                               {"bytes_per_second", p->bytes_per_second},
                               {"samples_bytes_per_second", p->samples},
                               {"warning", p->warning},
                               {"why", p->why},
                               {"detail", p->detail}});
      }
    }
  }
  out["file_to_host"] = host_points;
  return best;
}

}  // namespace

int run(int argc, char** argv) {
  Options o;
  CLI::App app{"acco io bench: acco's reader against fio and the naive read-then-copy path"};
  app.add_option("--file", o.file, "the file read (default ./acco-io-bench.dat)");
  app.add_option("--create", o.create, "its size, written when missing or smaller (1GiB)");
  app.add_option("--blocks", o.blocks, "block sizes (64KiB 1MiB 4MiB)");
  app.add_option("--depths", o.depths, "queue depths (1 8 32)");
  app.add_option("--link", o.link, "the emulated host-device link (25GB/s)");
  app.add_option("--reps", o.reps, "runs per point, the best kept (3)");
  app.add_option("--json", o.json, "write results here");
  CLI11_PARSE(app, argc, argv);

  const auto size = acco::units::parse_bytes(o.create);
  if (!size || *size < (std::uint64_t{16} << 20)) {
    fmt::print(stderr, "io bench: --create '{}': expected a size of at least 16MiB\n", o.create);
    return 64;
  }
  if (auto created = acco::io::fill_test_file(o.file, *size); !created) {
    fmt::print(stderr, "io bench: {}\n", created.error().message);
    return 73;
  }
  const std::uint64_t bytes = std::filesystem::file_size(o.file);
  const auto link = acco::device::parse_link(o.link);
  if (!link) {
    fmt::print(stderr, "io bench: --link: {}\n", link.error().message);
    return 64;
  }
  acco::device::HostBackendOptions host;
  host.link = *link;
  auto backend = acco::device::make_host_backend(host);
  if (!backend) {
    fmt::print(stderr, "io bench: {}\n", backend.error().message);
    return 70;
  }
  acco::device::Device& device = *(*backend)->devices().front();

  Json out = {{"schema", kSchema}, {"file", o.file}, {"bytes", bytes}, {"link", o.link}};
  auto swept = host_sweep(o, device, bytes, out);
  if (!swept) {
    fmt::print(stderr, "io bench: {}\n", swept.error().message);
    return 64;
  }
  const BestPoint best = *swept;
  // (b) file -> device
  auto engine = acco::transfer::Engine::create(device);
  auto dst = device.allocate(bytes);
  if (!engine || !dst) {
    fmt::print(stderr, "io bench: cannot set up the emulated device\n");
    return 70;
  }
  // The reader's settings: the best point of (a); the disk's rate at them is measured again
  // here, alternating with the device reads, so the bound is the same run's.
  acco::io::ReaderOptions ro;
  ro.block_bytes = best.block;
  ro.depth = best.depth;
  auto reader = acco::io::Reader::create(device, ro, engine->get());
  if (!reader) {
    fmt::print(stderr, "io bench: {}\n", reader.error().message);
    return 70;
  }
  double ours_rate = 0;
  double disk_here = 0;
  for (int r = 0; r < o.reps; ++r) {
    auto d = (*reader)->read_discard({{o.file, 0, std::nullopt}});
    auto s = (*reader)->read_to_device((*dst)->data(), bytes, {{o.file, 0, std::nullopt}});
    if (!s || !d) {
      fmt::print(stderr, "io bench: {}\n", (!s ? s.error() : d.error()).message);
      return 70;
    }
    ours_rate = std::max(ours_rate, s->bytes_per_second());
    disk_here = std::max(disk_here, d->bytes_per_second());
  }
  double naive_rate = 0;
  bool dropped = true;
  for (int r = 0; r < o.reps; ++r) {
    dropped = acco::io::drop_page_cache() && dropped;
    const auto t = std::chrono::steady_clock::now();
    std::vector<char> pageable(bytes);
    if (auto s = acco::io::read_buffered(o.file, pageable.data(), bytes); !s) {
      fmt::print(stderr, "io bench: the naive read: {}\n", s.error().message);
      return 70;
    }
    if (!device.copy((*dst)->data(), pageable.data(), bytes)) {
      fmt::print(stderr, "io bench: the naive copy failed\n");
      return 70;
    }
    naive_rate = std::max(naive_rate, static_cast<double>(bytes) / seconds_since(t));
  }
  const double bound =
      link->bytes_per_second > 0 ? std::min(disk_here, link->bytes_per_second) : disk_here;
  fmt::print("\n(b) file -> device over an emulated {} link, best of {} (page cache dropped: {})\n",
             o.link, o.reps, dropped ? "yes" : "no, not permitted");
  fmt::print("  acco reader pipeline ({} x {})  {:>14}  {:.0f} % of min(disk, link) {}\n",
             acco::units::format_bytes(best.block), best.depth, acco::units::format_rate(ours_rate),
             100 * ours_rate / bound, acco::units::format_rate(bound));
  fmt::print("  naive read() + plain copy          {:>14}  acco/naive {:.2f}x\n",
             acco::units::format_rate(naive_rate), ours_rate / naive_rate);
  out["file_to_device"] = {
      {"acco_bytes_per_second", ours_rate}, {"naive_bytes_per_second", naive_rate},
      {"block_bytes", best.block},          {"depth", best.depth},
      {"disk_bytes_per_second", disk_here}, {"best_disk_bytes_per_second", best.disk_rate},
      {"bound_bytes_per_second", bound},    {"page_cache_dropped", dropped}};
  if (!o.json.empty()) {
    std::ofstream(o.json) << out.dump(2) << "\n";
  }
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (...) {
    std::fputs("io bench: unexpected failure\n", stderr);
    return 70;
  }
}
