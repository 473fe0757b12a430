// The PCIe link under a data directory or file: its NVMe namespaces mapped to their controllers
// and the controllers' links, the peak a storage benchmark's reads are judged against. Pure: it
// reads only the Machine.
#pragma once

#include <string>
#include <vector>

#include "acco/topo/machine.hpp"

namespace acco::topo {

struct StorageLink {
  // One direction, after line encoding (link_bytes_per_second): the narrowest current link from
  // the controller to the CPU, summed over the distinct controllers below the path (striped
  // reads reach the sum; a linear volume reads one drive at a time). 0 when no link is known.
  double bytes_per_second = 0;
  // What the peak is ("nvme1n1 on nvme1 at 0000:c1:00.0, Gen4 x4, 7.88 GB/s") or, when 0, why
  // there is none ("no NVMe link under /data/x: /dev/vda (ext4)").
  std::string source;
  std::vector<std::string> controllers;  // their PCI addresses, in namespace order
  bool operator==(const StorageLink&) const = default;
};

// The link under machine.data_dir (read_data_dir), once annotate_links has run. Never fails:
// without a data directory, a known mount, an NVMe namespace, a PCIe controller or a known link
// the rate is 0 and `source` says which was missing.
[[nodiscard]] StorageLink storage_link(const Machine& machine);

}  // namespace acco::topo
