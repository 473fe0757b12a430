#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/sched/record.hpp"
#include "acco/testing/files.hpp"
#include "acco/testing/json_schema.hpp"

namespace acco::sched {
namespace {

namespace stdfs = std::filesystem;
using namespace std::chrono_literals;

nlohmann::json schema() {
  return acco::testing::published_schema("trace.schema.json");
}

// Checks `value` against one definition of the trace schema, e.g. "task_args".
std::vector<std::string> validate_def(const std::string& def, const nlohmann::json& value) {
  auto s = schema();
  const nlohmann::json sub = {{"$ref", "#/$defs/" + def}, {"$defs", s["$defs"]}};
  return acco::testing::validate(sub, value);
}

TaskRecord task(std::size_t id, std::string type, std::string name, int device,
                std::chrono::nanoseconds started, std::chrono::nanoseconds finished) {
  TaskRecord t;
  t.id = id;
  t.type = std::move(type);
  t.name = std::move(name);
  t.device = device;
  t.status = TaskStatus::kDone;
  t.started = started;
  t.finished = finished;
  return t;
}

// Two devices (the host and one GPU), three tasks of which one failed, a prefetch to the GPU and
// an eviction back to the host.
RunRecord two_device_run() {
  RunRecord run;
  run.policy = "dmda";
  run.elapsed = 2500us;
  run.devices = {
      {.device = 0, .name = "host:0 (cpu x8)", .kind = "host", .busy = 5500ns, .tasks = 1},
      {.device = 1, .name = "cuda:0000:18:00.0", .kind = "cuda", .busy = 400us, .tasks = 2}};

  auto potrf = task(0, "potrf", "potrf(0,0)", 1, 10us, 210us);
  potrf.priority = 3;
  potrf.ready = 4us;
  potrf.predicted = 190us;
  potrf.transfer_bytes = 1 << 20;
  potrf.transfer_time = 6us;
  potrf.reason = "dmda: eft 210us on cuda:0000:18:00.0 (host 2100us)";

  auto gemm = task(1, "gemm", "", 0, 15us, 20500ns);
  gemm.status = TaskStatus::kFailed;
  gemm.error = "gemm: out of memory";
  gemm.ready = 15us;
  gemm.reason = "dmda: only device allowed";

  auto trsm = task(2, "trsm", "trsm(1,0)", 1, 210us, 410250ns);
  trsm.ready = 210us;
  trsm.predicted = 199999ns;
  trsm.reason = "dmda: eft 410us on cuda:0000:18:00.0 (host 4000us)";
  trsm.stolen = true;
  run.tasks = {potrf, gemm, trsm};

  run.transfers = {{.handle = 7,
                    .from = 0,
                    .to = 2,
                    .bytes = 1 << 20,
                    .start = 2us,
                    .end = 10us,
                    .prefetch = true},
                   {.handle = 7,
                    .from = 2,
                    .to = 0,
                    .bytes = 1 << 20,
                    .start = 410500ns,
                    .end = 419us,
                    .eviction = true}};
  run.links = {{0, 2, 1 << 20, 1}, {2, 0, 1 << 20, 1}};
  return run;
}

// The events of one kind, in trace order.
std::vector<nlohmann::json> events(const nlohmann::json& trace, const std::string& ph, int pid) {
  std::vector<nlohmann::json> out;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == ph && e["pid"] == pid) {
      out.push_back(e);
    }
  }
  return out;
}

std::vector<std::string> names(const std::vector<nlohmann::json>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    out.push_back(e["name"].get<std::string>());
  }
  return out;
}

TEST(ChromeTraceTest, MatchesTheGoldenFile) {
  acco::testing::expect_golden(stdfs::path(ACCO_SCHED_TEST_DATA_DIR) / "trace_golden.json",
                               chrome_trace(two_device_run()).dump(2) + "\n");
}

TEST(ChromeTraceTest, WrittenToAFileItIsTheSameTraceAndALineSaysSo) {
  const acco::testing::TempDir dir;
  const std::string path = (dir.path() / "trace.json").string();
  const auto line = write_chrome_trace(two_device_run(), "dmda/off", path);
  ASSERT_TRUE(line.has_value()) << line.error().message;
  EXPECT_EQ(*line, "acco: trace of dmda/off written to " + path + "\n");
  EXPECT_EQ(nlohmann::json::parse(acco::testing::slurp(path)), chrome_trace(two_device_run()));
  const auto missing =
      write_chrome_trace(two_device_run(), "dmda", (dir.path() / "no" / "t").string());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, Errc::kCannotWrite);
}

