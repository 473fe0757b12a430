// Real children: the binding and environment they start with, read back from what they print.
#include "acco/exec/spawn.hpp"

#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::exec {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::slurp;
using ::acco::testing::StatusIs;
using acco::testing::TempDir;
using ::testing::HasSubstr;

int wait_exit(pid_t pid) {
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(SpawnTest, TheChildStartsBoundInItsDirectoryWithItsEnvironmentAndLog) {
  TempDir dir;
  SpawnRequest request;
  request.argv = {"sh", "-c",
                  "echo out; echo err >&2; pwd; echo \"X=$X\"; grep Cpus_allowed_list "
                  "/proc/self/status; test \"$(ps -o sid= -p $$)\" -eq $$ && echo own-session; "
                  "exit 3"};
  request.env = {{"PATH", "/usr/bin:/bin"}, {"X", "from the request"}};
  request.cwd = dir.path().string();
  request.log_path = (dir.path() / "job.log").string();
  Binding binding;
  binding.cpus = {0};
  binding.env = {{"Y", "1", "why"}};
  const auto bound_request = bound(request, binding);
  EXPECT_EQ(bound_request.env.at("Y"), "1");
  auto pid = spawn(bound_request);
  ASSERT_THAT(pid, IsOk());
  EXPECT_EQ(wait_exit(*pid), 3);
  const auto log = slurp(dir.path() / "job.log");
  EXPECT_THAT(log, HasSubstr("out\nerr\n" + dir.path().string() + "\nX=from the request\n"));
  EXPECT_THAT(log, HasSubstr("Cpus_allowed_list:\t0\n"));
  EXPECT_THAT(log, HasSubstr("own-session"));
  EXPECT_EQ(
      std::filesystem::status(dir.path() / "job.log").permissions() & std::filesystem::perms::all,
      std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TEST(SpawnTest, WhatCannotStartIsAnErrorNamingIt) {
  TempDir dir;
  SpawnRequest request;
  request.env = {{"PATH", "/usr/bin:/bin"}};
  request.argv = {"no-such-command-acco"};
  EXPECT_THAT(spawn(request), StatusIs(Errc::kNotFound, HasSubstr("no-such-command-acco")));
  request.argv = {"true"};
  request.cwd = (dir.path() / "missing").string();
  EXPECT_THAT(spawn(request), StatusIs(Errc::kUnavailable,
                                       HasSubstr("cannot change to its directory " + request.cwd)));
  request.cwd.clear();
  request.log_path = (dir.path() / "missing" / "log").string();
  EXPECT_THAT(spawn(request), StatusIs(Errc::kUnavailable, HasSubstr("cannot open the log")));
  request.log_path.clear();
  request.argv = {"/etc/hostname"};  // a file, not a program
  EXPECT_THAT(spawn(request), StatusIs(Errc::kUnavailable, HasSubstr("cannot execute")));
  request.argv.clear();
  EXPECT_THAT(spawn(request), StatusIs(Errc::kInvalidArgument));
}

}  // namespace
}  // namespace acco::exec

namespace acco::exec {
namespace {

TEST(ExecInPlaceTest, ACommandNotFoundIsTheShells127AndTheEnvironmentIsThisProcesss) {
  const auto failed = exec_in_place({"/nonexistent/acco-no-such-command"});
  EXPECT_EQ(failed.why, "command not found");
  EXPECT_EQ(failed.exit_code, 127);
  const auto dir = exec_in_place({"/"});  // a directory cannot run
  EXPECT_EQ(dir.exit_code, 126);
  ASSERT_EQ(::setenv("ACCO_EXEC_TEST_VALUE", "a=b", 1), 0);
  EXPECT_EQ(current_environment().at("ACCO_EXEC_TEST_VALUE"), "a=b");
  ASSERT_EQ(::unsetenv("ACCO_EXEC_TEST_VALUE"), 0);
}

}  // namespace
}  // namespace acco::exec
