// One actuator in front of several: each change goes to the actuator of the source the device's
// samples come from (NVML GPUs, simulated devices, RAPL packages), so one governor controls a
// mixed machine. The sources are learnt from the samples of each round.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/power/actuator.hpp"
#include "acco/power/sample.hpp"

namespace acco::power {

// Not thread-safe: the governor's one caller (GovernorRun holds its lock around every change).
class RoutedActuator final : public Actuator {
 public:
  // Changes to devices whose samples carry source `source` ("nvml", "simulated", "rapl") go to
  // `actuator`; a second actuator for the same source replaces the first.
  void add(const std::string& source, std::unique_ptr<Actuator> actuator);
  // Learns which source each uuid belongs to (call with every round's samples).
  void learn(const std::vector<DeviceSample>& samples);

  [[nodiscard]] std::string name() const override { return "routed"; }
  // kNotFound for a uuid no learnt sample carried; kUnsupported for a source with no actuator
  // ("<uuid>: rapl devices cannot be controlled here"); otherwise the routed actuator's answer.
  [[nodiscard]] Status set_power_limit(const std::string& uuid, double watts) override;
  [[nodiscard]] Status lock_sm_clocks(const std::string& uuid, double min_hertz,
                                      double max_hertz) override;
  [[nodiscard]] Status unlock_sm_clocks(const std::string& uuid) override;

 private:
  [[nodiscard]] Result<Actuator*> route(const std::string& uuid) const;

  std::map<std::string, std::unique_ptr<Actuator>> by_source_;
  std::map<std::string, std::string> source_of_;  // uuid -> source
};

}  // namespace acco::power
