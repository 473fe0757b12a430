// The JSON documents acco reads back from files others may have written or cut short: machine
// snapshots (and their file records and NVML answers), daemon snapshots, bench runs, transfer
// and tune profiles, scheduler models, job requests and the job table's rows; each reader is
// given the whole document.
#include <string>

#include "acco/analyze/json.hpp"
#include "acco/bench/result.hpp"
#include "acco/core/fs.hpp"
#include "acco/core/json.hpp"
#include "acco/monitor/jobs.hpp"
#include "acco/sched/perf_model.hpp"
#include "acco/topo/nvml.hpp"
#include "acco/topo/probe.hpp"
#include "acco/transfer/profile.hpp"
#include "acco/tune/tune_profile.hpp"

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto json = acco::core::parse_json(acco::fuzz::text(data, size), "fuzz");
  if (!json) {
    return 0;
  }
  (void)acco::topo::snapshot_from_json(*json);
  (void)acco::core::fs_record_from_json(*json);
  (void)acco::topo::nvml_report_from_json(*json);
  (void)acco::analyze::snapshot_from_json(*json);
  (void)acco::bench::run_from_json(*json);
  (void)acco::transfer::profile_from_json(*json);
  (void)acco::tune::tune_profile_from_json(*json);
  (void)acco::sched::PerfModels::from_json(*json);
  (void)acco::monitor::parse_request(*json);  // a POST /api/v1/jobs body
  (void)acco::monitor::parse_job(*json);      // a row of the job table, an API answer
  return 0;
}
