// Units and their text form. Everything inside acco is in base units (bytes, bytes per second,
// seconds); these helpers parse what sysfs prints and format what users read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acco/core/result.hpp"

namespace acco::units {

// "1.5 GB/s" style, decimal SI prefixes as link and benchmark tools print them (1 GB = 1e9 B).
[[nodiscard]] std::string format_rate(double bytes_per_second);
// "80 GiB" style, binary prefixes as memory sizes are printed.
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);
// "850 ns", "5.20 us", "1.30 ms", "2.00 s". ASCII, so terminal columns line up.
[[nodiscard]] std::string format_seconds(double seconds);
// "400 Gb/s" for network rates given in bits per second.
[[nodiscard]] std::string format_bit_rate(double bits_per_second);
// "83%" for 0.83; "8.3%" for 0.083 with one decimal.
[[nodiscard]] std::string format_percent(double fraction, int decimals = 0);

// Strict integer parsing of a whole trimmed string; base 0 accepts "0x" prefixes.
[[nodiscard]] Result<std::int64_t> parse_int(std::string_view text, int base = 10);
[[nodiscard]] Result<double> parse_double(std::string_view text);
// A byte count: "4096", "64KiB", "256MiB", "1GiB", "2GB" (binary and decimal prefixes, B optional
// after them). kInvalidArgument otherwise.
[[nodiscard]] Result<std::uint64_t> parse_bytes(std::string_view text);
// A duration in seconds: "250ms", "1s", "1.5s", "2m", "1h", "7d", "30" (seconds). Negative,
// unitless garbage or an unknown unit is kInvalidArgument.
[[nodiscard]] Result<double> parse_duration(std::string_view text);
// Linux cpulist format: "0-3,8,10-11"; an empty string is an empty list.
[[nodiscard]] Result<std::vector<int>> parse_cpulist(std::string_view text);
// Linux cpumask format (node cpumap, PCI local_cpus): 32-bit hex words, most significant first,
// "00000000,0000ffff" = CPUs 0-15; an empty string is an empty list. kInvalidArgument otherwise.
[[nodiscard]] Result<std::vector<int>> parse_cpumask(std::string_view text);
// Inverse of parse_cpulist, in canonical compressed form.
[[nodiscard]] std::string format_cpulist(const std::vector<int>& cpus);

// Without leading and trailing blanks: space, tab, CR, LF, VT, FF and NUL (a trailing "\n\0" is
// seen in real sysfs attributes).
[[nodiscard]] std::string_view trim(std::string_view text);
// Printable ASCII as is; NUL, newline, tab and CR as \0 \n \t \r, a backslash doubled, any other
// byte as \xNN. For quoting text read from outside in messages and evidence.
[[nodiscard]] std::string escape(std::string_view text);
// escape(text) cut to at most `max_chars` characters (never inside an escape), followed by
// "... (N bytes)" when it was cut: how a message quotes a line or a file read from outside, so a
// binary or huge input neither fills the terminal nor reaches it as raw bytes.
inline constexpr std::size_t kExcerptChars = 80;
[[nodiscard]] std::string excerpt(std::string_view text, std::size_t max_chars = kExcerptChars);
// A sysfs attribute's text as read, for evidence: without the one newline that ends every
// attribute, the rest escaped ("0-31\n\0" stays visible as 0-31\n\0).
[[nodiscard]] std::string quote_attribute(std::string_view text);
[[nodiscard]] std::vector<std::string> split(std::string_view text, char sep);

}  // namespace acco::units
