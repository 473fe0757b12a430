#include "job_flags.hpp"

#include "acco/core/units.hpp"
#include "acco/monitor/client.hpp"

namespace acco::cli {

void add_job_client_flags(CLI::App& sub, SharedFlags& shared, std::string& daemon) {
  sub.add_option("--daemon", daemon,
                 "the daemon's address (default: the one that wrote the jobs directory's "
                 "daemon.json)")
      ->type_name("URL");
  add_setting_flag(sub, shared, "jobs-dir", "the job queue's directory (its token, table and logs)",
                   "DIR");
  add_config_flag(sub, shared);
}

Result<monitor::JobClient> job_client(const core::Settings& settings, const std::string& daemon) {
  monitor::JobClient client;
  client.dir = settings.get("jobs-dir");
  if (client.dir.empty()) {
    ACCO_ASSIGN_OR_RETURN(client.dir, monitor::default_jobs_dir());
  }
  client.url = daemon;
  if (!daemon.empty()) {
    ACCO_RETURN_IF_ERROR(as_usage(monitor::parse_server_url(daemon)), "--daemon");
  }
  return client;
}

Result<std::int64_t> job_id_arg(const std::string& text) {
  const auto id = units::parse_int(text);
  if (!id || *id < 1) {
    return bad_value("ID", text, "a job id (a positive number, as acco jobs lists them)");
  }
  return *id;
}

}  // namespace acco::cli
