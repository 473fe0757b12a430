// check_machine_source: one machine named at a time, and the data directory resolved where it is.
#include "acco/topo/machine_source.hpp"

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::topo {
namespace {

using ::acco::testing::StatusIs;
using ::testing::HasSubstr;

TEST(MachineSourceTest, TwoMachinesAtOnceAreRefusedNamingBothFlags) {
  EXPECT_THAT(check_machine_source({.from = "a.json", .snapshot = "b.json"}),
              StatusIs(Errc::kInvalidArgument,
                       "--from and --snapshot cannot be combined (a replay reads no live files)"));
  EXPECT_THAT(check_machine_source({.from = "a.json", .sysroot_given = true}),
              StatusIs(Errc::kInvalidArgument, HasSubstr("--from and --sysroot")));
  EXPECT_THAT(check_machine_source({.hwloc_xml = "m.xml", .snapshot = "b.json"}),
              StatusIs(Errc::kInvalidArgument, HasSubstr("--hwloc-xml and --snapshot")));
  EXPECT_THAT(check_machine_source({.hwloc_xml = "m.xml", .nccl_topo = "t.xml"}),
              StatusIs(Errc::kInvalidArgument, HasSubstr("--nccl-topo and --hwloc-xml")));
  EXPECT_THAT(check_machine_source({.nccl_topo = "t.xml", .data_dir = "/data"}),
              StatusIs(Errc::kInvalidArgument, HasSubstr("--data-dir and --nccl-topo")));
  EXPECT_EQ(check_machine_source({.from = "a.json"}).value_or("x"), "");
}

TEST(MachineSourceTest, TheDataDirectoryIsResolvedHereAndOnlyNormalisedElsewhere) {
  const testing::TempDir dir;
  std::filesystem::create_directory(dir.path() / "real");
  std::filesystem::create_directory_symlink(dir.path() / "real", dir.path() / "link");
  const auto live = check_machine_source({.data_dir = (dir.path() / "link").string()});
  ASSERT_TRUE(live.has_value()) << live.error().message;
  EXPECT_EQ(*live, std::filesystem::canonical(dir.path() / "real").string());
  EXPECT_THAT(
      check_machine_source({.data_dir = "/nonexistent/acco-data"}),
      StatusIs(Errc::kInvalidArgument, HasSubstr("--data-dir: '/nonexistent/acco-data': ")));
  EXPECT_EQ(check_machine_source({.data_dir = "/data//x/", .sysroot = "/srv/m"}).value_or(""),
            "/data/x");
  EXPECT_THAT(check_machine_source({.from = "a.json", .data_dir = "data"}),
              StatusIs(Errc::kInvalidArgument, HasSubstr("--data-dir: 'data' is not an absolute")));
}

}  // namespace
}  // namespace acco::topo
