#include <string>
#include <utility>

#include "acco/sched/workload.hpp"

namespace acco::sched {
namespace {

// Microseconds for (kernel, cpu, gpu) at b = 960, single precision: the means of StarPU's
// calibrated models
// tools/perfmodels/sampling/codelets/45/chol_model_{potrf,trsm,syrk,gemm}.<machine>
// (../shared/reference/scheduler.md c3). StarPU ships no getrf model for these machines; getrf
// does twice potrf's flops, so it is taken as twice potrf's time.
struct KernelMicros {
  const char* kernel;
  double cpu;
  double gpu;
};

// sirocco: 24 cores E5-2680 + 4x K40m.
constexpr KernelMicros kSirocco[] = {
    {"potrf", 7379, 8245},
    {"trsm", 17758, 2020},
    {"syrk", 17470, 375},
    {"gemm", 34940, 749},
    {"getrf", 2 * 7379.0, 2 * 8245.0},
};
// mirage: 12 cores X5650 + 3x M2070.
constexpr KernelMicros kMirage[] = {
    {"potrf", 18850, 5475},
    {"trsm", 45647, 6406},
    {"syrk", 43890, 1410},
    {"gemm", 87780, 2821},
    {"getrf", 2 * 18850.0, 2 * 5475.0},
};

template <std::size_t N>
KernelTable from_micros(std::string name, const KernelMicros (&rows)[N]) {
  KernelTable table;
  table.name = std::move(name);
  table.tile = 960;
  for (const KernelMicros& row : rows) {
    table.seconds.push_back({{row.kernel, "cpu"}, row.cpu * 1e-6});
    table.seconds.push_back({{row.kernel, "gpu"}, row.gpu * 1e-6});
  }
  return table;
}

}  // namespace

Result<double> KernelTable::lookup(const std::string& kernel, const std::string& kind,
                                   double flops) const {
  if (flops_per_second > 0) {
    return flops / flops_per_second;
  }
  bool kernel_known = false;
  bool kind_known = false;
  for (const auto& [key, value] : seconds) {
    if (key.first == kernel && key.second == kind) {
      return value;
    }
    kernel_known = kernel_known || key.first == kernel;
    kind_known = kind_known || key.second == kind;
  }
  if (!kernel_known) {
    return fail(Errc::kNotFound, "kernel table '" + name + "' has no kernel '" + kernel + "'");
  }
  if (!kind_known) {
    return fail(Errc::kNotFound,
                "kernel table '" + name + "' has no timings for device kind '" + kind + "'");
  }
  return fail(Errc::kNotFound, "kernel table '" + name + "' has no timing for kernel '" + kernel +
                                   "' on device kind '" + kind + "'");
}

Result<KernelTable> kernel_table(const std::string& name) {
  if (name == "sirocco") {
    return from_micros(name, kSirocco);
  }
  if (name == "mirage") {
    return from_micros(name, kMirage);
  }
  if (name == "uniform") {
    KernelTable table;
    table.name = name;
    table.tile = 960;
    table.flops_per_second = 1e9;
    return table;
  }
  return fail(Errc::kNotFound,
              "unknown kernel table '" + name + "' (known: sirocco, mirage, uniform)");
}

}  // namespace acco::sched
