// The median of a few values, reordering them in place: the performance models (per batch of
// samples) and the runtime's copy-cost estimate (per demand copy) both need one.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>

#include "acco/core/result.hpp"

namespace acco::sched::detail {

// The middle value, or the mean of the two middle ones for an even count. `values` must not be
// empty.
inline double median_in_place(std::span<double> values) {
  ACCO_CHECK(!values.empty());
  const auto mid = static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[static_cast<std::size_t>(mid)];
  if (values.size() % 2 == 1) {
    return upper;
  }
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

}  // namespace acco::sched::detail
