// `acco submit`: queues a command in the user's running daemon (acco serve --jobs), which starts
// it on the least loaded, coolest free device with the binding acco exec applies.
#include <climits>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <unistd.h>

#include "acco/core/units.hpp"
#include "acco/monitor/jobs.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "job_flags.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace acco::cli {
namespace {

struct SubmitFlags {
  int gpus = 1;
  std::string memory;
  std::string name;
  std::string daemon;
  std::vector<std::string> command;
};

class SubmitCommand final : public Command {
 public:
  SubmitCommand(monitor::JobClient client, monitor::JobRequest request)
      : client_(std::move(client)), request_(std::move(request)) {}

  Result<Output> run(const Invocation& inv) const override {
    ACCO_ASSIGN_OR_RETURN(const auto job, client_.submit(request_), "submit");
    Output out;
    out.out = inv.format == Format::kJson
                  ? monitor::to_json(job).dump(2) + "\n"
                  : fmt::format("submitted job {} ({}): {}; its output: acco logs {}\n", job.id,
                                job.request.name, job.state, job.id);
    return out;
  }

 private:
  monitor::JobClient client_;
  monitor::JobRequest request_;
};

}  // namespace

CommandSpec submit_command() {
  return command_with_flags<SubmitFlags>(
      "submit", "queue a command on the least loaded free GPU (a running acco serve --jobs)",
      [](CLI::App& sub, SharedFlags& shared, SubmitFlags& flags) {
        sub.add_option("--gpus", flags.gpus, "whole devices the job needs (default 1)")
            ->type_name("N");
        sub.add_option("--memory", flags.memory, "free device memory each device must have")
            ->type_name("SIZE");
        sub.add_option("--name", flags.name, "the job's name (default: the command's)")
            ->type_name("NAME");
        add_job_client_flags(sub, shared, flags.daemon);
        add_json_flag(sub, shared, "print the job as JSON");
        sub.add_option("command", flags.command, "the command and its arguments, after --")
            ->type_name("CMD");
      },
      [](const SubmitFlags& flags,
         const core::Settings& settings) -> Result<std::unique_ptr<Command>> {
        if (flags.command.empty()) {
          return usage("submit: the command to run is required after --");
        }
        if (flags.gpus < 1 || flags.gpus > 1024) {
          return bad_value("--gpus", std::to_string(flags.gpus), "a whole number from 1 to 1024");
        }
        monitor::JobRequest request;
        request.argv = flags.command;
        request.name = flags.name;
        request.gpus = flags.gpus;
        if (!flags.memory.empty()) {
          const auto bytes = units::parse_bytes(flags.memory);
          if (!bytes) {
            return bad_value("--memory", flags.memory, "a size such as 20GiB");
          }
          request.memory_bytes = *bytes;
        }
        char cwd[PATH_MAX];
        if (::getcwd(cwd, sizeof cwd) != nullptr) {
          request.cwd = cwd;
        }
        for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
          const std::string entry = *e;
          const auto eq = entry.find('=');
          if (eq != std::string::npos) {
            request.env[entry.substr(0, eq)] = entry.substr(eq + 1);
          }
        }
        ACCO_ASSIGN_OR_RETURN(auto client, job_client(settings, flags.daemon));
        return std::make_unique<SubmitCommand>(std::move(client), std::move(request));
      });
}

}  // namespace acco::cli
