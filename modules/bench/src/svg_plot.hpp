// The bandwidth-against-size plot of one swept case as an inline SVG element: log2 size axis
// (4 KiB to at least 1 GiB), linear GB/s axis, the measured curve, the link's peak as a dashed
// line and the size that reaches half of it.
#pragma once

#include <string>

#include "acco/bench/result.hpp"

namespace acco::bench::detail {

// One <svg> element (no XML prolog), for a result with a non-empty sweep.
[[nodiscard]] std::string svg_plot(const BenchResult& result);

}  // namespace acco::bench::detail
