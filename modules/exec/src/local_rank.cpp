#include <charconv>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/core/units.hpp"
#include "acco/exec/binding.hpp"

namespace acco::exec {
namespace {

// A count or index as a launcher writes it: decimal digits only.
std::optional<int> count_of(const std::string& text) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty() || value < 0) {
    return std::nullopt;
  }
  return value;
}

const std::string* find(const Environment& env, const std::string& name) {
  const auto it = env.find(name);
  return it == env.end() ? nullptr : &it->second;
}

// Slurm's per-node task counts, "2(x3),1": node 0-2 run 2 tasks, node 3 one. The count of node
// `node`, or 0 when the text does not say.
int slurm_tasks_on(const std::string& text, int node) {
  int first = 0;
  for (const std::string& item : units::split(text, ',')) {
    const auto open = item.find("(x");
    const auto tasks = count_of(item.substr(0, open));
    int repeat = 1;
    if (open != std::string::npos) {
      if (!item.ends_with(')')) {
        return 0;
      }
      const auto times = count_of(item.substr(open + 2, item.size() - open - 3));
      if (!times) {
        return 0;
      }
      repeat = *times;
    }
    if (!tasks) {
      return 0;
    }
    if (node < first + repeat) {
      return *tasks;
    }
    first += repeat;
  }
  return 0;
}

struct Launcher {
  const char* rank;
  const char* size;  // nullptr: the size comes from elsewhere (Slurm)
};

constexpr Launcher kLaunchers[] = {
    {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_SIZE"},
    {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
    {"PMI_LOCAL_RANK", "PMI_LOCAL_SIZE"},
    {"SLURM_LOCALID", nullptr},
    {"LOCAL_RANK", "LOCAL_WORLD_SIZE"},
};

}  // namespace

Result<LocalRank> local_rank(const Environment& env) {
  std::vector<std::string> looked;
  for (const Launcher& launcher : kLaunchers) {
    looked.emplace_back(launcher.rank);
    const std::string* rank = find(env, launcher.rank);
    if (rank == nullptr) {
      continue;
    }
    const auto value = count_of(*rank);
    if (!value) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("{}='{}': expected the launcher's local rank, a whole number "
                              "from 0",
                              launcher.rank, units::excerpt(*rank)));
    }
    LocalRank out{.rank = *value, .size = 0, .source = launcher.rank};
    if (launcher.size != nullptr) {
      if (const std::string* size = find(env, launcher.size)) {
        out.size = count_of(*size).value_or(0);
      }
    } else if (const std::string* tasks = find(env, "SLURM_STEP_TASKS_PER_NODE")) {
      const std::string* node = find(env, "SLURM_NODEID");
      out.size = slurm_tasks_on(*tasks, node != nullptr ? count_of(*node).value_or(0) : 0);
    }
    return out;
  }
  return fail(Errc::kNotFound,
              fmt::format("--local-rank auto: no launcher's local rank in the environment "
                          "(looked for {}); start under mpirun, srun or torchrun, or give "
                          "--device",
                          fmt::join(looked, ", ")));
}

}  // namespace acco::exec
