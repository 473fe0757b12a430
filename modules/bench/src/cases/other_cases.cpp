// Cases that are not one device's host link: the peer matrix, many small copies batched or one
// by one, and host memcpy as the host-side limit.
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "acco/transfer/engine.hpp"

#include "cases.hpp"
#include "measure.hpp"

namespace acco::bench::detail {
namespace {

using device::MemoryKind;

class PeerMatrixCase final : public Case {
 public:
  std::string key() const override { return "p2p"; }
  std::string description() const override {
    return "device memory of one device to another's, every ordered pair (device \"a->b\")";
  }
  std::string applies_to(const CaseContext& c) const override {
    return c.devices.size() < 2 ? "needs two or more devices" : std::string();
  }
  std::vector<BenchResult> run(const CaseContext& c) override {
    std::vector<BenchResult> out;
    for (std::size_t i = 0; i < c.devices.size(); ++i) {
      for (std::size_t j = 0; j < c.devices.size(); ++j) {
        if (i != j) {
          out.push_back(pair(c, *c.devices[i], *c.devices[j]));
        }
      }
    }
    return out;
  }

 private:
  static std::string name(const device::Device& d) {
    return d.info().pci.empty() ? d.info().name : d.info().pci;
  }
  BenchResult pair(const CaseContext& c, device::Device& from, device::Device& to) const {
    BenchResult r;
    r.case_key = key();
    r.device = name(from) + "->" + name(to);
    r.bytes = c.bytes;
    r.timer = kTimerDeviceEvents;
    r.strategy = "plain async copy on the source's queue";
    const auto n = static_cast<std::size_t>(c.bytes);
    auto a = from.allocate(n);
    auto b = to.allocate(n);
    auto q = from.create_queue();
    if (!a || !b || !q) {
      return failed(key(), r.device, Error{Errc::kDeviceError, "cannot allocate peer buffers"});
    }
    if (auto s = fill_device(from, **a, 41); !s) {
      return failed(key(), r.device, s.error());
    }
    auto samples = time_with_events(**q, c.warmup, c.reps, c.copies_per_sample,
                                    [&] { return (*q)->copy((*b)->data(), (*a)->data(), n); });
    if (!samples) {
      return failed(key(), r.device, samples.error());
    }
    if (auto s = check_device(to, **b, 41, "peer memory"); !s) {
      return failed(key(), r.device, s.error());
    }
    // Without an NVLink model here the PCIe path through the host bounds a peer copy.
    const PathKind kind =
        c.link_kind == PathKind::kEmulatedLink ? PathKind::kEmulatedLink : PathKind::kPciePeer;
    if (auto s = finish(r, c.bytes * static_cast<std::uint64_t>(c.copies_per_sample), *samples,
                        c.peak_bytes_per_second, kind);
        !s) {
      return failed(key(), r.device, s.error());
    }
    return r;
  }
};

class SmallCopiesCase final : public Case {
 public:
  explicit SmallCopiesCase(bool batched) : batched_(batched) {}
  std::string key() const override {
    return batched_ ? "small_copies_batched" : "small_copies_one_by_one";
  }
  std::string description() const override {
    return batched_ ? "many 4 KiB host-to-device copies packed by the engine into one transfer"
                    : "many 4 KiB host-to-device copies from pinned memory, one queued copy each";
  }
  std::string applies_to(const CaseContext& c) const override {
    return c.small_copies < 1 ? "no small copies requested" : std::string();
  }
  std::vector<BenchResult> run(const CaseContext& c) override {
    BenchResult r;
    r.case_key = key();
    r.device = c.device_name();
    constexpr std::size_t kItem = 4096;
    const auto count = static_cast<std::size_t>(c.small_copies);
    const std::size_t total = kItem * count;
    r.bytes = kItem;
    r.timer = kTimerHostClock;
    auto host =
        host_memory(*c.device, batched_ ? MemoryKind::kPageable : MemoryKind::kPinned, total);
    auto dbuf = c.device->allocate(total);
    if (!host || !dbuf) {
      return {failed(key(), r.device, Error{Errc::kDeviceError, "cannot allocate buffers"})};
    }
    fill_pattern(host->data(), total, 51);
    auto* dst = static_cast<unsigned char*>((*dbuf)->data());
    const auto* src = static_cast<const unsigned char*>(host->data());
    Result<std::vector<std::chrono::nanoseconds>> samples = std::vector<std::chrono::nanoseconds>{};
    if (batched_) {
      auto engine = transfer::Engine::create(*c.device, c.profile_for("small_copies"));
      if (!engine) {
        return {failed(key(), r.device, engine.error())};
      }
      transfer::CopyRecord last;
      samples = time_with_host_clock(1, c.reps, 1, [&]() -> Status {
        auto batch = (*engine)->batch();
        for (std::size_t i = 0; i < count; ++i) {
          ACCO_RETURN_IF_ERROR(batch.add(dst + i * kItem, src + i * kItem, kItem), "batch");
        }
        ACCO_ASSIGN_OR_RETURN(auto t, batch.submit());
        ACCO_ASSIGN_OR_RETURN(last, t.wait());
        return {};
      });
      r.strategy = fmt::format("batched: {} items in {} transfer(s)", last.items,
                               std::max<std::size_t>(last.chunks, 1));
    } else {
      auto q = c.device->create_queue();
      if (!q) {
        return {failed(key(), r.device, q.error())};
      }
      samples = time_with_host_clock(1, c.reps, 1, [&]() -> Status {
        for (std::size_t i = 0; i < count; ++i) {
          ACCO_RETURN_IF_ERROR((*q)->copy(dst + i * kItem, src + i * kItem, kItem), "copy");
        }
        return (*q)->synchronize();
      });
      r.strategy = fmt::format("one queued copy per item, {} items", count);
    }
    if (!samples) {
      return {failed(key(), r.device, samples.error())};
    }
    if (auto s = check_device(*c.device, **dbuf, 51, "device memory"); !s) {
      return {failed(key(), r.device, s.error())};
    }
    // Rates are total bytes per sample; the size column says what one copy was.
    if (auto s = finish(r, total, *samples, c.peak_bytes_per_second,
                        c.link_kind == PathKind::kEmulatedLink ? PathKind::kEmulatedLink
                                                               : PathKind::kPcieStaged);
        !s) {
      return {failed(key(), r.device, s.error())};
    }
    return {r};
  }

