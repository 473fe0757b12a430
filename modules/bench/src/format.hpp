// Formatting shared by the text and HTML reports: short sizes, latencies, and HTML escaping
// (percentages are units::format_percent).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acco/bench/result.hpp"

namespace acco::bench::detail {

// "4 KiB", "1 GiB" for powers of two; format_bytes ("1.50 MiB") otherwise.
[[nodiscard]] std::string size_text(std::uint64_t bytes);
// A latency case: one measured as times per copy (latency_seconds) with no rate.
[[nodiscard]] bool is_latency(const BenchResult& result);
// A time per copy in microseconds: "2.40 us", "302.15 us".
[[nodiscard]] std::string latency_text(double seconds);
// The median, min and max columns: the rate, or the time per copy for a latency case, or "-".
[[nodiscard]] std::string median_text(const BenchResult& result);
[[nodiscard]] std::string min_text(const BenchResult& result);
[[nodiscard]] std::string max_text(const BenchResult& result);
// A latency case's times in one phrase: "median 2.40 us, min 2.10 us, max 9.80 us, p99 5.10 us"
// (p99 "-" below kMinSamplesForP99 copies, or when the result was read without it).
[[nodiscard]] std::string latency_summary(const BenchResult& result);
// The peak a sweep is judged against: the link's peak, else the best rate measured.
[[nodiscard]] double sweep_reference(const BenchResult& result);
// The devices the results name, in the order they first appear; "a->b" (peer cases) and the
// host's own cases ("host") left out.
[[nodiscard]] std::vector<std::string> devices_of(const BenchRun& run);
// The index of `name` in `names`, appended when absent.
std::size_t index_of(std::vector<std::string>& names, const std::string& name);
// The p2p case's rates as a matrix, nvbandwidth's layout: values[r][c] from devices[r] to
// devices[c]; unset where nothing was measured (a device to itself). Devices in the order the
// run first names them; empty when no p2p result is ok. The results name a pair "from->to".
struct PeerMatrix {
  std::vector<std::string> devices;
  std::vector<std::vector<std::optional<double>>> values;
};
[[nodiscard]] PeerMatrix peer_matrix(const BenchRun& run);
// & < > " ' as entities: safe in element text and in quoted attribute values.
[[nodiscard]] std::string escape(std::string_view text);

}  // namespace acco::bench::detail
