// Formatting shared by the text and HTML reports: short sizes, latencies, and HTML escaping
// (percentages are units::format_percent).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "acco/bench/result.hpp"

namespace acco::bench::detail {

// "4 KiB", "1 GiB" for powers of two; format_bytes ("1.50 MiB") otherwise.
[[nodiscard]] std::string size_text(std::uint64_t bytes);
// The median column: the rate, or the latency for a latency-only case, or "-".
[[nodiscard]] std::string median_text(const BenchResult& result);
// The peak a sweep is judged against: the link's peak, else the best rate measured.
[[nodiscard]] double sweep_reference(const BenchResult& result);
// & < > " ' as entities: safe in element text and in quoted attribute values.
[[nodiscard]] std::string escape(std::string_view text);

}  // namespace acco::bench::detail
