#include "acco/topo/nvml.hpp"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/core/json.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::topo {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using nlohmann::json;

const std::string kFake = ACCO_FAKE_NVML_PATH;
const std::string kFakeRequiredOnly = ACCO_FAKE_NVML_REQUIRED_ONLY_PATH;
const std::string kDataDir = ACCO_NVML_TEST_DATA_DIR;

json load_config(const std::string& name) {
  auto config = core::read_json_file(kDataDir + "/" + name);
  EXPECT_THAT(config, IsOk());
  return config.value_or(json::object());
}

// Points the fake at `config`, written to a file of its own so every test sees only its own.
void use_config(const json& config) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string path = ::testing::TempDir() + "fake_nvml_" + test->name() + ".json";
  std::ofstream(path) << config.dump(2);
  ::setenv("ACCO_FAKE_NVML_CONFIG", path.c_str(), 1);
}

NvmlReport query_fake(const json& config) {
  use_config(config);
  return query_nvml(kFake);
}

TEST(NvmlTest, FakeDgxH100ReportsEveryField) {
  const NvmlReport report = query_fake(load_config("dgx_h100.json"));

  ASSERT_TRUE(report.available) << report.reason;
  EXPECT_EQ(report.reason, "");
  EXPECT_EQ(report.library, kFake);
  EXPECT_EQ(report.driver_version, "580.95.05");
  ASSERT_EQ(report.gpus.size(), 8U);
  const std::vector<std::string> addresses = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0",
                                              "0000:5d:00.0", "0000:9a:00.0", "0000:ab:00.0",
                                              "0000:ba:00.0", "0000:db:00.0"};
  for (std::size_t i = 0; i < report.gpus.size(); ++i) {
    const NvmlGpu& gpu = report.gpus[i];
    SCOPED_TRACE(gpu.pci);
    EXPECT_EQ(gpu.index, static_cast<int>(i));
    EXPECT_EQ(gpu.pci, addresses[i]);
    EXPECT_EQ(gpu.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpu.uuid, "GPU-8d1c3f2e-5a4b-4c6d-9e0f-1a2b3c4d5e0" + std::to_string(i));
    EXPECT_EQ(gpu.memory_total_bytes, 85520809984U);
    EXPECT_EQ(gpu.pstate, 0);
    EXPECT_EQ(gpu.persistence_mode, true);
    EXPECT_EQ(gpu.mig_enabled, false);
    EXPECT_EQ(gpu.mig_instances, 0);
    EXPECT_EQ(gpu.pcie_current_gen, 5);
    EXPECT_EQ(gpu.pcie_current_width, 16);
    EXPECT_EQ(gpu.pcie_max_gen, 5);
    EXPECT_EQ(gpu.pcie_max_width, 16);
    ASSERT_EQ(gpu.nvlinks.size(), 18U);
    std::map<std::string, int> links_per_switch;
    for (std::size_t l = 0; l < gpu.nvlinks.size(); ++l) {
      EXPECT_EQ(gpu.nvlinks[l].link, static_cast<int>(l));
      EXPECT_TRUE(gpu.nvlinks[l].active);
      EXPECT_EQ(gpu.nvlinks[l].version, 5);
      ++links_per_switch[gpu.nvlinks[l].remote_pci];
    }
    EXPECT_EQ(
        links_per_switch,
        (std::map<std::string, int>{
            {"0000:05:00.0", 5}, {"0000:06:00.0", 5}, {"0000:07:00.0", 4}, {"0000:08:00.0", 4}}));
    ASSERT_EQ(gpu.p2p.size(), 7U);
    for (const P2pStatus& pair : gpu.p2p) {
      EXPECT_NE(pair.peer_pci, gpu.pci);
      EXPECT_EQ(pair.read, "OK");
      EXPECT_EQ(pair.write, "OK");
    }
  }
}

TEST(NvmlTest, WorkstationReportsNarrowGpuNoNvLinkAndCrossSocketP2p) {
  const NvmlReport report = query_fake(load_config("workstation.json"));

  ASSERT_TRUE(report.available) << report.reason;
  ASSERT_EQ(report.gpus.size(), 4U);
  EXPECT_EQ(report.gpus[0].pstate, 0);
  EXPECT_EQ(report.gpus[2].pci, "0000:41:00.0");
  EXPECT_EQ(report.gpus[2].pstate, 0);
  EXPECT_EQ(report.gpus[2].pcie_current_width, 8);
  EXPECT_EQ(report.gpus[2].pcie_max_gen, 4);
  for (const NvmlGpu& gpu : report.gpus) {
    EXPECT_TRUE(gpu.nvlinks.empty()) << gpu.pci;
  }
  EXPECT_EQ(report.gpus[0].p2p, (std::vector<P2pStatus>{{"0000:21:00.0", "OK", "OK"},
                                                        {"0000:41:00.0", "CNS", "CNS"},
                                                        {"0000:61:00.0", "CNS", "CNS"}}));
  EXPECT_EQ(report.gpus[3].p2p, (std::vector<P2pStatus>{{"0000:01:00.0", "CNS", "CNS"},
                                                        {"0000:21:00.0", "CNS", "CNS"},
                                                        {"0000:41:00.0", "OK", "OK"}}));
}

