#include "acco/power/host_source.hpp"

#include <utility>
#include <vector>

#include <unistd.h>

#include "acco/core/clock.hpp"

#include "proc_readers.hpp"
#include "sys_readers.hpp"

namespace acco::power {
namespace {

class FsHostSource final : public HostSource {
 public:
  FsHostSource(const core::Fs& fs, HostSourceOptions options)
      : fs_(fs), options_(std::move(options)) {}

  Result<HostSample> read() override {
    HostSample s;
    s.time_unix_nanos = options_.clock();
    std::vector<core::FileIssue> issues;
    core::SysfsReader files(fs_, issues);
    ACCO_ASSIGN_OR_RETURN(s.cpu, detail::read_cpu_times(files, options_.ticks_per_second), "host");
    s.memory_bytes = detail::read_memory(files);
    s.pressure = detail::read_pressure(files);
    s.disks = detail::read_disks(files);
    // A container may have no sysfs; /proc/net/dev is per network namespace all the same.
    s.net =
        files.exists("/sys/class/net") ? detail::read_net(files) : detail::read_proc_net_dev(files);
    s.ib_ports = detail::read_ib_ports(files);
    s.hwmon = detail::read_hwmon(files);
    s.rapl = detail::read_rapl(files);
    // Each problem names its file (a read error's message, or malformed()'s).
    for (auto& issue : issues) {
      s.issues.push_back(std::move(issue.problem));
    }
    return s;
  }

 private:
  const core::Fs& fs_;
  HostSourceOptions options_;
};

}  // namespace

long clock_ticks_per_second() {
  const long ticks = ::sysconf(_SC_CLK_TCK);
  return ticks > 0 ? ticks : 100;
}

std::unique_ptr<HostSource> make_host_source(const core::Fs& fs, HostSourceOptions options) {
  ACCO_CHECK(options.ticks_per_second > 0);
  if (!options.clock) {
    options.clock = core::now_unix_nanos;
  }
  return std::make_unique<FsHostSource>(fs, std::move(options));
}

}  // namespace acco::power
