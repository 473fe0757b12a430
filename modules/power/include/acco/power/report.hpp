// The text of `acco power status` and `acco power run` as report blocks (report::render_text
// renders them); their JSON is to_json in status.hpp and governor_loop.hpp.
#pragma once

#include "acco/power/governor_loop.hpp"
#include "acco/power/status.hpp"
#include "acco/report/document.hpp"

namespace acco::power {

// "acco power status: N device(s) (NVML <nvml>)", a table of every device (state, temperature,
// power, the limits, throttle reasons) and one line per limit a previous governor left changed.
[[nodiscard]] report::Document status_report(const PowerStatus& status);

// "acco power run: R round(s) over T (stopped by S); A action(s), N applied" (and the dry-run
// hint), then each device's state, limit, weight and note at the end of the run.
[[nodiscard]] report::Document governor_report(const GovernorReport& report);

}  // namespace acco::power
