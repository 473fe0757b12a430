// What acco sends the simulation engine (acco-sim-engine, the only program that loads SimGrid)
// on its standard input: the platform, the workload and the options, as JSON.
#pragma once

#include <nlohmann/json.hpp>

#include "acco/core/result.hpp"
#include "acco/sched/workload.hpp"
#include "acco/sim/platform.hpp"
#include "acco/sim/simulate.hpp"

namespace acco::sim {

struct Request {
  Platform platform;
  sched::Workload workload;
  SimOptions options;
};

[[nodiscard]] nlohmann::json request_json(const Platform& platform, const sched::Workload& workload,
                                          const SimOptions& options);
// kInvalidArgument naming what is missing or of the wrong type.
[[nodiscard]] Result<Request> request_from_json(const nlohmann::json& json);

}  // namespace acco::sim
