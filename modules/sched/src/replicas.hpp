// Registered data as the runtime keeps it: the host copy and one replica per device, with what
// orders the tasks that use it (its last writer, the readers since).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "acco/device/device.hpp"
#include "acco/sched/runtime.hpp"

namespace acco::sched::detail {

struct Replica {
  std::unique_ptr<device::Buffer> buffer;  // null until first needed there
  bool valid = false;
  int pins = 0;           // running task, in-flight copy into or out of it, prefetch
  bool fetching = false;  // a prefetch into it is in flight
  std::uint64_t last_use = 0;
};

struct HandleState {
  void* host = nullptr;
  std::size_t bytes = 0;
  bool registered = false;
  bool host_valid = true;
  std::string lost;           // why no valid copy exists any more
  std::uint64_t version = 0;  // bumped by every completed write
  // A copy into host memory is in flight. Only one at a time: a stale write-back finishing after
  // a newer one would otherwise overwrite host memory already marked valid.
  bool host_writing = false;
  std::vector<Replica> replicas;  // one per device
  std::optional<TaskId> last_writer;
  std::vector<TaskId> readers_since;  // readers after last_writer
};

}  // namespace acco::sched::detail
