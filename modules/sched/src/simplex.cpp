#include "simplex.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace acco::sched::detail {
namespace {

// Rows are scaled to a largest coefficient of 1, so one absolute tolerance serves every row.
constexpr double kEps = 1e-9;
// Consecutive degenerate pivots after which pricing switches to Bland's rule (which cannot
// cycle) until the objective moves again.
constexpr int kDegenerateRun = 50;

// Dense tableau: m constraint rows then one objective row; columns are the n variables, m
// artificials, and the right-hand side last. The objective row holds reduced costs and, in the
// right-hand side column, minus the objective value.
class Tableau {
 public:
  Tableau(std::size_t m, std::size_t n)
      : m_(m), n_(n), cols_(n + m + 1), cells_((m + 1) * (n + m + 1), 0.0), basis_(m) {}

  double& at(std::size_t row, std::size_t col) { return cells_[row * cols_ + col]; }
  double rhs(std::size_t row) const { return cells_[row * cols_ + cols_ - 1]; }
  double& rhs(std::size_t row) { return cells_[row * cols_ + cols_ - 1]; }
  std::size_t objective_row() const { return m_; }
  std::size_t artificial(std::size_t row) const { return n_ + row; }
  std::vector<std::size_t>& basis() { return basis_; }

  void pivot(std::size_t row, std::size_t col) {
    double* p = &cells_[row * cols_];
    const double inv = 1.0 / p[col];
    for (std::size_t j = 0; j < cols_; ++j) {
      p[j] *= inv;
    }
    p[col] = 1.0;
    for (std::size_t i = 0; i <= m_; ++i) {
      double* r = &cells_[i * cols_];
      const double factor = r[col];
      if (i == row || factor == 0.0) {
        continue;
      }
      for (std::size_t j = 0; j < cols_; ++j) {
        if (p[j] != 0.0) {
          r[j] -= factor * p[j];
        }
      }
      r[col] = 0.0;
    }
    basis_[row] = col;
  }

  // Runs the simplex on the objective row with columns [0, entering_limit) allowed to enter.
  // Returns false when the problem is unbounded; kInternal past the pivot limit.
  Result<bool> optimise(std::size_t entering_limit) {
    const std::size_t limit = 100000 + 50 * (m_ + cols_);
    int degenerate_run = 0;
    for (std::size_t iteration = 0; iteration < limit; ++iteration) {
      const bool bland = degenerate_run >= kDegenerateRun;
      std::size_t entering = entering_limit;
      double best = -kEps;
      for (std::size_t j = 0; j < entering_limit; ++j) {
        const double d = at(objective_row(), j);
        if (d < best) {
          entering = j;
          if (bland) {
            break;
          }
          best = d;
        }
      }
      if (entering == entering_limit) {
        return true;
      }
      std::size_t leaving = m_;
      double best_ratio = std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i < m_; ++i) {
        const double a = at(i, entering);
        if (a <= kEps) {
          continue;
        }
        const double ratio = std::max(0.0, rhs(i)) / a;
        // Ties go to the smallest basic variable index, as Bland's rule requires.
        if (ratio < best_ratio || (ratio == best_ratio && basis_[i] < basis_[leaving])) {
          best_ratio = ratio;
          leaving = i;
        }
      }
      if (leaving == m_) {
        return false;
      }
      degenerate_run = best_ratio <= kEps ? degenerate_run + 1 : 0;
      pivot(leaving, entering);
    }
    return fail(Errc::kInternal, "simplex: no optimum after " + std::to_string(limit) + " pivots");
  }

 private:
  std::size_t m_;
  std::size_t n_;
  std::size_t cols_;
  std::vector<double> cells_;
  std::vector<std::size_t> basis_;
};

}  // namespace

