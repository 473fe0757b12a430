// The task graphs `acco sim --dag` reads from files others wrote: acco.dag/1 JSON and the
// Standard Task Graph Set's STG text, each turned into the workload the simulator runs.
#include <string>

#include <nlohmann/json.hpp>

#include "acco/core/json.hpp"
#include "acco/sim/dag_file.hpp"

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = acco::fuzz::text(data, size);
  if (const auto json = acco::core::parse_json(text, "fuzz")) {
    (void)acco::sim::workload_from_dag(*json);
  }
  if (const auto dag = acco::sim::dag_from_stg(text)) {
    (void)acco::sim::workload_from_dag(*dag);
  }
  return 0;
}
