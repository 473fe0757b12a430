// A small dense two-phase simplex for the linear programs behind the scheduling bounds (a few
// hundred rows at most). Not a general LP library: no sparsity, no presolve.
#pragma once

#include <vector>

#include "acco/core/result.hpp"

namespace acco::sched::detail {

// minimise c.x subject to a x = b and x >= 0. Rows of `a` all have c.size() entries; b may have
// any sign (rows with b < 0 are negated).
struct LinearProgram {
  std::vector<std::vector<double>> a;
  std::vector<double> b;
  std::vector<double> c;
};

struct LpSolution {
  double objective = 0;
  std::vector<double> x;
  std::vector<double> duals;  // one per row of `a`: the optimal multipliers y, c - y.a >= 0
};

// Dantzig pricing, switching to Bland's rule after a run of degenerate pivots so that it cannot
// cycle; tolerances 1e-9 relative to the largest coefficient. kInvalidArgument for a ragged
// problem, an infeasible or unbounded one.
[[nodiscard]] Result<LpSolution> solve_lp(const LinearProgram& lp);

}  // namespace acco::sched::detail
