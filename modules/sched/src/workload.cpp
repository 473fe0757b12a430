#include "acco/sched/workload.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace acco::sched {
namespace {

// Uniform in [0, 1) from the 53 high bits of one draw. std::uniform_real_distribution is not
// used: its algorithm is left to the standard library, and workloads must be the same
// everywhere.
double unit(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return lo + (hi - lo) * unit(rng);
}

// Uniform integer in [0, n); the modulo bias is below 2^-40 for the sizes used here.
std::size_t below(std::mt19937_64& rng, std::size_t n) {
  return static_cast<std::size_t>(rng() % n);
}

std::string call_name(const std::string& kernel, std::initializer_list<int> indices) {
  std::string name = kernel + "(";
  bool first = true;
  for (int index : indices) {
    if (!first) {
      name += ",";
    }
    name += std::to_string(index);
    first = false;
  }
  return name + ")";
}

// Builds the tiled-algebra tasks: each kernel call's seconds come from the table.
class TiledBuilder {
 public:
  TiledBuilder(const WorkloadSpec& spec, const std::vector<DeviceModel>& devices,
               const KernelTable& table)
      : spec_(spec), devices_(devices), table_(table) {
    const double b = static_cast<double>(table.tile);
    b3_ = b * b * b;
  }

  double b3() const { return b3_; }

  Status add(Workload& workload, const std::string& kernel, std::string name, double flops,
             std::vector<std::pair<std::size_t, Access>> accesses) const {
    WorkTask task;
    task.type = kernel;
    task.name = std::move(name);
    task.accesses = std::move(accesses);
    task.flops = flops;
    for (const DeviceModel& device : devices_) {
      ACCO_ASSIGN_OR_RETURN(const double seconds, table_.lookup(kernel, device.kind, flops));
      task.seconds.push_back(seconds / device.speed * spec_.time_scale);
    }
    workload.tasks.push_back(std::move(task));
    return {};
  }

