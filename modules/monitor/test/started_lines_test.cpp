// The lines the daemon, the recorder and the runtime server give a person: the same words the
// commands printed before these moved here (tests/integration pins them end to end too).
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "acco/core/stop.hpp"
#include "acco/monitor/daemon.hpp"
#include "acco/monitor/recorder.hpp"
#include "acco/monitor/runtime_server.hpp"
#include "acco/report/document.hpp"

namespace acco::monitor {
namespace {

using namespace std::chrono_literals;

TEST(StartedLinesTest, TheDaemonSaysWhereItListensAndWhatItSamples) {
  DaemonOptions options;
  options.server.host = "0.0.0.0";
  options.interval = 500ms;
  options.sources.simulate = 2;
  options.sysroot = "/tmp/root";
  EXPECT_EQ(started_line(options, {.port = 9477, .devices = 3, .nvml_note = "off"}),
            "acco serve: listening on http://0.0.0.0:9477/ (metrics at /metrics), sampling every "
            "500.00 ms: 3 device(s) (2 simulated), NVML off, host /tmp/root");
}

TEST(StartedLinesTest, AnIpv6AddressIsBracketedInTheUrl) {
  DaemonOptions options;
  options.server.host = "::1";
  EXPECT_EQ(started_line(options, {.port = 40001, .devices = 0, .nvml_note = "on"}),
            "acco serve: listening on http://[::1]:40001/ (metrics at /metrics), sampling every "
            "1.00 s: 0 device(s) (0 simulated), NVML on, host /");
  RuntimeServerOptions serve;
  serve.server.host = "fe80::1";
  EXPECT_EQ(serving_line(serve, 9478, "off"),
            "acco schedule: serving on http://[fe80::1]:9478/ (metrics at /metrics), sampling "
            "every 200.00 ms, NVML off");
}

TEST(StartedLinesTest, TheDaemonReportSaysWhatStoppedItAndAfterHowManyRounds) {
  EXPECT_EQ(report::render_text(daemon_report({.stopped_by = "SIGTERM", .rounds = 12})),
            "acco serve: stopped by SIGTERM after 12 round(s)\n");
}

TEST(StartedLinesTest, TheRecorderSaysHowAndForHowLongItRecords) {
  RecordOptions options;
  options.out = "run.jsonl";
  options.duration = 120s;
  EXPECT_EQ(started_line(options, "on"),
            "acco record: sampling every 1.00 s for 120.00 s into run.jsonl (NVML on)");
  options.simulated_time = true;
  options.sources.simulate = 4;
  EXPECT_EQ(started_line(options, "off"),
            "acco record: simulated devices on simulated time every 1.00 s for 120.00 s into "
            "run.jsonl (NVML off, 4 simulated)");
  EXPECT_EQ(report::render_text(
                record_report(options, {.rounds = 120, .stopped_by = core::kStoppedByDuration})),
            "acco record: 120 round(s) written to run.jsonl (stopped by the end of --duration)\n");
}

}  // namespace
}  // namespace acco::monitor
