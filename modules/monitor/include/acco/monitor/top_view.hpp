// One frame of `acco top`: the devices' table and the host's lines drawn from a Snapshot as plain
// text (ANSI colour optional), so the view is tested without a terminal. Rates that need two
// rounds (CPU busy, network and disk throughput) come from the previous snapshot, or read "-".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "acco/analyze/snapshot.hpp"

namespace acco::monitor {

// The order of the devices' rows: by id, or busiest / hungriest / hottest first.
enum class TopSort {
  kId,
  kUtilization,
  kPower,
  kTemperature
};
[[nodiscard]] std::string_view to_string(TopSort sort);  // "id", "util", "power", "temp"
[[nodiscard]] TopSort next_sort(TopSort sort);           // the `s` key: the next order

struct TopOptions {
  std::string hostname;            // shown in the header
  std::string source;              // "2 device(s), NVML off, host /" or "from http://..."
  std::string status;              // a line under the header (a failed fetch); empty for none
  std::size_t width = 0;           // lines cut to this many columns; 0: not cut
  bool colour = false;             // ANSI colours (lost red, throttled yellow); off for pipes
  std::size_t top_interfaces = 3;  // network interfaces and disks shown, busiest first
  TopSort sort = TopSort::kId;
  std::string device{};  // only this device's row (the `f` key); empty: every device
  bool keys = false;     // a line naming the keys (the live view on a terminal)
};

// The frame as lines ending in '\n', without clear-screen codes. `previous` is the snapshot of
// the frame before (null on the first); it only feeds rates. With a width, the devices' table
// fits it: MODEL narrows, then columns are hidden (SM clock, PCIe TX, memory, PCIe RX,
// temperature, in that order) and a line names them; the header wraps at its " - "; other
// lines are cut. Pure and
// thread-compatible.
[[nodiscard]] std::string render_top(const analyze::Snapshot& now,
                                     const analyze::Snapshot* previous, const TopOptions& options);

}  // namespace acco::monitor
