#include "acco/sched/policy.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "acco/core/units.hpp"

#include "policies/policies.hpp"

namespace acco::sched {

namespace {

struct Named {
  PolicyKind kind;
  std::string_view name;
};
constexpr Named kNames[] = {
    {PolicyKind::kEager, "eager"},
    {PolicyKind::kRoundRobin, "round-robin"},
    {PolicyKind::kLeastLoaded, "least-loaded"},
    {PolicyKind::kDmda, "dmda"},
    {PolicyKind::kWorkStealing, "ws"},
    {PolicyKind::kHeft, "heft"},
};

}  // namespace

std::string_view to_string(PolicyKind kind) {
  for (const Named& n : kNames) {
    if (n.kind == kind) {
      return n.name;
    }
  }
  return "?";
}

Result<PolicyKind> policy_from_string(std::string_view name) {
  for (const Named& n : kNames) {
    if (n.name == name) {
      return n.kind;
    }
  }
  return fail(Errc::kInvalidArgument,
              fmt::format("policy '{}': expected eager, round-robin, least-loaded, dmda, ws or "
                          "heft",
                          name));
}

Result<std::vector<PolicyKind>> parse_policies(std::string_view list) {
  if (list == "all") {
    return all_policies();
  }
  std::vector<PolicyKind> policies;
  for (const auto& part : units::split(list, ',')) {
    const std::string name(units::trim(part));
    const auto kind = policy_from_string(name);
    if (!kind) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("'{}' is not one of eager, round-robin, least-loaded, dmda, ws, "
                              "heft, or all",
                              name));
    }
    if (std::find(policies.begin(), policies.end(), *kind) != policies.end()) {
      return fail(Errc::kInvalidArgument, fmt::format("'{}' named twice", name));
    }
    policies.push_back(*kind);
  }
  return policies;
}

const std::vector<PolicyKind>& all_policies() {
  static const std::vector<PolicyKind> all = {PolicyKind::kEager,        PolicyKind::kRoundRobin,
                                              PolicyKind::kLeastLoaded,  PolicyKind::kDmda,
                                              PolicyKind::kWorkStealing, PolicyKind::kHeft};
  return all;
}

Decision select_device(PolicyKind kind, const SystemView& view, const PolicyKnobs& knobs,
                       bool explain) {
  switch (kind) {
    case PolicyKind::kEager:
      return detail::select_eager(explain);
    case PolicyKind::kRoundRobin:
      return detail::select_round_robin(view, explain);
    case PolicyKind::kLeastLoaded:
      return detail::select_least_loaded(view, "least-loaded", explain);
    case PolicyKind::kDmda:
    case PolicyKind::kWorkStealing:
    case PolicyKind::kHeft:
      return detail::select_dmda(view, knobs, explain);
  }
  return {};
}

bool steal_pays(const DeviceView& victim, const DeviceView& thief, double now) {
  if (!thief.eligible) {
    return false;
  }
  if (!thief.predicted || !victim.predicted) {
    return victim.queued >= 2;
  }
  const double thief_end = now + thief.transfer + *thief.predicted / thief.weight;
  return victim.available_at - thief_end > 0;
}

std::unique_ptr<Policy> make_policy(PolicyKind kind) {
  switch (kind) {
    case PolicyKind::kEager:
      return detail::make_eager_policy();
    case PolicyKind::kRoundRobin:
      return detail::make_round_robin_policy();
    case PolicyKind::kLeastLoaded:
      return detail::make_least_loaded_policy();
    case PolicyKind::kDmda:
      return detail::make_dmda_policy();
    case PolicyKind::kWorkStealing:
      return detail::make_work_stealing_policy();
    case PolicyKind::kHeft:
      return detail::make_heft_policy();
  }
  return detail::make_dmda_policy();
}

}  // namespace acco::sched
