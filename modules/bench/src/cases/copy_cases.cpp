// Host<->device bandwidth cases, the bidirectional and device-local cases, latency and the size
// sweep: everything that moves data between one device and the host.
#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "acco/bench/compare.hpp"
#include "acco/core/units.hpp"
#include "acco/transfer/engine.hpp"

#include "cases.hpp"
#include "measure.hpp"

namespace acco::bench::detail {
namespace {

using device::MemoryKind;

// `tuned`: the profile came from acco tune, not the engine's defaults.
std::string describe(const transfer::CopyRecord& r, bool tuned) {
  std::string s(transfer::to_string(r.strategy));
  if (r.chunk_bytes > 0 && r.chunks > 1) {
    s += fmt::format(" {} x {}", units::format_bytes(r.chunk_bytes), r.chunks);
  }
  if (r.slots > 0) {
    s += fmt::format(", {} slots", r.slots);
  }
  if (r.queues > 1) {
    s += fmt::format(", {} queues", r.queues);
  }
  if (r.host_threads > 1) {
    s += fmt::format(", {} host threads", r.host_threads);
  }
  if (r.registered) {
    s += ", registered";
  } else if (r.strategy == transfer::Strategy::kDirect &&
             (r.src_kind == MemoryKind::kPageable || r.dst_kind == MemoryKind::kPageable)) {
    s += tuned ? ", pageable unstaged (the plain path: the tune profile's stage_pageable is off)"
               : ", pageable unstaged (the plain path, the engine's default where the device's "
                 "DMAs are host memcpys: staging would add a second copy)";
  }
  return s;
}

PathKind path_kind(const CaseContext& c, MemoryKind kind, CopyPath path) {
  if (c.link_kind == PathKind::kEmulatedLink) {
    return PathKind::kEmulatedLink;
  }
  if (kind == MemoryKind::kPageable) {
    return path == CopyPath::kPlain ? PathKind::kPciePageable : PathKind::kPcieStaged;
  }
  return c.link_kind;
}

class HostDeviceCase final : public Case {
 public:
  HostDeviceCase(CopyDirection direction, MemoryKind kind, CopyPath path)
      : direction_(direction), kind_(kind), path_(path) {}

  std::string key() const override {
    return fmt::format("{}_{}_{}", direction_ == CopyDirection::kHostToDevice ? "h2d" : "d2h",
                       device::to_string(kind_), path_ == CopyPath::kPlain ? "plain" : "engine");
  }
  std::string description() const override {
    return fmt::format(
        "{} from {} host memory {} {}",
        direction_ == CopyDirection::kHostToDevice ? "host-to-device" : "device-to-host",
        device::to_string(kind_),
        direction_ == CopyDirection::kHostToDevice ? "to device memory" : "from device memory",
        path_ == CopyPath::kPlain ? "with the plain copy API" : "through acco's transfer engine");
  }
  std::string applies_to(const CaseContext& /*context*/) const override { return {}; }

  std::vector<BenchResult> run(const CaseContext& c) override {
    BenchResult result;
    result.case_key = key();
    result.device = c.device_name();
    result.bytes = c.bytes;
    if (auto s = measure(c, result); !s) {
      return {failed(key(), c.device_name(), s.error())};
    }
    return {result};
  }

