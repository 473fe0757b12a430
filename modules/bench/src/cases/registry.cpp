#include <algorithm>

#include <fnmatch.h>

#include "acco/bench/case.hpp"

#include "cases.hpp"

namespace acco::bench {

std::string CaseContext::device_name() const {
  if (device == nullptr) {
    return {};
  }
  return device->info().pci.empty() ? device->info().name : device->info().pci;
}

transfer::Profile CaseContext::profile_for(std::string_view path) const {
  const auto it = path_profiles.find(device_name() + "/" + std::string(path));
  if (it != path_profiles.end()) {
    return it->second;
  }
  if (profile) {
    return *profile;
  }
  return device != nullptr ? transfer::default_profile(device->info()) : transfer::Profile{};
}

bool CaseContext::tuned(std::string_view path) const {
  return path_profiles.contains(device_name() + "/" + std::string(path));
}

const std::vector<std::unique_ptr<Case>>& cases() {
  static const std::vector<std::unique_ptr<Case>> all = [] {
    using detail::CopyDirection;
    using detail::CopyPath;
    using device::MemoryKind;
    std::vector<std::unique_ptr<Case>> v;
    for (const auto direction : {CopyDirection::kHostToDevice, CopyDirection::kDeviceToHost}) {
      for (const auto kind : {MemoryKind::kPageable, MemoryKind::kPinned, MemoryKind::kRegistered,
                              MemoryKind::kMapped}) {
        for (const auto path : {CopyPath::kPlain, CopyPath::kEngine}) {
          v.push_back(detail::host_device_case(direction, kind, path));
        }
      }
    }
    v.push_back(detail::bidirectional_case());
    v.push_back(detail::device_local_case());
    v.push_back(detail::peer_matrix_case());
    v.push_back(detail::latency_case(CopyDirection::kHostToDevice));
    v.push_back(detail::latency_case(CopyDirection::kDeviceToHost));
    v.push_back(detail::sweep_case());
    v.push_back(detail::small_copies_case(false));
    v.push_back(detail::small_copies_case(true));
    v.push_back(detail::host_memcpy_case());
    v.push_back(detail::storage_read_case());
    v.push_back(detail::storage_to_device_case());
    return v;
  }();
  return all;
}

bool matches(std::string_view key, const std::vector<std::string>& patterns) {
  if (patterns.empty()) {
    return true;
  }
  const std::string k(key);
  return std::ranges::any_of(
      patterns, [&](const std::string& p) { return ::fnmatch(p.c_str(), k.c_str(), 0) == 0; });
}

}  // namespace acco::bench
