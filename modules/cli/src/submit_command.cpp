// `acco submit`: queues a command in the user's running daemon (acco serve --jobs), which starts
// it on the least loaded, coolest free device with the binding acco exec applies.
#include <climits>
#include <memory>
#include <regex>
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
  std::string mig;
  std::string memory_max;
  int io_weight = 0;
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
        auto* gpus = sub.add_option("--gpus", flags.gpus, "whole devices the job needs (default 1)")
                         ->type_name("N");
        sub.add_option("--memory", flags.memory, "free device memory each device must have")
            ->type_name("SIZE");
        sub.add_option("--mig", flags.mig,
                       "one MIG instance of this profile (1g.10gb, 3g.40gb) instead of whole GPUs")
            ->type_name("PROFILE")
            ->excludes(gpus);
        sub.add_option("--memory-max", flags.memory_max,
                       "host memory limit (cgroup v2 memory.max, where the daemon's cgroup is "
                       "delegated)")
            ->type_name("SIZE");
        sub.add_option("--io-weight", flags.io_weight,
                       "I/O weight 1-10000 (cgroup v2 io.weight; the default is 100)")
            ->type_name("N");
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
        if (!flags.mig.empty()) {
          // nvidia-smi mig -lgip's names: 1g.10gb, 1g.10gb+me, 3g.40gb; 1c.3g.40gb for a compute
          // instance smaller than its GPU instance.
          static const std::regex profile(R"(^([0-9]+c\.)?[0-9]+g\.[0-9]+gb(\+me)?$)",
                                          std::regex::icase);
          if (!std::regex_match(flags.mig, profile)) {
            return bad_value("--mig", flags.mig, "a MIG profile such as 1g.10gb or 3g.40gb");
          }
          request.mig = flags.mig;
        }
        if (!flags.memory.empty()) {
          const auto bytes = units::parse_bytes(flags.memory);
          if (!bytes) {
            return bad_value("--memory", flags.memory, "a size such as 20GiB");
          }
          request.memory_bytes = *bytes;
        }
        if (!flags.memory_max.empty()) {
          const auto bytes = units::parse_bytes(flags.memory_max);
          if (!bytes || *bytes == 0) {
            return bad_value("--memory-max", flags.memory_max, "a size such as 16GiB");
          }
          request.memory_max_bytes = *bytes;
        }
        if (flags.io_weight != 0) {
          if (flags.io_weight < 1 || flags.io_weight > 10000) {
            return bad_value("--io-weight", std::to_string(flags.io_weight),
                             "a whole number from 1 to 10000");
          }
          request.io_weight = flags.io_weight;
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
