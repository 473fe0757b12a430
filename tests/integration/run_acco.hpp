// Running the built acco binary as a user would, for the integration tests: its exit code,
// stdout and stderr, with the NVML environment of the caller removed so the tests see the
// machine as configured by each test.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "acco/testing/files.hpp"
#include "acco/testing/json_schema.hpp"

#include "sysroot_builder.hpp"

namespace acco::testing {

struct Run {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// `env` is a list of NAME=VALUE words put before the command.
inline Run acco(const std::string& args, const std::string& env = "") {
  TempDir io;
  const std::string cmd =
      "env -u ACCO_NVML -u ACCO_NVML_LIBRARY -u ACCO_FAKE_NVML_STATE -u ACCO_LISTEN "
      "-u ACCO_STORE -u ACCO_HISTORY -u ACCO_STATE_FILE " +
      env + " " + std::string(ACCO_BINARY) + " " + args + " >" + (io.path() / "out").string() +
      " 2>" + (io.path() / "err").string();
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(io.path() / "out"),
          slurp(io.path() / "err")};
}

inline constexpr const char* kMpiexec = ACCO_MPIEXEC;  // empty when acco was built without MPI

// Under ASan: Open MPI's own blocks, kept until exit, are not acco's leaks (tests/lsan.supp);
// its plugins stay mapped so their frames keep their names. No effect in other builds.
inline std::string sanitizer_env() {
  return std::string("env LSAN_OPTIONS=suppressions=") + ACCO_SOURCE_DIR +
         "/tests/lsan.supp:fast_unwind_on_malloc=0 "
         "OMPI_MCA_mca_base_component_disable_dlclose=1 ";
}

// `mpirun -np N` of acco with `args`; the launcher's own flags for running as root in a 2-core
// container, its control connections on loopback (the netns test makes and removes a bridge
// beside it, and a connection over a vanished interface hangs).
// `program` (acco unless named) with `args` on `ranks` ranks of mpirun.
inline Run mpirun(int ranks, const std::string& mca, const std::string& args,
                  const std::string& program = ACCO_BINARY) {
  // A job that hangs fails here after two minutes instead of stalling the whole test run.
  const std::string cmd =
      sanitizer_env() + "timeout 120 " + kMpiexec +
      " --allow-run-as-root --oversubscribe --bind-to none --mca oob_tcp_if_include lo -np " +
      std::to_string(ranks) + " " + mca + " " + program + " " + args;
  TempDir io;
  const int status = std::system(
      (cmd + " >" + (io.path() / "out").string() + " 2>" + (io.path() / "err").string()).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(io.path() / "out"),
          slurp(io.path() / "err")};
}

}  // namespace acco::testing
