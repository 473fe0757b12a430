// Software checks: CUDA builds that need a newer driver than the loaded kernel module, and
// forward-compatibility drivers older than it.
#include "acco/topo/software.hpp"

#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/check_support.hpp"
#include "checks/rule_checks.hpp"

namespace acco::topo::detail {
namespace {

std::vector<Evidence> module_evidence(const Machine& m) {
  return {{"/proc/driver/nvidia/version", m.software.kernel_module_line}};
}

}  // namespace

void check_cuda_needs_newer_driver(const Machine& m, std::vector<Finding>& out) {
  const auto& module = m.software.kernel_module;
  if (module.empty()) {
    return;  // no driver loaded (or a capture without /proc): nothing to compare against
  }
  std::map<int, std::vector<const SoftwareComponent*>> by_major;
  for (const auto& c : m.software.components) {
    if (c.name != "cuda-compat" && cuda_major(c.cuda) > 0) {
      by_major[cuda_major(c.cuda)].push_back(&c);
    }
  }
  for (const auto& [major, components] : by_major) {
    const auto floor = minimum_driver(major);
    if (floor.empty() || compare_versions(module, floor) >= 0) {
      continue;
    }
    const SoftwareComponent* compat = nullptr;
    for (const auto& c : m.software.components) {
      if (c.name == "cuda-compat" && compare_versions(c.version, floor) >= 0) {
        compat = &c;
      }
    }
    Finding f;
    f.severity = compat != nullptr ? Severity::kWarning : Severity::kCritical;
    f.devices = nvidia_gpus(m);
    f.evidence = module_evidence(m);
    std::vector<std::string> names;
    for (const auto* c : components) {
      names.push_back(fmt::format("{} {}", c->name, c->version));
      f.evidence.push_back({c->path, fmt::format("{} {} (CUDA {})", c->name, c->version, c->cuda)});
    }
    f.message = fmt::format(
        "CUDA {} ({}) needs driver {} or newer; the loaded kernel module is {}: its programs fail "
        "with cudaErrorInsufficientDriver (35){}",
        major, fmt::join(names, ", "), floor, module,
        compat != nullptr
            ? fmt::format(" unless they load the forward-compatibility driver {} ({})",
                          compat->version, compat->path)
            : std::string());
    f.recommendation = fmt::format(
        "Install driver {} or newer, or use builds for the CUDA the driver supports (a PyTorch "
        "wheel for an older CUDA major); forward compatibility (the cuda-compat-{}-x package, "
        "LD_LIBRARY_PATH=/usr/local/cuda-{}.x/compat) works on data-center GPUs only",
        floor, major, major);
    out.push_back(std::move(f));
  }
}

void check_cuda_compat_older_than_driver(const Machine& m, std::vector<Finding>& out) {
  const auto& module = m.software.kernel_module;
  if (module.empty()) {
    return;
  }
  for (const auto& c : m.software.components) {
    if (c.name != "cuda-compat" || compare_versions(c.version, module) >= 0) {
      continue;
    }
    Finding f;
    f.severity = Severity::kWarning;
    f.devices = nvidia_gpus(m);
    f.evidence = module_evidence(m);
    f.evidence.push_back({c.path, c.version});
    f.message = fmt::format(
        "the forward-compatibility driver {} ({}) is older than the loaded kernel module {}: a "
        "program that loads it (LD_LIBRARY_PATH, ld.so.conf) fails with "
        "cudaErrorSystemDriverMismatch (803), and the installed driver already supports what it "
        "brings",
        c.version, c.path, module);
    f.recommendation =
        "Remove the cuda-compat package (and its directory from LD_LIBRARY_PATH or "
        "/etc/ld.so.conf.d), or install one at least as new as the driver";
    out.push_back(std::move(f));
  }
}

}  // namespace acco::topo::detail