TEST(ChromeTraceTest, ConformsToThePublishedSchema) {
  const auto trace = nlohmann::json::parse(chrome_trace(two_device_run()).dump());
  EXPECT_EQ(acco::testing::validate(schema(), trace), std::vector<std::string>{});
  // The schema's event args are a union; each kind also matches its own definition.
  for (const auto& e : trace["traceEvents"]) {
    const char* def = e["ph"] == "M"  ? "metadata_args"
                      : e["pid"] == 1 ? "task_args"
                                      : "transfer_args";
    EXPECT_EQ(validate_def(def, e["args"]), std::vector<std::string>{}) << e.dump();
  }
}

TEST(ChromeTraceTest, SchemaRequiresEveryArgumentTheWriterEmits) {
  const auto trace = chrome_trace(two_device_run());
  const auto s = schema();
  const auto tasks = events(trace, "X", 1);
  ASSERT_EQ(tasks.size(), 3U);
  EXPECT_EQ(s["$defs"]["task_args"]["required"].size(), tasks[0]["args"].size());
  EXPECT_EQ(s["$defs"]["transfer_args"]["required"].size(),
            events(trace, "X", 2)[0]["args"].size());
  EXPECT_EQ(s["required"].size(), trace.size());
  EXPECT_EQ(s["properties"]["otherData"]["required"].size(), trace["otherData"].size());
}

TEST(ChromeTraceTest, SchemaValidatorCatchesAWrongType) {
  auto trace = nlohmann::json::parse(chrome_trace(two_device_run()).dump());
  trace["traceEvents"].back()["ts"] = "410.5us";
  EXPECT_FALSE(acco::testing::validate(schema(), trace).empty());
}

TEST(ChromeTraceTest, NamesProcessesAndThreadsWithMetadataEvents) {
  const auto trace = chrome_trace(two_device_run());
  std::vector<std::string> devices;
  for (const auto& e : events(trace, "M", 1)) {
    devices.push_back(e["name"].get<std::string>() + " " + std::to_string(e["tid"].get<int>()) +
                      " " + e["args"]["name"].get<std::string>());
  }
  EXPECT_EQ(devices,
            (std::vector<std::string>{"process_name 0 devices", "thread_name 0 host:0 (cpu x8)",
                                      "thread_name 1 cuda:0000:18:00.0"}));
  std::vector<std::string> transfers;
  for (const auto& e : events(trace, "M", 2)) {
    transfers.push_back(e["name"].get<std::string>() + " " + std::to_string(e["tid"].get<int>()) +
                        " " + e["args"]["name"].get<std::string>());
  }
  EXPECT_EQ(transfers,
            (std::vector<std::string>{"process_name 0 transfers", "thread_name 0 to host",
                                      "thread_name 2 to cuda:0000:18:00.0"}));
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  EXPECT_EQ(trace["otherData"]["schema"], "acco.trace/1");
  EXPECT_EQ(trace["otherData"]["policy"], "dmda");
  EXPECT_EQ(trace["otherData"]["elapsed_us"], 2500.0);
}

TEST(ChromeTraceTest, TaskSlicesAreInMicrosecondsOnTheirDevice) {
  const auto tasks = events(chrome_trace(two_device_run()), "X", 1);
  ASSERT_EQ(tasks.size(), 3U);
  const auto& potrf = tasks[0];
  EXPECT_EQ(potrf["name"], "potrf(0,0)");
  EXPECT_EQ(potrf["cat"], "potrf");
  EXPECT_EQ(potrf["tid"], 1);
  EXPECT_EQ(potrf["ts"], 10.0);
  EXPECT_EQ(potrf["dur"], 200.0);
  EXPECT_EQ(potrf["args"]["queue_wait_us"], 6.0);
  EXPECT_EQ(potrf["args"]["transfer_bytes"], 1 << 20);
  EXPECT_EQ(potrf["args"]["transfer_us"], 6.0);
  EXPECT_EQ(potrf["args"]["predicted_us"], 190.0);
  EXPECT_EQ(potrf["args"]["priority"], 3);
  EXPECT_EQ(potrf["args"]["status"], "done");
  EXPECT_FALSE(potrf["args"].contains("error"));
  EXPECT_EQ(tasks[2]["dur"], 200.25);
  EXPECT_EQ(tasks[2]["args"]["predicted_us"], 199.999);
}

