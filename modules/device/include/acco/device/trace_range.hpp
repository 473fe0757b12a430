// Names a stretch of acco's work on a profiler's timeline: an NVTX range in the domain "acco"
// (engine copies, runtime tasks) when the CUDA backend is built and a profiler such as Nsight
// Systems is attached; nothing otherwise. Without a profiler a range costs one branch: its name
// is not even built (TraceRange::lazy).
#pragma once

#include <string_view>
#include <utility>

namespace acco::device {

// NVTX support is compiled in (the CUDA backend is).
[[nodiscard]] bool trace_ranges_built();
// Ranges go somewhere: NVTX is compiled in and a profiler's injection library is named
// (NVTX_INJECTION64_PATH) or loaded. Decided on the first call; thread-safe.
[[nodiscard]] bool tracing();

// An open range, closed when destroyed or by close(). Ranges nest per thread: open and close one
// on the same thread, innermost first. Movable, not copyable.
class TraceRange {
 public:
  TraceRange() = default;  // closed
  // Opens a range called `name` when tracing().
  explicit TraceRange(std::string_view name);
  // Opens a range named by name() (anything convertible to std::string_view, such as a
  // std::string) only when tracing(), so an untraced run never formats it.
  template <typename NameFn>
  [[nodiscard]] static TraceRange lazy(NameFn&& name) {
    if (!tracing()) {
      return {};
    }
    return TraceRange(std::string_view(std::forward<NameFn>(name)()));
  }
  ~TraceRange() { close(); }
  TraceRange(TraceRange&& other) noexcept : open_(std::exchange(other.open_, false)) {}
  TraceRange& operator=(TraceRange&&) = delete;
  TraceRange(const TraceRange&) = delete;
  TraceRange& operator=(const TraceRange&) = delete;

  [[nodiscard]] bool open() const { return open_; }
  // Closes the range now; no-op when closed.
  void close() {
    if (open_) {
      pop();
      open_ = false;
    }
  }

 private:
  static void pop();
  bool open_ = false;
};

}  // namespace acco::device