TEST(NvmlTest, MissingLibraryIsUnavailableWithReason) {
  const std::string library = "/nonexistent/libnvidia-ml.so.1";
  const NvmlReport report = query_nvml(library);

  EXPECT_FALSE(report.available);
  EXPECT_EQ(report.library, library);
  EXPECT_EQ(report.reason, library + ": cannot open shared object file: No such file or directory");
  EXPECT_TRUE(report.gpus.empty());
}

TEST(NvmlTest, EmptyLibraryNameIsUnavailableWithReason) {
  const NvmlReport report = query_nvml("");

  EXPECT_FALSE(report.available);
  EXPECT_EQ(report.reason, "no NVML library named");
}

TEST(NvmlTest, LibraryWithoutNvmlEntryPointsIsUnavailableNamingTheSymbol) {
  const NvmlReport report = query_nvml("libm.so.6");

  EXPECT_FALSE(report.available);
  EXPECT_EQ(report.reason, "libm.so.6: missing symbol nvmlInit_v2");
}

TEST(NvmlTest, InitErrorGivesNvmlErrorStringInReason) {
  const NvmlReport report = query_fake(json{{"init_error", 9}});

  EXPECT_FALSE(report.available);
  EXPECT_EQ(report.reason, "nvmlInit_v2: Driver Not Loaded (9)");
  EXPECT_TRUE(report.gpus.empty());
}

TEST(NvmlTest, UnsupportedQueriesLeaveTheirFieldsEmpty) {
  json config = load_config("dgx_h100.json");
  config["gpus"][1]["unsupported"] = {"name", "uuid", "memory", "pstate", "persistence",
                                      "mig",  "pcie", "nvlink", "p2p"};
  const NvmlReport report = query_fake(config);

  ASSERT_TRUE(report.available) << report.reason;
  const NvmlGpu& gpu = report.gpus.at(1);
  EXPECT_EQ(gpu.pci, "0000:2a:00.0");
  EXPECT_EQ(gpu.name, "");
  EXPECT_EQ(gpu.uuid, "");
  EXPECT_EQ(gpu.memory_total_bytes, 0U);
  EXPECT_EQ(gpu.pstate, std::nullopt);
  EXPECT_EQ(gpu.persistence_mode, std::nullopt);
  EXPECT_EQ(gpu.mig_enabled, std::nullopt);
  EXPECT_EQ(gpu.pcie_current_gen, std::nullopt);
  EXPECT_EQ(gpu.pcie_current_width, std::nullopt);
  EXPECT_EQ(gpu.pcie_max_gen, std::nullopt);
  EXPECT_EQ(gpu.pcie_max_width, std::nullopt);
  EXPECT_TRUE(gpu.nvlinks.empty());
  EXPECT_TRUE(gpu.p2p.empty());
  // Its neighbours are complete, but lose the pair with the GPU that cannot answer P2P.
  EXPECT_EQ(report.gpus[0].pstate, 0);
  EXPECT_EQ(report.gpus[0].nvlinks.size(), 18U);
  EXPECT_EQ(report.gpus[0].p2p.size(), 6U);
}

TEST(NvmlTest, OldDriverWithoutOptionalEntryPointsLeavesOptionalFieldsEmpty) {
  use_config(load_config("dgx_h100.json"));
  const NvmlReport report = query_nvml(kFakeRequiredOnly);

  ASSERT_TRUE(report.available) << report.reason;
  EXPECT_EQ(report.driver_version, "");
  ASSERT_EQ(report.gpus.size(), 8U);
  NvmlGpu expected;
  expected.index = 3;
  expected.pci = "0000:5d:00.0";
  EXPECT_EQ(report.gpus[3], expected);
}

