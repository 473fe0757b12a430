#include "acco/sim/taskbench.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace acco::sim {
namespace {

constexpr std::array<std::pair<Pattern, std::string_view>, 12> kNames = {{
    {Pattern::kTrivial, "trivial"},
    {Pattern::kNoComm, "no_comm"},
    {Pattern::kStencil1d, "stencil_1d"},
    {Pattern::kStencil1dPeriodic, "stencil_1d_periodic"},
    {Pattern::kDom, "dom"},
    {Pattern::kTree, "tree"},
    {Pattern::kFft, "fft"},
    {Pattern::kAllToAll, "all_to_all"},
    {Pattern::kNearest, "nearest"},
    {Pattern::kSpread, "spread"},
    {Pattern::kRandomNearest, "random_nearest"},
    {Pattern::kRandomSpread, "random_spread"},
}};

constexpr std::array<std::pair<Kernel, std::string_view>, 3> kKernels = {{
    {Kernel::kComputeBound, "compute_bound"},
    {Kernel::kLoadImbalance, "load_imbalance"},
    {Kernel::kEmpty, "empty"},
}};

// Task Bench's period of the dependence sets of spread and the random patterns.
constexpr long kPeriod = 3;

// A number in [0, 1) from the values (splitmix64 over them): the same for the same values.
double uniform(std::initializer_list<long> values) {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (const long v : values) {
    h ^= static_cast<std::uint64_t>(v) + 0x9e3779b97f4a7c15ULL + (h << 6U) + (h >> 2U);
    h += 0x9e3779b97f4a7c15ULL;
    h = (h ^ (h >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27U)) * 0x94d049bb133111ebULL;
    h ^= h >> 31U;
  }
  return static_cast<double>(h >> 11U) * 0x1.0p-53;
}

// The spec's seed as one of uniform()'s values.
long seed_of(const TaskBenchSpec& s) {
  return static_cast<long>(s.seed);
}

// The points alive at timestep t: [offset, offset + width).
std::pair<long, long> span_at(const TaskBenchSpec& s, long t) {
  const long w = s.width;
  const long steps = s.steps;
  switch (s.pattern) {
    case Pattern::kDom:
      return {std::max(0L, t + w - steps), std::min({w, t + 1, steps - t})};
    case Pattern::kTree:
      return {0, t < 62 ? std::min(w, 1L << t) : w};
    default:
      return {0, w};
  }
}

// Task Bench's dependencies of point p at timestep t, before clipping to t - 1's points.
std::vector<long> dependencies(const TaskBenchSpec& s, long t, long p) {
  const long w = s.width;
  std::vector<long> deps;
  const auto range = [&](long from, long to) {
    for (long d = std::max(0L, from); d <= std::min(to, w - 1); ++d) {
      deps.push_back(d);
    }
  };
  switch (s.pattern) {
    case Pattern::kTrivial:
      break;
    case Pattern::kNoComm:
      deps.push_back(p);
      break;
    case Pattern::kStencil1d:
      range(p - 1, p + 1);
      break;
    case Pattern::kStencil1dPeriodic:
      range(p - 1, p + 1);
      if (p - 1 < 0) {
        deps.push_back(w - 1);
      }
      if (p + 1 >= w) {
        deps.push_back(0);
      }
      break;
    case Pattern::kDom:
      range(p - 1, p);
      break;
    case Pattern::kTree:
      deps.push_back(p / 2);
      break;
    case Pattern::kFft: {
      const long sets = std::max(1L, static_cast<long>(std::ceil(std::log2(double(w)))));
      const long set = (t + sets - 1) % sets;
      const long stride = set < 62 ? 1L << set : w;
      if (p - stride >= 0) {
        deps.push_back(p - stride);
      }
      deps.push_back(p);
      if (p + stride < w) {
        deps.push_back(p + stride);
      }
      break;
    }
    case Pattern::kAllToAll:
      range(0, w - 1);
      break;
    case Pattern::kNearest:
      range(p - s.radix / 2, p + (s.radix - 1) / 2);
      break;
    case Pattern::kSpread:
      for (long i = 0; i < s.radix; ++i) {
        deps.push_back((p + i * w / s.radix + (i > 0 ? t % kPeriod : 0)) % w);
      }
      break;
    case Pattern::kRandomNearest:
      for (long d = std::max(0L, p - s.radix / 2); d <= std::min(p + (s.radix - 1) / 2, w - 1);
           ++d) {
        if (d == p || uniform({s.radix, t % kPeriod, d, p, seed_of(s)}) < s.fraction) {
          deps.push_back(d);
        }
      }
      break;
    case Pattern::kRandomSpread:
      for (long i = 0; i < s.radix; ++i) {
        const long d = (p + i * w / s.radix + (i > 0 ? t % kPeriod : 0)) % w;
        if (i == 0 || uniform({s.radix, t % kPeriod, d, p, 1, seed_of(s)}) < s.fraction) {
          deps.push_back(d);
        }
      }
      break;
  }
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  return deps;
}

// Task (t, p)'s run time under the spec's kernel.
double task_seconds(const TaskBenchSpec& s, long t, long p) {
  switch (s.kernel) {
    case Kernel::kEmpty:
      return 0;
    case Kernel::kLoadImbalance:
      return s.seconds * (1 - s.imbalance * uniform({t, p, 2, seed_of(s)}));
    case Kernel::kComputeBound:
      break;
  }
  return s.seconds;
}

}  // namespace