TEST(ChromeTraceTest, AFailedTaskCarriesItsStatusAndError) {
  const auto tasks = events(chrome_trace(two_device_run()), "X", 1);
  ASSERT_EQ(tasks.size(), 3U);
  const auto& gemm = tasks[1];
  EXPECT_EQ(gemm["args"]["status"], "failed");
  EXPECT_EQ(gemm["args"]["error"], "gemm: out of memory");
  EXPECT_EQ(gemm["dur"], 5.5);
}

TEST(ChromeTraceTest, AnUnnamedTaskIsNamedAfterItsTypeAndAnUnknownPredictionIsNull) {
  const auto tasks = events(chrome_trace(two_device_run()), "X", 1);
  ASSERT_EQ(tasks.size(), 3U);
  EXPECT_EQ(tasks[1]["name"], "gemm");
  EXPECT_TRUE(tasks[1]["args"]["predicted_us"].is_null());
}

TEST(ChromeTraceTest, TransfersAreSlicesOnTheirDestinationNamedFromTo) {
  auto run = two_device_run();
  run.transfers.push_back(
      {.handle = 9, .from = 2, .to = 1, .bytes = 4096, .start = 420us, .end = 421us});
  const auto trace = chrome_trace(run);
  const auto transfers = events(trace, "X", 2);
  EXPECT_EQ(names(transfers),
            (std::vector<std::string>{"host -> dev1", "dev1 -> host", "dev1 -> dev0"}));
  EXPECT_EQ(transfers[0]["tid"], 2);
  EXPECT_EQ(transfers[0]["ts"], 2.0);
  EXPECT_EQ(transfers[0]["dur"], 8.0);
  EXPECT_EQ(transfers[0]["args"]["prefetch"], true);
  EXPECT_EQ(transfers[0]["args"]["eviction"], false);
  EXPECT_EQ(transfers[1]["tid"], 0);
  EXPECT_EQ(transfers[1]["args"]["eviction"], true);
  EXPECT_EQ(transfers[2]["tid"], 1);
  EXPECT_EQ(transfers[2]["args"]["handle"], 9);
  EXPECT_EQ(transfers[2]["args"]["bytes"], 4096);
  const auto lanes = events(trace, "M", 2);
  ASSERT_EQ(lanes.size(), 4U);
  EXPECT_EQ(lanes[2]["tid"], 1);
  EXPECT_EQ(lanes[2]["args"]["name"], "to host:0 (cpu x8)");
}

TEST(ChromeTraceTest, TasksThatNeverStartedAreLeftOut) {
  auto run = two_device_run();
  auto waiting = task(3, "gemm", "never placed", -1, 0ns, 0ns);
  waiting.status = TaskStatus::kPending;
  auto queued = task(4, "gemm", "placed, not started", 1, 0ns, 0ns);
  queued.status = TaskStatus::kPending;
  auto cancelled = task(5, "gemm", "failed before placement", -1, 0ns, 0ns);
  cancelled.status = TaskStatus::kFailed;
  run.tasks.insert(run.tasks.begin() + 1, {waiting, queued, cancelled});
  const auto trace = chrome_trace(run);
  EXPECT_EQ(names(events(trace, "X", 1)),
            (std::vector<std::string>{"potrf(0,0)", "gemm", "trsm(1,0)"}));
  EXPECT_EQ(trace, chrome_trace(two_device_run()));
}

TEST(ChromeTraceTest, AnEmptyRunIsAValidTraceWithOnlyProcessNames) {
  const auto trace = chrome_trace(RunRecord{});
  EXPECT_EQ(names(events(trace, "M", 1)), std::vector<std::string>{"process_name"});
  EXPECT_EQ(names(events(trace, "M", 2)), std::vector<std::string>{"process_name"});
  EXPECT_EQ(trace["traceEvents"].size(), 2U);
  EXPECT_EQ(acco::testing::validate(schema(), nlohmann::json::parse(trace.dump())),
            std::vector<std::string>{});
}

TEST(TaskStatusTest, PrintsLowerCaseNames) {
  EXPECT_STREQ(to_string(TaskStatus::kPending), "pending");
  EXPECT_STREQ(to_string(TaskStatus::kDone), "done");
  EXPECT_STREQ(to_string(TaskStatus::kFailed), "failed");
}

}  // namespace
}  // namespace acco::sched
