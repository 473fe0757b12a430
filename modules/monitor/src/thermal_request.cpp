// thermal_options: `acco schedule --simulate-thermal`'s flags checked.
#include "acco/core/option_check.hpp"
#include "acco/monitor/thermal_experiment.hpp"

namespace acco::monitor {

Result<ThermalExperimentOptions> thermal_options(const ThermalRequest& r,
                                                 const sched::DeviceSetup& devices) {
  if (devices.cuda) {
    return fail(Errc::kInvalidArgument,
                "--simulate-thermal runs simulated devices: it cannot go with --devices cuda");
  }
  ACCO_RETURN_IF_ERROR(
      core::check_range("--thermal-scale", r.scale, 1.0, 10000.0, "a factor from 1 to 10000"));
  ThermalExperimentOptions t;
  t.time_scale = r.scale;
  ACCO_ASSIGN_OR_RETURN(t.cooling, parse_cooling(r.cooling), "--cooling");
  ACCO_RETURN_IF_ERROR(
      sched::check_per_device(t.cooling.size(), static_cast<std::size_t>(devices.host_devices)),
      "--cooling");
  ACCO_ASSIGN_OR_RETURN(t.governors, parse_governor_settings(r.governor), "--governor");
  return t;
}

}  // namespace acco::monitor