 private:
  Status measure(const CaseContext& c, BenchResult& result) const {
    device::Device& device = *c.device;
    const auto n = static_cast<std::size_t>(c.bytes);
    ACCO_ASSIGN_OR_RETURN(auto host, host_memory(device, kind_, n));
    ACCO_ASSIGN_OR_RETURN(auto dbuf, device.allocate(n));
    const bool h2d = direction_ == CopyDirection::kHostToDevice;
    void* dst = h2d ? dbuf->data() : host.data();
    const void* src = h2d ? host.data() : dbuf->data();
    const std::uint64_t seed = 0x5eed + static_cast<std::uint64_t>(kind_);
    if (h2d) {
      fill_pattern(host.data(), n, seed);
    } else {
      ACCO_RETURN_IF_ERROR(fill_device(device, *dbuf, seed), "fill device memory");
    }

    Result<std::vector<std::chrono::nanoseconds>> samples = std::vector<std::chrono::nanoseconds>{};
    if (path_ == CopyPath::kPlain && kind_ != MemoryKind::kPageable) {
      // nvbandwidth's way: copies back to back on one queue, timed between device events.
      ACCO_ASSIGN_OR_RETURN(auto queue, device.create_queue());
      samples = time_with_events(*queue, c.warmup, c.reps, c.copies_per_sample,
                                 [&] { return queue->copy(dst, src, n); });
      result.timer = kTimerDeviceEvents;
      result.strategy = "plain async copy";
    } else if (path_ == CopyPath::kPlain) {
      // The pageable plain path is partly synchronous by specification: only the host clock
      // tells the truth.
      samples = time_with_host_clock(c.warmup, c.reps, c.copies_per_sample,
                                     [&] { return device.copy(dst, src, n); });
      result.timer = kTimerHostClock;
      result.strategy = "plain copy (driver staging)";
    } else {
      const auto path = fmt::format("{}_{}", h2d ? "h2d" : "d2h", device::to_string(kind_));
      ACCO_ASSIGN_OR_RETURN(auto engine, transfer::Engine::create(device, c.profile_for(path)));
      // The plain copy of the same buffers, in rounds alternating with the engine's, so the
      // engine is judged against it under the same load (its own row is the *_plain case).
      ACCO_ASSIGN_OR_RETURN(auto queue, device.create_queue());
      const auto plain = [&]() -> Status {
        if (kind_ == MemoryKind::kPageable) {
          return device.copy(dst, src, n);
        }
        ACCO_RETURN_IF_ERROR(queue->copy(dst, src, n));
        return queue->synchronize();
      };
      transfer::CopyRecord last;
      auto pair = time_alternating(
          c.warmup, c.reps, c.copies_per_sample,
          [&]() -> Status {
            ACCO_ASSIGN_OR_RETURN(auto t, engine->copy(dst, src, n));
            ACCO_ASSIGN_OR_RETURN(last, t.wait());
            return {};
          },
          plain);
      if (pair) {
        result.against_plain = paired_ratio(pair->a, pair->b);
        samples = std::move(pair->a);
      } else {
        samples = tl::unexpected(pair.error());
      }
      result.timer = kTimerHostClock;
      result.strategy = describe(last, c.tuned(path));
    }
    if (!samples) {
      return tl::unexpected(samples.error());
    }
    // Verified outside the timed region.
    if (h2d) {
      ACCO_RETURN_IF_ERROR(check_device(device, *dbuf, seed, "device memory"), "verify");
    } else if (!check_pattern(host.data(), n, seed)) {
      return fail(Errc::kDeviceError, "verify: host buffer does not hold the device's pattern");
    }
    return finish(result, c.bytes * static_cast<std::uint64_t>(c.copies_per_sample), *samples,
                  c.peak_bytes_per_second, path_kind(c, kind_, path_));
  }

  CopyDirection direction_;
  MemoryKind kind_;
  CopyPath path_;
};

class BidirectionalCase final : public Case {
 public:
  std::string key() const override { return "bidir_pinned"; }
  std::string description() const override {
    return "host-to-device and device-to-host at once on pinned memory, one result per direction";
  }
  std::string applies_to(const CaseContext& /*context*/) const override { return {}; }

  std::vector<BenchResult> run(const CaseContext& c) override {
    std::vector<BenchResult> out(2);
    out[0].case_key = "bidir_pinned_h2d";
    out[1].case_key = "bidir_pinned_d2h";
    for (auto& r : out) {
      r.device = c.device_name();
      r.bytes = c.bytes;
      r.timer = kTimerDeviceEvents;
      r.strategy = "plain async copy, two queues";
    }
    if (auto s = measure(c, out); !s) {
      return {failed(out[0].case_key, c.device_name(), s.error()),
              failed(out[1].case_key, c.device_name(), s.error())};
    }
    return out;
  }

