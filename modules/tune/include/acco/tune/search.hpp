// The tuner's decisions, pure and fed by a measurement function so they are tested without
// hardware: a budgeted coordinate descent over the engine's chunk size, slots, queues and host
// copy threads per path (and over the storage reader's block size, depth and threads on one
// file), then a confirmation of the winner against the defaults, interleaved.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/io/reader.hpp"
#include "acco/transfer/profile.hpp"
#include "acco/tune/tune_profile.hpp"

namespace acco::tune {

// One path to tune on one device.
struct Target {
  std::string device;
  std::string path;  // one of kPaths
  // The engine's defaults for the device (transfer::default_profile): where the search starts and
  // what a winner must beat. Unstaged pageable copies on the host backend, whose DMAs are memcpys.
  transfer::Profile defaults = {};
};

// Seconds for one copy of `bytes` on `target` with `profile` (a median of a few copies, say).
// An error drops the candidate (it is recorded with rate 0); an error for the defaults fails the
// path.
using Measure = std::function<Result<double>(const Target& target, const transfer::Profile& profile,
                                             std::uint64_t bytes)>;
// Monotonic time; steady_clock in the tool, a fake in tests.
using Clock = std::function<std::chrono::steady_clock::time_point()>;
// True when the run should stop now (SIGINT); checked before every measurement.
using StopRequested = std::function<bool()>;
using Progress = std::function<void(std::string_view line)>;

struct SearchSpace {
  std::vector<std::size_t> chunk_bytes = {256 << 10, 512 << 10, 1 << 20, 2 << 20,
                                          4 << 20,   8 << 20,   16 << 20};
  std::vector<int> slots = {2, 3, 4, 6, 8};
  std::vector<int> queues = {1, 2, 3, 4};
  std::vector<int> host_copy_threads = {1, 2};  // 1..N, N = the host's CPUs (tune_run)
  // Pageable paths only, tried first: off hands pageable memory to the device's own copy (the
  // plain path), after which the staging axes (chunk, slots, threads) are not swept.
  std::vector<bool> stage_pageable = {true, false};
};

// The storage reader's axes, swept in this order from io::ReaderOptions' defaults.
struct ReaderSpace {
  std::vector<std::size_t> block_bytes = {64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20};
  std::vector<int> depth = {1, 4, 16, 64};
  std::vector<int> threads = {1, 2};
  // A candidate whose pinned staging (block x depth x threads) is above this is skipped, not
  // measured: 16 MiB x 64 would pin 1 GiB for a read of --bytes.
  std::size_t max_staging_bytes = std::size_t{256} << 20;
};

struct SearchOptions {
  SearchSpace space;
  ReaderSpace reader_space;                       // search_reader only
  std::uint64_t bytes = std::uint64_t{64} << 20;  // copy size of the search and confirmation
  std::vector<std::uint64_t> fit_bytes = {std::uint64_t{1} << 20, std::uint64_t{4} << 20,
                                          std::uint64_t{16} << 20, std::uint64_t{64} << 20};
  int confirm_repeats = 3;
  // The smallest gain that counts: a winner is kept only when its median beats the defaults'
  // median by more than max(min_gain, the larger relative spread (max - min) / median of the two
  // confirmation series), and its slowest repeat beats the defaults' fastest.
  double min_gain = 0.02;
  std::chrono::nanoseconds budget = std::chrono::seconds(60);
  // The share of the budget kept back for confirmation and fit, so a search that uses its whole
  // share still ends with confirmed choices.
  double confirm_share = 0.3;
};

struct SearchOutcome {
  std::vector<PathTuning> paths;
  bool budget_exhausted = false;
  bool interrupted = false;  // StopRequested said so; `paths` is then incomplete and not to save
};

// Tunes every target in turn. Per path: measures the defaults, then for each axis in the order
// (stage_pageable on pageable paths), chunk, slots, queues, host_copy_threads tries every value
// with the others at the best so far and keeps the fastest (one pass). When the search share of the
// budget runs out the best so far is kept and budget_exhausted set. Then confirm_repeats rounds of
// defaults and winner, in alternating order, decide `tuned` by the noise rule above, and the chosen
// profile is timed at fit_bytes for the alpha/beta fit. A path whose confirmation cannot run keeps
// the defaults (tuned = false, confirmed = false). Errors: kInvalidArgument for no targets or an
// empty axis; the defaults' measurement error for a path, with the path named.
[[nodiscard]] Result<SearchOutcome> search(const std::vector<Target>& targets,
                                           const SearchOptions& options, const Measure& measure,
                                           const Clock& clock, const StopRequested& stop = {},
                                           const Progress& progress = {});

// The storage reader on one file: `bytes` of `file` per measurement.
struct ReaderTarget {
  std::string file;
  std::uint64_t bytes = 0;
};

// Seconds to read `bytes` of the target's file with `options` (io::Reader::read_to_device: file
// -> pinned staging -> device memory, as storage_h2d and sched::FileLoader read). An error drops
// the candidate (recorded with rate 0); an error for the defaults fails the search.
using ReaderMeasure =
    std::function<Result<double>(const io::ReaderOptions& options, std::uint64_t bytes)>;

struct ReaderSearchOutcome {
  ReaderTuning reader;
  bool budget_exhausted = false;
  bool interrupted = false;  // StopRequested said so; `reader` is then incomplete
};

// The same search and confirmation as search() for the reader, within options.budget (its
// confirm_share kept back for the confirmation) over options.reader_space: the defaults, then
// block_bytes, depth and threads in turn, skipping candidates above max_staging_bytes or that
// io::validate refuses. No fit. Errors: kInvalidArgument for no file, fewer than 4096 bytes or
// an empty axis; the defaults' measurement error, with the file named.
[[nodiscard]] Result<ReaderSearchOutcome> search_reader(
    const ReaderTarget& target, const SearchOptions& options, const ReaderMeasure& measure,
    const Clock& clock, const StopRequested& stop = {}, const Progress& progress = {});

// The noise rule on two series of rates: {gain, noise, keep}. Pure.
struct Verdict {
  double gain = 0;
  double noise = 0;
  bool keep_winner = false;
};
[[nodiscard]] Verdict judge(const std::vector<double>& default_rates,
                            const std::vector<double>& winner_rates, double min_gain);

// The median of a series of measured rates (core::stats), 0 for none (a path the search did
// not confirm): the gain's and the profile text's rule.
[[nodiscard]] double median_rate(const std::vector<double>& rates);

}  // namespace acco::tune
