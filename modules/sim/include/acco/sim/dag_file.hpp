// A task graph from a file (schema acco.dag/1, docs/schemas/dag.schema.json): named tasks with
// their run time on every device (or one time for all), and edges carrying the bytes the
// consumer reads from the producer. Each edge becomes a datum the producer writes and the
// consumer reads, so the runtime's inference rule gives back exactly the file's edges.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "acco/core/result.hpp"
#include "acco/sched/workload.hpp"

namespace acco::sim {

// Tasks in a topological order (the file's order among tasks that are ready together).
// kInvalidArgument naming the task, edge or field: a wrong schema, a duplicate or unknown task
// name, a negative or non-finite time or byte count, rows of different lengths, a self-edge or a
// cycle.
[[nodiscard]] Result<sched::Workload> workload_from_dag(const nlohmann::json& dag);
// A graph of the Standard Task Graph Set (Kasahara lab, STG format) as acco.dag/1: the first line
// the number of tasks n, then one line per task T0..T(n+1) (`id time predecessors ids...`, T0
// and T(n+1) the dummy entry and exit of time 0), then the information part (lines starting with
// '#'). Each unit of time is read as one millisecond; edges carry no data (the STG set has no
// communication costs). kInvalidArgument naming the line and what it should hold.
[[nodiscard]] Result<nlohmann::json> dag_from_stg(std::string_view text,
                                                  const std::string& name = "stg");
// The file (acco.dag/1 JSON, or STG text when it does not start with '{'), then
// workload_from_dag; errors name the path.
[[nodiscard]] Result<sched::Workload> load_dag(const std::string& path);

}  // namespace acco::sim
