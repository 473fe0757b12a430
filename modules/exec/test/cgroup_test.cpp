// Per-job cgroups on cgroup v2 trees laid out as the kernel shows them (cgroup.controllers,
// cgroup.subtree_control, the limit files a new cgroup gets), and on this machine's own tree.
#include "acco/exec/cgroup.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include "acco/exec/spawn.hpp"
#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::exec {
namespace {

namespace fs = std::filesystem;
using ::acco::testing::IsOk;
using ::acco::testing::slurp;
using acco::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A delegated user scope: the unified hierarchy at ROOT, the caller in
// /user.slice/user-1000.slice/acco.scope with cpuset, memory and io available there, and the job
// cgroup's files (the kernel makes them on mkdir; a plain tree needs them there to be written).
struct Tree {
  TempDir dir;
  fs::path root = dir.path() / "cgroup";
  fs::path scope = root / "user.slice/user-1000.slice/acco.scope";
  std::string self = "0::/user.slice/user-1000.slice/acco.scope\n";
  Tree() {
    write(root / "cgroup.controllers", "cpuset cpu io memory pids\n");
    write(scope / "cgroup.controllers", "cpuset io memory pids\n");
    write(scope / "cgroup.subtree_control", "memory\n");
    write(scope / "cgroup.type", "domain\n");
    write(scope / "cgroup.procs", "4242\n");  // the daemon, started in its scope
    write(scope / "acco-daemon" / "cgroup.procs", "");
    for (const char* file :
         {"cpuset.cpus", "cpuset.mems", "memory.max", "io.weight", "cgroup.procs"}) {
      write(scope / "acco-job-1" / file, "");
    }
  }
};

TEST(CgroupTest, OwnCgroupIsTheUnifiedLine) {
  EXPECT_EQ(own_cgroup("12:cpuset:/docker/abc\n0::/user.slice/x.scope\n"), "/user.slice/x.scope");
  EXPECT_EQ(own_cgroup("0::/\n"), "/");
  EXPECT_EQ(own_cgroup("12:cpuset:/docker/abc\n1:name=systemd:/docker/abc\n"), "");
}

TEST(CgroupTest, TheJobsLimitsAreWrittenAfterItsControllersAreEnabled) {
  Tree t;
  CgroupLimits limits;
  limits.cpus = {0, 1, 2, 3, 8};
  limits.memory_node = 1;
  limits.memory_max = std::uint64_t{16} << 30;
  limits.io_weight = 200;
  const auto cg = make_cgroup(t.root.string(), t.self, "acco-job-1", limits);
  EXPECT_EQ(cg.path, (t.scope / "acco-job-1").string());
  EXPECT_THAT(cg.skipped, ::testing::IsEmpty());
  EXPECT_THAT(cg.applied, ElementsAre("cpuset.cpus 0-3,8", "cpuset.mems 1",
                                      "memory.max 17179869184", "io.weight default 200"));
  EXPECT_EQ(slurp(t.scope / "acco-job-1/cpuset.cpus"), "0-3,8");
  EXPECT_EQ(slurp(t.scope / "acco-job-1/memory.max"), "17179869184");
  EXPECT_EQ(slurp(t.scope / "acco-job-1/io.weight"), "default 200");
  // The daemon left the scope's own cgroup for its leaf, so that the scope may enable cpuset and
  // io for its children (the kernel's no-internal-process rule), and the controllers followed.
  EXPECT_EQ(slurp(t.scope / "acco-daemon/cgroup.procs"), "0");

  // A child started in it joins before it runs anything.
  SpawnRequest request;
  request.argv = {"true"};
  request.env = {{"PATH", "/usr/bin:/bin"}};
  request.cgroup = cg.path;
  auto pid = spawn(request);
  ASSERT_THAT(pid, IsOk());
  int status = 0;
  ASSERT_EQ(::waitpid(*pid, &status, 0), *pid);
  EXPECT_EQ(slurp(t.scope / "acco-job-1/cgroup.procs"), "0");
}

TEST(CgroupTest, WhatCannotBeSetIsSkippedWithTheReasonAndTheFix) {
  Tree t;
  CgroupLimits limits;
  limits.memory_max = 1 << 30;
  // No cgroup v2 (this is how cgroup v1 and hybrid machines look at /sys/fs/cgroup).
  TempDir v1;
  auto cg = make_cgroup(v1.path().string(), t.self, "acco-job-1", limits);
  EXPECT_EQ(cg.path, "");
  EXPECT_THAT(cg.skipped, ElementsAre(HasSubstr("no cgroup v2 at " + v1.path().string() +
                                                " (cgroup v1 or hybrid")));
  cg = make_cgroup(t.root.string(), "12:cpuset:/docker/abc\n", "acco-job-1", limits);
  EXPECT_THAT(cg.skipped, ElementsAre("/proc/self/cgroup has no cgroup v2 entry (0::)"));
  // A controller the parent does not offer, and one it cannot enable (a directory where the
  // file should be makes the write fail, as EBUSY does when the parent holds processes).
  limits.io_weight = 100;
  write(t.scope / "cgroup.controllers", "cpuset memory\n");
  cg = make_cgroup(t.root.string(), t.self, "acco-job-1", limits);
  EXPECT_EQ(cg.path, (t.scope / "acco-job-1").string());
  EXPECT_THAT(cg.applied, ElementsAre("memory.max 1073741824"));
  EXPECT_THAT(cg.skipped, ElementsAre(HasSubstr("io: the io controller is not available in " +
                                                t.scope.string() +
                                                " (run the daemon in a delegated cgroup: "
                                                "systemd-run --user --scope -p Delegate=yes")));
  limits = {};
  limits.cpus = {0};
  fs::remove(t.scope / "cgroup.subtree_control");
  fs::create_directory(t.scope / "cgroup.subtree_control");
  cg = make_cgroup(t.root.string(), t.self, "acco-job-1", limits);
  EXPECT_EQ(cg.path, "");
  EXPECT_THAT(cg.skipped, ElementsAre(HasSubstr("cpuset: cannot enable the cpuset controller in " +
                                                t.scope.string() + ": Is a directory")));
  // Nothing asked: nothing made, nothing said.
  cg = make_cgroup(t.root.string(), t.self, "acco-job-1", CgroupLimits{});
  EXPECT_EQ(cg.path, "");
  EXPECT_THAT(cg.skipped, ::testing::IsEmpty());
}

TEST(CgroupTest, FromItsLeafTheDaemonPutsTheNextJobBesideIt) {
  Tree t;
  write(t.scope / "cgroup.procs",
        "77\n");  // a process of someone else's; the daemon is in its leaf
  CgroupLimits limits;
  limits.cpus = {2};
  limits.io_weight = 10;
  const auto cg =
      make_cgroup(t.root.string(), "0::/user.slice/user-1000.slice/acco.scope/acco-daemon\n",
                  "acco-job-1", limits);
  EXPECT_EQ(cg.path, (t.scope / "acco-job-1").string());
  EXPECT_THAT(cg.applied, ElementsAre("cpuset.cpus 2", "io.weight default 10"));
  EXPECT_EQ(slurp(t.scope / "acco-daemon/cgroup.procs"), "");  // no second move

  // The top of a container's private hierarchy moves the same way; the host's root is exempt
  // from the rule (it has no cgroup.type) and nothing moves there.
  Tree c;
  const std::string container_self = "0::/\n";
  write(c.root / "cgroup.type", "domain\n");
  write(c.root / "cgroup.procs", "1\n");
  write(c.root / "cgroup.subtree_control", "");
  write(c.root / "acco-daemon/cgroup.procs", "");
  write(c.root / "acco-job-1/memory.max", "");
  CgroupLimits memory;
  memory.memory_max = 1 << 20;
  auto in_container = make_cgroup(c.root.string(), container_self, "acco-job-1", memory);
  EXPECT_EQ(slurp(c.root / "acco-daemon/cgroup.procs"), "0");
  EXPECT_THAT(in_container.applied, ElementsAre("memory.max 1048576"));
  fs::remove(c.root / "cgroup.type");
  write(c.root / "acco-daemon/cgroup.procs", "");
  in_container = make_cgroup(c.root.string(), container_self, "acco-job-1", memory);
  EXPECT_EQ(slurp(c.root / "acco-daemon/cgroup.procs"), "");
  EXPECT_THAT(in_container.applied, ElementsAre("memory.max 1048576"));
}

// On this machine: either a job cgroup is made under the test's own cgroup and removed, or the
// reason there is none is one line (the CI's containers run cgroup v1 or an undelegated v2).
TEST(CgroupTest, OnThisMachineAJobCgroupIsMadeOrWhyNotIsSaid) {
  CgroupLimits limits;
  limits.memory_max = std::uint64_t{1} << 30;
  const auto cg = make_cgroup("/sys/fs/cgroup", slurp("/proc/self/cgroup"),
                              "acco-test-" + std::to_string(::getpid()), limits);
  if (cg.path.empty()) {
    ASSERT_FALSE(cg.skipped.empty());
    EXPECT_EQ(cg.skipped[0].find('\n'), std::string::npos);
  } else {
    EXPECT_TRUE(fs::is_directory(cg.path));
    remove_cgroup(cg.path);
    EXPECT_FALSE(fs::exists(cg.path));
  }
}

}  // namespace
}  // namespace acco::exec
