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

// A recorded run's task and copy records, as the engine answers them beside the result: arrays
// of numbers, the task's type and name left to the side that holds the workload.
[[nodiscard]] nlohmann::json records_json(const SimResult& result);
// Fills `result`'s records from `json`, each task's type and name from `workload`;
// kInvalidArgument when a record is malformed or names a task the workload lacks.
[[nodiscard]] Status read_records(const nlohmann::json& json, const sched::Workload& workload,
                                  SimResult& result);

}  // namespace acco::sim
