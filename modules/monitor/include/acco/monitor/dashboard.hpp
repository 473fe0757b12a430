// The dashboard page `acco serve` answers at /: one self-contained HTML file (inline CSS,
// JavaScript and SVG, no network access) that polls the JSON API and draws the host (CPU,
// memory, network and disk rates) and, per device, temperature against its thresholds, power
// against its limits, utilisation, memory against its total and PCIe link utilisation against
// the link's peak, each with a title, axis units and a legend; the probe's findings; the recent
// events as a table; and, without a device, what the daemon looked for and how to get one.
#pragma once

#include <string_view>

namespace acco::monitor {

[[nodiscard]] std::string_view dashboard_html();

}  // namespace acco::monitor
