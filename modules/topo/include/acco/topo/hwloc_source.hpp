// The CPU, cache, package and NUMA topology, and where each PCI function sits, as libhwloc reads
// them: from a file-system root (the live "/" or a sysroot, through hwloc's HWLOC_FSROOT), or
// from an XML export (`lstopo --of xml`, or the copy a snapshot carries). acco's own sysfs reader
// keeps what hwloc does not model (current vs maximum link, IB ports, IOMMU, ACS, drivers);
// merge_hwloc makes the two agree and says where they do not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/topo/machine.hpp"

namespace acco::topo {

enum class HwlocInputKind {
  kFsRoot,   // a directory holding sys/ and proc/ ("/" for this machine)
  kXmlFile,  // an hwloc XML export on disk
  kXmlText,  // an hwloc XML export in memory (a snapshot's)
};

struct HwlocInput {
  HwlocInputKind kind = HwlocInputKind::kFsRoot;
  std::string value;        // the root, the file, or the XML text
  bool export_xml = false;  // fill HwlocView::xml (for a snapshot); the export costs a walk
};

// One PCI function (or bridge) as hwloc lists it.
struct HwlocPci {
  std::string address;         // "0000:41:00.0"
  std::string parent;          // the upstream PCI bridge's address; empty below a host bridge
  std::string root_bus;        // "pci0000:40", from the host bridge above it
  std::uint16_t class_id = 0;  // class and subclass: 0x0302 (hwloc keeps no programming interface)
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::uint16_t subsystem_vendor_id = 0;
  std::uint16_t subsystem_device_id = 0;
  bool bridge = false;
  double link_bytes_per_second = 0;  // hwloc's linkspeed (GB/s) in bytes per second; 0: unknown
  // The NUMA node the function is local to; -1 when hwloc places it above several nodes or none.
  int numa_node = -1;
  std::vector<int> local_cpus;  // the CPUs of the object it hangs below
  // Its OS devices by hwloc's kind (XML exports keep them): netdevs ("eth0") and block devices
  // ("nvme0n1"); RDMA devices ("mlx5_0") carry no port state and are left out.
  std::vector<std::string> net_interfaces;
  std::vector<std::string> block_devices;
  bool operator==(const HwlocPci&) const = default;
};

// One package (socket) as hwloc keeps it.
struct HwlocPackage {
  int id = -1;  // the OS's physical_package_id; hwloc's logical index when the OS gave none
  std::vector<int> cpus;
  bool operator==(const HwlocPackage&) const = default;
};

// What hwloc read.
struct HwlocView {
  CpuTopology cpu;                     // counts and caches; `disagreements` left for merge_hwloc
  std::vector<NumaNode> numa_nodes;    // by OS index; `distances` from hwloc's distance matrix
  std::vector<HwlocPackage> packages;  // by id
  std::vector<HwlocPci> pci;           // sorted by address
  std::string xml;       // hwloc's XML export (snapshots keep it), with HwlocInput::export_xml
  std::string hostname;  // the export's HostName and OSRelease, when it has them
  std::string kernel;
};

// hwloc's view of `input`. kNotFound: an XML file that does not exist; kInvalidArgument: a file or
// text hwloc cannot load as XML; kUnavailable: hwloc failed on a file-system root. Messages name
// the input. GPU-vendor plugins (CUDA, NVML, OpenCL, ROCm SMI, Level Zero) are never loaded, and
// for a root other than "/" neither is x86 CPUID (it would read this machine's CPU).
[[nodiscard]] Result<HwlocView> discover_hwloc(const HwlocInput& input);

// Merges hwloc's view into a machine read by acco's sysfs reader: the CPU topology, each NUMA
// node's package, and a device's NUMA node where sysfs could not tell; every difference between
// the two is recorded in machine.cpu.disagreements with its reason.
void merge_hwloc(Machine& machine, const HwlocView& view);

// A machine from hwloc's view alone (`acco probe --hwloc-xml`): NUMA nodes, packages, PCI
// functions with their class and locality, links from hwloc's linkspeed. What an XML export does
// not hold (link generation and width, maximum links, drivers, IOMMU, ACS, InfiniBand ports) is
// unknown, and machine.sysfs_read is false.
[[nodiscard]] Machine machine_from_hwloc(const HwlocView& view, std::string origin);

}  // namespace acco::topo
