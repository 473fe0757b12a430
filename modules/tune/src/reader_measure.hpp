// The tuner's measurement of the storage reader: reads of one file into device memory through the
// reader's pipeline and the transfer engine (io::Reader::read_to_device, what storage_h2d and
// sched::FileLoader do), a Reader built per candidate, timed by the reader's own
// first-submission-to-last-delivery clock. Reads into staging alone (read_discard) would choose
// shallow queues whose reads wait on each chunk's DMA once a device is behind them: a point that
// won on read_discard read 20 % slower in storage_h2d on the CI VM (issue 17 note).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "acco/device/device.hpp"
#include "acco/io/reader.hpp"
#include "acco/transfer/engine.hpp"
#include "acco/transfer/profile.hpp"

namespace acco::tune::detail {

class FileReadMeasure {
 public:
  // `device` pins the staging, holds the destination and must outlive this; `engine` is the
  // engine profile the chunks move with (the device's h2d_pinned choice: staging is pinned);
  // `reads` timed per measurement after one untimed warm-up.
  FileReadMeasure(device::Device& device, transfer::Profile engine, std::string file, int reads);

  // Seconds of one read of the first `bytes` of the file into device memory (median). The
  // reader's and the engine's errors as they are (kInvalidArgument for bad options, kNotFound for
  // a missing file, kDeviceError for EIO or a device that cannot hold `bytes`).
  [[nodiscard]] Result<double> operator()(const io::ReaderOptions& options, std::uint64_t bytes);

  // The reader's fallbacks seen so far (buffered reads where O_DIRECT is refused, ...), once each.
  [[nodiscard]] const std::vector<std::string>& notes() const { return notes_; }

 private:
  device::Device& device_;
  transfer::Profile profile_;
  std::unique_ptr<transfer::Engine> engine_;
  std::unique_ptr<device::Buffer> dst_;
  std::string file_;
  int reads_;
  std::vector<std::string> notes_;
};

}  // namespace acco::tune::detail
