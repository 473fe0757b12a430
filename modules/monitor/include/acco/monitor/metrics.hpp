// A Snapshot as Prometheus text (exposition format 0.0.4): acco_ metric families in base units
// built in a prometheus-cpp registry, one series per device and label set; a reading a device
// could not give has no series at all. `dcgm_compat` adds the series dcgm-exporter exposes by
// default under DCGM's names and units, so its dashboards and alerts keep working. The metric
// reference is docs/metrics.md.
#pragma once

#include <string>

#include "acco/analyze/snapshot.hpp"

namespace acco::monitor {

struct MetricsOptions {
  bool dcgm_compat = false;
  std::string version = {};   // acco_build_info{version}
  std::string hostname = {};  // DCGM's Hostname label in compat series
};

inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

[[nodiscard]] std::string render_metrics(const analyze::Snapshot& snapshot,
                                         const MetricsOptions& options);

}  // namespace acco::monitor
