// Predictions from the performance models, cached per model slot, and learning from run times
// in batches.
#include <chrono>

#include "runtime_core.hpp"

namespace acco::sched::detail {

std::optional<Prediction> RuntimeCore::predict_uncached(int device, const TaskState& task) const {
  const DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  ModelSlot& slot = model_slot(device, task);
  flush(slot);
  auto p = models_.predict(slot.key, task.cost, d.spec.peak);
  slot.calibrated = p && p->calibrated;
  slot.cached = p;
  slot.cached_s = p ? std::chrono::duration<double>(p->time).count() : 0;
  slot.cached_cost = task.cost;  // what an uncalibrated prediction (the prior) depended on
  slot.cached_valid = true;
  return p;
}

std::vector<ModelSlot>& RuntimeCore::model_slots(const TaskState& task) const {
  const std::uint64_t key = (static_cast<std::uint64_t>(task.codelet_id) << 8) |
                            static_cast<std::uint64_t>(task.size_class);
  if (key == last_slots_key_) {
    return *last_slots_;
  }
  auto [it, inserted] = model_slots_.try_emplace(key);
  last_slots_key_ = key;
  last_slots_ = &it->second;
  if (inserted) {
    it->second.resize(devices_.size());
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      it->second[d].key = ModelKey{task.codelet->type, devices_[d]->instance, task.size_class};
    }
  }
  return it->second;
}

void RuntimeCore::flush(ModelSlot& slot) const {
  if (!slot.pending.empty()) {
    models_.record_batch(slot.key, slot.pending);
    slot.pending.clear();
    // Known here, not only at the next prediction: a device may complete many tasks before
    // anyone predicts again (all placed at submit), and learn batches only calibrated samples.
    slot.calibrated = models_.calibrated(slot.key);
  }
}

void RuntimeCore::learn(int device, const TaskState& task, std::chrono::nanoseconds time) {
  ModelSlot& slot = model_slot(device, task);
  slot.pending.push_back(time);
  // Calibrated predictions are refreshed every kModelBatch samples: recomputing a median per
  // task would cost more than the scheduling decision itself.
  constexpr std::size_t kModelBatch = 16;
  // `calibrated` outlives the cache: a device that completes a batch of tasks in a row, with no
  // prediction in between, must not record each sample alone once the cache is reset.
  if (!slot.calibrated || slot.pending.size() >= kModelBatch) {
    flush(slot);
    slot.cached.reset();
    slot.cached_valid = false;
  }
}

}  // namespace acco::sched::detail
