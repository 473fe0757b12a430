// The power governor on the simulation's virtual clock: every period (the governor's own, 1 s as
// NVML's power average) each simulated device's sample goes to power's Governor, and its actions
// are applied as `acco schedule --simulate-thermal` applies them: limits and clocks to the
// simulated devices (power's simulated actuator, through the controller), the weight as the
// device's headroom in the policy's view, "no new work" and "drain" closing the device to new
// tasks (a drain also moves its queued tasks elsewhere). Engine-side only: one per run.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/power/governor_run.hpp"
#include "acco/power/simulated_device.hpp"
#include "acco/sim/simulate.hpp"

namespace acco::sim {

class Governed {
 public:
  // `devices` (the run's thermal models, platform order) must outlive this; `names` are the
  // devices' report names ("n0 GPU5"). kInvalidArgument for a mode power does not parse.
  [[nodiscard]] static Result<std::unique_ptr<Governed>> create(
      const std::string& mode, std::vector<power::SimulatedDevice>& devices,
      std::vector<std::string> names);
  ~Governed();
  Governed(const Governed&) = delete;
  Governed& operator=(const Governed&) = delete;
  Governed(Governed&&) = delete;
  Governed& operator=(Governed&&) = delete;

  // One round at virtual time `now`: each device's sample (its model already advanced to now)
  // with `utilization[d]`, the share of the last period it ran tasks, as NVML's window gives it.
  // Answers the devices a drain just closed (their queued tasks are to move).
  [[nodiscard]] std::vector<int> tick(const std::vector<double>& utilization, double now);

  [[nodiscard]] double period_seconds() const { return period_; }
  // The policy's view of device d: its weight (the governor's headroom), and whether it takes
  // new tasks (neither "no new work" nor drained).
  [[nodiscard]] double weight(int d) const { return weight_[static_cast<std::size_t>(d)]; }
  [[nodiscard]] bool open(int d) const { return open_[static_cast<std::size_t>(d)] != 0; }
  [[nodiscard]] const std::vector<GovernorAction>& actions() const { return actions_; }

 private:
  Governed(std::vector<power::SimulatedDevice>& devices, std::vector<std::string> names);
  [[nodiscard]] Status on_scheduler(const power::Action& a);

  std::vector<power::SimulatedDevice>& devices_;
  std::vector<std::string> names_;
  std::unique_ptr<power::Actuator> actuator_;
  std::unique_ptr<power::GovernorRun> run_;
  double period_ = 1;
  std::vector<double> weight_;
  std::vector<char> open_;
  std::vector<char> accepting_;
  std::vector<char> drained_;
  std::vector<int> closed_now_;  // drained during the current tick
  std::vector<GovernorAction> actions_;
  std::vector<power::DeviceSample> samples_;
};

}  // namespace acco::sim