Result<LpSolution> solve_lp(const LinearProgram& lp) {
  const std::size_t m = lp.a.size();
  const std::size_t n = lp.c.size();
  if (lp.b.size() != m) {
    return fail(Errc::kInvalidArgument, "linear program: " + std::to_string(m) +
                                            " constraint rows but " + std::to_string(lp.b.size()) +
                                            " right-hand sides");
  }
  const auto finite = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
  };
  if (!finite(lp.b) || !finite(lp.c) || !std::all_of(lp.a.begin(), lp.a.end(), finite)) {
    return fail(Errc::kInvalidArgument, "linear program: every coefficient must be finite");
  }
  for (std::size_t i = 0; i < m; ++i) {
    if (lp.a[i].size() != n) {
      return fail(Errc::kInvalidArgument, "linear program: row " + std::to_string(i) + " has " +
                                              std::to_string(lp.a[i].size()) +
                                              " coefficients, expected " + std::to_string(n));
    }
  }

  Tableau t(m, n);
  std::vector<double> row_factor(m);
  for (std::size_t i = 0; i < m; ++i) {
    double scale = std::abs(lp.b[i]);
    for (double v : lp.a[i]) {
      scale = std::max(scale, std::abs(v));
    }
    const double sign = lp.b[i] < 0 ? -1.0 : 1.0;
    const double factor = scale > 0 ? sign / scale : sign;
    row_factor[i] = factor;
    for (std::size_t j = 0; j < n; ++j) {
      t.at(i, j) = lp.a[i][j] * factor;
    }
    t.rhs(i) = lp.b[i] * factor;
    t.at(i, t.artificial(i)) = 1.0;
    t.basis()[i] = t.artificial(i);
  }

  // Phase 1: minimise the sum of the artificials, starting from the all-artificial basis.
  const std::size_t obj = t.objective_row();
  double rhs_total = 0;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      t.at(obj, j) -= t.at(i, j);
    }
    t.rhs(obj) -= t.rhs(i);
    rhs_total += t.rhs(i);
  }
  ACCO_RETURN_IF_ERROR(t.optimise(n));
  if (-t.rhs(obj) > kEps * (1 + rhs_total)) {
    return fail(Errc::kInvalidArgument, "linear program: infeasible");
  }
  // Drive the artificials still basic (at zero) out of the basis; a row with no original
  // coefficient left is redundant and keeps its artificial at zero.
  for (std::size_t i = 0; i < m; ++i) {
    if (t.basis()[i] < n) {
      continue;
    }
    for (std::size_t j = 0; j < n; ++j) {
      if (std::abs(t.at(i, j)) > kEps) {
        t.pivot(i, j);
        break;
      }
    }
  }

  // Phase 2: reduced costs of the original objective in the current basis.
  for (std::size_t j = 0; j < n; ++j) {
    double d = lp.c[j];
    for (std::size_t i = 0; i < m; ++i) {
      const std::size_t basic = t.basis()[i];
      if (basic < n) {
        d -= lp.c[basic] * t.at(i, j);
      }
    }
    t.at(obj, j) = d;
  }
  for (std::size_t i = 0; i < m; ++i) {
    t.at(obj, t.artificial(i)) = 0;
  }
  double value = 0;
  for (std::size_t i = 0; i < m; ++i) {
    const std::size_t basic = t.basis()[i];
    if (basic < n) {
      value += lp.c[basic] * t.rhs(i);
    }
  }
  t.rhs(obj) = -value;
  ACCO_ASSIGN_OR_RETURN(const bool bounded, t.optimise(n));
  if (!bounded) {
    return fail(Errc::kInvalidArgument, "linear program: unbounded");
  }

  LpSolution solution;
  solution.x.assign(n, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    const std::size_t basic = t.basis()[i];
    if (basic < n) {
      solution.x[basic] = std::max(0.0, t.rhs(i));
    }
  }
  for (std::size_t j = 0; j < n; ++j) {
    solution.objective += lp.c[j] * solution.x[j];
  }
  // y = c_B B^-1; the artificial columns hold B^-1 of the scaled rows, hence the row factors.
  solution.duals.assign(m, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    double y = 0;
    for (std::size_t r = 0; r < m; ++r) {
      const std::size_t basic = t.basis()[r];
      if (basic < n) {
        y += lp.c[basic] * t.at(r, t.artificial(i));
      }
    }
    solution.duals[i] = y * row_factor[i];
  }
  return solution;
}

}  // namespace acco::sched::detail
