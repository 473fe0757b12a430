// Where the machine to assess comes from, as `acco probe`'s, `acco doctor`'s and `acco sim`'s
// flags name it: this machine (under a sysroot), a snapshot replayed, an hwloc XML export or an
// NCCL topology file, each of which replaces the others; and the data directory to assess on it.
#pragma once

#include <string>

#include "acco/core/result.hpp"

namespace acco::topo {

struct MachineSource {
  std::string from;       // a snapshot to replay
  std::string hwloc_xml;  // an hwloc XML export
  std::string nccl_topo;  // an NCCL topology file
  std::string snapshot;   // where to record what the probe reads here
  std::string data_dir;   // the directory whose file system and drive to assess; empty: none
  std::string sysroot = "/";
  bool sysroot_given = false;  // on the command line, where the sources above would replace it
};

// `source` checked: two machines named at once are refused, each message naming both flags and
// why ("--from and --snapshot cannot be combined (a replay reads no live files)"). Returns the
// data directory to probe: on the live machine it must exist and is resolved through its links
// (so /data -> /mnt/nvme finds the mount that really holds it); inside a sysroot or snapshot it
// names a directory of that machine, not of this host, so it must be absolute and is only
// normalised. An export or a topology file holds no mounts: no data directory with them.
// kInvalidArgument.
[[nodiscard]] Result<std::string> check_machine_source(const MachineSource& source);

}  // namespace acco::topo