 private:
  const WorkloadSpec& spec_;
  const std::vector<DeviceModel>& devices_;
  const KernelTable& table_;
  double b3_ = 0;
};

std::size_t tile_bytes(const WorkloadSpec& spec, const KernelTable& table) {
  return spec.tile_bytes != 0 ? spec.tile_bytes : table.tile * table.tile * sizeof(float);
}

Result<Workload> cholesky(const WorkloadSpec& spec, const std::vector<DeviceModel>& devices,
                          const KernelTable& table) {
  const int t = spec.tiles;
  Workload w;
  w.name = "cholesky";
  w.data_bytes.assign(static_cast<std::size_t>(t) * static_cast<std::size_t>(t + 1) / 2,
                      tile_bytes(spec, table));
  // Lower-triangle tile (i, j), i >= j, stored row by row.
  auto tile = [](int i, int j) {
    return static_cast<std::size_t>(i) * static_cast<std::size_t>(i + 1) / 2 +
           static_cast<std::size_t>(j);
  };
  const TiledBuilder builder(spec, devices, table);
  const double b3 = builder.b3();
  constexpr Access kR = Access::kRead;
  constexpr Access kRW = Access::kReadWrite;
  for (int k = 0; k < t; ++k) {
    ACCO_RETURN_IF_ERROR(
        builder.add(w, "potrf", call_name("potrf", {k}), b3 / 3, {{tile(k, k), kRW}}), "cholesky");
    for (int i = k + 1; i < t; ++i) {
      ACCO_RETURN_IF_ERROR(builder.add(w, "trsm", call_name("trsm", {i, k}), b3,
                                       {{tile(k, k), kR}, {tile(i, k), kRW}}),
                           "cholesky");
    }
    for (int j = k + 1; j < t; ++j) {
      ACCO_RETURN_IF_ERROR(builder.add(w, "syrk", call_name("syrk", {j, k}), b3,
                                       {{tile(j, k), kR}, {tile(j, j), kRW}}),
                           "cholesky");
      for (int i = j + 1; i < t; ++i) {
        ACCO_RETURN_IF_ERROR(builder.add(w, "gemm", call_name("gemm", {i, j, k}), 2 * b3,
                                         {{tile(i, k), kR}, {tile(j, k), kR}, {tile(i, j), kRW}}),
                             "cholesky");
      }
    }
  }
  return w;
}

Result<Workload> lu(const WorkloadSpec& spec, const std::vector<DeviceModel>& devices,
                    const KernelTable& table) {
  const int t = spec.tiles;
  Workload w;
  w.name = "lu";
  w.data_bytes.assign(static_cast<std::size_t>(t) * static_cast<std::size_t>(t),
                      tile_bytes(spec, table));
  auto tile = [t](int i, int j) {
    return static_cast<std::size_t>(i) * static_cast<std::size_t>(t) + static_cast<std::size_t>(j);
  };
  const TiledBuilder builder(spec, devices, table);
  const double b3 = builder.b3();
  constexpr Access kR = Access::kRead;
  constexpr Access kRW = Access::kReadWrite;
  for (int k = 0; k < t; ++k) {
    ACCO_RETURN_IF_ERROR(
        builder.add(w, "getrf", call_name("getrf", {k}), 2 * b3 / 3, {{tile(k, k), kRW}}), "lu");
    for (int i = k + 1; i < t; ++i) {
      ACCO_RETURN_IF_ERROR(builder.add(w, "trsm", call_name("trsm", {i, k}), b3,
                                       {{tile(k, k), kR}, {tile(i, k), kRW}}),
                           "lu");
    }
    for (int j = k + 1; j < t; ++j) {
      ACCO_RETURN_IF_ERROR(builder.add(w, "trsm", call_name("trsm", {k, j}), b3,
                                       {{tile(k, k), kR}, {tile(k, j), kRW}}),
                           "lu");
    }
    for (int j = k + 1; j < t; ++j) {
      for (int i = k + 1; i < t; ++i) {
        ACCO_RETURN_IF_ERROR(builder.add(w, "gemm", call_name("gemm", {i, j, k}), 2 * b3,
                                         {{tile(i, k), kR}, {tile(k, j), kR}, {tile(i, j), kRW}}),
                             "lu");
      }
    }
  }
  return w;
}

// Same base cost on every device, scaled by its speed.
std::vector<double> per_device(double base, const WorkloadSpec& spec,
                               const std::vector<DeviceModel>& devices) {
  std::vector<double> seconds;
  seconds.reserve(devices.size());
  for (const DeviceModel& device : devices) {
    seconds.push_back(base / device.speed * spec.time_scale);
  }
  return seconds;
}

Workload independent(const WorkloadSpec& spec, const std::vector<DeviceModel>& devices) {
  Workload w;
  w.name = "independent";
  std::mt19937_64 rng(spec.seed);
  const double log_skew = std::log(spec.skew);
  for (int i = 0; i < spec.tasks; ++i) {
    const std::size_t datum = w.data_bytes.size();
    w.data_bytes.push_back(spec.task_bytes);
    WorkTask task;
    task.type = "task";
    task.name = call_name("task", {i});
    task.accesses = {{datum, Access::kReadWrite}};
    task.seconds = per_device(spec.base_seconds * std::exp(log_skew * unit(rng)), spec, devices);
    w.tasks.push_back(std::move(task));
  }
  return w;
}

Workload chain(const WorkloadSpec& spec, const std::vector<DeviceModel>& devices) {
  Workload w;
  w.name = "chain";
  w.data_bytes = {spec.task_bytes};
  for (int i = 0; i < spec.tasks; ++i) {
    WorkTask task;
    task.type = "task";
    task.name = call_name("task", {i});
    task.accesses = {{0, Access::kReadWrite}};
    task.seconds = per_device(spec.base_seconds, spec, devices);
    w.tasks.push_back(std::move(task));
  }
  return w;
}

Workload random_dag(const WorkloadSpec& spec, const std::vector<DeviceModel>& devices) {
  Workload w;
  w.name = "random";
  std::mt19937_64 rng(spec.seed);
  const auto v = static_cast<std::size_t>(spec.tasks);

  // Level widths uniform in [1, 2 alpha sqrt(v) - 1], mean alpha sqrt(v).
  const double mean_width = spec.alpha * std::sqrt(static_cast<double>(v));
  const auto max_width = static_cast<std::size_t>(std::max(1.0, std::round(2 * mean_width - 1)));
  std::vector<std::size_t> level_start;  // first task of each level
  for (std::size_t placed = 0; placed < v;) {
    level_start.push_back(placed);
    placed = std::min(v, placed + 1 + below(rng, max_width));
  }
  level_start.push_back(v);

  // Predecessors: one from the previous level, the rest distinct from any earlier level.
  std::vector<std::vector<std::size_t>> preds(v);
  const auto max_in = static_cast<std::size_t>(spec.out_degree);
  for (std::size_t l = 1; l + 1 < level_start.size(); ++l) {
    const std::size_t prev_begin = level_start[l - 1];
    const std::size_t begin = level_start[l];
    for (std::size_t task = begin; task < level_start[l + 1]; ++task) {
      const std::size_t k = 1 + below(rng, std::min(max_in, begin));
      std::vector<std::size_t>& p = preds[task];
      p.push_back(prev_begin + below(rng, begin - prev_begin));
      while (p.size() < k) {
        const std::size_t candidate = below(rng, begin);
        if (std::find(p.begin(), p.end(), candidate) == p.end()) {
          p.push_back(candidate);
        }
      }
      std::sort(p.begin(), p.end());
    }
  }

  // One output per task, sized so a 10 GB/s link moves it in ccr x base_seconds.
  const double out_bytes = std::max(1.0, std::round(spec.ccr * spec.base_seconds * 1e10));
  w.data_bytes.assign(v, static_cast<std::size_t>(out_bytes));
  for (std::size_t i = 0; i < v; ++i) {
    const double mean = std::max(spec.base_seconds / 100, uniform(rng, 0, 2 * spec.base_seconds));
    WorkTask task;
    task.type = "task";
    task.name = "task(" + std::to_string(i) + ")";
    for (std::size_t pred : preds[i]) {
      task.accesses.push_back({pred, Access::kRead});
    }
    task.accesses.push_back({i, Access::kWrite});
    for (const DeviceModel& device : devices) {
      const double seconds = uniform(rng, mean * (1 - spec.beta / 2), mean * (1 + spec.beta / 2));
      task.seconds.push_back(seconds / device.speed * spec.time_scale);
    }
    w.tasks.push_back(std::move(task));
  }
  return w;
}

constexpr int kMaxTiles = 1000;
constexpr int kMaxTasks = 10'000'000;

Status check_spec(const WorkloadSpec& spec, const std::vector<DeviceModel>& devices) {
  auto bad = [](const std::string& what) { return fail(Errc::kInvalidArgument, what); };
  if (devices.empty()) {
    return bad("no devices");
  }
  for (std::size_t d = 0; d < devices.size(); ++d) {
    if (!(devices[d].speed > 0) || std::isinf(devices[d].speed)) {
      return bad("device " + std::to_string(d) + ": speed must be positive and finite");
    }
  }
  if (!(spec.time_scale > 0) || std::isinf(spec.time_scale)) {
    return bad("time_scale must be positive and finite");
  }
  const bool tiled = spec.kind == WorkloadKind::kCholesky || spec.kind == WorkloadKind::kLu;
  if (tiled) {
    if (spec.tiles < 1 || spec.tiles > kMaxTiles) {
      return bad("tiles must be in 1.." + std::to_string(kMaxTiles) + ", got " +
                 std::to_string(spec.tiles));
    }
    return {};
  }
  if (spec.tasks < 1 || spec.tasks > kMaxTasks) {
    return bad("tasks must be in 1.." + std::to_string(kMaxTasks) + ", got " +
               std::to_string(spec.tasks));
  }
  if (!(spec.base_seconds > 0) || std::isinf(spec.base_seconds)) {
    return bad("base_seconds must be positive and finite");
  }
  if (spec.kind == WorkloadKind::kIndependent && (!(spec.skew >= 1) || std::isinf(spec.skew))) {
    return bad("skew must be finite and at least 1");
  }
  if (spec.kind == WorkloadKind::kRandom) {
    // Bounds keep every derived size (level widths, predecessor lists, output bytes) far from
    // overflow and memory exhaustion; the paper's parameter sets sit well inside them.
    if (!(spec.alpha > 0 && spec.alpha <= 100)) {
      return bad("alpha must be in (0, 100]");
    }
    if (spec.out_degree < 1 || spec.out_degree > 1000) {
      return bad("out_degree must be in 1..1000, got " + std::to_string(spec.out_degree));
    }
    if (!(spec.ccr >= 0 && spec.ccr * spec.base_seconds * 1e10 <= 1e12)) {
      return bad(
          "ccr must be non-negative and give outputs of at most 1 TB (ccr x base_seconds "
          "x 10 GB/s)");
    }
    if (!(spec.beta >= 0 && spec.beta < 2)) {
      return bad("beta must be in [0, 2)");
    }
  }
  return {};
}

}  // namespace

