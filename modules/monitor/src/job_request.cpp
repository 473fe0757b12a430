// job_request: `acco submit`'s flags checked into the job to queue.
#include <array>
#include <climits>
#include <regex>

#include <unistd.h>

#include "acco/core/option_check.hpp"
#include "acco/core/units.hpp"
#include "acco/exec/spawn.hpp"
#include "acco/monitor/jobs.hpp"

namespace acco::monitor {

Result<JobRequest> job_request(const SubmitRequest& r) {
  if (r.command.empty()) {
    return fail(Errc::kInvalidArgument, "submit: the command to run is required after --");
  }
  ACCO_RETURN_IF_ERROR(
      core::check_range("--gpus", r.gpus, 1, 1024, "a whole number from 1 to 1024"));
  JobRequest job;
  job.argv = r.command;
  job.name = r.name;
  job.gpus = r.gpus;
  if (!r.mig.empty()) {
    static const std::regex profile(R"(^([0-9]+c\.)?[0-9]+g\.[0-9]+gb(\+me)?$)", std::regex::icase);
    if (!std::regex_match(r.mig, profile)) {
      return core::bad_option("--mig", r.mig, "a MIG profile such as 1g.10gb or 3g.40gb");
    }
    job.mig = r.mig;
  }
  if (!r.memory.empty()) {
    const auto bytes = units::parse_bytes(r.memory);
    if (!bytes) {
      return core::bad_option("--memory", r.memory, "a size such as 20GiB");
    }
    job.memory_bytes = *bytes;
  }
  if (!r.memory_max.empty()) {
    const auto bytes = units::parse_bytes(r.memory_max);
    if (!bytes || *bytes == 0) {
      return core::bad_option("--memory-max", r.memory_max, "a size such as 16GiB");
    }
    job.memory_max_bytes = *bytes;
  }
  if (r.io_weight != 0) {
    ACCO_RETURN_IF_ERROR(
        core::check_range("--io-weight", r.io_weight, 1, 10000, "a whole number from 1 to 10000"));
    job.io_weight = r.io_weight;
  }
  std::array<char, PATH_MAX> cwd{};
  if (::getcwd(cwd.data(), cwd.size()) != nullptr) {
    job.cwd = cwd.data();
  }
  job.env = exec::current_environment();
  return job;
}

}  // namespace acco::monitor
