// NvmlSensorSource: DeviceSample from acco::nvml, one read per GPU per tick.
#include "acco/power/nvml_sensor.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "acco/core/clock.hpp"
#include "acco/nvml/library.hpp"

namespace acco::power {
namespace {

using nvml::Device;
using nvml::Library;

// Physical bounds past which a reading is a driver glitch or a sentinel, not a measurement.
constexpr double kMaxCelsius = 200;
constexpr unsigned int kMaxMilliwatts = 10'000'000;  // 10 kW: no board draws that
constexpr unsigned int kMaxPercent = 100;
constexpr unsigned int kMaxClockMhz = 100'000;
// NVML reports "no value" in some unsigned readings as all ones.
constexpr unsigned int kNoValue = std::numeric_limits<unsigned int>::max();
// NVML_NVLINK_MAX_LINKS in the driver 450 headers acco's declarations follow.
constexpr unsigned int kMaxNvLinks = 18;

// NVML field ids (nvml.h, API 13) and the throttle_seconds key each fills.
struct ViolationField {
  unsigned int id;
  const char* reason;
};
constexpr ViolationField kViolationFields[] = {
    {74, "power"},       {75, "thermal"},     {76, "sync_boost"},
    {77, "board_limit"}, {78, "low_util"},    {79, "reliability"},
    {269, "sw_thermal"}, {270, "hw_thermal"}, {271, "hw_power_brake"},
};
constexpr unsigned int kFieldMemoryTemperature = 82;
constexpr unsigned int kFieldNvlinkTxKib = 138;
constexpr unsigned int kFieldNvlinkRxKib = 139;
constexpr unsigned int kFieldNvlinkSpeedMbps = 164;

constexpr double kKib = 1024;
constexpr double kMega = 1e6;
constexpr double kMilli = 1e-3;
constexpr double kNano = 1e-9;

// Reads one GPU into one sample. The first GPU_IS_LOST stops every further call: the sample
// then says lost and nothing else.
class GpuReader {
 public:
  GpuReader(const Library& nvml, Device device, DeviceSample& sample)
      : nvml_(nvml), device_(device), sample_(sample) {}

  [[nodiscard]] bool lost() const { return lost_; }

  void read() {
    read_thermal();
    read_power();
    read_clocks();
    read_memory_and_utilization();
    read_pcie();
    if (auto reasons = get([&] { return nvml_.clocks_event_reasons(device_); })) {
      sample_.clock_event_reasons = *reasons;
    }
    read_fields(read_nvlinks());
  }

 private:
  // The value of `query()`, or nullopt when it fails; a lost GPU ends the read.
  template <typename Query>
  auto get(Query query) -> std::optional<typename decltype(query())::value_type> {
    if (lost_) {
      return std::nullopt;
    }
    auto result = query();
    if (result.has_value()) {
      return *std::move(result);
    }
    if (nvml::is_gpu_lost(result.error())) {
      lost_ = true;
    }
    return std::nullopt;
  }

  // `value` when it is at most `max` and not NVML's all-ones; otherwise counted as dropped.
  std::optional<unsigned int> bounded(std::optional<unsigned int> value, unsigned int max) {
    if (!value.has_value()) {
      return std::nullopt;
    }
    if (*value == kNoValue || *value > max) {
      ++sample_.dropped_readings;
      return std::nullopt;
    }
    return value;
  }

  std::optional<double> celsius(std::optional<unsigned int> value) {
    const auto kept = bounded(value, static_cast<unsigned int>(kMaxCelsius));
    return kept.has_value() ? std::optional<double>(*kept) : std::nullopt;
  }

  std::optional<double> watts(std::optional<unsigned int> milliwatts) {
    const auto kept = bounded(milliwatts, kMaxMilliwatts);
    return kept.has_value() ? std::optional<double>(*kept * kMilli) : std::nullopt;
  }

  std::optional<double> hertz(std::optional<unsigned int> mhz) {
    const auto kept = bounded(mhz, kMaxClockMhz);
    return kept.has_value() ? std::optional<double>(*kept * kMega) : std::nullopt;
  }

  std::optional<double> ratio(unsigned int percent) {
    const auto kept = bounded(percent, kMaxPercent);
    return kept.has_value() ? std::optional<double>(*kept / 100.0) : std::nullopt;
  }