Result<Workload> make_workload(const WorkloadSpec& spec, const std::vector<DeviceModel>& devices) {
  const std::string context = fmt::format("workload '{}'", to_string(spec.kind));
  ACCO_RETURN_IF_ERROR(check_spec(spec, devices), context);
  switch (spec.kind) {
    case WorkloadKind::kCholesky:
    case WorkloadKind::kLu: {
      ACCO_ASSIGN_OR_RETURN(const auto table, kernel_table(spec.kernels), context);
      return spec.kind == WorkloadKind::kCholesky ? cholesky(spec, devices, table)
                                                  : lu(spec, devices, table);
    }
    case WorkloadKind::kIndependent:
      return independent(spec, devices);
    case WorkloadKind::kChain:
      return chain(spec, devices);
    case WorkloadKind::kRandom:
      return random_dag(spec, devices);
  }
  return fail(Errc::kInternal, context + ": unknown kind");
}

const char* to_string(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kCholesky:
      return "cholesky";
    case WorkloadKind::kLu:
      return "lu";
    case WorkloadKind::kIndependent:
      return "independent";
    case WorkloadKind::kChain:
      return "chain";
    case WorkloadKind::kRandom:
      return "random";
  }
  return "unknown";
}

std::optional<WorkloadKind> parse_workload_kind(std::string_view name) {
  for (const auto kind : {WorkloadKind::kCholesky, WorkloadKind::kLu, WorkloadKind::kIndependent,
                          WorkloadKind::kChain, WorkloadKind::kRandom}) {
    if (name == to_string(kind)) {
      return kind;
    }
  }
  return std::nullopt;
}

