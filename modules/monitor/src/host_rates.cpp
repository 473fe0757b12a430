#include "acco/monitor/host_rates.hpp"

#include <algorithm>
#include <cstdint>

#include "acco/monitor/series_store.hpp"

namespace acco::monitor {
namespace {

constexpr double kHostNanosPerSecond = 1e9;

// 1 - (idle + iowait) / total between two /proc/stat readings.
std::optional<double> cpu_busy_ratio(const power::CpuTimes& before, const power::CpuTimes& now) {
  double total = 0;
  double idle = 0;
  for (const auto& [mode, seconds] : now.seconds) {
    const auto it = before.seconds.find(mode);
    const double delta = seconds - (it == before.seconds.end() ? 0 : it->second);
    total += delta;
    if (mode == "idle" || mode == "iowait") {
      idle += delta;
    }
  }
  if (total <= 0) {
    return std::nullopt;
  }
  return std::clamp(1 - idle / total, 0.0, 1.0);
}

struct Sums {
  std::optional<double> in;
  std::optional<double> out;
};

// Bytes per second summed over `counted` items of `now` that `before` has too, with counters
// that did not go backwards.
template <typename Item, typename In, typename Out>
Sums sum_rates(const std::vector<const Item*>& counted, const std::vector<Item>& before,
               double seconds, In in, Out out) {
  Sums sums;
  for (const Item* item : counted) {
    const auto it = std::find_if(before.begin(), before.end(),
                                 [&](const Item& b) { return b.name == item->name; });
    if (it == before.end() || in(*item) < in(*it) || out(*item) < out(*it)) {
      continue;
    }
    sums.in = sums.in.value_or(0) + static_cast<double>(in(*item) - in(*it)) / seconds;
    sums.out = sums.out.value_or(0) + static_cast<double>(out(*item) - out(*it)) / seconds;
  }
  return sums;
}

}  // namespace

HostRates host_rates(const power::HostSample& now, const power::HostSample* previous) {
  HostRates r;
  r.cpus = now.cpu.cpus;
  const auto total = now.memory_bytes.find("total");
  const auto available = now.memory_bytes.find("available");
  if (total != now.memory_bytes.end()) {
    r.memory_total_bytes = static_cast<double>(total->second);
    if (available != now.memory_bytes.end() && total->second >= available->second) {
      r.memory_used_bytes = static_cast<double>(total->second - available->second);
    }
  }

  // Virtual interfaces (bridges, bonds, VLANs, veth pairs, tunnels) carry bytes that also cross
  // a physical one, so only physical ones count where there are any.
  const bool any_physical = std::any_of(now.net.begin(), now.net.end(),
                                        [](const auto& n) { return n.physical && n.name != "lo"; });
  std::vector<const power::NetSample*> interfaces;
  for (const auto& n : now.net) {
    if (n.name == "lo") {
      r.interfaces_left_out.push_back(n.name + ": loopback");
    } else if (any_physical && !n.physical) {
      r.interfaces_left_out.push_back(n.name + ": virtual");
    } else {
      interfaces.push_back(&n);
      r.interfaces.push_back(n.name);
    }
  }
  // A dm or md device's I/O reaches its member disks too; zram is compressed memory.
  std::vector<const power::DiskSample*> disks;
  for (const auto& d : now.disks) {
    if (!d.members.empty()) {
      r.disks_left_out.push_back(d.name + ": built on other devices");
    } else if (d.name.starts_with("zram")) {
      r.disks_left_out.push_back(d.name + ": memory");
    } else {
      disks.push_back(&d);
      r.disks.push_back(d.name);
    }
  }

  if (previous == nullptr) {
    return r;
  }
  r.cpu_busy_ratio = cpu_busy_ratio(previous->cpu, now.cpu);
  if (now.time_unix_nanos <= previous->time_unix_nanos) {
    return r;
  }
  const double seconds =
      static_cast<double>(now.time_unix_nanos - previous->time_unix_nanos) / kHostNanosPerSecond;
  const auto net = sum_rates(
      interfaces, previous->net, seconds, [](const power::NetSample& n) { return n.rx_bytes; },
      [](const power::NetSample& n) { return n.tx_bytes; });
  r.network_receive_bytes_per_second = net.in;
  r.network_transmit_bytes_per_second = net.out;
  const auto io = sum_rates(
      disks, previous->disks, seconds, [](const power::DiskSample& d) { return d.read_bytes; },
      [](const power::DiskSample& d) { return d.written_bytes; });
  r.disk_read_bytes_per_second = io.in;
  r.disk_written_bytes_per_second = io.out;
  return r;
}

const std::vector<HostField>& host_fields() {
  static const std::vector<HostField> fields = {
      {kHostCpuBusyRatio, "ratio", &HostRates::cpu_busy_ratio},
      {kHostMemoryUsedBytes, "bytes", &HostRates::memory_used_bytes},
      {"host_network_receive_bytes_per_second", "bytes_per_second",
       &HostRates::network_receive_bytes_per_second},
      {"host_network_transmit_bytes_per_second", "bytes_per_second",
       &HostRates::network_transmit_bytes_per_second},
      {"host_disk_read_bytes_per_second", "bytes_per_second",
       &HostRates::disk_read_bytes_per_second},
      {"host_disk_written_bytes_per_second", "bytes_per_second",
       &HostRates::disk_written_bytes_per_second},
  };
  return fields;
}

const HostField* find_host_field(std::string_view name) {
  const auto& fields = host_fields();
  const auto it = std::find_if(fields.begin(), fields.end(),
                               [&](const HostField& f) { return f.name == name; });
  return it == fields.end() ? nullptr : &*it;
}

}  // namespace acco::monitor
