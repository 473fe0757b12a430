// `acco record` as a library: the daemon's samples written to a file instead of served, one
// Snapshot per line (JSON Lines, the format the recording readers take), for a duration or until
// a stop. With simulated time, simulated devices only, the rounds run back to back.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "acco/core/result.hpp"
#include "acco/core/stop.hpp"
#include "acco/monitor/sources.hpp"
#include "acco/report/document.hpp"

namespace acco::monitor {

struct RecordOptions {
  std::string out;                            // the recording; FILE.partial while it is written
  std::chrono::duration<double> duration{0};  // how long to record (> 0)
  std::chrono::milliseconds interval{1000};   // one round per interval
  std::string sysroot = "/";                  // where the host and NVML sources read
  SourceOptions sources;
  // sources.simulate simulated devices alone, their rounds back to back on a simulated clock
  // (duration / interval rounds at once); the other sources are not read.
  bool simulated_time = false;
};

struct RecordSummary {
  std::size_t rounds = 0;  // rounds written
  std::string stopped_by;  // the stop's reason, or core::kStoppedByDuration
};

// What a person is told once the recorder is made: "acco record: sampling every 1.00 s for
// 2m0s into run.jsonl (NVML on, 2 simulated)". Pure.
[[nodiscard]] std::string started_line(const RecordOptions& options, std::string_view nvml_note);
// "acco record: 120 round(s) written to run.jsonl (stopped by the end of --duration)". Pure.
[[nodiscard]] report::Document record_report(const RecordOptions& options,
                                             const RecordSummary& summary);

class Recorder {
 public:
  // Builds the sources and opens FILE.partial. Errors: make_sources's; kCannotWrite ("cannot
  // write the recording FILE") when the file cannot be created.
  [[nodiscard]] static Result<Recorder> create(RecordOptions options);
  ~Recorder();
  Recorder(Recorder&& other) noexcept;
  Recorder& operator=(Recorder&& other) noexcept;
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // "on", "off" or "unavailable (<why>)" ("off" on simulated time).
  [[nodiscard]] const std::string& nvml_note() const;

  // Records until the duration has passed or `stop` is requested (real time only), then renames
  // FILE.partial to FILE, so FILE is either a whole recording or absent; an interrupted run
  // leaves FILE.partial with every round taken. kCannotWrite naming the file when a write fails
  // (what was written stays in FILE.partial) or the rename does. Once per Recorder.
  [[nodiscard]] Result<RecordSummary> run(const core::StopFlag& stop);

 private:
  struct Impl;
  explicit Recorder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace acco::monitor
