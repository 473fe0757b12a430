// What a healthy data path reaches, as a fraction of its link's peak: one band per kind of path,
// each from published measurements (the sources are in expectations.cpp and docs/bench.md).
// verdict() turns a measured efficiency into "ok", "low" or "very low", so a number comes with
// an answer to "is this normal?".
#pragma once

#include <span>
#include <string_view>

#include "acco/bench/result.hpp"

namespace acco::bench {

enum class PathKind {
  kPcieCopyEngine,     // pinned or registered host memory <-> device, DMA by a copy engine
  kPciePageable,       // pageable host memory through the driver's own staging (plain copy)
  kPcieStaged,         // pageable host memory through acco's pipelined staging
  kPcieMappedRead,     // the device reads mapped host memory (zero-copy; SM "H2D")
  kPcieMappedWrite,    // the device writes mapped host memory (SM "D2H", posted writes)
  kPcieBidirectional,  // one direction, measured while the other direction is loaded
  kPciePeer,           // device <-> device over PCIe (P2P)
  kNvlinkCopyEngine,   // device <-> device over NVLink by a copy engine
  kEmulatedLink,       // the host backend's emulated link (no protocol overhead)
  kDeviceLocal,        // a copy inside one device's memory: its peak is not modelled
  kHostMemory,         // host memcpy: the host-side limit, no link to compare with
  kStorageRead,        // a file read from an NVMe drive, against the drive's PCIe link
};

enum class Verdict {
  kOk,
  kLow,
  kVeryLow,
  kUnknown,  // no peak, no band for this path kind, or an implausible efficiency
  // An emulated device (the host backend): the efficiency is against the lower of the emulated
  // link and the host's own copy measured after each case, and says nothing of a real device,
  // so no band is applied.
  kEmulated,
};

// Efficiency is median / peak of the crossed link, one direction.
struct Expectation {
  PathKind kind = PathKind::kHostMemory;
  std::string_view key;          // "pcie-copy-engine"
  std::string_view description;  // one line for reports and docs
  double ok_at_least = 0;        // efficiency >= this: ok; 0 when the path has no band
  double low_at_least = 0;       // >= this: low; below: very low
  std::string_view source;       // the measurements the band rests on
  [[nodiscard]] bool has_band() const { return ok_at_least > 0; }
};

// Above this efficiency the peak itself must be wrong (a link misreported by a VM, a wrong path
// kind), so the verdict is kUnknown rather than a reassuring kOk.
inline constexpr double kImplausibleEfficiency = 1.10;

// Every path kind, in the order of the enum. Static storage; thread-safe.
[[nodiscard]] std::span<const Expectation> expectations();
[[nodiscard]] const Expectation& expectation(PathKind kind);

// kUnknown when the kind has no band, or efficiency is not finite, <= 0 or above
// kImplausibleEfficiency; kEmulated for kEmulatedLink with any positive finite efficiency; else by
// the kind's band. Pure.
[[nodiscard]] Verdict verdict(PathKind kind, double efficiency);

// "ok", "low", "very low", "unknown", "emulated"
[[nodiscard]] const char* to_string(Verdict verdict);
[[nodiscard]] const char* to_string(PathKind kind);  // the expectation's key

// Sets result.efficiency (median / peak, 0 when either is unknown or the case did not run) and
// result.verdict from the band of `kind`. A median above the peak (but on kEmulatedLink, whose
// peaks are re-based instead) makes the efficiency 0 and the verdict kUnknown, and peak_source
// says the peak is wrong: no efficiency above 100 % is reported.
void assess(BenchResult& result, PathKind kind);

}  // namespace acco::bench
