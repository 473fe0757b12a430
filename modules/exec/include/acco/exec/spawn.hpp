// Starting a child process already bound: the job queue's way to run a command on its device
// with the binding `acco exec` would apply, without exec-ing acco itself. Everything that
// allocates happens before fork(); the child only makes system calls, as a threaded parent
// requires.
#pragma once

#include <string>
#include <vector>

#include <sys/types.h>

#include "acco/core/result.hpp"
#include "acco/exec/binding.hpp"

namespace acco::exec {

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] is looked up in env's PATH when it has no '/'
  Environment env;                // the child's whole environment (the binding's added to it)
  std::string cwd;                // where it starts; empty: the parent's
  std::string log_path;           // stdout and stderr, appended (created 0600); stdin /dev/null
  std::vector<int> cpus;          // sched_setaffinity; empty: inherited
  int memory_node = -1;           // set_mempolicy(MPOL_BIND); -1: inherited
  std::string cgroup;             // a cgroup v2 directory the child joins first; empty: stays
};

// Forks and execs in a session of its own (setsid: its process group is its pid, so a signal
// to -pid reaches everything it started). Errors, each naming the command: kNotFound when
// argv[0] is not an executable file on PATH; kUnavailable when the log cannot be opened, or
// when the child could not join its cgroup, bind, change directory or exec (the child's errno,
// reported back through a close-on-exec pipe before this returns).
[[nodiscard]] Result<pid_t> spawn(const SpawnRequest& request);

// This process's environment (environ), as a binding reads and a child inherits it.
[[nodiscard]] Environment current_environment();

// What became of a command that could not replace this process (`acco exec`): "command not
// found" (exit 127, as a shell's) or why it cannot run (126).
struct ExecFailure {
  std::string why;
  int exit_code = 126;
};
// Replaces this process with `command` (execvp: argv[0] looked up on PATH), stdout and stderr
// flushed first. Returns only when that failed.
[[nodiscard]] ExecFailure exec_in_place(const std::vector<std::string>& command);

// `binding`'s CPUs, memory node and environment on top of `request`.
[[nodiscard]] SpawnRequest bound(SpawnRequest request, const Binding& binding);

}  // namespace acco::exec
