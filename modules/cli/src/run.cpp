// Running a parsed command, and the one table from an error to the exit code.
#include <exception>

#include <fmt/format.h>

#include "acco/cli/app.hpp"
#include "acco/cluster/communicator.hpp"

namespace acco::cli {

int exit_code_for(const Error& error) {
  switch (error.code) {
    case Errc::kUsage:
      return kExitUsage;
    case Errc::kInvalidArgument:
      return kExitDataError;
    case Errc::kNotFound:
      return kExitNoInput;
    case Errc::kUnavailable:
    case Errc::kUnsupported:
    case Errc::kDeviceError:
      return kExitUnavailable;
    case Errc::kCannotWrite:
      return kExitCantCreate;
    case Errc::kInternal:
      return kExitInternal;
  }
  return kExitInternal;
}

Output error_output(const Error& error, std::string err_before) {
  return {"", std::move(err_before) + fmt::format("acco: {}\n", error.message),
          exit_code_for(error)};
}

Output run(const Options& options) {
  try {
    if (options.runner) {
      Result<Output> output = options.runner->run(options.invocation);
      return output ? *std::move(output) : error_output(output.error());
    }
    if (options.command == "version") {
      return {fmt::format("acco {}\n", ACCO_VERSION), "", kExitOk};
    }
    return {options.help_text, "", kExitOk};
  } catch (const std::exception& e) {
    return {"", fmt::format("acco: internal error: {}\n", e.what()), kExitInternal};
  }
}

void defer_mpi_finalize() {
  cluster::defer_mpi_finalize();
}

void finish() {
  cluster::finish_mpi();
}

Output run_command_line(const std::vector<std::string>& args, const Getenv& getenv,
                        const Progress& progress) {
  auto options = parse_args(args, getenv);
  if (!options) {
    return error_output(options.error());
  }
  options->invocation.progress = progress;
  return run(*options);
}

}  // namespace acco::cli
