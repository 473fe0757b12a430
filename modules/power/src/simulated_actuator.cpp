// The simulated devices' actuator: NVML's set-limit and locked-clock rules on SimulatedDevice.
#include <utility>

#include <fmt/format.h>

#include "acco/power/actuator.hpp"
#include "acco/power/simulated_device.hpp"
#include "acco/power/thermal_rig.hpp"

namespace acco::power {
namespace {

class SimulatedActuator final : public Actuator {
 public:
  using WithDevice = std::function<Status(int, const std::function<void(SimulatedDevice&)>&)>;
  SimulatedActuator(WithDevice with_device, int count)
      : with_device_(std::move(with_device)), count_(count) {}

  [[nodiscard]] std::string name() const override { return "simulated"; }

  [[nodiscard]] Status set_power_limit(const std::string& uuid, double watts) override {
    return on(uuid, fmt::format("set power limit of {} to {:.0f} W", uuid, watts),
              [watts](SimulatedDevice& d) { return d.set_power_limit(watts); });
  }

  [[nodiscard]] Status lock_sm_clocks(const std::string& uuid, double min_hertz,
                                      double max_hertz) override {
    if (!(min_hertz >= 0 && max_hertz > 0 && min_hertz <= max_hertz)) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("lock clocks of {}: [{:.0f}, {:.0f}] MHz is not a range", uuid,
                              min_hertz / 1e6, max_hertz / 1e6));
    }
    return on(uuid, fmt::format("lock clocks of {}", uuid), [max_hertz](SimulatedDevice& d) {
      d.lock_sm_clock(max_hertz);
      return Status{};
    });
  }

  [[nodiscard]] Status unlock_sm_clocks(const std::string& uuid) override {
    return on(uuid, fmt::format("unlock clocks of {}", uuid), [](SimulatedDevice& d) {
      d.lock_sm_clock(0);
      return Status{};
    });
  }

 private:
  Status on(const std::string& uuid, const std::string& what,
            const std::function<Status(SimulatedDevice&)>& fn) {
    int index = -1;
    for (int i = 0; i < count_; ++i) {
      if (simulated_uuid(i) == uuid) {
        index = i;
      }
    }
    if (index < 0) {
      return fail(Errc::kNotFound, fmt::format("{}: no simulated device has this uuid", what));
    }
    Status result;
    Status reached = with_device_(index, [&](SimulatedDevice& d) {
      if (d.lost()) {
        result = fail(Errc::kDeviceError, fmt::format("{}: GPU is lost", what));
        return;
      }
      result = fn(d);
    });
    if (!reached) {
      return reached;
    }
    if (!result) {
      return fail(result.error().code, fmt::format("{}: {}", what, result.error().message));
    }
    return result;
  }

  WithDevice with_device_;
  int count_;
};

}  // namespace

std::unique_ptr<Actuator> make_simulated_actuator(
    std::function<Status(int, const std::function<void(SimulatedDevice&)>&)> with_device,
    int count) {
  return std::make_unique<SimulatedActuator>(std::move(with_device), count);
}

}  // namespace acco::power
