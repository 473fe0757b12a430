// What `acco submit`, `jobs`, `cancel` and `logs` share: where the user's job queue is (the
// jobs-dir setting, its daemon.json and token) and --daemon to name another address.
#pragma once

#include <string>

#include "acco/core/result.hpp"
#include "acco/core/settings.hpp"
#include "acco/monitor/jobs.hpp"

#include "command_spec.hpp"

namespace acco::cli {

// --daemon URL and --jobs-dir DIR on `sub`.
void add_job_client_flags(CLI::App& sub, SharedFlags& shared, std::string& daemon);

// The client for the jobs-dir setting (empty: monitor::default_jobs_dir()) and --daemon.
[[nodiscard]] Result<monitor::JobClient> job_client(const core::Settings& settings,
                                                    const std::string& daemon);

// A job id as given on the command line; a usage error (64) otherwise.
[[nodiscard]] Result<std::int64_t> job_id_arg(const std::string& text);

}  // namespace acco::cli
