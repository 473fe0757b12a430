#include "acco/exec/cgroup.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acco/core/units.hpp"

namespace acco::exec {
namespace {

constexpr const char* kDelegate =
    "run the daemon in a delegated cgroup: systemd-run --user --scope -p Delegate=yes acco "
    "serve --jobs";
// The leaf the daemon moves itself into so that its own cgroup may hand controllers to jobs.
constexpr const char* kDaemonLeaf = "acco-daemon";

// One write(2) of `value`, as the kernel wants cgroup files written; the error text or "".
std::string write_value(const std::string& path, const std::string& value) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg)
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return std::strerror(errno);
  }
  const ssize_t n = ::write(fd, value.data(), value.size());
  const int error = errno;
  ::close(fd);
  if (n < 0) {
    return std::strerror(error);
  }
  return n == static_cast<ssize_t>(value.size()) ? std::string() : std::string("short write");
}

std::set<std::string> words_of(const std::string& path) {
  std::ifstream in(path);
  std::set<std::string> out;
  for (std::string word; in >> word;) {
    out.insert(word);
  }
  return out;
}

}  // namespace

std::string own_cgroup(std::string_view proc_self_cgroup) {
  std::istringstream in{std::string(proc_self_cgroup)};
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("0::", 0) == 0) {
      return line.substr(3);
    }
  }
  return {};
}

Cgroup make_cgroup(const std::string& root, std::string_view proc_self_cgroup,
                   const std::string& name, const CgroupLimits& limits) {
  Cgroup out;
  if (!limits.any()) {
    return out;
  }
  std::error_code ec;
  if (!std::filesystem::exists(root + "/cgroup.controllers", ec)) {
    out.skipped.push_back(fmt::format(
        "no cgroup v2 at {} (cgroup v1 or hybrid: per-job limits need the unified hierarchy, "
        "systemd.unified_cgroup_hierarchy=1)",
        root));
    return out;
  }
  const std::string own = own_cgroup(proc_self_cgroup);
  if (own.empty()) {
    out.skipped.push_back("/proc/self/cgroup has no cgroup v2 entry (0::)");
    return out;
  }
  // Once moved into its leaf the caller's own line names the leaf: the jobs go beside it.
  std::string base = own;
  if (const std::string tail = std::string("/") + kDaemonLeaf;
      base.size() >= tail.size() &&
      base.compare(base.size() - tail.size(), tail.size(), tail) == 0) {
    base.resize(base.size() - tail.size());
    if (base.empty()) {
      base = "/";
    }
  }
  const std::string parent = base == "/" ? root : root + base;
  // The controllers each limit needs, enabled for the parent's children.
  const std::set<std::string> available = words_of(parent + "/cgroup.controllers");
  const std::set<std::string> enabled = words_of(parent + "/cgroup.subtree_control");
  std::vector<std::string> to_enable;
  std::set<std::string> usable;
  for (const char* controller : {"cpuset", "memory", "io"}) {
    const std::string c = controller;
    const bool needed = c == "cpuset"   ? !limits.cpus.empty() || limits.memory_node >= 0
                        : c == "memory" ? limits.memory_max.has_value()
                                        : limits.io_weight.has_value();
    if (!needed) {
      continue;
    }
    if (enabled.contains(c)) {
      usable.insert(c);
    } else if (!available.contains(c)) {
      out.skipped.push_back(fmt::format("{}: the {} controller is not available in {} ({})", c, c,
                                        parent, kDelegate));
    } else {
      to_enable.push_back(c);
    }
  }
  // The kernel enables a controller for a cgroup's children only while that cgroup holds no
  // process of its own (EBUSY otherwise; the root of the whole hierarchy, which has no
  // cgroup.type, is exempt): a daemon started in its delegated scope first moves itself into
  // a leaf beside its jobs' cgroups.
  std::string leaf_error;
  if (!to_enable.empty() && own == base && std::filesystem::exists(parent + "/cgroup.type", ec) &&
      !words_of(parent + "/cgroup.procs").empty()) {
    const std::string leaf = parent + "/" + kDaemonLeaf;
    if (::mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) {
      leaf_error = fmt::format("cannot create {}: {}", leaf, std::strerror(errno));
    } else if (const auto error = write_value(leaf + "/cgroup.procs", "0"); !error.empty()) {
      leaf_error = fmt::format("cannot move the daemon into {}: {}", leaf, error);
    }
  }
  for (const auto& c : to_enable) {
    if (const auto error = write_value(parent + "/cgroup.subtree_control", "+" + c);
        !error.empty()) {
      const std::string why = !leaf_error.empty() ? leaf_error
                              : error == std::strerror(EBUSY)
                                  ? fmt::format("{} holds processes other than the daemon", parent)
                                  : error;
      out.skipped.push_back(fmt::format("{}: cannot enable the {} controller in {}: {} ({})", c, c,
                                        parent, why, kDelegate));
    } else {
      usable.insert(c);
    }
  }
  if (usable.empty()) {
    return out;
  }
  const std::string dir = parent + "/" + name;
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    out.skipped.push_back(
        fmt::format("cannot create {}: {} ({})", dir, std::strerror(errno), kDelegate));
    return out;
  }
  out.path = dir;
  const auto set = [&](const std::string& controller, const std::string& file,
                       const std::string& value) {
    if (!usable.contains(controller)) {
      return;
    }
    if (const auto error = write_value(dir + "/" + file, value); !error.empty()) {
      out.skipped.push_back(fmt::format("{} {}: {}", file, value, error));
    } else {
      out.applied.push_back(fmt::format("{} {}", file, value));
    }
  };
  if (!limits.cpus.empty()) {
    set("cpuset", "cpuset.cpus", units::format_cpulist(limits.cpus));
  }
  if (limits.memory_node >= 0) {
    set("cpuset", "cpuset.mems", std::to_string(limits.memory_node));
  }
  if (limits.memory_max) {
    set("memory", "memory.max", std::to_string(*limits.memory_max));
  }
  if (limits.io_weight) {
    set("io", "io.weight", fmt::format("default {}", *limits.io_weight));
  }
  return out;
}

void remove_cgroup(const std::string& path) {
  if (!path.empty()) {
    (void)::rmdir(path.c_str());
  }
}

}  // namespace acco::exec