  std::optional<int> small(std::optional<unsigned int> value) {
    const auto kept = bounded(value, kNoValue - 1);
    return kept.has_value() ? std::optional<int>(static_cast<int>(*kept)) : std::nullopt;
  }

  void read_thermal() {
    // First: the fake counts a GPU's reads by this call.
    sample_.temperature_gpu_celsius =
        celsius(get([&] { return nvml_.temperature_celsius(device_); }));
    auto threshold = [&](nvml::TemperatureThreshold which) {
      return celsius(get([&] { return nvml_.temperature_threshold_celsius(device_, which); }));
    };
    sample_.threshold_shutdown_celsius = threshold(nvml::TemperatureThreshold::kShutdown);
    sample_.threshold_slowdown_celsius = threshold(nvml::TemperatureThreshold::kSlowdown);
    sample_.threshold_memory_max_celsius = threshold(nvml::TemperatureThreshold::kMemoryMax);
    sample_.threshold_gpu_max_celsius = threshold(nvml::TemperatureThreshold::kGpuMax);
    if (const auto margin = get([&] { return nvml_.margin_temperature_celsius(device_); })) {
      if (*margin >= -kMaxCelsius && *margin <= kMaxCelsius) {
        sample_.thermal_margin_celsius = *margin;
      } else {
        ++sample_.dropped_readings;
      }
    }
  }

  void read_power() {
    sample_.power_watts = watts(get([&] { return nvml_.power_usage_milliwatts(device_); }));
    if (const auto energy = get([&] { return nvml_.total_energy_millijoules(device_); })) {
      sample_.energy_joules = static_cast<double>(*energy) * kMilli;
    }
    sample_.power_limit_enforced_watts =
        watts(get([&] { return nvml_.enforced_power_limit_milliwatts(device_); }));
    sample_.power_limit_requested_watts =
        watts(get([&] { return nvml_.power_management_limit_milliwatts(device_); }));
    sample_.power_limit_default_watts =
        watts(get([&] { return nvml_.power_management_default_limit_milliwatts(device_); }));
    if (const auto limits = get([&] { return nvml_.power_limit_constraints(device_); })) {
      sample_.power_limit_min_watts = watts(limits->min_milliwatts);
      sample_.power_limit_max_watts = watts(limits->max_milliwatts);
    }
  }

  void read_clocks() {
    using nvml::Clock;
    sample_.sm_clock_hertz = hertz(get([&] { return nvml_.clock_mhz(device_, Clock::kSm); }));
    sample_.memory_clock_hertz =
        hertz(get([&] { return nvml_.clock_mhz(device_, Clock::kMemory); }));
    sample_.sm_clock_max_hertz =
        hertz(get([&] { return nvml_.max_clock_mhz(device_, Clock::kSm); }));
    sample_.memory_clock_max_hertz =
        hertz(get([&] { return nvml_.max_clock_mhz(device_, Clock::kMemory); }));
    // 32 is NVML's "unknown", not a reading: left empty without counting it.
    if (const auto pstate = get([&] { return nvml_.performance_state(device_); });
        pstate.has_value() && *pstate >= 0 && *pstate <= 15) {
      sample_.pstate = *pstate;
    }
  }

  void read_memory_and_utilization() {
    if (const auto rates = get([&] { return nvml_.utilization(device_); })) {
      sample_.utilization_ratio = ratio(rates->gpu_percent);
      sample_.memory_utilization_ratio = ratio(rates->memory_percent);
    }
    if (const auto memory = get([&] { return nvml_.memory_info(device_); })) {
      sample_.memory_total_bytes = memory->total_bytes;
      sample_.memory_used_bytes = memory->used_bytes;
      sample_.memory_free_bytes = memory->free_bytes;
    }
  }

  void read_pcie() {
    using nvml::PcieDirection;
    auto rate = [&](PcieDirection direction) -> std::optional<double> {
      const auto kb =
          bounded(get([&] { return nvml_.pcie_throughput_kb_per_second(device_, direction); }),
                  kNoValue - 1);
      return kb.has_value() ? std::optional<double>(*kb * kKib) : std::nullopt;
    };
    sample_.pcie_tx_bytes_per_second = rate(PcieDirection::kTx);
    sample_.pcie_rx_bytes_per_second = rate(PcieDirection::kRx);
    if (const auto replays =
            bounded(get([&] { return nvml_.pcie_replay_counter(device_); }), kNoValue - 1)) {
      sample_.pcie_replays = *replays;
    }
    auto link = [&](nvml::PcieLink which) {
      return small(get([&] { return nvml_.pcie_link(device_, which); }));
    };
    sample_.pcie_gen_current = link(nvml::PcieLink::kCurrentGen);
    sample_.pcie_width_current = link(nvml::PcieLink::kCurrentWidth);
    sample_.pcie_gen_max = link(nvml::PcieLink::kMaxGen);
    sample_.pcie_width_max = link(nvml::PcieLink::kMaxWidth);
  }

