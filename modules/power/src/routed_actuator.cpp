#include "acco/power/routed_actuator.hpp"

#include <utility>

#include <fmt/format.h>

namespace acco::power {

void RoutedActuator::add(const std::string& source, std::unique_ptr<Actuator> actuator) {
  by_source_[source] = std::move(actuator);
}

void RoutedActuator::learn(const std::vector<DeviceSample>& samples) {
  for (const DeviceSample& s : samples) {
    source_of_[s.uuid] = s.source;
  }
}

Result<Actuator*> RoutedActuator::route(const std::string& uuid) const {
  const auto source = source_of_.find(uuid);
  if (source == source_of_.end()) {
    return fail(Errc::kNotFound, fmt::format("{}: no such device", uuid));
  }
  const auto actuator = by_source_.find(source->second);
  if (actuator == by_source_.end()) {
    return fail(Errc::kUnsupported,
                fmt::format("{}: {} devices cannot be controlled here", uuid, source->second));
  }
  return actuator->second.get();
}

Status RoutedActuator::set_power_limit(const std::string& uuid, double watts) {
  ACCO_ASSIGN_OR_RETURN(auto* a, route(uuid));
  return a->set_power_limit(uuid, watts);
}

Status RoutedActuator::lock_sm_clocks(const std::string& uuid, double min_hertz, double max_hertz) {
  ACCO_ASSIGN_OR_RETURN(auto* a, route(uuid));
  return a->lock_sm_clocks(uuid, min_hertz, max_hertz);
}

Status RoutedActuator::unlock_sm_clocks(const std::string& uuid) {
  ACCO_ASSIGN_OR_RETURN(auto* a, route(uuid));
  return a->unlock_sm_clocks(uuid);
}

}  // namespace acco::power
