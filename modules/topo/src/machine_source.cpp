#include "acco/topo/machine_source.hpp"

#include <filesystem>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "acco/core/option_check.hpp"

namespace acco::topo {
namespace {

Status refuse(std::string message) {
  return fail(Errc::kInvalidArgument, std::move(message));
}

Status check_combinations(const MachineSource& s) {
  if (!s.from.empty() && !s.snapshot.empty()) {
    return refuse("--from and --snapshot cannot be combined (a replay reads no live files)");
  }
  if (!s.from.empty() && s.sysroot_given) {
    return refuse("--from and --sysroot cannot be combined (the snapshot replaces the sysroot)");
  }
  if (!s.hwloc_xml.empty()) {
    if (!s.from.empty()) {
      return refuse("--hwloc-xml and --from cannot be combined (each is the machine to assess)");
    }
    if (!s.snapshot.empty()) {
      return refuse("--hwloc-xml and --snapshot cannot be combined (an XML export reads no files)");
    }
    if (s.sysroot_given) {
      return refuse(
          "--hwloc-xml and --sysroot cannot be combined (the export replaces the sysroot)");
    }
  }
  if (!s.nccl_topo.empty()) {
    for (const auto& [flag, given] : {std::pair{"--from", !s.from.empty()},
                                      {"--hwloc-xml", !s.hwloc_xml.empty()},
                                      {"--snapshot", !s.snapshot.empty()},
                                      {"--sysroot", s.sysroot_given}}) {
      if (given) {
        return refuse(fmt::format(
            "--nccl-topo and {} cannot be combined (the topology file is the machine to assess)",
            flag));
      }
    }
  }
  return {};
}

Result<std::string> data_dir_path(const MachineSource& s) {
  namespace stdfs = std::filesystem;
  if (!s.hwloc_xml.empty()) {
    return fail(Errc::kInvalidArgument,
                "--data-dir and --hwloc-xml cannot be combined (an XML export holds no mounts)");
  }
  if (!s.nccl_topo.empty()) {
    return fail(Errc::kInvalidArgument,
                "--data-dir and --nccl-topo cannot be combined (a topology file holds no mounts)");
  }
  if (!s.from.empty() || s.sysroot != "/") {
    const stdfs::path path(s.data_dir);
    if (!path.is_absolute()) {
      return core::bad_option("--data-dir", s.data_dir,
                              "an absolute path (with --sysroot or --from it names a directory of "
                              "that machine)");
    }
    auto normal = path.lexically_normal().string();
    while (normal.size() > 1 && normal.back() == '/') {
      normal.pop_back();
    }
    return normal;
  }
  std::error_code ec;
  auto canonical = stdfs::canonical(s.data_dir, ec);
  if (ec) {
    return fail(Errc::kInvalidArgument,
                fmt::format("--data-dir: '{}': {}", s.data_dir, ec.message()));
  }
  return canonical.string();
}

}  // namespace

Result<std::string> check_machine_source(const MachineSource& source) {
  ACCO_RETURN_IF_ERROR(check_combinations(source));
  if (source.data_dir.empty()) {
    return std::string();
  }
  return data_dir_path(source);
}

}  // namespace acco::topo
