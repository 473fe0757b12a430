#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/exec/binding.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::exec {
namespace {

using ::acco::testing::HasValue;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;

TEST(LocalRankTest, EachLauncherIsReadWithItsSize) {
  EXPECT_THAT(
      local_rank({{"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}}),
      HasValue(LocalRank{3, 8, "OMPI_COMM_WORLD_LOCAL_RANK"}));
  EXPECT_THAT(local_rank({{"MV2_COMM_WORLD_LOCAL_RANK", "1"}, {"MV2_COMM_WORLD_LOCAL_SIZE", "2"}}),
              HasValue(LocalRank{1, 2, "MV2_COMM_WORLD_LOCAL_RANK"}));
  EXPECT_THAT(local_rank({{"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", "4"}}),
              HasValue(LocalRank{0, 4, "MPI_LOCALRANKID"}));
  EXPECT_THAT(local_rank({{"PMI_LOCAL_RANK", "2"}}), HasValue(LocalRank{2, 0, "PMI_LOCAL_RANK"}));
  EXPECT_THAT(local_rank({{"LOCAL_RANK", "5"}, {"LOCAL_WORLD_SIZE", "8"}}),
              HasValue(LocalRank{5, 8, "LOCAL_RANK"}));
}

// Open MPI exports its own variables even when started by srun: the MPI's answer comes first.
TEST(LocalRankTest, TheMpiLibrarysVariableComesBeforeSlurmsAndTorchruns) {
  EXPECT_THAT(
      local_rank(
          {{"SLURM_LOCALID", "1"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}, {"LOCAL_RANK", "7"}}),
      HasValue(LocalRank{0, 0, "OMPI_COMM_WORLD_LOCAL_RANK"}));
}

// srun's per-node task counts are a compressed list: "2(x3),1" is 2, 2, 2 and 1.
TEST(LocalRankTest, SlurmsSizeComesFromTheNodesEntryOfTheTaskList) {
  const Environment base{{"SLURM_LOCALID", "1"}, {"SLURM_STEP_TASKS_PER_NODE", "2(x3),1"}};
  for (const auto& [node, size] : {std::pair{"0", 2}, {"2", 2}, {"3", 1}, {"4", 0}}) {
    Environment env = base;
    env["SLURM_NODEID"] = node;
    EXPECT_THAT(local_rank(env), HasValue(LocalRank{1, size, "SLURM_LOCALID"})) << node;
  }
  EXPECT_THAT(local_rank({{"SLURM_LOCALID", "0"}, {"SLURM_STEP_TASKS_PER_NODE", "4"}}),
              HasValue(LocalRank{0, 4, "SLURM_LOCALID"}));
  EXPECT_THAT(local_rank({{"SLURM_LOCALID", "0"}, {"SLURM_STEP_TASKS_PER_NODE", "2(x"}}),
              HasValue(LocalRank{0, 0, "SLURM_LOCALID"}));
}

TEST(LocalRankTest, NoLauncherOrABadValueIsSaid) {
  EXPECT_THAT(local_rank({}),
              StatusIs(Errc::kNotFound, HasSubstr("no launcher's local rank in the environment "
                                                  "(looked for OMPI_COMM_WORLD_LOCAL_RANK, ")));
  EXPECT_THAT(local_rank({{"LOCAL_RANK", "one"}}),
              StatusIs(Errc::kInvalidArgument,
                       "LOCAL_RANK='one': expected the launcher's local rank, a whole number "
                       "from 0"));
  EXPECT_THAT(local_rank({{"LOCAL_RANK", "-1"}}), StatusIs(Errc::kInvalidArgument));
}

}  // namespace
}  // namespace acco::exec
