// Benchmark cases in the nvbandwidth shape: a stable key, a one-line description, a check of
// whether the case applies to this device and machine (a case that does not apply is reported
// as waived with the reason), and run(). A new case is one class plus one registry line.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acco/bench/expectations.hpp"
#include "acco/bench/result.hpp"
#include "acco/device/device.hpp"
#include "acco/io/reader.hpp"
#include "acco/topo/machine.hpp"
#include "acco/transfer/profile.hpp"

namespace acco::bench {

struct CaseContext {
  device::Device* device = nullptr;        // the device under test
  std::vector<device::Device*> devices;    // every device of the backend (peer cases)
  const topo::Machine* machine = nullptr;  // the probed machine; may be null
  // Peak per direction of the link between host and `device`, bytes per second: the emulated
  // link on the host backend, the topology's path bandwidth on a GPU; 0 when unknown.
  double peak_bytes_per_second = 0;
  PathKind link_kind = PathKind::kPcieCopyEngine;  // kEmulatedLink on the host backend
  std::uint64_t bytes = std::uint64_t{256} << 20;  // buffer size of bandwidth cases
  int warmup = 2;                                  // untimed copies before measuring
  int reps = 5;                                    // timed samples
  int copies_per_sample = 4;                       // copies inside one timed sample
  std::uint64_t sweep_max_bytes = std::uint64_t{1} << 30;
  int small_copies = 10000;  // items of the batched/one-by-one cases
  // The engine's profile for paths `acco tune` did not choose; none: the engine's defaults for
  // the device (transfer::default_profile).
  std::optional<transfer::Profile> profile;
  // The storage suite: the file read (created by the caller), and the NVMe link's peak per
  // direction when the file's drive is known (0 otherwise, topo::storage_link), with what that
  // peak is or why there is none ("no NVMe link under FILE: /dev/vda (ext4)").
  std::string storage_file;
  double storage_peak_bytes_per_second = 0;
  std::string storage_peak_source;
  bool quick = false;  // the storage suite sweeps fewer points
  // The storage reader's options `acco tune --file` chose: storage_h2d reads with them instead of
  // picking its point by a short sweep. None: the sweep.
  std::optional<io::ReaderOptions> reader_options;
  // Engine profiles `acco tune` chose, keyed "<device_name>/<path>" with the path as in the case
  // keys ("h2d_pageable", "d2h_pinned"); a path not listed uses `profile`.
  std::map<std::string, transfer::Profile> path_profiles;
  // The profile of this device's `path`: its path_profiles entry, else `profile`, else the
  // engine's defaults for the device.
  [[nodiscard]] transfer::Profile profile_for(std::string_view path) const;
  // Whether profile_for(path) is a profile acco tune chose (a path_profiles entry).
  [[nodiscard]] bool tuned(std::string_view path) const;
  // The device's name in results: its PCI address, or its name when it has none.
  [[nodiscard]] std::string device_name() const;
};

class Case {
 public:
  virtual ~Case() = default;
  [[nodiscard]] virtual std::string key() const = 0;
  [[nodiscard]] virtual std::string description() const = 0;
  // Empty when the case applies here; otherwise why not.
  [[nodiscard]] virtual std::string applies_to(const CaseContext& context) const = 0;
  // The suite the case belongs to: "transfer" (acco bench's default) or "storage".
  [[nodiscard]] virtual std::string suite() const { return "transfer"; }
  // One or more results (peer cases give one per pair). Failures become kStatusError results;
  // never throws.
  [[nodiscard]] virtual std::vector<BenchResult> run(const CaseContext& context) = 0;
};

// Every case, in report order. Built once; not thread-safe to mutate (nobody does).
[[nodiscard]] const std::vector<std::unique_ptr<Case>>& cases();

// Shell-style patterns ("h2d_*,sweep_*"): true when `key` matches one. An empty list matches all.
[[nodiscard]] bool matches(std::string_view key, const std::vector<std::string>& patterns);

}  // namespace acco::bench
