#include "acco/cluster/launcher.hpp"

#include <charconv>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "acco/cluster/communicator.hpp"

namespace acco::cluster {
namespace {

struct Variables {
  Launcher launcher;
  const char* rank;
  const char* size;
  const char* local_rank;  // nullptr: the launcher has none
  const char* local_size;
};

// In the order they are tried.
constexpr Variables kLaunchers[] = {
    {Launcher::kOpenMpi, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {Launcher::kPmix, "PMIX_RANK", "PMIX_SIZE", nullptr, nullptr},
    {Launcher::kSlurm, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", nullptr},
};

Result<std::optional<int>> read_int(const EnvLookup& env, const char* name, std::string& evidence) {
  if (name == nullptr) {
    return std::optional<int>();
  }
  const auto text = env(name);
  if (!text) {
    return std::optional<int>();
  }
  int value = 0;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end || value < 0) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}='{}': expected a number of 0 or more", name, *text));
  }
  evidence += fmt::format("{}{}={}", evidence.empty() ? "" : " ", name, value);
  return std::optional<int>(value);
}

}  // namespace

const char* to_string(Launcher launcher) {
  switch (launcher) {
    case Launcher::kNone:
      return "none";
    case Launcher::kOpenMpi:
      return "openmpi";
    case Launcher::kPmix:
      return "pmix";
    case Launcher::kSlurm:
      return "slurm";
  }
  return "none";
}

EnvLookup process_environment() {
  return [](std::string_view name) -> std::optional<std::string> {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read-only; acco sets no variables while running
    const char* value = std::getenv(std::string(name).c_str());
    return value == nullptr ? std::nullopt : std::optional<std::string>(value);
  };
}

Result<LaunchInfo> detect_launcher(const EnvLookup& env) {
  for (const Variables& v : kLaunchers) {
    if (!env(v.rank)) {
      continue;
    }
    LaunchInfo info;
    info.launcher = v.launcher;
    ACCO_ASSIGN_OR_RETURN(const auto rank, read_int(env, v.rank, info.evidence));
    ACCO_ASSIGN_OR_RETURN(const auto size, read_int(env, v.size, info.evidence));
    ACCO_ASSIGN_OR_RETURN(info.local_rank, read_int(env, v.local_rank, info.evidence));
    ACCO_ASSIGN_OR_RETURN(info.local_size, read_int(env, v.local_size, info.evidence));
    info.rank = *rank;
    // PMIx without PMIX_SIZE: the size is learned from MPI later; one rank is not assumed.
    info.size = size.value_or(0);
    if (size && (*size < 1 || info.rank >= *size)) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("{}={} with {}={}: expected a rank below the size", v.rank, info.rank,
                              v.size, *size));
    }
    return info;
  }
  return LaunchInfo{};
}

Result<std::unique_ptr<Communicator>> open_job_communicator() {
  auto launch = detect_launcher(process_environment());
  if (!launch) {
    return tl::unexpected(std::move(launch.error()).with_context("launcher environment"));
  }
  return open_communicator(*launch);
}

}  // namespace acco::cluster
