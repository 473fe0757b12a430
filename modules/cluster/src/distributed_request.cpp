// distributed_options: `acco schedule --distributed`'s flags checked.
#include "acco/cluster/dispatch.hpp"
#include "acco/cluster/distributed_schedule.hpp"
#include "acco/core/option_check.hpp"
#include "acco/core/units.hpp"
#include "acco/device/host_backend.hpp"

namespace acco::cluster {

Result<DistributedScheduleOptions> distributed_options(const DistributedRequest& r) {
  constexpr int kMaxHangAfter = 1'000'000;
  DistributedScheduleOptions d;
  ACCO_ASSIGN_OR_RETURN(d.dispatch, parse_dispatch_policies(r.dispatch), "--dispatch");
  const auto rate = device::parse_link(r.between_ranks);
  if (!rate || rate->bytes_per_second <= 0) {
    return core::bad_option("--between-ranks", r.between_ranks,
                            "a rate such as 10GB/s or pcie4x16");
  }
  d.between_ranks_bytes_per_second = rate->bytes_per_second;
  const auto lost = units::parse_duration(r.lost_after);
  if (!lost || *lost < 0.01 || *lost > 3600) {
    return core::bad_option("--lost-after", r.lost_after, "a duration from 10ms to 1h");
  }
  d.lost_after_seconds = *lost;
  if (r.hang_rank == 0 || r.hang_rank < -1 || r.hang_rank > kMaxFaultRank) {
    return core::bad_option("--hang-rank", core::option_text(static_cast<long long>(r.hang_rank)),
                            "a worker's rank, 1 or more (rank 0 coordinates)");
  }
  ACCO_RETURN_IF_ERROR(
      core::check_range("--hang-after", r.hang_after, 0, kMaxHangAfter, "between 0 and 1000000"));
  d.hang_rank = r.hang_rank;
  d.hang_after = static_cast<std::size_t>(r.hang_after);
  if (!r.slow_rank.empty()) {
    ACCO_RETURN_IF_ERROR(parse_slow_rank(r.slow_rank, d), "--slow-rank");
  }
  return d;
}

}  // namespace acco::cluster
