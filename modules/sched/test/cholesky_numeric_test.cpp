// A real tiled Cholesky factorisation through the runtime: every tile moves between host and
// emulated devices, kernels compute on whatever replica the runtime hands them, and the result
// must equal L * L^T = A. Wrong dependencies, stale replicas or bad evictions show up as wrong
// numbers.
#include <cmath>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "acco/device/host_backend.hpp"
#include "acco/sched/runtime.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::sched {
namespace {

using ::acco::testing::IsOk;

constexpr int kB = 8;  // tile edge
using Tile = std::vector<double>;

double& at(double* t, int r, int c) {
  return t[r * kB + c];
}

void potrf(TaskContext& ctx) {
  auto* a = static_cast<double*>(ctx.data(0));
  for (int j = 0; j < kB; ++j) {
    double d = at(a, j, j);
    for (int k = 0; k < j; ++k) {
      d -= at(a, j, k) * at(a, j, k);
    }
    at(a, j, j) = std::sqrt(d);
    for (int i = j + 1; i < kB; ++i) {
      double s = at(a, i, j);
      for (int k = 0; k < j; ++k) {
        s -= at(a, i, k) * at(a, j, k);
      }
      at(a, i, j) = s / at(a, j, j);
    }
    for (int i = 0; i < j; ++i) {
      at(a, i, j) = 0;
    }
  }
}

void trsm(TaskContext& ctx) {  // B <- B L^-T
  const auto* l = static_cast<const double*>(ctx.data(0));
  auto* b = static_cast<double*>(ctx.data(1));
  for (int r = 0; r < kB; ++r) {
    for (int j = 0; j < kB; ++j) {
      double s = at(b, r, j);
      for (int k = 0; k < j; ++k) {
        s -= at(b, r, k) * l[j * kB + k];
      }
      at(b, r, j) = s / l[j * kB + j];
    }
  }
}

void syrk(TaskContext& ctx) {  // C <- C - A A^T
  const auto* a = static_cast<const double*>(ctx.data(0));
  auto* c = static_cast<double*>(ctx.data(1));
  for (int i = 0; i < kB; ++i) {
    for (int j = 0; j < kB; ++j) {
      for (int k = 0; k < kB; ++k) {
        at(c, i, j) -= a[i * kB + k] * a[j * kB + k];
      }
    }
  }
}

void gemm(TaskContext& ctx) {  // C <- C - A B^T
  const auto* a = static_cast<const double*>(ctx.data(0));
  const auto* b = static_cast<const double*>(ctx.data(1));
  auto* c = static_cast<double*>(ctx.data(2));
  for (int i = 0; i < kB; ++i) {
    for (int j = 0; j < kB; ++j) {
      for (int k = 0; k < kB; ++k) {
        at(c, i, j) -= a[i * kB + k] * b[j * kB + k];
      }
    }
  }
}

std::shared_ptr<const Codelet> codelet(const char* type, void (*fn)(TaskContext&)) {
  auto c = std::make_shared<Codelet>();
  c->type = type;
  c->implementations = {{"host", fn}};
  return c;
}

double element(int i, int j, int n) {
  return (i == j ? n : 0) + 1.0 / (1.0 + std::abs(i - j));
}

// Factorises a t x t tiled SPD matrix and returns max |(L L^T - A)_ij| over the lower triangle.
double factorise(PolicyKind policy, int devices, std::uint64_t budget, int t, bool as_graph) {
  device::HostBackendOptions host;
  host.devices = devices;
  auto backend = device::make_host_backend(host);
  EXPECT_THAT(backend, IsOk());
  std::vector<DeviceSpec> specs;
  for (device::Device* d : (*backend)->devices()) {
    DeviceSpec spec;
    spec.device = d;
    spec.memory_budget_bytes = budget;
    specs.push_back(std::move(spec));
  }
  RuntimeOptions options;
  options.policy = policy;
  auto rt = Runtime::create(std::move(specs), options);
  EXPECT_THAT(rt, IsOk());
  Runtime& runtime = **rt;
  const int n = t * kB;
  std::vector<std::vector<Tile>> tiles(static_cast<std::size_t>(t));
  std::vector<std::vector<DataHandle>> h(static_cast<std::size_t>(t));
  for (int i = 0; i < t; ++i) {
    tiles[i].resize(static_cast<std::size_t>(i + 1), Tile(kB * kB));
    for (int j = 0; j <= i; ++j) {
      for (int r = 0; r < kB; ++r) {
        for (int c = 0; c < kB; ++c) {
          tiles[i][j][r * kB + c] = element(i * kB + r, j * kB + c, n);
        }
      }
      auto handle = runtime.register_data(tiles[i][j].data(), kB * kB * sizeof(double));
      EXPECT_THAT(handle, IsOk());
      h[i].push_back(*handle);
    }
  }
  const auto potrf_c = codelet("potrf", potrf);
  const auto trsm_c = codelet("trsm", trsm);
  const auto syrk_c = codelet("syrk", syrk);
  const auto gemm_c = codelet("gemm", gemm);
  std::vector<Task> tasks;
  const auto add = [&](const std::shared_ptr<const Codelet>& c,
                       std::vector<std::pair<DataHandle, Access>> accesses) {
    Task task;
    task.codelet = c;
    task.accesses = std::move(accesses);
    tasks.push_back(std::move(task));
  };
  for (int k = 0; k < t; ++k) {
    add(potrf_c, {{h[k][k], Access::kReadWrite}});
    for (int i = k + 1; i < t; ++i) {
      add(trsm_c, {{h[k][k], Access::kRead}, {h[i][k], Access::kReadWrite}});
    }
    for (int j = k + 1; j < t; ++j) {
      add(syrk_c, {{h[j][k], Access::kRead}, {h[j][j], Access::kReadWrite}});
      for (int i = j + 1; i < t; ++i) {
        add(gemm_c,
            {{h[i][k], Access::kRead}, {h[j][k], Access::kRead}, {h[i][j], Access::kReadWrite}});
      }
    }
  }
  if (as_graph) {
    EXPECT_THAT(runtime.submit_graph(std::move(tasks)), IsOk());
  } else {
    for (Task& task : tasks) {
      EXPECT_THAT(runtime.submit(std::move(task)), IsOk());
    }
  }
  EXPECT_THAT(runtime.wait_all(), IsOk());
  for (auto& row : h) {
    for (DataHandle handle : row) {
      EXPECT_THAT(runtime.unregister(handle), IsOk());
    }
  }
  const auto l = [&](int r, int c) -> double {
    if (c > r) {
      return 0;
    }
    return tiles[r / kB][c / kB][(r % kB) * kB + (c % kB)];
  };
  double worst = 0;
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c <= r; ++c) {
      double s = 0;
      for (int k = 0; k <= c; ++k) {
        s += l(r, k) * l(c, k);
      }
      worst = std::max(worst, std::abs(s - element(r, c, n)));
    }
  }
  return worst;
}

TEST(CholeskyNumericTest, EveryPolicyFactorisesCorrectlyAcrossThreeDevices) {
  for (PolicyKind policy : all_policies()) {
    EXPECT_LT(factorise(policy, 3, 0, 6, true), 1e-9) << to_string(policy);
    EXPECT_LT(factorise(policy, 3, 0, 6, false), 1e-9) << to_string(policy);
  }
}

TEST(CholeskyNumericTest, AMemoryBudgetOfFourTilesStillGivesTheRightFactor) {
  const std::uint64_t four_tiles = 4 * kB * kB * sizeof(double);
  for (PolicyKind policy : {PolicyKind::kDmda, PolicyKind::kEager, PolicyKind::kWorkStealing}) {
    EXPECT_LT(factorise(policy, 2, four_tiles, 6, true), 1e-9) << to_string(policy);
  }
}

}  // namespace
}  // namespace acco::sched