 private:
  static Status measure(const CaseContext& c, std::vector<BenchResult>& out) {
    device::Device& device = *c.device;
    const auto n = static_cast<std::size_t>(c.bytes);
    auto up = host_memory(device, MemoryKind::kPinned, n);
    auto down = host_memory(device, MemoryKind::kPinned, n);
    auto d_in = device.allocate(n);
    auto d_out = device.allocate(n);
    if (!up || !down || !d_in || !d_out) {
      return fail(Errc::kDeviceError, "cannot allocate the buffers of a bidirectional copy");
    }
    fill_pattern(up->data(), n, 11);
    ACCO_RETURN_IF_ERROR(fill_device(device, **d_out, 12), "fill device memory");
    auto q_up = device.create_queue();
    auto q_down = device.create_queue();
    if (!q_up || !q_down) {
      return fail(Errc::kDeviceError, "cannot create two queues");
    }
    // Each direction is timed on its own queue while the other direction runs: the threads
    // start together so the loads overlap for the whole measurement.
    Result<std::vector<std::chrono::nanoseconds>> s_up = std::vector<std::chrono::nanoseconds>{};
    Result<std::vector<std::chrono::nanoseconds>> s_down = s_up;
    std::thread t([&] {
      s_down = time_with_events(**q_down, c.warmup, c.reps, c.copies_per_sample,
                                [&] { return (*q_down)->copy(down->data(), (*d_out)->data(), n); });
    });
    s_up = time_with_events(**q_up, c.warmup, c.reps, c.copies_per_sample,
                            [&] { return (*q_up)->copy((*d_in)->data(), up->data(), n); });
    t.join();
    if (!s_up) {
      return tl::unexpected(s_up.error());
    }
    if (!s_down) {
      return tl::unexpected(s_down.error());
    }
    ACCO_RETURN_IF_ERROR(check_device(device, **d_in, 11, "device memory"), "verify");
    if (!check_pattern(down->data(), n, 12)) {
      return fail(Errc::kDeviceError, "verify: host buffer does not hold the device's pattern");
    }
    const PathKind kind = c.link_kind == PathKind::kEmulatedLink ? PathKind::kEmulatedLink
                                                                 : PathKind::kPcieBidirectional;
    const auto bytes = c.bytes * static_cast<std::uint64_t>(c.copies_per_sample);
    ACCO_RETURN_IF_ERROR(finish(out[0], bytes, *s_up, c.peak_bytes_per_second, kind), "h2d");
    return finish(out[1], bytes, *s_down, c.peak_bytes_per_second, kind);
  }
};

class DeviceLocalCase final : public Case {
 public:
  std::string key() const override { return "d2d_local"; }
  std::string description() const override {
    return "device memory to device memory on one device (bytes copied, not read plus written)";
  }
  std::string applies_to(const CaseContext& /*context*/) const override { return {}; }
  std::vector<BenchResult> run(const CaseContext& c) override {
    BenchResult r;
    r.case_key = key();
    r.device = c.device_name();
    r.bytes = c.bytes;
    r.timer = kTimerDeviceEvents;
    r.strategy = "plain async copy";
    const auto n = static_cast<std::size_t>(c.bytes);
    auto a = c.device->allocate(n);
    auto b = c.device->allocate(n);
    auto q = c.device->create_queue();
    if (!a || !b || !q) {
      return {failed(key(), r.device, Error{Errc::kDeviceError, "cannot allocate two buffers"})};
    }
    if (auto s = fill_device(*c.device, **a, 21); !s) {
      return {failed(key(), r.device, s.error())};
    }
    auto samples = time_with_events(**q, c.warmup, c.reps, c.copies_per_sample,
                                    [&] { return (*q)->copy((*b)->data(), (*a)->data(), n); });
    if (!samples) {
      return {failed(key(), r.device, samples.error())};
    }
    if (auto s = check_device(*c.device, **b, 21, "device memory"); !s) {
      return {failed(key(), r.device, s.error())};
    }
    if (auto s = finish(r, c.bytes * static_cast<std::uint64_t>(c.copies_per_sample), *samples, 0,
                        PathKind::kDeviceLocal);
        !s) {
      return {failed(key(), r.device, s.error())};
    }
    return {r};
  }
};

class LatencyCase final : public Case {
 public:
  explicit LatencyCase(CopyDirection direction) : direction_(direction) {}
  std::string key() const override {
    return direction_ == CopyDirection::kHostToDevice ? "latency_h2d" : "latency_d2h";
  }
  std::string description() const override {
    return "API latency of one 8-byte pinned copy, from submit to completion (host clock)";
  }
  std::string applies_to(const CaseContext& /*context*/) const override { return {}; }
  std::vector<BenchResult> run(const CaseContext& c) override {
    BenchResult r;
    r.case_key = key();
    r.device = c.device_name();
    r.bytes = 8;
    r.timer = kTimerHostClock;
    r.strategy = "plain async copy + wait";
    auto host = host_memory(*c.device, MemoryKind::kPinned, 4096);
    auto dbuf = c.device->allocate(4096);
    auto q = c.device->create_queue();
    if (!host || !dbuf || !q) {
      return {failed(key(), r.device, Error{Errc::kDeviceError, "cannot allocate buffers"})};
    }
    const bool h2d = direction_ == CopyDirection::kHostToDevice;
    void* dst = h2d ? (*dbuf)->data() : host->data();
    const void* src = h2d ? host->data() : (*dbuf)->data();
    constexpr int kCopies = 200;
    std::vector<std::chrono::nanoseconds> each;
    for (int i = 0; i < kCopies + 10; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      if (auto s = (*q)->copy(dst, src, 8); !s) {
        return {failed(key(), r.device, s.error())};
      }
      if (auto s = (*q)->synchronize(); !s) {
        return {failed(key(), r.device, s.error())};
      }
      if (i >= 10) {  // the first copies pay for lazy setup
        each.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::steady_clock::now() - t0));
      }
    }
    auto summary = summarize(to_seconds(each));
    if (!summary) {
      return {failed(key(), r.device, summary.error())};
    }
    // A time, not a rate: 8 bytes over a few microseconds says nothing about bandwidth.
    r.latency_seconds = summary->median;
    r.latency_min_seconds = summary->min;
    r.latency_max_seconds = summary->max;
    r.latency_p99_seconds = summary->p99;
    r.cov = summary->cov;
    r.verdict = "unknown";
    return {r};
  }