std::vector<Edge> infer_edges(const Workload& workload) {
  struct DatumState {
    bool written = false;
    std::size_t last_writer = 0;
    std::vector<std::size_t> readers;  // since the last writer
  };
  std::vector<DatumState> state(workload.data_bytes.size());
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> edges;  // (to, from) -> bytes
  auto add = [&edges](std::size_t from, std::size_t to, std::size_t bytes) {
    if (from == to) {
      return;
    }
    auto [it, inserted] = edges.try_emplace({to, from}, bytes);
    if (!inserted) {
      it->second = std::max(it->second, bytes);
    }
  };
  for (std::size_t task = 0; task < workload.tasks.size(); ++task) {
    for (const auto& [datum, mode] : workload.tasks[task].accesses) {
      ACCO_CHECK(datum < state.size());
      DatumState& s = state[datum];
      if (reads(mode) && s.written) {
        add(s.last_writer, task, workload.data_bytes[datum]);
      }
      if (writes(mode)) {
        if (s.readers.empty() && s.written) {
          add(s.last_writer, task, 0);
        }
        for (std::size_t reader : s.readers) {
          add(reader, task, 0);
        }
        s.written = true;
        s.last_writer = task;
        s.readers.clear();
      } else {
        s.readers.push_back(task);
      }
    }
  }
  std::vector<Edge> out;
  out.reserve(edges.size());
  for (const auto& [key, bytes] : edges) {
    out.push_back(Edge{key.second, key.first, bytes});
  }
  return out;
}

}  // namespace acco::sched
