// One frame of `acco top`: the devices' table and the host's lines drawn from a Snapshot as plain
// text (ANSI colour optional), so the view is tested without a terminal. Rates that need two
// rounds (CPU busy, network and disk throughput) come from the previous snapshot, or read "-".
#pragma once

#include <cstddef>
#include <string>

#include "acco/analyze/snapshot.hpp"

namespace acco::monitor {

struct TopOptions {
  std::string hostname;            // shown in the header
  std::string source;              // "2 device(s), NVML off, host /" or "from http://..."
  std::string status;              // a line under the header (a failed fetch); empty for none
  std::size_t width = 0;           // lines cut to this many columns; 0: not cut
  bool colour = false;             // ANSI colours (lost red, throttled yellow); off for pipes
  std::size_t top_interfaces = 3;  // network interfaces and disks shown, busiest first
};

// The frame as lines ending in '\n', without clear-screen codes. `previous` is the snapshot of
// the frame before (null on the first); it only feeds rates. Pure and thread-compatible.
[[nodiscard]] std::string render_top(const analyze::Snapshot& now,
                                     const analyze::Snapshot* previous, const TopOptions& options);

}  // namespace acco::monitor
