// `acco submit`: queues a command in the user's running daemon (acco serve --jobs), which starts
// it on the least loaded, coolest free device with the binding acco exec applies.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "acco/monitor/jobs.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "job_flags.hpp"

namespace acco::cli {
namespace {

struct SubmitFlags {
  monitor::SubmitRequest request;
  std::string daemon;
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
        auto* gpus =
            sub.add_option("--gpus", flags.request.gpus, "whole devices the job needs (default 1)")
                ->type_name("N");
        sub.add_option("--memory", flags.request.memory, "free device memory each device must have")
            ->type_name("SIZE");
        sub.add_option("--mig", flags.request.mig,
                       "one MIG instance of this profile (1g.10gb, 3g.40gb) instead of whole GPUs")
            ->type_name("PROFILE")
            ->excludes(gpus);
        sub.add_option("--memory-max", flags.request.memory_max,
                       "host memory limit (cgroup v2 memory.max, where the daemon's cgroup is "
                       "delegated)")
            ->type_name("SIZE");
        sub.add_option("--io-weight", flags.request.io_weight,
                       "I/O weight 1-10000 (cgroup v2 io.weight; the default is 100)")
            ->type_name("N");
        sub.add_option("--name", flags.request.name, "the job's name (default: the command's)")
            ->type_name("NAME");
        add_job_client_flags(sub, shared, flags.daemon);
        add_json_flag(sub, shared, "print the job as JSON");
        sub.add_option("command", flags.request.command, "the command and its arguments, after --")
            ->type_name("CMD");
      },
      [](const SubmitFlags& flags,
         const core::Settings& settings) -> Result<std::unique_ptr<Command>> {
        ACCO_ASSIGN_OR_RETURN(auto request, as_usage(monitor::job_request(flags.request)));
        ACCO_ASSIGN_OR_RETURN(auto client, job_client(settings, flags.daemon));
        return std::make_unique<SubmitCommand>(std::move(client), std::move(request));
      });
}

}  // namespace acco::cli
