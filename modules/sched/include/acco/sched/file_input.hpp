// Tasks whose output comes from a file (a dataset shard, a checkpoint): the range is read by the
// storage reader straight into the task's buffer on the device the runtime chose, through that
// device's transfer engine (file -> pinned staging -> device, the reads overlapping the DMA), so
// no pageable copy is made. The loads are tasks like any other: later tasks that read the
// handle wait for them, and the policy places them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "acco/io/reader.hpp"
#include "acco/sched/runtime.hpp"

namespace acco::sched {

class FileLoader {
 public:
  // Each device gets its own engine and reader (created at its first load) with `options`.
  // `kinds` are the device kinds the loads may run on (the runtime's DeviceSpec::kind, or the
  // backend's name).
  explicit FileLoader(io::ReaderOptions options = {},
                      std::vector<std::string> kinds = {"host", "cuda", "gpu", "cpu"});

  // A task that overwrites `out` with `range`; `out` must be as large as the range. The task
  // fails, naming the file and offset, when the read does (a short file, EIO, a missing file)
  // or the sizes differ. The loader must outlive the runtime's use of the task.
  [[nodiscard]] Task task(io::FileRange range, DataHandle out) const;

  // Bytes delivered by completed loads; the notes of the readers (fallbacks), once each.
  [[nodiscard]] std::uint64_t bytes_loaded() const;
  [[nodiscard]] std::vector<std::string> notes() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
  std::vector<std::string> kinds_;
};

}  // namespace acco::sched
