// `acco jobs`: the user's job queue, each job's state, devices and why it waits or ended.
#include <memory>
#include <string>

#include "acco/monitor/jobs.hpp"
#include "acco/report/document.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "job_flags.hpp"

namespace acco::cli {
namespace {

struct JobsFlags {
  std::string daemon;
};

class JobsCommand final : public Command {
 public:
  explicit JobsCommand(monitor::JobClient client) : client_(std::move(client)) {}

  Result<Output> run(const Invocation& inv) const override {
    ACCO_ASSIGN_OR_RETURN(const auto jobs, client_.jobs(), "jobs");
    Output out;
    out.out = inv.format == Format::kJson ? monitor::jobs_json(jobs).dump(2) + "\n"
                                          : report::render_text(monitor::jobs_report(jobs));
    return out;
  }

 private:
  monitor::JobClient client_;
};

}  // namespace

CommandSpec jobs_command() {
  return command_with_flags<JobsFlags>(
      "jobs", "list the jobs of the queue (acco submit) and why each waits or ended",
      [](CLI::App& sub, SharedFlags& shared, JobsFlags& flags) {
        add_job_client_flags(sub, shared, flags.daemon);
        add_json_flag(sub, shared, "print JSON (acco.jobs/1)");
      },
      [](const JobsFlags& flags,
         const core::Settings& settings) -> Result<std::unique_ptr<Command>> {
        ACCO_ASSIGN_OR_RETURN(auto client, job_client(settings, flags.daemon));
        return std::make_unique<JobsCommand>(std::move(client));
      });
}

}  // namespace acco::cli
