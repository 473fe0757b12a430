// `acco cancel ID`: a queued job never starts; a running one's session gets SIGTERM, then
// SIGKILL.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "acco/monitor/jobs.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "job_flags.hpp"

namespace acco::cli {
namespace {

struct CancelFlags {
  std::string daemon;
  std::string id;
};

class CancelCommand final : public Command {
 public:
  CancelCommand(monitor::JobClient client, std::int64_t id) : client_(std::move(client)), id_(id) {}

  Result<Output> run(const Invocation& inv) const override {
    ACCO_ASSIGN_OR_RETURN(const auto job, client_.cancel(id_), "cancel");
    Output out;
    out.out = inv.format == Format::kJson
                  ? monitor::to_json(job).dump(2) + "\n"
                  : fmt::format("job {} ({}): {}{}\n", job.id, job.request.name, job.state,
                                job.reason.empty() ? "" : ", " + job.reason);
    return out;
  }

 private:
  monitor::JobClient client_;
  std::int64_t id_;
};

}  // namespace

CommandSpec cancel_command() {
  return command_with_flags<CancelFlags>(
      "cancel", "cancel a job of the queue (SIGTERM to a running one's session, then SIGKILL)",
      [](CLI::App& sub, SharedFlags& shared, CancelFlags& flags) {
        sub.add_option("id", flags.id, "the job's id (acco jobs)")->type_name("ID")->required();
        add_job_client_flags(sub, shared, flags.daemon);
        add_json_flag(sub, shared, "print the job as JSON");
      },
      [](const CancelFlags& flags,
         const core::Settings& settings) -> Result<std::unique_ptr<Command>> {
        ACCO_ASSIGN_OR_RETURN(const auto id, job_id_arg(flags.id));
        ACCO_ASSIGN_OR_RETURN(auto client, job_client(settings, flags.daemon));
        return std::make_unique<CancelCommand>(std::move(client), id);
      });
}

}  // namespace acco::cli