bool draws_at_random(const TaskBenchSpec& spec) {
  return spec.pattern == Pattern::kRandomNearest || spec.pattern == Pattern::kRandomSpread ||
         spec.kernel == Kernel::kLoadImbalance;
}

Result<Kernel> parse_kernel(std::string_view name) {
  for (const auto& [kernel, text] : kKernels) {
    if (text == name) {
      return kernel;
    }
  }
  return fail(
      Errc::kInvalidArgument,
      fmt::format("'{}' is not a Task Bench kernel: compute_bound, load_imbalance, empty", name));
}

std::string_view to_string(Kernel kernel) {
  for (const auto& [k, text] : kKernels) {
    if (k == kernel) {
      return text;
    }
  }
  return "?";
}

Result<Pattern> parse_pattern(std::string_view name) {
  for (const auto& [pattern, text] : kNames) {
    if (text == name) {
      return pattern;
    }
  }
  std::string all;
  for (const auto& [pattern, text] : kNames) {
    all += (all.empty() ? "" : ", ") + std::string(text);
  }
  return fail(Errc::kInvalidArgument,
              fmt::format("'{}' is not a Task Bench pattern: {}", name, all));
}

std::string_view to_string(Pattern pattern) {
  for (const auto& [p, text] : kNames) {
    if (p == pattern) {
      return text;
    }
  }
  return "?";
}

Result<sched::Workload> task_bench(const TaskBenchSpec& s) {
  if (s.width < 1 || s.width > 100000) {
    return fail(Errc::kInvalidArgument, fmt::format("width {} is not 1-100000", s.width));
  }
  if (s.steps < 1 || s.steps > 100000) {
    return fail(Errc::kInvalidArgument, fmt::format("steps {} is not 1-100000", s.steps));
  }
  if (static_cast<long long>(s.width) * s.steps > 10'000'000) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{} x {} is more than 10 million tasks", s.width, s.steps));
  }
  if ((s.pattern == Pattern::kNearest || s.pattern == Pattern::kSpread ||
       s.pattern == Pattern::kRandomNearest || s.pattern == Pattern::kRandomSpread) &&
      (s.radix < 1 || s.radix > s.width)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("radix {} is not 1 to the width ({})", s.radix, s.width));
  }
  if (!(s.fraction >= 0 && s.fraction <= 1)) {
    return fail(Errc::kInvalidArgument, fmt::format("fraction {} is not 0 to 1", s.fraction));
  }
  if (!(s.imbalance >= 0 && s.imbalance <= 1)) {
    return fail(Errc::kInvalidArgument, fmt::format("imbalance {} is not 0 to 1", s.imbalance));
  }
  if (!std::isfinite(s.seconds) || s.seconds < 0) {
    return fail(Errc::kInvalidArgument,
                fmt::format("a task's time {} is not 0 seconds or more", s.seconds));
  }
  sched::Workload w;
  w.name = fmt::format("taskbench:{}", to_string(s.pattern));
  // datum[t][p]: the output of task (t, p); -1 where the point is not alive.
  std::vector<long> previous(static_cast<std::size_t>(s.width), -1);
  for (long t = 0; t < s.steps; ++t) {
    std::vector<long> current(static_cast<std::size_t>(s.width), -1);
    const auto [offset, count] = span_at(s, t);
    for (long p = offset; p < offset + count; ++p) {
      sched::WorkTask task;
      task.type = std::string(to_string(s.pattern));
      task.name = fmt::format("({},{})", t, p);
      task.seconds = {task_seconds(s, t, p)};
      if (t > 0) {
        for (const long d : dependencies(s, t, p)) {
          if (const long datum = previous[static_cast<std::size_t>(d)]; datum >= 0) {
            task.accesses.emplace_back(static_cast<std::size_t>(datum), sched::Access::kRead);
          }
        }
      }
      const auto out = w.data_bytes.size();
      w.data_bytes.push_back(s.output_bytes);
      task.accesses.emplace_back(out, sched::Access::kWrite);
      current[static_cast<std::size_t>(p)] = static_cast<long>(out);
      w.tasks.push_back(std::move(task));
    }
    previous = std::move(current);
  }
  return w;
}

}  // namespace acco::sim