TEST(NvmlTest, DownNvLinkIsReportedInactive) {
  json config = load_config("dgx_h100.json");
  config["gpus"][4]["nvlinks"][17]["active"] = false;
  const NvmlReport report = query_fake(config);

  ASSERT_TRUE(report.available) << report.reason;
  const std::vector<NvLink>& links = report.gpus.at(4).nvlinks;
  ASSERT_EQ(links.size(), 18U);
  EXPECT_FALSE(links[17].active);
  EXPECT_EQ(links[17].remote_pci, "0000:08:00.0");
  EXPECT_TRUE(links[16].active);
}

TEST(NvmlTest, MigInstancesAreCountedWhenMigIsOn) {
  json config = load_config("dgx_h100.json");
  config["gpus"][0]["mig"] = true;
  config["gpus"][0]["mig_instances"] = 3;
  const NvmlReport report = query_fake(config);

  ASSERT_TRUE(report.available) << report.reason;
  EXPECT_EQ(report.gpus[0].mig_enabled, true);
  EXPECT_EQ(report.gpus[0].mig_instances, 3);
  EXPECT_EQ(report.gpus[1].mig_enabled, false);
}

// A GPU in MIG mode with three instances, and one whose MIG mode waits for a reset
// (nvidia-smi -i 1 -mig 1 without nvidia-smi -r).
TEST(NvmlTest, MigDevicesCarryTheirUuidProfileMemoryAndInstanceIds) {
  const NvmlReport report = query_fake(load_config("dgx_h100_mig.json"));
  ASSERT_TRUE(report.available) << report.reason;
  const NvmlGpu& gpu = report.gpus[0];
  EXPECT_EQ(gpu.mig_enabled, true);
  EXPECT_EQ(gpu.mig_pending, true);
  EXPECT_EQ(gpu.mig_instances, 3);
  ASSERT_EQ(gpu.mig_devices.size(), 3U);
  EXPECT_EQ(gpu.mig_devices[0], (MigDevice{0, "MIG-2d7f3a5c-91b4-5e8d-a0c6-7b3e9f1d4c20", "3g.40gb",
                                           42144366592ULL, 2, 0}));
  EXPECT_EQ(gpu.mig_devices[2].profile, "1g.10gb");
  EXPECT_EQ(gpu.mig_devices[2].gpu_instance, 9);
  EXPECT_EQ(report.gpus[1].mig_enabled, false);
  EXPECT_EQ(report.gpus[1].mig_pending, true) << "MIG turned on, waiting for a reset";
  EXPECT_THAT(report.gpus[1].mig_devices, ::testing::IsEmpty());
  EXPECT_EQ(report.gpus[2].mig_pending, false);
}

TEST(NvmlTest, LostGpuKeepsItsIndexAndDropsOutOfP2p) {
  json config = load_config("workstation.json");
  config["gpus"][1]["lost"] = true;
  const NvmlReport report = query_fake(config);

  ASSERT_TRUE(report.available) << report.reason;
  ASSERT_EQ(report.gpus.size(), 4U);
  NvmlGpu lost;
  lost.index = 1;
  EXPECT_EQ(report.gpus[1], lost);
  EXPECT_EQ(report.gpus[0].p2p.size(), 2U);
  EXPECT_EQ(report.gpus[2].pcie_current_width, 8);
}

TEST(NvmlTest, PciDomainsAboveFourDigitsKeepAllTheirDigits) {
  json config = load_config("workstation.json");
  config["gpus"][0]["pci"] = "00010000:01:00.0";
  const NvmlReport report = query_fake(config);

  ASSERT_TRUE(report.available) << report.reason;
  EXPECT_EQ(report.gpus[0].pci, "10000:01:00.0");
}

