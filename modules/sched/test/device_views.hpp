// Hand-made device views for the policy tests.
#pragma once

#include <optional>

#include "acco/sched/policy.hpp"

namespace acco::sched::test_views {

// An eligible device free at `available_at`, with a calibrated prediction when one is given.
inline DeviceView device(double available_at, std::optional<double> predicted,
                         double transfer = 0) {
  DeviceView v;
  v.eligible = true;
  v.available_at = available_at;
  v.predicted = predicted;
  v.calibrated = predicted.has_value();
  v.transfer = transfer;
  return v;
}

}  // namespace acco::sched::test_views
