#include "acco/cluster/launcher.hpp"

#include <map>

#include <gtest/gtest.h>

namespace acco::cluster {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    const auto it = vars.find(std::string(name));
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

TEST(DetectLauncher, NoVariablesIsOneRankWithoutALauncher) {
  auto info = detect_launcher(env_of({}));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->launcher, Launcher::kNone);
  EXPECT_EQ(info->rank, 0);
  EXPECT_EQ(info->size, 1);
  EXPECT_FALSE(info->local_rank.has_value());
}

TEST(DetectLauncher, OpenMpiGivesRankSizeAndLocalRank) {
  auto info = detect_launcher(env_of({{"OMPI_COMM_WORLD_RANK", "3"},
                                      {"OMPI_COMM_WORLD_SIZE", "4"},
                                      {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                      {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->launcher, Launcher::kOpenMpi);
  EXPECT_EQ(info->rank, 3);
  EXPECT_EQ(info->size, 4);
  EXPECT_EQ(info->local_rank, 1);
  EXPECT_EQ(info->local_size, 2);
  EXPECT_EQ(info->evidence,
            "OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_RANK=1 "
            "OMPI_COMM_WORLD_LOCAL_SIZE=2");
}

TEST(DetectLauncher, OpenMpiWinsOverSlurmWhenMpirunRunsInsideAnAllocation) {
  auto info = detect_launcher(env_of({{"SLURM_PROCID", "0"},
                                      {"SLURM_NTASKS", "1"},
                                      {"OMPI_COMM_WORLD_RANK", "1"},
                                      {"OMPI_COMM_WORLD_SIZE", "2"}}));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->launcher, Launcher::kOpenMpi);
  EXPECT_EQ(info->rank, 1);
}

TEST(DetectLauncher, SlurmGivesProcIdTasksAndLocalId) {
  auto info = detect_launcher(
      env_of({{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "0"}}));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->launcher, Launcher::kSlurm);
  EXPECT_EQ(info->rank, 2);
  EXPECT_EQ(info->size, 4);
  EXPECT_EQ(info->local_rank, 0);
  EXPECT_FALSE(info->local_size.has_value());
}

TEST(DetectLauncher, PmixWithoutASizeLeavesItToMpi) {
  auto info = detect_launcher(env_of({{"PMIX_RANK", "5"}}));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->launcher, Launcher::kPmix);
  EXPECT_EQ(info->rank, 5);
  EXPECT_EQ(info->size, 0);
}

TEST(DetectLauncher, ANonNumberNamesTheVariable) {
  auto info = detect_launcher(env_of({{"OMPI_COMM_WORLD_RANK", "one"}}));
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().code, Errc::kInvalidArgument);
  EXPECT_EQ(info.error().message, "OMPI_COMM_WORLD_RANK='one': expected a number of 0 or more");
  EXPECT_FALSE(detect_launcher(env_of({{"SLURM_PROCID", "-1"}})));
  EXPECT_FALSE(detect_launcher(env_of({{"SLURM_PROCID", "1x"}})));
}

TEST(DetectLauncher, ARankOutsideTheSizeIsAnError) {
  auto info = detect_launcher(env_of({{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}}));
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().message,
            "SLURM_PROCID=4 with SLURM_NTASKS=4: expected a rank below the size");
  EXPECT_FALSE(detect_launcher(env_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "0"}})));
}

TEST(DetectLauncher, NamesEachLauncher) {
  EXPECT_STREQ(to_string(Launcher::kNone), "none");
  EXPECT_STREQ(to_string(Launcher::kOpenMpi), "openmpi");
  EXPECT_STREQ(to_string(Launcher::kPmix), "pmix");
  EXPECT_STREQ(to_string(Launcher::kSlurm), "slurm");
}

}  // namespace
}  // namespace acco::cluster
