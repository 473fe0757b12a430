#include "acco/monitor/recorder.hpp"

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "acco/analyze/json.hpp"
#include "acco/core/clock.hpp"
#include "acco/core/units.hpp"
#include "acco/monitor/sampler.hpp"
#include "acco/power/simulated_device.hpp"

namespace acco::monitor {

// The sampler's observer writes through a pointer to this, which does not move with the
// Recorder.
struct Recorder::Impl {
  RecordOptions options;
  // Simulated time: the devices and the rounds share one clock that each round moves on.
  std::unique_ptr<power::SimulatedClock> clock;
  std::unique_ptr<core::Fs> fs;  // what the host and NVML sources read; outlives them
  std::string nvml_note = "off";
  std::string partial;
  std::ofstream file;
  std::atomic<bool> write_failed{false};
  std::atomic<std::size_t> rounds{0};
  std::unique_ptr<Sampler> sampler;
};

Recorder::Recorder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Recorder::~Recorder() = default;
Recorder::Recorder(Recorder&& other) noexcept = default;
Recorder& Recorder::operator=(Recorder&& other) noexcept = default;

Result<Recorder> Recorder::create(RecordOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  const RecordOptions& o = impl->options;
  Impl* self = impl.get();
  std::vector<std::unique_ptr<power::SensorSource>> devices;
  std::unique_ptr<power::HostSource> host;
  if (o.simulated_time) {
    impl->clock = std::make_unique<power::SimulatedClock>(core::now_unix_nanos());
    devices.push_back(std::make_unique<power::SimulatedSource>(
        o.sources.simulate, o.sources.scenario, impl->clock->clock()));
  } else {
    ACCO_ASSIGN_OR_RETURN(auto sources, make_sources(o.sysroot, o.sources));
    devices = std::move(sources.devices);
    host = std::move(sources.host);
    impl->fs = std::move(sources.fs);
    impl->nvml_note = sources.nvml_note;
  }
  // Written beside the target and renamed at the end, so FILE is either the whole recording or
  // absent; an interrupted run leaves FILE.partial with every round taken so far.
  impl->partial = o.out + ".partial";
  impl->file.open(impl->partial, std::ios::trunc);
  if (!impl->file) {
    return fail(Errc::kCannotWrite, fmt::format("cannot write the recording {}", o.out));
  }
  SamplerOptions sampler_options;
  sampler_options.interval = o.interval;
  sampler_options.history_rounds = 1;
  if (impl->clock) {
    sampler_options.clock = impl->clock->clock();
  }
  impl->sampler = std::make_unique<Sampler>(std::move(devices), std::move(host), sampler_options);
  impl->sampler->add_observer([self](const Published& p) {
    self->file << analyze::to_json(p.snapshot).dump() << '\n';
    self->file.flush();
    if (!self->file) {
      self->write_failed = true;
    }
    ++self->rounds;
  });
  return Recorder(std::move(impl));
}

const std::string& Recorder::nvml_note() const {
  return impl_->nvml_note;
}

Result<RecordSummary> Recorder::run(const core::StopFlag& stop) {
  Impl& r = *impl_;
  const RecordOptions& o = r.options;
  RecordSummary summary;
  summary.stopped_by = core::kStoppedByDuration;
  if (r.clock) {
    const auto interval_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(o.interval);
    const auto total = static_cast<std::size_t>(
        std::llround(o.duration.count() * 1e9 / static_cast<double>(interval_ns.count())));
    for (std::size_t i = 0; i < total && !r.write_failed; ++i) {
      r.sampler->round();
      r.clock->advance(interval_ns);
    }
  } else {
    r.sampler->start();
    const auto begin = std::chrono::steady_clock::now();
    while (!r.write_failed) {
      if (stop.wait_for(std::chrono::milliseconds(100))) {
        summary.stopped_by = stop.reason().value_or("");
        break;
      }
      if (std::chrono::steady_clock::now() - begin >= o.duration) {
        break;
      }
    }
    r.sampler->stop();
  }
  summary.rounds = r.rounds;
  r.file.close();
  if (r.write_failed || !r.file) {
    return fail(Errc::kCannotWrite,
                fmt::format("writing the recording {} failed after {} round(s) (disk full?); what "
                            "was written is in {}",
                            o.out, summary.rounds, r.partial));
  }
  std::error_code ec;
  std::filesystem::rename(r.partial, o.out, ec);
  if (ec) {
    return fail(Errc::kCannotWrite,
                fmt::format("cannot write the recording {}: {}", o.out, ec.message()));
  }
  return summary;
}

std::string started_line(const RecordOptions& options, std::string_view nvml_note) {
  return fmt::format("acco record: {} every {} for {} into {} (NVML {}{})",
                     options.simulated_time ? "simulated devices on simulated time" : "sampling",
                     units::format_seconds(std::chrono::duration<double>(options.interval).count()),
                     units::format_seconds(options.duration.count()), options.out, nvml_note,
                     options.sources.simulate > 0
                         ? fmt::format(", {} simulated", options.sources.simulate)
                         : std::string());
}

report::Document record_report(const RecordOptions& options, const RecordSummary& summary) {
  report::Document doc;
  doc.add(report::Preformatted{fmt::format("acco record: {} round(s) written to {} (stopped by {})",
                                           summary.rounds, options.out, summary.stopped_by)});
  return doc;
}

}  // namespace acco::monitor
