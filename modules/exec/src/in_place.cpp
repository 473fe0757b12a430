// This process as `acco exec` uses it: its environment, and the command that replaces it.
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <unistd.h>

#include "acco/exec/spawn.hpp"

// POSIX's process environment, which <unistd.h> leaves undeclared without _GNU_SOURCE.
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables,readability-redundant-declaration)
extern char** environ;

namespace acco::exec {

Environment current_environment() {
  Environment env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    if (const auto eq = entry.find('='); eq != std::string::npos) {
      env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
    }
  }
  return env;
}

ExecFailure exec_in_place(const std::vector<std::string>& command) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<char*> argv;
  argv.reserve(command.size() + 1);
  for (const std::string& word : command) {
    argv.push_back(
        const_cast<char*>(word.c_str()));  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  }
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  const int error = errno;
  return error == ENOENT ? ExecFailure{"command not found", 127}
                         : ExecFailure{std::strerror(error), 126};
}

}  // namespace acco::exec