  // The links the GPU has, up or down; their counters come with the field batch.
  std::vector<unsigned int> read_nvlinks() {
    std::vector<unsigned int> links;
    for (unsigned int link = 0; link < kMaxNvLinks && !lost_; ++link) {
      const Result<bool> up = nvml_.nvlink_active(device_, link);
      if (!up.has_value()) {
        if (nvml::is_gpu_lost(up.error())) {
          lost_ = true;
        }
        // Past the GPU's last link INVALID_ARGUMENT; no NVLink at all NOT_SUPPORTED.
        if (up.error().code == Errc::kInvalidArgument || up.error().code == Errc::kUnsupported) {
          break;
        }
        continue;
      }
      NvlinkSample& entry = sample_.nvlinks.emplace_back();
      entry.link = static_cast<int>(link);
      entry.up = *up;
      links.push_back(link);
    }
    return links;
  }

  // One nvmlDeviceGetFieldValues call for the violation counters, the memory temperature and
  // each link's data counters and speed.
  void read_fields(const std::vector<unsigned int>& links) {
    std::vector<nvml::FieldRequest> requests;
    for (const ViolationField& field : kViolationFields) {
      requests.push_back({field.id, 0});
    }
    requests.push_back({kFieldMemoryTemperature, 0});
    for (const unsigned int link : links) {
      requests.push_back({kFieldNvlinkTxKib, link});
      requests.push_back({kFieldNvlinkRxKib, link});
      requests.push_back({kFieldNvlinkSpeedMbps, link});
    }
    const auto values = get([&] { return nvml_.field_values(device_, requests); });
    if (!values.has_value()) {
      return;
    }
    for (const nvml::FieldValue& field : *values) {
      if (!field.value.has_value()) {
        lost_ = lost_ || nvml::is_gpu_lost(field.value.error());
        continue;
      }
      apply(field.field_id, field.scope_id, *field.value);
    }
  }

  void apply(unsigned int id, unsigned int scope, std::uint64_t value) {
    for (const ViolationField& field : kViolationFields) {
      if (field.id == id) {
        sample_.throttle_seconds[field.reason] = static_cast<double>(value) * kNano;
        return;
      }
    }
    if (id == kFieldMemoryTemperature) {
      if (static_cast<double>(value) <= kMaxCelsius) {
        sample_.temperature_memory_celsius = static_cast<double>(value);
      } else {
        ++sample_.dropped_readings;
      }
      return;
    }
    for (NvlinkSample& link : sample_.nvlinks) {
      if (link.link != static_cast<int>(scope)) {
        continue;
      }
      if (id == kFieldNvlinkTxKib) {
        link.tx_bytes = value * static_cast<std::uint64_t>(kKib);
      } else if (id == kFieldNvlinkRxKib) {
        link.rx_bytes = value * static_cast<std::uint64_t>(kKib);
      } else if (id == kFieldNvlinkSpeedMbps) {
        link.speed_bytes_per_second = static_cast<double>(value) * kMega;
      }
    }
  }

  const Library& nvml_;
  Device device_;
  DeviceSample& sample_;
  bool lost_ = false;
};

class NvmlSensorSource final : public SensorSource {
 public:
  struct Gpu {
    std::optional<Device> device;  // empty: lost when the source opened
    DeviceSample identity;         // device, uuid, pci_bus_id, model, source
  };

  NvmlSensorSource(const core::Fs& fs, std::shared_ptr<Library> nvml, std::vector<Gpu> gpus)
      : fs_(fs), nvml_(std::move(nvml)), gpus_(std::move(gpus)) {
    watch_xids();
  }
  ~NvmlSensorSource() override {
    if (events_.has_value()) {
      nvml_->free_event_set(*events_);
    }
  }
  NvmlSensorSource(const NvmlSensorSource&) = delete;
  NvmlSensorSource& operator=(const NvmlSensorSource&) = delete;
  NvmlSensorSource(NvmlSensorSource&&) = delete;
  NvmlSensorSource& operator=(NvmlSensorSource&&) = delete;