 private:
  CopyDirection direction_;
};

class SweepCase final : public Case {
 public:
  std::string key() const override { return "sweep_h2d_pinned"; }
  std::string description() const override {
    return "pinned host-to-device from 4 KiB up to the sweep limit; finds the size reaching "
           "half of peak";
  }
  std::string applies_to(const CaseContext& c) const override {
    if (c.sweep_max_bytes < (std::uint64_t{4} << 10)) {
      return "sweep limit below 4 KiB";
    }
    return {};
  }
  std::vector<BenchResult> run(const CaseContext& c) override {
    BenchResult r;
    r.case_key = key();
    r.device = c.device_name();
    r.timer = kTimerDeviceEvents;
    r.strategy = "plain async copy";
    const auto max = static_cast<std::size_t>(c.sweep_max_bytes);
    auto host = host_memory(*c.device, MemoryKind::kPinned, max);
    auto dbuf = c.device->allocate(max);
    auto q = c.device->create_queue();
    if (!host || !dbuf || !q) {
      return {failed(key(), r.device,
                     Error{Errc::kDeviceError, fmt::format("cannot allocate {} for the sweep",
                                                           units::format_bytes(max))})};
    }
    fill_pattern(host->data(), max, 31);
    double best = 0;
    for (std::size_t size = 4096; size <= max; size *= 4) {
      // Small sizes repeat more so each sample is long enough for the timer.
      const int copies = static_cast<int>(std::clamp<std::size_t>((64 << 20) / size, 1, 256));
      auto samples = time_with_events(**q, 1, std::max(3, c.reps / 2), copies, [&] {
        return (*q)->copy((*dbuf)->data(), host->data(), size);
      });
      if (!samples) {
        return {failed(key(), r.device, samples.error())};
      }
      auto rates = bytes_per_second(size * static_cast<std::uint64_t>(copies), *samples);
      if (!rates) {
        return {failed(key(), r.device, rates.error())};
      }
      auto s = summarize(*rates);
      if (!s) {
        return {failed(key(), r.device, s.error())};
      }
      r.sweep.push_back({size, s->median});
      if (s->median >= best) {
        best = s->median;
        r.bytes = size;
        set_rates(r, *s);
      }
    }
    // One untimed copy of the whole buffer, then the data check outside the timed region.
    if (auto s = (*q)->copy((*dbuf)->data(), host->data(), max); !s) {
      return {failed(key(), r.device, s.error())};
    }
    if (auto s = (*q)->synchronize(); !s) {
      return {failed(key(), r.device, s.error())};
    }
    if (auto s = check_device(*c.device, **dbuf, 31, "device memory"); !s) {
      return {failed(key(), r.device, s.error())};
    }
    r.peak_bytes_per_second = c.peak_bytes_per_second;
    assess(r, path_kind(c, MemoryKind::kPinned, CopyPath::kPlain));
    return {r};
  }
};

}  // namespace

std::unique_ptr<Case> host_device_case(CopyDirection direction, MemoryKind kind, CopyPath path) {
  return std::make_unique<HostDeviceCase>(direction, kind, path);
}
std::unique_ptr<Case> bidirectional_case() {
  return std::make_unique<BidirectionalCase>();
}
std::unique_ptr<Case> device_local_case() {
  return std::make_unique<DeviceLocalCase>();
}
std::unique_ptr<Case> latency_case(CopyDirection direction) {
  return std::make_unique<LatencyCase>(direction);
}
std::unique_ptr<Case> sweep_case() {
  return std::make_unique<SweepCase>();
}

}  // namespace acco::bench::detail
