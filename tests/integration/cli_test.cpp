// Drives the built `acco` binary end to end on generated machines and on this machine: exit
// codes, text output against golden files, JSON against docs/schemas/probe.schema.json and
// schedule.schema.json, snapshots, NVML through the fake libnvidia-ml, `acco schedule` on
// emulated devices, and bad input.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "acco/testing/files.hpp"
#include "acco/testing/json_schema.hpp"

#include "machines.hpp"
#include "sysroot_builder.hpp"

namespace acco::testing {
namespace {

namespace stdfs = std::filesystem;
using ::testing::Contains;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (const char c : s) {
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return q + "'";
}

// Runs acco with `args` and extra environment; ACCO_* variables of the caller are cleared so a
// developer's settings cannot change results.
CommandResult acco(const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env = {}) {
  TempDir io;
  std::string cmd =
      "env -u ACCO_SYSROOT -u ACCO_NVML -u ACCO_NVML_LIBRARY -u ACCO_CONFIG -u ACCO_PCI_IDS "
      "-u ACCO_LISTEN -u ACCO_STORE -u ACCO_HISTORY -u ACCO_STATE_FILE";
  for (const auto& [k, v] : env) {
    cmd += " " + k + "=" + quote(v);
  }
  cmd += " " + quote(ACCO_BINARY);
  for (const auto& a : args) {
    cmd += " " + quote(a);
  }
  cmd += " >" + quote((io.path() / "out").string()) + " 2>" + quote((io.path() / "err").string());
  const int status = std::system(cmd.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(io.path() / "out");
  r.err = slurp(io.path() / "err");
  return r;
}

std::map<std::string, std::string> fake_nvml(const std::string& config) {
  return {{"ACCO_NVML_LIBRARY", ACCO_FAKE_NVML_PATH},
          {"ACCO_FAKE_NVML_CONFIG", std::string(ACCO_SOURCE_DIR) + "/tests/data/nvml/" + config}};
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
  return s;
}

struct GeneratedMachine {
  const char* name;
  void (*write)(const stdfs::path&);
  const char* nvml_config;  // nullptr: no NVML
};

const std::vector<GeneratedMachine>& machines() {
  static const std::vector<GeneratedMachine> kMachines = {
      {"dgx_h100", [](const stdfs::path& d) { write_dgx_h100(d); }, "dgx_h100.json"},
      {"workstation", [](const stdfs::path& d) { write_workstation(d); }, "workstation.json"},
      {"flattened_vm", [](const stdfs::path& d) { write_flattened_vm(d); }, nullptr},
      {"kvm_guest", [](const stdfs::path& d) { write_kvm_guest(d); }, nullptr},
      {"ci_vm", [](const stdfs::path& d) { write_ci_vm(d); }, nullptr},
      {"pcie_server", [](const stdfs::path& d) { write_pcie_server(d); }, nullptr},
      {"amd_accelerator", [](const stdfs::path& d) { write_amd_accelerator(d); }, nullptr},
      // A CXL memory expander (a memory-only node with HMAT and tiers) and a chipset NIC: what
      // the probe says holds there, and no warning about either.
      {"cxl_chipset_nic",
       [](const stdfs::path& d) {
         write_firmware_quirks(d, {.memory_only_node = true, .chipset_nic = true});
       },
       nullptr},
  };
  return kMachines;
}

class GeneratedMachineTest : public ::testing::TestWithParam<GeneratedMachine> {
 protected:
  CommandResult probe(std::vector<std::string> extra = {}, const char* command = "probe") {
    std::vector<std::string> args = {command, "--sysroot", dir_.path().string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto& m = GetParam();
    return acco(args, m.nvml_config != nullptr ? fake_nvml(m.nvml_config)
                                               : std::map<std::string, std::string>{});
  }
  std::string normalise(const std::string& text) const {
    auto t = replace_all(text, dir_.path().string(), "<SYSROOT>");
    return replace_all(t, ACCO_FAKE_NVML_PATH, "<FAKE_NVML>");
  }
  void SetUp() override { GetParam().write(dir_.path()); }
  TempDir dir_;
};

TEST_P(GeneratedMachineTest, TextReportMatchesGolden) {
  const auto r = probe();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  expect_golden(std::string(GetParam().name) + ".probe.txt", normalise(r.out));
}

TEST_P(GeneratedMachineTest, DoctorReportMatchesGolden) {
  const auto r = probe({}, "doctor");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden(std::string(GetParam().name) + ".doctor.txt", normalise(r.out));
}

TEST_P(GeneratedMachineTest, JsonConformsToTheSchema) {
  const auto r = probe({"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "probe.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "acco.probe/1");
  EXPECT_FALSE(j["devices"].empty());
}

TEST_P(GeneratedMachineTest, DoctorJsonConformsAndNamesWhatToFixFirst) {
  const auto r = probe({"--json"}, "doctor");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "probe.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("fix_first"));
  // The summary line names the same rules in the same order.
  const std::string summary = j["summary"].get<std::string>();
  if (j["fix_first"].empty()) {
    EXPECT_EQ(summary, "Nothing to fix: no warning or critical finding.");
  } else {
    std::string rules;
    for (const auto& rule : j["fix_first"]) {
      rules += (rules.empty() ? "" : ", ") + rule.get<std::string>();
    }
    EXPECT_THAT(summary, HasSubstr("start with " + rules)) << summary;
  }
}

TEST_P(GeneratedMachineTest, SnapshotReplaysToTheSameReport) {
  TempDir out;
  const auto snap = (out.path() / "snap.json").string();
  const auto live = probe({"--json", "--snapshot", snap});
  ASSERT_EQ(live.exit_code, 0) << live.err;
  EXPECT_THAT(live.err, HasSubstr("snapshot written"));
  // Replay without the fake NVML in the environment: NVML's answers come from the file.
  const auto replay = acco({"probe", "--json", "--from", snap});
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  auto a = nlohmann::json::parse(live.out);
  auto b = nlohmann::json::parse(replay.out);
  a["machine"].erase("origin");
  b["machine"].erase("origin");
  EXPECT_EQ(a, b);
}

void expect_one_line_error(const CommandResult& r, int code, const std::string& needle);

// The standard output of a shell command, or nullopt when it fails.
std::optional<std::string> shell_output(const std::string& command) {
  TempDir io;
  const auto out = io.path() / "out";
  if (std::system((command + " >" + quote(out.string()) + " 2>/dev/null").c_str()) != 0) {
    return std::nullopt;
  }
  return slurp(out);
}

int count_lines_with(const std::string& text, const std::string& word) {
  int n = 0;
  for (std::size_t pos = 0; (pos = text.find(word, pos)) != std::string::npos; pos += word.size()) {
    ++n;
  }
  return n;
}

// What hwloc's own tool (package hwloc-nox) finds on the tree `env` names, from one
// `lstopo --whole-io --of xml`: one <object> element each (distance matrices name types too)
// (hwloc-calc counts only objects with CPUs, and so misses memory-only nodes); PCI bridges are the
// Bridge objects whose upstream is PCI (bridge_type "1-1"; host bridges are "0-1"). -1 each when
// lstopo fails.
struct LstopoCounts {
  int packages = -1;
  int cores = -1;
  int pus = -1;
  int numa_nodes = -1;
  int pci_functions = -1;
  int pci_bridges = -1;
};

LstopoCounts lstopo_counts(const std::string& env) {
  const auto xml = shell_output(env + "lstopo-no-graphics --whole-io --of xml");
  LstopoCounts c;
  if (!xml) {
    return c;
  }
  c.packages = count_lines_with(*xml, "<object type=\"Package\"");
  c.cores = count_lines_with(*xml, "<object type=\"Core\"");
  c.pus = count_lines_with(*xml, "<object type=\"PU\"");
  c.numa_nodes = count_lines_with(*xml, "<object type=\"NUMANode\"");
  c.pci_functions = count_lines_with(*xml, "<object type=\"PCIDev\"");
  c.pci_bridges = count_lines_with(*xml, "bridge_type=\"1-1\"");
  return c;
}

// acco's counts against hwloc's own tool (package hwloc-nox) on the same tree: packages, cores,
// PUs and NUMA nodes, PCI functions and bridges (lstopo --whole-io).
TEST_P(GeneratedMachineTest, CountsMatchLstopo) {
  if (!shell_output("command -v lstopo-no-graphics")) {
    GTEST_SKIP() << "hwloc-nox (lstopo-no-graphics) is not installed";
  }
  const auto r = probe({"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const std::string env = "HWLOC_FSROOT=" + quote(dir_.path().string()) + " ";
  const auto hwloc = lstopo_counts(env);
  ASSERT_GE(hwloc.packages, 0) << "lstopo failed";
  const auto& cpu = j["machine"]["cpu"];
  EXPECT_EQ(cpu["packages"], hwloc.packages);
  EXPECT_EQ(cpu["cores"], hwloc.cores);
  EXPECT_EQ(cpu["pus"], hwloc.pus);
  EXPECT_EQ(cpu["numa_nodes"], hwloc.numa_nodes);
  EXPECT_EQ(j["machine"]["numa_nodes"].size(), static_cast<std::size_t>(hwloc.numa_nodes));
  EXPECT_EQ(cpu["disagreements"].size(), 0U) << cpu["disagreements"].dump();

  int acco_bridges = 0;
  for (const auto& d : j["devices"]) {
    acco_bridges += d["kind"] == "bridge" ? 1 : 0;
  }
  EXPECT_EQ(acco_bridges, hwloc.pci_bridges);
  EXPECT_EQ(static_cast<int>(j["devices"].size()) - acco_bridges, hwloc.pci_functions);
}

// Every canned machine with each of its faults, one at a time: acco's counts equal hwloc's tools'
// on the same tree, or the report says why they differ (hwloc-disagrees, or why hwloc could not
// be used).
TEST(CliTest, EveryFixtureCountsAsHwlocOrSaysWhy) {
  if (!shell_output("command -v lstopo-no-graphics")) {
    GTEST_SKIP() << "hwloc-nox (lstopo-no-graphics) is not installed";
  }
  int compared = 0;
  int explained = 0;
  for (const auto& machine : acco::testing::canned_machines()) {
    std::vector<std::vector<std::string>> variants = {{}};
    for (const auto& fault : machine.faults) {
      variants.push_back({std::string(fault.name)});
    }
    for (const auto& faults : variants) {
      SCOPED_TRACE(std::string(machine.name) + (faults.empty() ? "" : " --fault " + faults[0]));
      TempDir dir;
      machine.write(dir.path(), faults);
      const auto r = acco({"probe", "--json", "--sysroot", dir.path().string()});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const auto j = nlohmann::json::parse(r.out);
      const auto& cpu = j["machine"]["cpu"];
      const std::string env = "HWLOC_FSROOT=" + quote(dir.path().string()) + " ";
      const auto hwloc = lstopo_counts(env);
      ASSERT_GE(hwloc.packages, 0) << "lstopo failed";
      const int hwloc_pci = hwloc.pci_functions + hwloc.pci_bridges;
      const bool equal =
          !cpu["source"].is_null() && cpu["packages"] == hwloc.packages &&
          cpu["pus"] == hwloc.pus && cpu["numa_nodes"] == hwloc.numa_nodes &&
          j["machine"]["numa_nodes"].size() == static_cast<std::size_t>(hwloc.numa_nodes) &&
          static_cast<int>(j["devices"].size()) == hwloc_pci;
      const bool says_why = !cpu["unavailable"].is_null() || !cpu["disagreements"].empty();
      EXPECT_TRUE(equal || says_why) << cpu.dump() << " hwloc: " << hwloc.packages << " packages, "
                                     << hwloc.pus << " PUs, " << hwloc.numa_nodes << " nodes, "
                                     << hwloc_pci << " PCI functions; acco " << j["devices"].size();
      compared += equal ? 1 : 0;
      explained += equal ? 0 : 1;
    }
  }
  // Most trees agree outright; the rest are the quirks that make them differ.
  EXPECT_GT(compared, explained);
}

// The hwloc XML a snapshot of the machine carries, as a file `lstopo --of xml` would write, with
// the host name and kernel of the canned machine (hwloc writes the running system's).
std::string export_xml(const stdfs::path& sysroot, const stdfs::path& out) {
  const auto snap = out / "snap.json";
  const auto r = acco({"probe", "--sysroot", sysroot.string(), "--snapshot", snap.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string xml = nlohmann::json::parse(slurp(snap))["hwloc_xml"].get<std::string>();
  for (const auto& [name, value] :
       {std::pair{"HostName", "dgx-h100-01"}, std::pair{"OSRelease", "5.15.0-1063-nvidia"}}) {
    const std::string key = std::string("name=\"") + name + "\" value=\"";
    const auto at = xml.find(key);
    if (at != std::string::npos) {
      const auto start = at + key.size();
      xml.replace(start, xml.find('"', start) - start, value);
    }
  }
  const auto file = out / "dgx_h100.xml";
  std::ofstream(file) << xml;
  return file.string();
}

TEST(CliTest, HwlocXmlExportIsAssessedAsFarAsItHoldsFacts) {
  TempDir dir;
  write_dgx_h100(dir.path());
  TempDir out;
  const auto xml = export_xml(dir.path(), out.path());
  // An export names devices from this host's database; the fixture's keeps the golden the same
  // on a host with another one or none.
  const auto ids = (out.path() / "pci.ids").string();
  std::ofstream(ids) << pci_ids_fixture();
  const auto r = acco({"probe", "--hwloc-xml", xml}, {{"ACCO_PCI_IDS", ids}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("dgx_h100.hwloc_xml.txt", replace_all(r.out, xml, "<XML>"));
  const auto json = acco({"probe", "--hwloc-xml", xml, "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  expect_conforms(json.out, "probe.schema.json");
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["machine"]["sysfs_read"], false);
  EXPECT_EQ(j["machine"]["cpu"]["packages"], 2);
  // The doctor measures only the machine it runs on, never one described by a file.
  const auto doctor = acco({"doctor", "--hwloc-xml", xml});
  ASSERT_EQ(doctor.exit_code, 0) << doctor.err;
  EXPECT_THAT(doctor.out,
              HasSubstr("Measured paths (quick bench): skipped (not the live machine)"));
}

// An NCCL topology file (a bare-metal dump): NUMA, the PCI tree with its links, NVLinks, NICs.
TEST(CliTest, NcclTopologyFileIsAssessedAsFarAsItHoldsFacts) {
  const std::string xml = std::string(ACCO_SOURCE_DIR) + "/tests/data/nccl_topo/dgx_h100.xml";
  TempDir out;
  const auto ids = (out.path() / "pci.ids").string();
  std::ofstream(ids) << pci_ids_fixture();
  const auto r = acco({"probe", "--nccl-topo", xml}, {{"ACCO_PCI_IDS", ids}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("dgx_h100.nccl_topo.txt", replace_all(r.out, xml, "<XML>"));
  const auto json = acco({"probe", "--nccl-topo", xml, "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  expect_conforms(json.out, "probe.schema.json");
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["machine"]["sysfs_read"], false);
  EXPECT_EQ(j["machine"]["numa_nodes"].size(), 2U);
  const auto doctor = acco({"doctor", "--nccl-topo", xml});
  ASSERT_EQ(doctor.exit_code, 0) << doctor.err;
  EXPECT_THAT(doctor.out,
              HasSubstr("Measured paths (quick bench): skipped (not the live machine)"));
}

TEST(CliTest, BadNcclTopologyInputsExitWithTheirCodes) {
  TempDir dir;
  expect_one_line_error(acco({"probe", "--nccl-topo", (dir.path() / "none.xml").string()}), 66,
                        "none.xml");
  const auto garbage = (dir.path() / "garbage.xml").string();
  std::ofstream(garbage) << "<system><pci busid=\"17:00\"/></system>";
  expect_one_line_error(acco({"probe", "--nccl-topo", garbage}), 65,
                        "busid=\"17:00\" is not a PCI address");
  const auto big = (dir.path() / "big.xml").string();
  { std::ofstream create(big); }  // a sparse file past the reader's cap
  std::filesystem::resize_file(big, (std::uintmax_t{16} << 20) + 1);
  expect_one_line_error(acco({"probe", "--nccl-topo", big}), 65, "more than the 16777216 bytes");
  expect_one_line_error(acco({"probe", "--nccl-topo", garbage, "--hwloc-xml", garbage}), 64,
                        "--nccl-topo and --hwloc-xml cannot be combined");
  expect_one_line_error(acco({"probe", "--nccl-topo", garbage, "--data-dir", "/"}), 64,
                        "--data-dir and --nccl-topo cannot be combined");
}

TEST(CliTest, BadHwlocXmlInputsExitWithTheirCodes) {
  TempDir dir;
  expect_one_line_error(acco({"probe", "--hwloc-xml", (dir.path() / "none.xml").string()}), 66,
                        "none.xml");
  const auto garbage = (dir.path() / "garbage.xml").string();
  std::ofstream(garbage) << "<topology";
  expect_one_line_error(acco({"probe", "--hwloc-xml", garbage}), 65, "garbage.xml");
  // An export that crashes hwloc 2.9 itself (found by fuzz_hwloc_xml): loaded in a child first,
  // so acco says so instead of dying with it.
  const std::string crashing =
      std::string(ACCO_SOURCE_DIR) + "/fuzz/corpus/hwloc_xml/crash-pu-without-complete-cpuset.xml";
  const auto crashed = acco({"probe", "--hwloc-xml", crashing});
  expect_one_line_error(crashed, 65, "crash-pu-without-complete-cpuset.xml");
  EXPECT_THAT(crashed.err, HasSubstr("can load (it crashed on it: "));
  expect_one_line_error(acco({"probe", "--hwloc-xml", garbage, "--from", garbage}), 64,
                        "--hwloc-xml");
  expect_one_line_error(acco({"probe", "--hwloc-xml", garbage, "--sysroot", "/"}), 64,
                        "--hwloc-xml");
}

INSTANTIATE_TEST_SUITE_P(Machines, GeneratedMachineTest, ::testing::ValuesIn(machines()),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(CliTest, ProbeOnThisMachineExitsZeroWithAReport) {
  const auto r = acco({"probe"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("acco probe: "));
  EXPECT_THAT(r.out, HasSubstr("Findings: "));
}

TEST(CliTest, ProbeJsonOnThisMachineConformsToTheSchema) {
  const auto r = acco({"probe", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "probe.schema.json");
}

TEST(CliTest, DoctorOnThisMachineEndsWithASummary) {
  const auto r = acco({"doctor"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Doctor's summary"));
}

TEST(CliTest, FailOnTurnsFindingsIntoExitOne) {
  TempDir dir;
  write_workstation(dir.path());  // x8 of x16: a critical downtrain
  EXPECT_EQ(acco({"probe", "--sysroot", dir.path().string(), "--fail-on", "critical"}).exit_code,
            1);
  EXPECT_EQ(acco({"probe", "--sysroot", dir.path().string(), "--fail-on", "warning"}).exit_code, 1);
  TempDir healthy;
  write_dgx_h100(healthy.path());
  EXPECT_EQ(acco({"probe", "--sysroot", healthy.path().string(), "--fail-on", "warning"}).exit_code,
            0);
}

// The header's socket count comes from every online CPU's package: a node over two packages
// shows both, a memory-only node adds none, and package id -1 is unknown.
TEST(CliTest, ProbeHeaderCountsSocketsFromTheCpus) {
  const std::vector<std::pair<FirmwareQuirksOptions, std::string>> cases = {
      {{}, "NUMA: 2 node(s) on 2 socket(s)\n"},
      {{.one_node = true}, "NUMA: 1 node(s) on 2 socket(s)\n"},
      {{.memory_only_node = true}, "NUMA: 3 node(s) on 2 socket(s)\n"},
      {{.gpu_memory_node = true},
       "NUMA: 3 node(s) on 2 socket(s)\n  node 0: socket 0, CPUs 0-15, 64.0 GiB\n  node 1: socket "
       "1, CPUs 16-31, 64.0 GiB\n  node 2: memory only (no CPUs), 16.0 GiB, nearest CPUs node(s) 1 "
       "at distance 20\n"},
      // The kernel names three packages and hwloc keeps two: the header counts the kernel's, as
      // the table does, and hwloc-disagrees says what hwloc kept.
      {{.package_dropped = true},
       "NUMA: 2 node(s) on 3 socket(s)\n  node 0: socket 0, CPUs 0-15, 64.0 GiB\n  node 1: socket "
       "1, CPUs 16-31, 64.0 GiB\n"},
      {{.first_cpu_offline = true}, "NUMA: 2 node(s) on 2 socket(s)\n"},
      // hwloc groups the CPUs by package_cpus whatever their package id.
      {{.package_unknown = true}, "NUMA: 2 node(s) on 2 socket(s)\n"},
  };
  for (const auto& [options, header] : cases) {
    SCOPED_TRACE(header);
    TempDir dir;
    write_firmware_quirks(dir.path(), options);
    const auto r = acco({"probe", "--sysroot", dir.path().string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(header));
  }
}

// Without hwloc (no topology files but the package id) and with package id -1 everywhere, no
// CPU names a socket: the header says the count is unknown rather than guessing.
TEST(CliTest, ProbeHeaderSaysTheSocketCountIsUnknownWhenNothingTellsIt) {
  TempDir dir;
  write_firmware_quirks(dir.path(), {.package_unknown = true});
  for (int cpu = 0; cpu < 32; ++cpu) {
    const auto topology =
        dir.path() / ("sys/devices/system/cpu/cpu" + std::to_string(cpu)) / "topology";
    for (const auto& entry : stdfs::directory_iterator(topology)) {
      if (entry.path().filename() != "physical_package_id") {
        stdfs::remove(entry.path());
      }
    }
  }
  const auto r = acco({"probe", "--sysroot", dir.path().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("CPU: topology unknown (hwloc found no CPU topology"));
  EXPECT_THAT(r.out, HasSubstr("NUMA: 2 node(s), socket count unknown"));
}

TEST(CliTest, ProbeQuotesControlBytesEscapedNeverRaw) {
  TempDir dir;
  write_firmware_quirks(dir.path());
  std::ofstream(dir.path() / "sys/devices/system/node/node1/cpulist", std::ios::binary)
      << std::string("16-x\0y\n", 7);
  const auto r = acco({"probe", "--sysroot", dir.path().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("'16-x\\0y'"));
  EXPECT_EQ(r.out.find('\0'), std::string::npos);
  const auto j = acco({"probe", "--json", "--sysroot", dir.path().string()});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  expect_conforms(j.out, "probe.schema.json");
}

TEST(CliTest, QuirksServerJsonConformsToTheSchema) {
  TempDir dir;
  write_firmware_quirks(dir.path(), {.cpulist_nul = true,
                                     .numa_from_parent = true,
                                     .domain_32bit = true,
                                     .bridge_unlisted = true,
                                     .coprocessor = true,
                                     .cirrus_vga = true});
  const auto r = acco({"probe", "--json", "--sysroot", dir.path().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "probe.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["machine"]["packages"], nlohmann::json::array({0, 1}));
  bool parent_placed = false;
  for (const auto& d : j["devices"]) {
    parent_placed = parent_placed || d["numa_source"] == "parent bridge 0000:ca:00.0";
  }
  EXPECT_TRUE(parent_placed);
}

TEST(CliTest, SysrootFromEnvironmentIsUsed) {
  TempDir dir;
  write_ci_vm(dir.path());
  const auto r = acco({"probe", "--json"}, {{"ACCO_SYSROOT", dir.path().string()}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["devices"].size(), 6U);
}

TEST(CliTest, NvlinkDownFromNvmlIsReported) {
  TempDir dir;
  write_dgx_h100(dir.path());
  TempDir cfg;
  auto config =
      nlohmann::json::parse(slurp(stdfs::path(ACCO_SOURCE_DIR) / "tests/data/nvml/dgx_h100.json"));
  config["gpus"][3]["nvlinks"][7]["active"] = false;
  const auto path = (cfg.path() / "nvml.json").string();
  std::ofstream(path) << config.dump();
  const auto r =
      acco({"probe", "--json", "--sysroot", dir.path().string()},
           {{"ACCO_NVML_LIBRARY", ACCO_FAKE_NVML_PATH}, {"ACCO_FAKE_NVML_CONFIG", path}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bool found = false;
  const auto report = nlohmann::json::parse(r.out);
  for (const auto& f : report["findings"]) {
    found = found || (f["rule"] == "nvlink-down" && f["devices"][0] == "0000:5d:00.0");
  }
  EXPECT_TRUE(found) << report["findings"].dump();
}

TEST(CliTest, NvmlInitFailureIsReportedNotFatal) {
  TempDir dir;
  write_dgx_h100(dir.path());
  TempDir cfg;
  const auto path = (cfg.path() / "nvml.json").string();
  std::ofstream(path) << R"({"init_error": 9})";
  const auto r =
      acco({"probe", "--sysroot", dir.path().string()},
           {{"ACCO_NVML_LIBRARY", ACCO_FAKE_NVML_PATH}, {"ACCO_FAKE_NVML_CONFIG", path}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Driver Not Loaded"));
  EXPECT_THAT(r.out, HasSubstr("nvml-unavailable"));
}

// A driver upgraded without a reboot: NVML answers 18, the kernel module is the old one.
TEST(CliTest, LibrariesThatDoNotMatchTheKernelModuleAreOneCriticalFinding) {
  TempDir dir;
  write_dgx_h100(dir.path());
  std::filesystem::create_directories(dir.path() / "proc/driver/nvidia");
  std::ofstream(dir.path() / "proc/driver/nvidia/version")
      << "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC "
         "2024\n";
  TempDir cfg;
  const auto path = (cfg.path() / "nvml.json").string();
  std::ofstream(path) << R"({"init_error": 18})";
  const std::map<std::string, std::string> env = {{"ACCO_NVML_LIBRARY", ACCO_FAKE_NVML_PATH},
                                                  {"ACCO_FAKE_NVML_CONFIG", path}};
  const auto r = acco({"probe", "--sysroot", dir.path().string()}, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("NVML: unavailable (nvmlInit_v2: Driver/library version mismatch "
                               "(18))\nNVIDIA kernel module: 550.54.15 "
                               "(/proc/driver/nvidia/version)\n"));
  EXPECT_THAT(r.out, HasSubstr("[critical] nvidia-driver-mismatch"));
  EXPECT_THAT(r.out, Not(HasSubstr("nvml-unavailable")));
  const auto j = acco({"probe", "--sysroot", dir.path().string(), "--json"}, env);
  expect_conforms(j.out, "probe.schema.json");
  EXPECT_EQ(nlohmann::json::parse(j.out)["machine"]["software"]["nvidia_kernel_module"],
            "550.54.15");
}

void expect_one_line_error(const CommandResult& r, int code, const std::string& needle) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("acco: ", 0), 0U) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(needle));
}

// A history that reads wrong with --compare discarded the run's report: the measurements are
// printed, the error is one line naming the file, the exit 65, and the file is left as it is.
TEST(CliTest, BenchCompareWithACorruptHistoryPrintsTheRunAndExits65) {
  TempDir dir;
  const auto history = (dir.path() / "history.sqlite").string();
  const std::string text(200, 'x');
  std::ofstream(history) << text;
  const auto r = acco({"bench", "--backend", "host", "--cases", "host_memcpy", "--bytes", "4MiB",
                       "--reps", "1", "--no-profile", "--compare", "--history", history});
  EXPECT_EQ(r.exit_code, 65) << r.err;
  EXPECT_THAT(r.out, HasSubstr("host_memcpy"));
  EXPECT_THAT(r.err, HasSubstr("acco: history: " + history));
  std::size_t errors = 0;  // progress lines ("[1/1] host_memcpy ...") aside
  for (std::size_t at = r.err.find("acco: "); at != std::string::npos;
       at = r.err.find("acco: ", at + 1)) {
    ++errors;
  }
  EXPECT_EQ(errors, 1U) << r.err;
  EXPECT_EQ(slurp(history), text);
}

// The bench history is a setting: ACCO_HISTORY (or a config file's "history") places it for
// bench and bench --compare as --history does, and `acco config` says where it came from.
TEST(CliTest, TheBenchHistoryComesFromTheHistorySetting) {
  TempDir dir;
  const auto history = (dir.path() / "from-env.sqlite").string();
  const std::vector<std::string> bench = {"bench",       "--backend",   "host", "--cases",
                                          "host_memcpy", "--bytes",     "4MiB", "--reps",
                                          "1",           "--no-profile"};
  const auto first = acco(bench, {{"ACCO_HISTORY", history}});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_TRUE(std::filesystem::exists(history));
  auto compare = bench;
  compare.emplace_back("--compare");
  const auto second = acco(compare, {{"ACCO_HISTORY", history}});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_THAT(second.out, HasSubstr("host_memcpy"));
  EXPECT_THAT(second.out, HasSubstr("host_memcpy  host    ")) << "compared with the first run";
  EXPECT_THAT(second.out, ContainsRegex("case +device +change +before +now"));
  const auto config = acco({"config"}, {{"ACCO_HISTORY", history}});
  EXPECT_THAT(config.out, HasSubstr("history = " + history + "  (set by env;"));
}

// `--nvml on` asks for NVML: without it probe and doctor stop with 69, as serve and power do
// (auto reports it as a finding, above).
TEST(CliTest, NvmlOnWithoutNvmlExits69) {
  TempDir dir;
  write_dgx_h100(dir.path());
  TempDir cfg;
  const auto path = (cfg.path() / "nvml.json").string();
  std::ofstream(path) << R"({"init_error": 9})";
  for (const char* command : {"probe", "doctor"}) {
    SCOPED_TRACE(command);
    expect_one_line_error(
        acco({command, "--sysroot", dir.path().string(), "--nvml", "on"},
             {{"ACCO_NVML_LIBRARY", ACCO_FAKE_NVML_PATH}, {"ACCO_FAKE_NVML_CONFIG", path}}),
        69, "--nvml on: NVML is unavailable (");
  }
}

TEST(CliTest, MissingSysrootExits66) {
  expect_one_line_error(acco({"probe", "--sysroot", "/nonexistent/acco"}), 66, "/nonexistent/acco");
}

TEST(CliTest, UnknownFlagExits64) {
  expect_one_line_error(acco({"probe", "--frobnicate"}), 64, "frobnicate");
}

TEST(CliTest, BadFailOnValueExits64) {
  expect_one_line_error(acco({"probe", "--fail-on", "loud"}), 64, "--fail-on");
}

TEST(CliTest, MalformedSnapshotExits65) {
  TempDir dir;
  const auto path = (dir.path() / "bad.json").string();
  std::ofstream(path) << R"({"schema": "acco.snapshot/1", "fs": )";
  expect_one_line_error(acco({"probe", "--from", path}), 65, path);
  std::ofstream(path) << R"({"schema": "something-else"})";
  expect_one_line_error(acco({"probe", "--from", path}), 65, "schema");
}

TEST(CliTest, MissingSnapshotExits66) {
  expect_one_line_error(acco({"probe", "--from", "/nonexistent/snap.json"}), 66,
                        "/nonexistent/snap.json");
}

// A binary or cut file is quoted escaped and short: no raw byte reaches the terminal, and the
// one line stays a line (a 4.5 KB binary file used to be echoed whole).
TEST(CliTest, BinaryInputIsQuotedShortAndEscaped) {
  TempDir dir;
  const auto path = (dir.path() / "random.bin").string();
  std::string bytes;
  for (int i = 0; i < 4500; ++i) {
    bytes += static_cast<char>((i * 131 + 7) % 256);
  }
  std::ofstream(path, std::ios::binary) << bytes;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"probe", "--from", path},
        {"analyze", path},
        {"bench", "--profile", path, "--quick", "--cases", "host_memcpy"}}) {
    const auto r = acco(args);
    expect_one_line_error(r, 65, path);
    EXPECT_LT(r.err.size(), 400U) << r.err;
    EXPECT_TRUE(std::all_of(r.err.begin(), r.err.end(), [](char c) {
      return c == '\n' || (c >= 0x20 && c < 0x7f);
    })) << r.err;
  }
}

TEST(CliTest, ASysrootThatIsAFileIsNotADirectory) {
  TempDir dir;
  const auto file = (dir.path() / "sys.tar").string();
  std::ofstream(file) << "not a tree";
  expect_one_line_error(acco({"probe", "--sysroot", file}), 66, "': not a directory (expected");
  expect_one_line_error(acco({"probe", "--sysroot", "/nonexistent/root"}), 66,
                        "'/nonexistent/root': no such directory");
}

TEST(CliTest, UnwritableSnapshotExits73AndLeavesNothing) {
  TempDir dir;
  write_ci_vm(dir.path());
  TempDir out;
  const auto target = out.path() / "missing-dir" / "snap.json";
  expect_one_line_error(
      acco({"probe", "--sysroot", dir.path().string(), "--snapshot", target.string()}), 73,
      target.string());
  EXPECT_FALSE(stdfs::exists(target.parent_path()));
}

TEST(CliTest, DataDirInASysrootIsMatchedAgainstItsMountTable) {
  TempDir dir;
  write_dgx_h100(dir.path());
  const auto text = acco({"probe", "--sysroot", dir.path().string(), "--data-dir", "/raid/x/"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("Data dir /raid/x: ext4 on /dev/mapper/vg0-raid mounted at /raid "
                                  "(rw,noatime), NVMe nvme1n1\n"
                                  "  O_DIRECT and io_uring: not tried: recorded machine\n"));
  EXPECT_THAT(text.out, HasSubstr("NVMe namespaces (block queue; nvme poll_queues 0)"));
  const auto json =
      acco({"probe", "--sysroot", dir.path().string(), "--data-dir", "/scratch space", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  expect_conforms(json.out, "probe.schema.json");
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["machine"]["data_dir"]["mount"]["mount_point"], "/scratch space");
  EXPECT_EQ(j["machine"]["data_dir"]["mount"]["root"], "/scratch space");
  EXPECT_EQ(j["machine"]["data_dir"]["nvme_namespaces"], nlohmann::json::array({"nvme1n1"}));
  EXPECT_TRUE(j["machine"]["data_dir"]["direct_io"].is_null());
  EXPECT_EQ(j["machine"]["data_dir"]["direct_io_untried"], "recorded machine");
  EXPECT_EQ(j["machine"]["nvme_namespaces"].size(), 2U);
}

TEST(CliTest, DoctorReportsADataDirOnOverlayFirst) {
  TempDir dir;
  write_dgx_h100(dir.path());
  const auto r = acco({"doctor", "--sysroot", dir.path().string(), "--data-dir",
                       "/var/lib/docker/overlay2/l1/merged/data", "--fail-on", "warning"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("[warning] data-dir-fs /var/lib/docker/overlay2/l1/merged/data"));
  EXPECT_THAT(r.out, HasSubstr("1. [warning] data-dir-fs"));
}

TEST(CliTest, DataDirMountTableTravelsInTheSnapshot) {
  TempDir dir;
  write_dgx_h100(dir.path());
  TempDir out;
  const auto snap = (out.path() / "snap.json").string();
  const auto live = acco({"probe", "--sysroot", dir.path().string(), "--data-dir", "/mnt/s3",
                          "--json", "--snapshot", snap});
  ASSERT_EQ(live.exit_code, 0) << live.err;
  const auto replay = acco({"probe", "--from", snap, "--data-dir", "/mnt/s3", "--json"});
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  auto a = nlohmann::json::parse(live.out);
  auto b = nlohmann::json::parse(replay.out);
  a["machine"].erase("origin");
  b["machine"].erase("origin");
  EXPECT_EQ(a, b);
  EXPECT_EQ(b["machine"]["data_dir"]["mount"]["fs_type"], "fuse.s3fs");
}

// Every probe reads the mount table (for /dev/shm), so a snapshot lacks one only when the
// machine it was taken from did (or an older acco took it without --data-dir).
TEST(CliTest, DataDirOfASnapshotWithoutAMountTableIsUnknownNotAnError) {
  TempDir dir;
  write_dgx_h100(dir.path());
  stdfs::remove(dir.path() / "proc/self/mountinfo");
  TempDir out;
  const auto snap = (out.path() / "snap.json").string();
  ASSERT_EQ(acco({"probe", "--sysroot", dir.path().string(), "--snapshot", snap}).exit_code, 0);
  const auto r = acco({"probe", "--from", snap, "--data-dir", "/raid"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Data dir /raid: mount unknown (cannot read /proc/self/mountinfo"));
  EXPECT_THAT(r.out, HasSubstr("[info] data-dir-fs /raid"));
}

TEST(CliTest, BadDataDirExits64NamingTheFlag) {
  expect_one_line_error(acco({"probe", "--data-dir", "/nonexistent/acco-data"}), 64,
                        "--data-dir: '/nonexistent/acco-data'");
  expect_one_line_error(acco({"doctor", "--no-bench", "--data-dir", "/nonexistent/acco-data"}), 64,
                        "--data-dir");
  TempDir dir;
  write_ci_vm(dir.path());
  expect_one_line_error(acco({"probe", "--sysroot", dir.path().string(), "--data-dir", "data"}), 64,
                        "--data-dir: 'data' is not an absolute path");
  expect_one_line_error(acco({"probe", "--hwloc-xml", "x.xml", "--data-dir", "/"}), 64,
                        "--data-dir and --hwloc-xml cannot be combined");
}

TEST(CliTest, DataDirOnThisMachineIsResolvedAndConforms) {
  const auto r = acco({"probe", "--json", "--data-dir", "."});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "probe.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["machine"]["data_dir"]["path"], stdfs::canonical(".").string());
}

TEST(CliTest, BadConfigFileExits65) {
  TempDir dir;
  const auto path = (dir.path() / "acco.json").string();
  std::ofstream(path) << R"({"sysroot": ["not", "a", "string"]})";
  expect_one_line_error(acco({"probe", "--config", path}), 65, "sysroot");
}

// A small Cholesky (4 x 4 tiles, 20 tasks) at 1% of the kernels' times, no calibration runs:
// well under a second on the emulated devices.
std::vector<std::string> small_schedule(std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"schedule", "--tiles",     "4", "--time-scale",
                                   "0.01",     "--calibrate", "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(ScheduleTest, SmallCholeskyPrintsTheHeaderAndOneRowPerPolicy) {
  const auto r = acco(small_schedule({"--speeds", "1,2,8,8"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("acco schedule: cholesky, 20 tasks (4x4 tiles, sirocco kernels"));
  EXPECT_THAT(r.out,
              HasSubstr("dev0 gpu x1, dev1 gpu x2, dev2 gpu x8, dev3 gpu x8; link pcie3x16"));
  EXPECT_THAT(r.out, HasSubstr("dev3 busy"));
  EXPECT_THAT(r.out, HasSubstr("\n  dmda "));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("best:")));
}

TEST(ScheduleTest, SmallCholeskyJsonConformsToTheSchema) {
  const auto r = acco(small_schedule({"--json", "--kinds", "cpu,gpu,gpu,gpu"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "schedule.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "acco.schedule/1");
  EXPECT_EQ(j["workload"]["name"], "cholesky");
  EXPECT_EQ(j["workload"]["tiles"], 4);
  EXPECT_EQ(j["workload"]["tasks"], 20);
  EXPECT_EQ(j["policy"], "dmda");
  EXPECT_EQ(j["tasks"], 20);
  EXPECT_EQ(j["failed_tasks"], 0);
  EXPECT_GT(j["bound_seconds"].get<double>(), 0);
  EXPECT_GT(j["efficiency"].get<double>(), 0);
  EXPECT_LE(j["efficiency"].get<double>(), 1.05);
  ASSERT_EQ(j["devices"].size(), 4U);
  EXPECT_EQ(j["devices"][0]["kind"], "cpu");
  EXPECT_EQ(j["devices"][1]["link"], "pcie3x16");
  EXPECT_EQ(j["busy"].size(), 4U);
  ASSERT_EQ(j["runs"].size(), 1U);
  EXPECT_EQ(j["runs"][0]["makespan_seconds"], j["makespan_seconds"]);
}

TEST(ScheduleTest, PolicyAllRunsEveryPolicyOnce) {
  // 3 x 3 tiles (10 tasks): six runtimes in turn stay well under a second.
  const auto r = acco({"schedule", "--tiles", "3", "--time-scale", "0.01", "--calibrate", "0",
                       "--json", "--policy", "all"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "schedule.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["runs"].size(), 6U);
  std::set<std::string> policies;
  for (const auto& run : j["runs"]) {
    policies.insert(run["policy"].get<std::string>());
    EXPECT_EQ(run["tasks"], 10);
  }
  EXPECT_EQ(policies,
            (std::set<std::string>{"eager", "round-robin", "least-loaded", "dmda", "ws", "heft"}));
  EXPECT_EQ(j["policy"], j["runs"][0]["policy"]);
}

TEST(ScheduleTest, TwoPoliciesInTextNameTheBest) {
  const auto r = acco(small_schedule({"--policy", "eager,heft"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\n  eager "));
  EXPECT_THAT(r.out, HasSubstr("\n  heft "));
  EXPECT_THAT(r.out, HasSubstr("\nbest: "));
}

TEST(ScheduleTest, OtherWorkloadsRun) {
  for (const auto& w : std::vector<std::vector<std::string>>{
           {"--workload", "lu", "--tiles", "3"},
           {"--workload", "independent", "--tasks", "20", "--skew", "8"},
           {"--workload", "chain", "--tasks", "10"},
           {"--workload", "random", "--tasks", "30", "--seed", "3", "--ccr", "0.1"}}) {
    std::vector<std::string> args = {"schedule",    "--json", "--time-scale", "0.01",
                                     "--calibrate", "0",      "--devices",    "host:2"};
    args.insert(args.end(), w.begin(), w.end());
    const auto r = acco(args);
    ASSERT_EQ(r.exit_code, 0) << w[1] << ": " << r.err;
    expect_conforms(r.out, "schedule.schema.json");
    EXPECT_EQ(nlohmann::json::parse(r.out)["workload"]["name"], w[1]);
  }
}

TEST(ScheduleTest, TraceIsChromeTraceJson) {
  TempDir dir;
  const auto path = (dir.path() / "trace.json").string();
  const auto r = acco(small_schedule({"--trace", path}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("trace of dmda written to " + path));
  const auto text = slurp(path);
  expect_conforms(text, "trace.schema.json");
  const auto trace = nlohmann::json::parse(text);
  ASSERT_TRUE(trace.contains("traceEvents"));
  EXPECT_FALSE(trace["traceEvents"].empty());
}

TEST(ScheduleTest, ModelsFileIsLoadedAndWrittenBack) {
  TempDir dir;
  const auto path = (dir.path() / "models.json").string();
  const auto first = acco(small_schedule({"--models", path}));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_TRUE(stdfs::exists(path));
  expect_conforms(slurp(path), "perfmodel.schema.json");
  // A second run starts from what the first one saved.
  const auto second = acco(small_schedule({"--models", path}));
  ASSERT_EQ(second.exit_code, 0) << second.err;
}

TEST(ScheduleTest, MalformedModelsFileExits65) {
  TempDir dir;
  const auto path = (dir.path() / "models.json").string();
  std::ofstream(path) << R"({"schema": "acco.perfmodel/1", "entries": [)";
  expect_one_line_error(acco(small_schedule({"--models", path})), 65, "--models");
}

TEST(ScheduleTest, UnwritableTraceExits73AndLeavesNothing) {
  TempDir out;
  const auto target = out.path() / "missing-dir" / "trace.json";
  expect_one_line_error(acco(small_schedule({"--trace", target.string()})), 73, target.string());
  EXPECT_FALSE(stdfs::exists(target.parent_path()));
}

TEST(ScheduleTest, BadValuesExit64NamingTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--workload", "qr"}, "--workload"},
      {{"--tiles", "0"}, "--tiles"},
      {{"--workload", "chain", "--tasks", "0"}, "--tasks"},
      {{"--speeds", "1,2"}, "--speeds"},
      {{"--speeds", "0"}, "--speeds"},
      {{"--kinds", "cpu,gpu,gpu"}, "--kinds"},
      {{"--policy", "fifo"}, "--policy"},
      {{"--kernels", "fast"}, "--kernels"},
      {{"--link", "pcie9x99"}, "--link"},
      {{"--memory", "lots"}, "--memory"},
      {{"--memory", "1MiB"}, "--memory"},  // smaller than the tiles one gemm touches
  };
  for (const auto& [extra, flag] : cases) {
    SCOPED_TRACE(flag);
    expect_one_line_error(acco(small_schedule(extra)), 64, flag);
  }
}

// A device lost mid-run (the run hung at its end before: a leaked pin) and a fault for a device
// that is not there.
TEST(ScheduleTest, InjectedFaultsAreNamedAndAFaultForNoDeviceIsRefused) {
  const auto r = acco(small_schedule(
      {"--devices", "host:2", "--policy", "dmda", "--inject-fault", "0:lost-after:1"}));
  // Tasks whose data only the lost device held fail (exit 1, naming it); the others moved.
  if (r.exit_code == 0) {
    EXPECT_THAT(r.out, HasSubstr("dmda: dev0 failed at +"));
    EXPECT_THAT(r.out, HasSubstr("the device is lost"));
  } else {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("its only valid copy was on dev0, which failed"));
  }
  expect_one_line_error(
      acco(small_schedule({"--devices", "host:2", "--inject-fault", "5:copy-fails:1"})), 64,
      "--inject-fault: there is no device 5 (2 devices)");
}

TEST(ScheduleTest, CudaWithoutAGpuExits69) {
  const auto r = acco(small_schedule({"--devices", "cuda"}));
  if (r.exit_code == 0) {
    GTEST_SKIP() << "this machine has a usable GPU; the schedule ran on it";
  }
  expect_one_line_error(r, 69, "--devices cuda");
}

// `acco probe --nccl-env`: the export lines for a sysroot, the NCCL_TOPO_FILE of a VM, the
// JSON form against its schema, and the refusal on bare metal.
TEST(NcclEnvCliTest, KvmGuestPrintsExportsAndWritesTheTopologyFile) {
  TempDir dir;
  write_kvm_guest(dir.path() / "root");
  const auto xml = dir.path() / "topo.xml";
  const auto r = acco(
      {"probe", "--sysroot", (dir.path() / "root").string(), "--nccl-topo-file", xml.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("NCCL topology written to"));
  expect_golden("kvm_guest.nccl-env.txt", replace_all(r.out, dir.path().string(), "<DIR>"));
  expect_golden("kvm_guest.nccl-topo.xml", slurp(xml));
}

TEST(NcclEnvCliTest, BareMetalPrintsExportsWithoutATopologyFile) {
  TempDir dir;
  write_dgx_h100(dir.path());
  const auto r = acco({"probe", "--sysroot", dir.path().string(), "--nccl-env"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("dgx_h100.nccl-env.txt", replace_all(r.out, dir.path().string(), "<SYSROOT>"));
  EXPECT_THAT(r.out, Not(HasSubstr("NCCL_TOPO_FILE")));
}

TEST(NcclEnvCliTest, JsonConformsToItsSchema) {
  TempDir dir;
  write_kvm_guest(dir.path());
  const auto r = acco({"probe", "--sysroot", dir.path().string(), "--nccl-env", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "nccl-env.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "acco.nccl-env/1");
  EXPECT_TRUE(j["virtual_machine"].get<bool>());
  EXPECT_TRUE(j["topo_file_advised"].get<bool>());
  EXPECT_TRUE(j["topo_file"].is_null());
}

TEST(NcclEnvCliTest, TopologyFileOnBareMetalIsAUsageError) {
  TempDir dir;
  write_dgx_h100(dir.path() / "root");
  const auto xml = dir.path() / "topo.xml";
  expect_one_line_error(acco({"probe", "--sysroot", (dir.path() / "root").string(),
                              "--nccl-topo-file", xml.string()}),
                        64, "--nccl-topo-file");
  EXPECT_FALSE(stdfs::exists(xml));
}

TEST(NcclEnvCliTest, UnwritableTopologyFileExits73) {
  TempDir dir;
  write_kvm_guest(dir.path());
  expect_one_line_error(acco({"probe", "--sysroot", dir.path().string(), "--nccl-topo-file",
                              "/nonexistent-dir/topo.xml"}),
                        73, "--nccl-topo-file");
}

TEST(CliTest, RulesListsEveryRule) {
  const auto r = acco({"rules"});
  EXPECT_EQ(r.exit_code, 0);
  for (const auto* rule :
       {"pcie-link-downtrained", "gpu-nic-remote", "nvlink-down", "virtualized-topology",
        "acs-p2p-redirect", "data-dir-direct-io-refused", "data-dir-io-uring-refused",
        "roce-mtu-low", "roce-gid-v1-only", "rail-unbalanced", "nic-irq-remote",
        "net-socket-buffers-small", "dev-shm-small", "memlock-limited"}) {
    EXPECT_THAT(r.out, HasSubstr(rule));
  }
}

// The README's "What it checks" is the rule list of `acco rules --json`, one table row per rule
// between its BEGIN and END markers; ACCO_UPDATE_GOLDEN=1 rewrites the rows.
TEST(CliTest, ReadmeListsWhatAccoRulesPrints) {
  const auto r = acco({"rules", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string rows = "| rule | severity | finds |\n|---|---|---|\n";
  std::size_t count = 0;
  for (const auto& rule : nlohmann::json::parse(r.out)) {
    const auto lowest = rule.at("lowest").get<std::string>();
    const auto highest = rule.at("highest").get<std::string>();
    rows += "| `" + rule.at("rule").get<std::string>() + "` | " +
            (lowest == highest ? lowest : lowest + ".." + highest) + " | " +
            rule.at("title").get<std::string>() + " |\n";
    ++count;
  }
  EXPECT_GE(count, 39U);
  const auto path = stdfs::path(ACCO_SOURCE_DIR) / "README.md";
  std::string readme = slurp(path);
  const std::string begin = "<!-- BEGIN acco rules";
  const std::string end = "<!-- END acco rules -->";
  const auto b = readme.find(begin);
  ASSERT_NE(b, std::string::npos) << "README.md has no '" << begin << "' marker";
  const auto first = readme.find('\n', b) + 1;
  const auto e = readme.find(end, first);
  ASSERT_NE(e, std::string::npos) << "README.md has no '" << end << "' marker";
  if (updating_goldens()) {
    readme.replace(first, e - first, rows);
    std::ofstream(path, std::ios::binary) << readme;
    return;
  }
  EXPECT_EQ(readme.substr(first, e - first), rows)
      << "README.md's rule list differs from `acco rules`; rerun with ACCO_UPDATE_GOLDEN=1";
  EXPECT_THAT(r.out, HasSubstr("tune-profile-missing"));
}

TEST(CliTest, RulesShowsEachRulesSeverities) {
  const auto r = acco({"rules"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Ids padded to the longest, cuda-compat-older-than-driver (29 characters).
  EXPECT_THAT(r.out,
              HasSubstr("pcie-link-downtrained         info..critical    PCIe link trained"));
  EXPECT_THAT(r.out, HasSubstr("tune-profile-missing          info              no acco tune"));
  EXPECT_THAT(r.out, HasSubstr("cuda-compat-older-than-driver warning           a forward"));
}

// Without a PCI ID database the devices keep their ids, and the report says so once, not per
// device; a database named with ACCO_PCI_IDS names them; one named that is missing is an error.
TEST(CliTest, WithoutAPciIdDatabaseTheProbeSaysSoOnce) {
  TempDir dir;
  write_ci_vm(dir.path());
  const auto r = acco({"probe", "--sysroot", dir.path().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines_with(r.out, "PCI names:"), 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("PCI names: none, devices are shown by vendor:device id (no PCI ID "
                               "database at /usr/share/misc/pci.ids or "
                               "/usr/share/hwdata/pci.ids;"));
  EXPECT_THAT(r.out, HasSubstr("1af4:1041 eth0"));

  TempDir db;
  const auto file = (db.path() / "pci.ids").string();
  std::ofstream(file) << pci_ids_fixture();
  const auto named = acco({"probe", "--sysroot", dir.path().string()}, {{"ACCO_PCI_IDS", file}});
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_THAT(named.out, Not(HasSubstr("PCI names:")));
  EXPECT_THAT(named.out, HasSubstr("Virtio 1.0 network device eth0"));
  const auto j = acco({"probe", "--json", "--sysroot", dir.path().string(), "--pci-ids", file});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  expect_conforms(j.out, "probe.schema.json");
  const auto json = nlohmann::json::parse(j.out);
  EXPECT_EQ(json["machine"]["pci_ids"]["path"], file);
  EXPECT_EQ(json["machine"]["pci_ids"]["version"], "2023.04.10");
  bool named_device = false;
  for (const auto& d : json["devices"]) {
    if (d["device_id"] == "0x1041") {
      EXPECT_EQ(d["model"], "Virtio 1.0 network device");
      EXPECT_EQ(d["vendor_name"], "Red Hat, Inc.");
      EXPECT_EQ(d["vendor_id"], "0x1af4");
      named_device = true;
    }
  }
  EXPECT_TRUE(named_device);

  expect_one_line_error(
      acco({"probe", "--sysroot", dir.path().string(), "--pci-ids", "/nonexistent/pci.ids"}), 66,
      "PCI ID database: /nonexistent/pci.ids");
}

// kvm_guest's four H200s (10de:2335) are newer than its database (2023.04.10): lspci's words for
// them, one line that says why, and the ids in the JSON.
TEST(CliTest, ADatabaseOlderThanTheGpusSaysSoOnceAndKeepsTheIds) {
  TempDir dir;
  write_kvm_guest(dir.path());
  const auto r = acco({"probe", "--sysroot", dir.path().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines_with(r.out, "PCI names:"), 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("PCI names: /usr/share/hwdata/pci.ids (2023.04.10) does not list "
                               "10de:2335 (4 devices); a newer database may (update-pciids, or "
                               "name one with --pci-ids)\n"));
  EXPECT_EQ(count_lines_with(r.out, "NVIDIA Corporation Device 2335"), 4) << r.out;
  const auto j = acco({"probe", "--json", "--sysroot", dir.path().string()});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  expect_conforms(j.out, "probe.schema.json");
  const auto json = nlohmann::json::parse(j.out);
  EXPECT_THAT(json["machine"]["pci_ids"]["unlisted"].get<std::vector<std::string>>(),
              Contains("10de:2335"));
  int gpus = 0;
  for (const auto& d : json["devices"]) {
    if (d["device_id"] == "0x2335") {
      EXPECT_EQ(d["vendor_id"], "0x10de");
      EXPECT_EQ(d["model"], "NVIDIA Corporation Device 2335");
      ++gpus;
    }
  }
  EXPECT_EQ(gpus, 4);
}

TEST(CliTest, ConfigShowsWhoSetEachSetting) {
  const auto r = acco({"config"}, {{"ACCO_SYSROOT", "/srv/x"}});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("sysroot = /srv/x  (set by env"));
}

// Every setting a command reads is in `acco config`, from a file, the environment or a flag.
TEST(CliTest, ConfigListsWhatServeAndTheGovernorReadAndWhoSetIt) {
  TempDir dir;
  const auto file = dir.path() / "acco.json";
  std::ofstream(file) << R"({"listen": "0.0.0.0:9500", "store": "/srv/acco/series.sqlite"})";
  const auto r = acco({"config", "--json", "--config", file.string()},
                      {{"ACCO_STATE_FILE", "/run/acco/state.json"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::pair<std::string, std::string>> seen;  // key -> value, set_by
  for (const auto& s : nlohmann::json::parse(r.out)) {
    seen[s["key"]] = {s["value"], s["set_by"]};
  }
  using Seen = std::pair<std::string, std::string>;
  EXPECT_EQ(seen["listen"], Seen("0.0.0.0:9500", "file"));
  EXPECT_EQ(seen["store"], Seen("/srv/acco/series.sqlite", "file"));
  EXPECT_EQ(seen["state-file"], Seen("/run/acco/state.json", "env"));
  EXPECT_EQ(seen["history"], Seen("", "default"));
  // And the commands read them: a state file named only in the environment is the one
  // `power status` reads (a malformed one is its error).
  std::ofstream(dir.path() / "state.json") << "not json";
  const auto status = acco({"power", "status", "--simulate", "1", "--nvml", "off"},
                           {{"ACCO_STATE_FILE", (dir.path() / "state.json").string()}});
  EXPECT_EQ(status.exit_code, 65) << status.err;
  EXPECT_THAT(status.err, HasSubstr((dir.path() / "state.json").string()));
  // A flag wins over the environment.
  const auto flag =
      acco({"serve", "--simulate", "1", "--listen", "nowhere.invalid:1", "--duration", "1s"},
           {{"ACCO_LISTEN", "127.0.0.1:0"}});
  EXPECT_EQ(flag.exit_code, 69) << flag.err;
  EXPECT_THAT(flag.err, HasSubstr("nowhere.invalid"));
}

// A bad value is named where it came from: a config file's is a malformed file (65), the
// environment's and a flag's are usage errors (64).
TEST(CliTest, ABadSettingNamesItsSourceAndItsExitCode) {
  TempDir dir;
  const auto file = dir.path() / "acco.json";
  std::ofstream(file) << R"({"listen": "oops"})";
  const auto from_file = acco({"serve", "--simulate", "1", "--config", file.string()});
  EXPECT_EQ(from_file.exit_code, 65) << from_file.err;
  EXPECT_THAT(from_file.err, HasSubstr("--config " + file.string() + ": listen: 'oops' is not"));
  const auto from_env = acco({"serve", "--simulate", "1"}, {{"ACCO_LISTEN", "oops"}});
  EXPECT_EQ(from_env.exit_code, 64) << from_env.err;
  EXPECT_THAT(from_env.err, HasSubstr("acco: ACCO_LISTEN: 'oops' is not HOST:PORT"));
  const auto from_flag = acco({"serve", "--simulate", "1", "--listen", "oops"});
  EXPECT_EQ(from_flag.exit_code, 64) << from_flag.err;
  EXPECT_THAT(from_flag.err, HasSubstr("acco: --listen: 'oops' is not HOST:PORT"));
  const auto empty_state =
      acco({"power", "status", "--simulate", "1", "--nvml", "off"}, {{"ACCO_STATE_FILE", ""}});
  EXPECT_EQ(empty_state.exit_code, 64) << empty_state.err;
  EXPECT_THAT(empty_state.err, HasSubstr("ACCO_STATE_FILE: '' is not a file path"));
}

TEST(CliTest, HelpAndVersionExitZero) {
  EXPECT_EQ(acco({"--help"}).exit_code, 0);
  const auto v = acco({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_THAT(v.out, HasSubstr("acco"));
  EXPECT_THAT(acco({"probe", "--help"}).out, HasSubstr("--snapshot"));
}

}  // namespace
}  // namespace acco::testing