  [[nodiscard]] std::string name() const override { return "nvml"; }

  [[nodiscard]] Result<std::vector<DeviceSample>> read() override {
    // The library still answering its device count is what "usable" means.
    ACCO_RETURN_IF_ERROR(nvml_->device_count(), "nvml sensors");
    std::vector<std::vector<XidEvent>> xids = pending_xids();
    std::vector<DeviceSample> samples;
    samples.reserve(gpus_.size());
    for (const Gpu& gpu : gpus_) {
      DeviceSample& sample = samples.emplace_back(gpu.identity);
      sample.time_unix_nanos = core::now_unix_nanos();
      if (!gpu.device.has_value()) {
        sample.lost = true;
        continue;
      }
      if (suspended(sample.pci_bus_id)) {
        sample.suspended = true;
        continue;
      }
      GpuReader reader(*nvml_, *gpu.device, sample);
      reader.read();
      sample.xids = std::move(xids[samples.size() - 1]);
      if (reader.lost()) {
        const std::int64_t time = sample.time_unix_nanos;
        sample = gpu.identity;
        sample.time_unix_nanos = time;
        sample.lost = true;
      }
    }
    return samples;
  }

 private:
  // XID events come through one event set for all GPUs; a driver or GPU without events simply
  // gives none.
  void watch_xids() {
    Result<nvml::EventSet> set = nvml_->create_event_set();
    if (!set.has_value()) {
      return;
    }
    events_ = *set;
    for (const Gpu& gpu : gpus_) {
      if (gpu.device.has_value()) {
        (void)nvml_->register_xid_events(*gpu.device, *events_);
      }
    }
  }

  // The events since the previous read, by GPU. Polled without waiting; the bound keeps a
  // driver that never answers TIMEOUT from holding the read.
  std::vector<std::vector<XidEvent>> pending_xids() {
    constexpr int kMaxEventsPerRead = 1024;
    std::vector<std::vector<XidEvent>> xids(gpus_.size());
    if (!events_.has_value()) {
      return xids;
    }
    for (int n = 0; n < kMaxEventsPerRead; ++n) {
      const Result<std::optional<nvml::XidEvent>> event = nvml_->next_xid_event(*events_);
      if (!event.has_value() || !event->has_value()) {
        break;
      }
      for (std::size_t i = 0; i < gpus_.size(); ++i) {
        if (gpus_[i].device == (*event)->device) {
          xids[i].push_back(XidEvent{(*event)->xid, core::now_unix_nanos()});
        }
      }
    }
    return xids;
  }

  // Runtime PM: a GPU the kernel has put to sleep says "suspended"; any NVML call would wake
  // it. An absent file (no runtime PM, a GPU without a PCI address) means awake.
  [[nodiscard]] bool suspended(const std::string& pci) const {
    if (pci.empty()) {
      return false;
    }
    const Result<std::string> status =
        fs_.read_file("/sys/bus/pci/devices/" + pci + "/power/runtime_status");
    return status.has_value() && status->rfind("suspended", 0) == 0;
  }

  const core::Fs& fs_;
  std::shared_ptr<Library> nvml_;
  std::vector<Gpu> gpus_;
  std::optional<nvml::EventSet> events_;
};

}  // namespace

Result<std::unique_ptr<SensorSource>> make_nvml_source(const core::Fs& fs,
                                                       const std::string& library) {
  ACCO_ASSIGN_OR_RETURN(std::shared_ptr<Library> nvml, Library::open(library), "nvml sensors");
  ACCO_ASSIGN_OR_RETURN(const unsigned int count, nvml->device_count(), "nvml sensors");
  std::vector<NvmlSensorSource::Gpu> gpus(count);
  for (unsigned int i = 0; i < count; ++i) {
    DeviceSample& identity = gpus[i].identity;
    identity.device = std::to_string(i);
    identity.source = "nvml";
    Result<Device> device = nvml->device(i);
    if (!device.has_value()) {
      continue;
    }
    gpus[i].device = *device;
    identity.pci_bus_id = nvml->pci_bus_id(*device).value_or("");
    identity.uuid = nvml->uuid(*device).value_or("");
    identity.model = nvml->name(*device).value_or("");
  }
  return std::make_unique<NvmlSensorSource>(fs, std::move(nvml), std::move(gpus));
}

}  // namespace acco::power
