#include "reader_measure.hpp"

#include <algorithm>
#include <utility>

#include "acco/core/stats.hpp"

namespace acco::tune::detail {

FileReadMeasure::FileReadMeasure(device::Device& device, transfer::Profile engine, std::string file,
                                 int reads)
    : device_(device), profile_(engine), file_(std::move(file)), reads_(std::max(1, reads)) {}

Result<double> FileReadMeasure::operator()(const io::ReaderOptions& options, std::uint64_t bytes) {
  if (!engine_) {
    ACCO_ASSIGN_OR_RETURN(engine_, transfer::Engine::create(device_, profile_), "engine");
  }
  if (!dst_ || dst_->size() < bytes) {
    dst_.reset();
    ACCO_ASSIGN_OR_RETURN(dst_, device_.allocate(bytes), "device memory");
  }
  ACCO_ASSIGN_OR_RETURN(auto reader, io::Reader::create(device_, options, engine_.get()));
  const std::vector<io::FileRange> ranges = {{file_, 0, bytes}};
  const auto read = [&] { return reader->read_to_device(dst_->data(), dst_->size(), ranges); };
  // The warm-up faults in the staging and the rings' first submissions.
  ACCO_ASSIGN_OR_RETURN(const auto warm, read(), "warm-up");
  for (const auto& note : warm.notes) {
    if (std::find(notes_.begin(), notes_.end(), note) == notes_.end()) {
      notes_.push_back(note);
    }
  }
  std::vector<double> seconds;
  for (int i = 0; i < reads_; ++i) {
    ACCO_ASSIGN_OR_RETURN(const auto s, read(), "read");
    seconds.push_back(s.seconds);
  }
  return core::stats::median_in_place(seconds);
}

}  // namespace acco::tune::detail
