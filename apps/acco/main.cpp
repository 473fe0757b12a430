// acco: thin entry point. Parsing and running live in acco::cli; this prints and exits.
#include <cstdlib>
#include <exception>
#include <iostream>

#include "acco/cli/app.hpp"

int main(int argc, char** argv) try {
  acco::cli::defer_mpi_finalize();  // MPI, when a command opens it, ends after the printing
  const std::vector<std::string> args(argv + 1, argv + argc);
  const auto output = acco::cli::run_command_line(
      args, [](const char* name) { return std::getenv(name); },
      [](std::string_view line) { std::cerr << line << "\n"
                                            << std::flush; });
  std::cout << output.out << std::flush;
  std::cerr << output.err << std::flush;
  acco::cli::finish();
  return output.exit_code;
} catch (const std::exception& e) {
  std::cerr << "acco: internal error: " << e.what() << "\n";
  return acco::cli::kExitInternal;
}