TEST(NvmlTest, ConcurrentQueriesGiveTheSameReport) {
  use_config(load_config("dgx_h100.json"));
  std::vector<NvmlReport> reports(4);
  std::vector<std::thread> threads;
  for (NvmlReport& report : reports) {
    threads.emplace_back([&report] { report = query_nvml(kFake); });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  ASSERT_TRUE(reports[0].available) << reports[0].reason;
  for (const NvmlReport& report : reports) {
    EXPECT_EQ(report, reports[0]);
  }
}

TEST(NvmlTest, JsonRoundTripIsIdentical) {
  json config = load_config("dgx_h100.json");
  config["gpus"][1]["unsupported"] = {"pstate", "persistence", "mig", "pcie"};
  config["gpus"][2]["mig"] = true;
  config["gpus"][2]["mig_instances"] = 2;
  const std::vector<NvmlReport> reports = {
      query_fake(config), query_fake(load_config("workstation.json")),
      query_fake(load_config("dgx_h100_mig.json")), query_nvml("/nonexistent")};
  for (const NvmlReport& report : reports) {
    const Result<NvmlReport> back = nvml_report_from_json(json::parse(to_json(report).dump()));
    ASSERT_THAT(back, IsOk());
    EXPECT_EQ(*back, report);
  }
}

TEST(NvmlTest, EmptyOptionalFieldsAreWrittenAsNull) {
  NvmlReport report;
  report.available = true;
  report.gpus.emplace_back().pci = "0000:41:00.0";
  const json written = to_json(report);

  EXPECT_TRUE(written["gpus"][0]["pstate"].is_null());
  EXPECT_TRUE(written["gpus"][0]["mig_enabled"].is_null());
  EXPECT_TRUE(written["gpus"][0]["pcie_max_width"].is_null());
}

TEST(NvmlTest, AbsentOrNullOptionalFieldsReadBackEmpty) {
  const json input = {{"available", true},
                      {"gpus",
                       {{{"index", 0}, {"pci", "0000:41:00.0"}, {"pstate", nullptr}},
                        {{"index", 1}, {"pci", "0000:61:00.0"}}}}};
  const Result<NvmlReport> report = nvml_report_from_json(input);

  ASSERT_THAT(report, IsOk());
  ASSERT_EQ(report->gpus.size(), 2U);
  for (const NvmlGpu& gpu : report->gpus) {
    EXPECT_EQ(gpu.pstate, std::nullopt);
    EXPECT_EQ(gpu.persistence_mode, std::nullopt);
    EXPECT_EQ(gpu.mig_enabled, std::nullopt);
    EXPECT_EQ(gpu.pcie_current_gen, std::nullopt);
    EXPECT_TRUE(gpu.nvlinks.empty());
  }
}

TEST(NvmlTest, MalformedFieldsGiveInvalidArgumentNamingTheField) {
  const json good = to_json(query_fake(load_config("dgx_h100.json")));
  struct Case {
    std::function<void(json&)> spoil;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](json& j) { j = json::array(); }, "nvml: expected an object"},
      {[](json& j) { j.erase("available"); }, "nvml.available: missing"},
      {[](json& j) { j["available"] = "yes"; }, "nvml.available: expected true or false"},
      {[](json& j) { j["driver_version"] = 580; }, "nvml.driver_version: expected a string"},
      {[](json& j) { j["gpus"] = json::object(); }, "nvml.gpus: expected an array"},
      {[](json& j) { j["gpus"][2] = 7; }, "nvml.gpus[2]: expected an object"},
      {[](json& j) { j["gpus"][2]["pstate"] = "P0"; }, "nvml.gpus[2].pstate: expected an integer"},
      {[](json& j) { j["gpus"][2]["pstate"] = 1.5; }, "nvml.gpus[2].pstate: expected an integer"},
      {[](json& j) { j["gpus"][2]["pstate"] = 16; }, "nvml.gpus[2].pstate: 16 is outside 0..15"},
      {[](json& j) { j["gpus"][0]["index"] = -1; },
       "nvml.gpus[0].index: -1 is outside 0..2147483647"},
      {[](json& j) { j["gpus"][0]["pcie_max_width"] = 4294967296; },
       "nvml.gpus[0].pcie_max_width: 4294967296 is outside 0..2147483647"},
      {[](json& j) { j["gpus"][0].erase("pci"); }, "nvml.gpus[0].pci: missing"},
      {[](json& j) { j["gpus"][0]["memory_total_bytes"] = -1; },
       "nvml.gpus[0].memory_total_bytes: expected a non-negative integer"},
      {[](json& j) { j["gpus"][0]["mig_enabled"] = 1; },
       "nvml.gpus[0].mig_enabled: expected true or false"},
      {[](json& j) { j["gpus"][5]["nvlinks"][3]["remote_pci"] = false; },
       "nvml.gpus[5].nvlinks[3].remote_pci: expected a string"},
      {[](json& j) { j["gpus"][5]["nvlinks"][3].erase("link"); },
       "nvml.gpus[5].nvlinks[3].link: missing"},
      {[](json& j) { j["gpus"][1]["p2p"][4]["write"] = "MAYBE"; },
       "nvml.gpus[1].p2p[4].write: 'MAYBE' is not one of OK, CNS, GNS, TNS, DR, NS, U"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    json input = good;
    c.spoil(input);
    const Result<NvmlReport> report = nvml_report_from_json(input);
    ASSERT_THAT(report, StatusIs(Errc::kInvalidArgument));
    EXPECT_EQ(report.error().message, c.message);
  }
}

}  // namespace
}  // namespace acco::topo
