// The mount that holds a data directory: /proc/self/mountinfo parsed, the longest mount point
// above a path, and the NVMe namespaces below a mount's source device. Used by --data-dir.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "acco/core/fs.hpp"
#include "acco/core/result.hpp"
#include "acco/topo/machine.hpp"

namespace acco::topo {

// The lines of a mountinfo file (proc(5)) in file order, with the kernel's octal escapes (\040
// for a space, \011, \012, \134) undone. kInvalidArgument naming the line for one that does not
// have the fields and the " - " separator.
[[nodiscard]] Result<std::vector<Mount>> parse_mountinfo(std::string_view text);

// The mount holding absolute `path`: the longest mount point that is `path` or a directory above
// it, the last such line when several mounts stack on one point (the topmost). nullptr when none
// does (a table without "/").
[[nodiscard]] const Mount* mount_holding(const std::vector<Mount>& mounts, std::string_view path);

// "nvme0n1" for a device node or name of an NVMe namespace or its partition ("/dev/nvme0n1p2",
// "nvme0n1"); empty for anything else.
[[nodiscard]] std::string nvme_namespace_of(std::string_view device);

// Finds the mount holding `path` (absolute, in the namespace of `fs`) from `fs`'s
// /proc/self/mountinfo and the NVMe namespaces below its source: by the device's name, else
// through /sys/dev/block/MAJ:MIN and its slaves/ (LVM, dm-crypt, md RAID). Never fails: a missing
// or unparsable table leaves DataDir::unavailable saying why, and an unparsable one is also an
// input issue of `machine`. Sets machine.data_dir.
void read_data_dir(const core::Fs& fs, const std::string& path, Machine& machine);

}  // namespace acco::topo
