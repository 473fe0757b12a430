// The pure selection rule of each policy (select_device dispatches to them) and the factories of
// the Policy objects, one file per policy.
#pragma once

#include <memory>
#include <string_view>

#include "acco/sched/policy.hpp"

namespace acco::sched::detail {

Decision select_eager(bool explain);
Decision select_round_robin(const SystemView& view, bool explain);
// Fewest queued tasks per unit of weight and speed; `label` opens the reason.
Decision select_least_loaded(const SystemView& view, std::string_view label, bool explain);
Decision select_dmda(const SystemView& view, const PolicyKnobs& knobs, bool explain);

std::unique_ptr<Policy> make_eager_policy();
std::unique_ptr<Policy> make_round_robin_policy();
std::unique_ptr<Policy> make_least_loaded_policy();
std::unique_ptr<Policy> make_dmda_policy();
std::unique_ptr<Policy> make_work_stealing_policy();
std::unique_ptr<Policy> make_heft_policy();

}  // namespace acco::sched::detail
