// acco-make-sysroot: writes a canned machine's sysroot by hand, the same trees the tests use.
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "machines.hpp"

namespace {

// sysexits.h: bad command line, and an output that cannot be created.
constexpr int kExitUsage = 64;
constexpr int kExitCantCreate = 73;

void print_help() {
  std::string text =
      "Usage: acco-make-sysroot MACHINE DIR [--fault NAME[=N]]...\n"
      "\n"
      "Writes a fake Linux sysroot (DIR/sys, DIR/proc) in the kernel's layout, for\n"
      "`acco probe --sysroot DIR`. DIR is created and must be empty. Each --fault changes one\n"
      "thing; N picks GPU/NIC/switch N (0-7, default 0).\n"
      "\n"
      "Machines and faults:\n";
  for (const auto& m : acco::testing::canned_machines()) {
    text += fmt::format("  {:<14}{}\n", m.name, m.what);
    for (const auto& f : m.faults) {
      text += fmt::format("      --fault {:<24}{}\n",
                          fmt::format("{}{}", f.name, f.indexed ? "[=N]" : ""), f.what);
    }
  }
  text +=
      "\n"
      "Exit status: 0 written, 64 bad arguments, 73 DIR could not be written.\n";
  std::fputs(text.c_str(), stdout);
}

int fail(int code, std::string_view message) {
  fmt::print(stderr, "acco-make-sysroot: {}\n", message);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional;
  std::vector<std::string> faults;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      print_help();
      return 0;
    }
    if (arg == "--fault") {
      if (i + 1 == argc) {
        return fail(kExitUsage, "--fault needs a NAME (see --help)");
      }
      faults.emplace_back(argv[++i]);
    } else if (arg.starts_with("--fault=")) {
      faults.emplace_back(arg.substr(8));
    } else if (arg.starts_with("-")) {
      return fail(kExitUsage, fmt::format("unknown option '{}' (see --help)", arg));
    } else {
      positional.emplace_back(arg);
    }
  }
  std::string machine_names;
  for (const auto& m : acco::testing::canned_machines()) {
    machine_names += fmt::format("{}{}", machine_names.empty() ? "" : ", ", m.name);
  }
  if (positional.size() != 2) {
    return fail(kExitUsage,
                fmt::format("expected MACHINE DIR (machines: {}; see --help)", machine_names));
  }
  const acco::testing::CannedMachine* machine = nullptr;
  for (const auto& m : acco::testing::canned_machines()) {
    if (m.name == positional[0]) {
      machine = &m;
    }
  }
  if (machine == nullptr) {
    return fail(kExitUsage,
                fmt::format("unknown machine '{}' (machines: {})", positional[0], machine_names));
  }
  try {
    machine->write(positional[1], faults);
  } catch (const std::invalid_argument& e) {
    return fail(kExitUsage, e.what());
  } catch (const std::exception& e) {
    return fail(kExitCantCreate, e.what());
  }
  return 0;
}
