// The tuner's measurement of the storage reader: reads of one file into pinned staging with
// io::Reader::read_discard (what the storage path alone delivers, as fio measures it), a Reader
// built per candidate, timed by the reader's own first-submission-to-last-delivery clock.
#pragma once

#include <string>
#include <vector>

#include "acco/dev/device.hpp"
#include "acco/io/reader.hpp"

namespace acco::tune::detail {

class FileReadMeasure {
 public:
  // `device` pins the staging and must outlive this; `reads` timed per measurement after one
  // untimed warm-up.
  FileReadMeasure(dev::Device& device, std::string file, int reads);

  // Seconds of one read of the first `bytes` of the file (median). The reader's errors as they
  // are (kInvalidArgument for bad options, kNotFound for a missing file, kDeviceError for EIO).
  [[nodiscard]] Result<double> operator()(const io::ReaderOptions& options, std::uint64_t bytes);

  // The reader's fallbacks seen so far (buffered reads where O_DIRECT is refused, ...), once each.
  [[nodiscard]] const std::vector<std::string>& notes() const { return notes_; }

 private:
  dev::Device& device_;
  std::string file_;
  int reads_;
  std::vector<std::string> notes_;
};

}  // namespace acco::tune::detail
