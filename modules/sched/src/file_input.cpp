#include "acco/sched/file_input.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "acco/transfer/engine.hpp"

namespace acco::sched {

struct FileLoader::State {
  struct PerDevice {
    std::unique_ptr<transfer::Engine> engine;
    std::unique_ptr<io::Reader> reader;
  };
  io::ReaderOptions options;
  mutable std::mutex mutex;
  std::map<device::Device*, std::shared_ptr<PerDevice>> devices;
  std::uint64_t bytes = 0;
  std::vector<std::string> notes;

  // The device's reader, created at its first load. Throws with the reason when it cannot be.
  std::shared_ptr<PerDevice> on(device::Device& device) {
    const std::lock_guard lock(mutex);
    auto& slot = devices[&device];
    if (!slot) {
      auto engine = transfer::Engine::create(device);
      if (!engine) {
        throw std::runtime_error("file load: " + engine.error().message);
      }
      auto reader = io::Reader::create(device, options, engine->get());
      if (!reader) {
        throw std::runtime_error("file load: " + reader.error().message);
      }
      slot = std::make_shared<PerDevice>(PerDevice{std::move(*engine), std::move(*reader)});
    }
    return slot;
  }

  void done(const io::ReadStats& stats) {
    const std::lock_guard lock(mutex);
    bytes += stats.bytes;
    for (const auto& n : stats.notes) {
      if (std::find(notes.begin(), notes.end(), n) == notes.end()) {
        notes.push_back(n);
      }
    }
  }
};

FileLoader::FileLoader(io::ReaderOptions options, std::vector<std::string> kinds)
    : state_(std::make_shared<State>()), kinds_(std::move(kinds)) {
  state_->options = options;
}

Task FileLoader::task(io::FileRange range, DataHandle out) const {
  // Each task carries its range in its own codelet (the implementation is a closure over it),
  // which holds the loader's state weakly: tasks keep neither the loader nor its readers alive.
  auto codelet = std::make_shared<Codelet>();
  codelet->type = "file_load";
  std::weak_ptr<State> weak = state_;
  const Implementation load = [weak, range](TaskContext& ctx) {
    const auto state = weak.lock();
    if (!state) {
      throw std::runtime_error("file load: the FileLoader is gone");
    }
    const auto device = state->on(ctx.dev());
    auto stats = device->reader->read_to_device(ctx.data(0), ctx.bytes(0), {range});
    if (!stats) {
      throw std::runtime_error(stats.error().message);
    }
    if (stats->bytes != ctx.bytes(0)) {
      throw std::runtime_error(
          fmt::format("{}: the range at offset {} is {} bytes, the task's "
                      "buffer {}",
                      range.path, range.offset, stats->bytes, ctx.bytes(0)));
    }
    state->done(*stats);
  };
  for (const auto& kind : kinds_) {
    codelet->implementations.emplace_back(kind, load);
  }
  Task t;
  t.codelet = std::move(codelet);
  t.name = fmt::format("load {}@{}", range.path, range.offset);
  t.accesses = {{out, Access::kWrite}};
  return t;
}

std::uint64_t FileLoader::bytes_loaded() const {
  const std::lock_guard lock(state_->mutex);
  return state_->bytes;
}

std::vector<std::string> FileLoader::notes() const {
  const std::lock_guard lock(state_->mutex);
  return state_->notes;
}

}  // namespace acco::sched
