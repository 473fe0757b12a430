// The dashboard page `acco serve` answers at /: one self-contained HTML file (inline CSS and
// JavaScript, no network access) that polls the JSON API and draws, per device, temperature
// against its thresholds, power against its enforced limit, utilization and PCIe link
// utilization against the link's peak, plus the daemon's recent events.
#pragma once

#include <string_view>

namespace acco::monitor {

[[nodiscard]] std::string_view dashboard_html();

}  // namespace acco::monitor