 private:
  bool batched_;
};

class HostMemcpyCase final : public Case {
 public:
  std::string key() const override { return "host_memcpy"; }
  std::string description() const override {
    return "one thread's memcpy between two pageable host buffers: the host-side limit of any "
           "staged copy";
  }
  std::string applies_to(const CaseContext&) const override { return {}; }
  std::vector<BenchResult> run(const CaseContext& c) override {
    BenchResult r;
    r.case_key = key();
    r.device = "host";
    r.bytes = c.bytes;
    r.timer = kTimerHostClock;
    r.strategy = "memcpy, 1 thread";
    const auto n = static_cast<std::size_t>(c.bytes);
    auto a = c.device->allocate_host(n, MemoryKind::kPageable);
    auto b = c.device->allocate_host(n, MemoryKind::kPageable);
    if (!a || !b) {
      return {failed(key(), r.device, Error{Errc::kDeviceError, "cannot allocate host buffers"})};
    }
    fill_pattern((*a)->data(), n, 61);
    std::memset((*b)->data(), 0, n);
    auto samples = time_with_host_clock(1, c.reps, 1, [&]() -> Status {
      std::memcpy((*b)->data(), (*a)->data(), n);
      return {};
    });
    if (!samples || !check_pattern((*b)->data(), n, 61)) {
      return {failed(key(), r.device, Error{Errc::kInternal, "host memcpy did not copy"})};
    }
    if (auto s = finish(r, c.bytes, *samples, 0, PathKind::kHostMemory); !s) {
      return {failed(key(), r.device, s.error())};
    }
    return {r};
  }
};

}  // namespace

std::unique_ptr<Case> peer_matrix_case() {
  return std::make_unique<PeerMatrixCase>();
}
std::unique_ptr<Case> small_copies_case(bool batched) {
  return std::make_unique<SmallCopiesCase>(batched);
}
std::unique_ptr<Case> host_memcpy_case() {
  return std::make_unique<HostMemcpyCase>();
}

bool runs_once_per_backend(const Case& c) {
  return c.key() == "p2p" || c.key() == "host_memcpy" || c.suite() == "storage";
}

}  // namespace acco::bench::detail
