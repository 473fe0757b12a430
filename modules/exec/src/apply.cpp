#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "acco/core/units.hpp"
#include "acco/exec/binding.hpp"

namespace acco::exec {
namespace {

constexpr int kMaxNodes = 1024;  // bits in the node mask handed to set_mempolicy

}  // namespace

std::vector<int> current_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) {
    return cpus;
  }
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) {
      cpus.push_back(cpu);
    }
  }
  return cpus;
}

Status apply_binding(const Binding& binding, std::vector<std::string>& notes) {
  if (!binding.cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (const int cpu : binding.cpus) {
      if (cpu >= 0 && cpu < CPU_SETSIZE) {
        CPU_SET(cpu, &set);
      }
    }
    if (::sched_setaffinity(0, sizeof set, &set) != 0) {
      return fail(Errc::kUnavailable,
                  fmt::format("cannot bind to CPUs {}: {} (none of them is online here?)",
                              units::format_cpulist(binding.cpus), std::strerror(errno)));
    }
  }
  if (binding.memory_node >= 0) {
    if (binding.memory_node >= kMaxNodes) {
      notes.push_back(fmt::format("memory node {} is beyond the {} nodes acco binds: left alone",
                                  binding.memory_node, kMaxNodes));
    } else {
      std::vector<unsigned long> mask(kMaxNodes / (8 * sizeof(unsigned long)), 0);
      const auto bits = 8 * sizeof(unsigned long);
      mask[static_cast<std::size_t>(binding.memory_node) / bits] |=
          1UL << (static_cast<std::size_t>(binding.memory_node) % bits);
      // set_mempolicy(2) reads maxnode - 1 bits of the mask. glibc has no wrapper (libnuma's
      // is a dependency for one call), so the call is syscall(2), a vararg by nature.
      // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg)
      if (::syscall(SYS_set_mempolicy, MPOL_BIND, mask.data(), kMaxNodes + 1) != 0) {
        const int error = errno;
        notes.push_back(
            error == EINVAL
                ? fmt::format("memory node {} does not exist here (or has no memory): memory left "
                              "as inherited",
                              binding.memory_node)
                : fmt::format("memory not bound to node {}: set_mempolicy: {} (a container's "
                              "seccomp profile may refuse it)",
                              binding.memory_node, std::strerror(error)));
      }
    }
  }
  for (const EnvVar& var : binding.env) {
    if (::setenv(var.name.c_str(), var.value.c_str(), 1) != 0) {
      return fail(Errc::kInternal,
                  fmt::format("cannot set {}: {}", var.name, std::strerror(errno)));
    }
  }
  return {};
}

}  // namespace acco::exec
