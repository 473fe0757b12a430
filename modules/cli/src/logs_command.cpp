// `acco logs ID`: a job's standard output and error (the last MiB), as the daemon kept them.
#include <memory>
#include <string>

#include "acco/monitor/jobs.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "job_flags.hpp"

namespace acco::cli {
namespace {

struct LogsFlags {
  std::string daemon;
  std::string id;
};

class LogsCommand final : public Command {
 public:
  LogsCommand(monitor::JobClient client, std::int64_t id) : client_(std::move(client)), id_(id) {}

  Result<Output> run(const Invocation& /*inv*/) const override {
    ACCO_ASSIGN_OR_RETURN(auto text, client_.logs(id_), "logs");
    Output out;
    out.out = std::move(text);
    return out;
  }

 private:
  monitor::JobClient client_;
  std::int64_t id_;
};

}  // namespace

CommandSpec logs_command() {
  return command_with_flags<LogsFlags>(
      "logs", "print a job's output (stdout and stderr, the last MiB)",
      [](CLI::App& sub, SharedFlags& shared, LogsFlags& flags) {
        sub.add_option("id", flags.id, "the job's id (acco jobs)")->type_name("ID")->required();
        add_job_client_flags(sub, shared, flags.daemon);
      },
      [](const LogsFlags& flags,
         const core::Settings& settings) -> Result<std::unique_ptr<Command>> {
        ACCO_ASSIGN_OR_RETURN(const auto id, job_id_arg(flags.id));
        ACCO_ASSIGN_OR_RETURN(auto client, job_client(settings, flags.daemon));
        return std::make_unique<LogsCommand>(std::move(client), id);
      });
}

}  // namespace acco::cli
