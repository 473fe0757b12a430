// What each link can carry. PCIe per-lane rates after line encoding (hwloc, kernel), the three
// bandwidths per device (capable, current, path-limited, as the kernel's pcie_bandwidth_available
// walks up the tree), and path classes between two devices in nvidia-smi's vocabulary.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/topo/machine.hpp"

namespace acco::topo {

// Usable bytes per second per lane, one direction: 2.5 GT/s -> 0.25e9 (8b/10b), 8 GT/s ->
// 0.985e9 (128b/130b), 64 GT/s -> 7.56e9 (FLIT 242/256). 0 for an unknown speed.
[[nodiscard]] double pcie_lane_bytes_per_second(double speed_gts);
// 1..7 for the standard rates, 0 when unknown.
[[nodiscard]] int pcie_generation(double speed_gts);
// Inverse of pcie_generation; 0 for an unknown generation.
[[nodiscard]] double pcie_speed_of_generation(int generation);
[[nodiscard]] double link_bytes_per_second(const PcieLink& link);
// "Gen5 x16" or "unknown".
[[nodiscard]] std::string describe(const PcieLink& link);

// Parses sysfs link speed text: "16.0 GT/s PCIe", "8 GT/s" (kernels <= 5.6), "2.5 GT/s".
// "Unknown" (link down or no capability) parses to 0. Anything else is kInvalidArgument.
[[nodiscard]] Result<double> parse_link_speed(std::string_view text);

// NVLink bandwidth per link and direction for an nvmlDeviceGetNvLinkVersion value
// (hwloc's table: 1.0 -> 20 GB/s, 2.x-4.0 -> 25 GB/s, 5.0 -> 50 GB/s).
[[nodiscard]] double nvlink_bytes_per_second(int nvml_version);

// True when `dev`'s link to its parent port is one inside a chipset or SoC (Intel's X722 in a
// Lewisburg PCH), not one through a slot: the device reports a faster current link than its port
// does for that one link. A trained link has one speed and one width, which both ends read from
// the same state; a chipset's internal port shows a fixed figure instead. Only the device end
// reading more counts: a GPU changing speed between the two reads could go either way.
[[nodiscard]] bool internal_link(const Machine& machine, const PciDevice& dev);

// Fills capable/current/path bandwidths of every PCI device. Behind an internal link (above)
// capable and path stay unknown (0): neither end's figure limits what the device carries.
void annotate_links(Machine& machine);

// Ordered from best to worst, as nvidia-smi topo -m prints them.
enum class PathClass {
  kSelf,
  kNvlink,
  kPix,
  kPxb,
  kPhb,
  kNode,
  kSys
};

struct Path {
  PathClass path_class = PathClass::kSys;
  int nvlinks = 0;                         // bonded NVLinks for kNvlink
  double bottleneck_bytes_per_second = 0;  // narrowest link crossed; 0 when unknown
  std::string bottleneck_at;               // device whose link is narrowest
  bool operator==(const Path&) const = default;
};

// The path between two PCI devices of `machine` (addresses must exist; see Machine::find).
[[nodiscard]] Path classify_path(const Machine& machine, const std::string& a,
                                 const std::string& b);
// "X", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS".
[[nodiscard]] std::string to_string(const Path& path);
[[nodiscard]] const char* to_string(PathClass path_class);

// One physical device: the PCI functions that share one link. A multi-function card (the two
// ports of a dual-port ConnectX, each its own mlx5 function) shows one function per port with
// the same domain:bus:device below the same parent port, and every function reports the one
// link they share.
struct PhysicalDevice {
  std::vector<const PciDevice*> functions;  // in address order; the first stands for the link
  [[nodiscard]] const PciDevice& first() const { return *functions.front(); }
  [[nodiscard]] std::vector<std::string> addresses() const;
};
// The physical devices of the GPUs, accelerators, NICs and NVMe drives, in the order of their
// first function, each holding only functions of one kind.
[[nodiscard]] std::vector<PhysicalDevice> physical_devices(const Machine& m);
// Addresses from `address` up to its root port, nearest first (the device itself excluded).
[[nodiscard]] std::vector<std::string> ancestors(const Machine& machine,
                                                 const std::string& address);

}  // namespace acco::topo
