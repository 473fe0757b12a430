// What a collective bench run leaves behind: its results in the bench history (so `--compare`
// reads them like the copy cases), and the allreduce's fusion threshold in the machine's tune
// profile (`acco bench --collective --save-fusion`).
#pragma once

#include <string>
#include <string_view>

#include "acco/bench/result.hpp"
#include "acco/cluster/collective_bench.hpp"
#include "acco/core/result.hpp"
#include "acco/topo/machine.hpp"
#include "acco/tune/tune_profile.hpp"

namespace acco::cluster {

// Each op as a bench result: case "collective_<op>_<R>r<N>n" (host buffers; "_<path>" appended
// for device ones), the plateau bus bandwidth against the expected peak, the small-message
// latency, busbw per size as the sweep; on `machine`'s fingerprint.
[[nodiscard]] bench::BenchRun history_run(const CollectiveRun& run, const topo::Machine& machine);

struct SavedFusion {
  std::string path;  // the tune profile written
  tune::FusionTuning fusion;
};

// The allreduce fit's threshold for this job's link class into the machine's tune profile in
// `tune_dir` (empty: tune::tune_directory()), created when there is none; the rest of it kept.
// kUnavailable when the allreduce times did not fit or `machine` is null (no fingerprint, so no
// profile name); kCannotWrite when the profile cannot be saved.
[[nodiscard]] Result<SavedFusion> save_fusion_threshold(const CollectiveRun& run,
                                                        const topo::Machine* machine,
                                                        std::string_view tune_dir = {});

}  // namespace acco::cluster
