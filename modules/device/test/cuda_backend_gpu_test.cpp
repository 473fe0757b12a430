// The CUDA backend on a GPU: data round trips for every pair of memory kinds, events, queue
// ordering, kind_of and registration. Registered twice (modules/device/CMakeLists.txt): on the real
// driver, where every test skips with the factory's reason when no GPU is usable
// (scripts/gpu-check runs them on a GPU machine), and on the fake driver (tests/fake_cuda): when
// ACCO_FAKE_CUDA_CONFIG names the fake's devices, the tests load the fake built beside them and a
// missing device is a failure, so none skips in CI.
#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <ostream>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/device/cuda_backend.hpp"
#include "acco/device/device.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::device {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

constexpr std::size_t kBytes = (1 << 20) + 3;  // odd, so no path relies on whole words

// Every test starts from a fresh backend and its first device, or skips with the factory's
// reason where no GPU is usable (never on the fake driver) or the backend is configured out;
// any other factory failure fails the test.
template <typename Base>
class WithCudaDevice : public Base {
 protected:
  void SetUp() override {
    const bool on_fake = std::getenv("ACCO_FAKE_CUDA_CONFIG") != nullptr;  // NOLINT
    auto made = on_fake ? make_cuda_backend(ACCO_FAKE_CUDA_PATH) : make_cuda_backend();
    if (!made.has_value()) {
      const Errc code = made.error().code;
      if (code == Errc::kUnsupported || (!on_fake && code == Errc::kUnavailable)) {
        GTEST_SKIP() << made.error().message;
      }
      FAIL() << made.error().message;
    }
    backend_ = std::move(*made);
    ASSERT_FALSE(backend_->devices().empty());
    device_ = backend_->devices().front();
  }

  std::unique_ptr<Backend> backend_;
  Device* device_ = nullptr;
};

using CudaBackendGpuTest = WithCudaDevice<::testing::Test>;

template <typename T>
std::optional<Errc> error_code(const Result<T>& result) {
  if (result.has_value()) {
    return std::nullopt;
  }
  return result.error().code;
}

std::vector<std::byte> pattern(std::size_t bytes, unsigned seed) {
  std::vector<std::byte> data(bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    data[i] = static_cast<std::byte>((i * 131 + seed * 17 + (i >> 12)) & 0xff);
  }
  return data;
}

// Memory of one kind, whichever way the device hands it out.
struct Region {
  std::unique_ptr<Buffer> buffer;
  std::vector<std::byte> user;  // backing store of a registration
  std::unique_ptr<Registration> registration;
  [[nodiscard]] std::byte* data() const {
    return static_cast<std::byte*>(buffer ? buffer->data() : registration->data());
  }
};

Result<Region> make_region(Device& device, MemoryKind kind, std::size_t bytes) {
  Region region;
  switch (kind) {
    case MemoryKind::kDevice: {
      ACCO_ASSIGN_OR_RETURN(region.buffer, device.allocate(bytes));
      break;
    }
    case MemoryKind::kRegistered: {
      region.user.resize(bytes);
      ACCO_ASSIGN_OR_RETURN(region.registration, device.register_host(region.user.data(), bytes));
      break;
    }
    default: {
      ACCO_ASSIGN_OR_RETURN(region.buffer, device.allocate_host(bytes, kind));
      break;
    }
  }
  return region;
}

// Host-side contents of `region`, read through a device copy when the host cannot see it.
std::vector<std::byte> read_back(Device& device, const Region& region, MemoryKind kind,
                                 std::size_t bytes) {
  std::vector<std::byte> out(bytes);
  if (kind == MemoryKind::kDevice) {
    EXPECT_THAT(device.copy(out.data(), region.data(), bytes), IsOk());
  } else {
    std::memcpy(out.data(), region.data(), bytes);
  }
  return out;
}

void fill(Device& device, const Region& region, MemoryKind kind,
          const std::vector<std::byte>& data) {
  if (kind == MemoryKind::kDevice) {
    ASSERT_THAT(device.copy(region.data(), data.data(), data.size()), IsOk());
  } else {
    std::memcpy(region.data(), data.data(), data.size());
  }
}

// A host task that holds its queue until opened. It opens itself when destroyed, so a test that
// fails early never leaves a queue blocked in its destructor: declare it after the queue.
class Gate {
 public:
  [[nodiscard]] std::function<void()> task() const {
    return [opened = opened_] { opened.wait(); };
  }
  void open() {
    if (!is_open_) {
      is_open_ = true;
      promise_.set_value();
    }
  }
  Gate() = default;
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  ~Gate() { open(); }

 private:
  std::promise<void> promise_;
  std::shared_future<void> opened_ = promise_.get_future().share();
  bool is_open_ = false;
};

TEST_F(CudaBackendGpuTest, DescribesEveryDevice) {
  EXPECT_EQ(backend_->name(), "cuda");
  const std::regex pci("[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.0");
  int index = 0;
  for (Device* device : backend_->devices()) {
    const DeviceInfo& info = device->info();
    EXPECT_EQ(info.index, index++);
    EXPECT_EQ(info.backend, "cuda");
    EXPECT_FALSE(info.name.empty());
    EXPECT_TRUE(std::regex_match(info.pci, pci)) << info.pci;
    EXPECT_GE(info.numa_node, -1);
    EXPECT_GT(info.memory_bytes, 0U);
    EXPECT_GE(info.copy_engines, 1);
    EXPECT_EQ(info.link_bytes_per_second, 0);
  }
}

constexpr MemoryKind kAllKinds[] = {MemoryKind::kDevice, MemoryKind::kPageable, MemoryKind::kPinned,
                                    MemoryKind::kRegistered, MemoryKind::kMapped};

std::string kind_name(MemoryKind kind) {
  std::string name = to_string(kind);
  name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
  return name;
}

// One copy between two memory kinds, through Device::copy or a Queue.
struct CopyCase {
  MemoryKind src;
  MemoryKind dst;
  bool through_queue;
  [[nodiscard]] std::string name() const {
    return kind_name(src) + "To" + kind_name(dst) +
           (through_queue ? "ThroughQueue" : "ThroughDevice");
  }
  friend void PrintTo(const CopyCase& copy, std::ostream* os) { *os << copy.name(); }
};

std::vector<CopyCase> every_kind_pair() {
  std::vector<CopyCase> cases;
  for (MemoryKind src : kAllKinds) {
    for (MemoryKind dst : kAllKinds) {
      cases.push_back({src, dst, false});
      cases.push_back({src, dst, true});
    }
  }
  return cases;
}

class CudaBackendRoundTripGpuTest : public WithCudaDevice<::testing::TestWithParam<CopyCase>> {};

TEST_P(CudaBackendRoundTripGpuTest, CopiesEveryByte) {
  const auto [src_kind, dst_kind, through_queue] = GetParam();
  Device& device = *device_;
  auto src = make_region(device, src_kind, kBytes);
  ASSERT_THAT(src, IsOk());
  auto dst = make_region(device, dst_kind, kBytes);
  ASSERT_THAT(dst, IsOk());
  const auto expected = pattern(kBytes, 1);
  fill(device, *src, src_kind, expected);
  fill(device, *dst, dst_kind, pattern(kBytes, 2));

  if (!through_queue) {
    ASSERT_THAT(device.copy(dst->data(), src->data(), kBytes), IsOk());
  } else {
    auto queue = device.create_queue();
    ASSERT_THAT(queue, IsOk());
    ASSERT_THAT((*queue)->copy(dst->data(), src->data(), kBytes), IsOk());
    const auto synced = (*queue)->synchronize();
    ASSERT_THAT(synced, IsOk());
  }
  EXPECT_TRUE(read_back(device, *dst, dst_kind, kBytes) == expected);
}

INSTANTIATE_TEST_SUITE_P(EveryKindPair, CudaBackendRoundTripGpuTest,
                         ::testing::ValuesIn(every_kind_pair()),
                         [](const ::testing::TestParamInfo<CopyCase>& copy) {
                           return copy.param.name();
                         });

TEST_F(CudaBackendGpuTest, EventsTimeACopy) {
  Device& device = *device_;
  // 8 MiB: ~160 us on a GPU's link; the fake library's copy under ThreadSanitizer on a loaded
  // 2-core machine took 10.5 s for 64 MiB.
  constexpr std::size_t kLarge = 8 << 20;
  auto host = device.allocate_host(kLarge, MemoryKind::kPinned);
  auto gpu = device.allocate(kLarge);
  auto queue = device.create_queue();
  ASSERT_TRUE(host && gpu && queue);
  auto before = (*queue)->record();
  ASSERT_THAT((*queue)->copy((*gpu)->data(), (*host)->data(), kLarge), IsOk());
  auto after = (*queue)->record();
  ASSERT_TRUE(before && after);
  ASSERT_THAT((*after)->wait(), IsOk());
  EXPECT_TRUE((*after)->ready());
  EXPECT_TRUE((*before)->ready());
  const auto elapsed = (*after)->since(**before);
  ASSERT_THAT(elapsed, IsOk());
  // 8 MiB over any PCIe or NVLink-C2C link: well above 1 us, well below 10 s.
  EXPECT_GT(*elapsed, 1us);
  EXPECT_LT(*elapsed, 10s);
}

TEST_F(CudaBackendGpuTest, SinceRejectsIncompleteAndForeignEvents) {
  Device& device = *device_;
  auto queue = device.create_queue();
  ASSERT_THAT(queue, IsOk());
  auto start = (*queue)->record();
  Gate gate;
  ASSERT_THAT((*queue)->host_task(gate.task()), IsOk());
  auto end = (*queue)->record();
  ASSERT_TRUE(start && end);
  EXPECT_FALSE((*end)->ready());
  const auto early = (*end)->since(**start);
  ASSERT_THAT(early, StatusIs(Errc::kInvalidArgument));

  class ForeignEvent final : public Event {
   public:
    Status wait() override { return {}; }
    [[nodiscard]] bool ready() const override { return true; }
    [[nodiscard]] Result<std::chrono::nanoseconds> since(const Event&) const override {
      return std::chrono::nanoseconds(0);
    }
  };
  gate.open();
  ASSERT_THAT((*end)->wait(), IsOk());
  const auto foreign = (*end)->since(ForeignEvent());
  ASSERT_THAT(foreign, StatusIs(Errc::kInvalidArgument));
  const auto waited = (*queue)->wait(std::make_shared<ForeignEvent>());
  ASSERT_THAT(waited, StatusIs(Errc::kInvalidArgument));
}

TEST_F(CudaBackendGpuTest, QueueRunsCopiesAndHostTasksInSubmissionOrder) {
  Device& device = *device_;
  auto first = device.allocate_host(kBytes, MemoryKind::kPinned);
  auto second = device.allocate_host(kBytes, MemoryKind::kPinned);
  auto out = device.allocate_host(kBytes, MemoryKind::kPinned);
  auto gpu = device.allocate(kBytes);
  const auto one = pattern(kBytes, 1);
  const auto two = pattern(kBytes, 2);
  bool saw_first = false;
  // Last, so it drains before anything its host task reads goes away.
  auto queue = device.create_queue();
  ASSERT_TRUE(first && second && out && gpu && queue);
  std::memcpy((*first)->data(), one.data(), kBytes);
  std::memcpy((*second)->data(), two.data(), kBytes);
  Queue& q = **queue;
  void* out_data = (*out)->data();
  ASSERT_THAT(q.copy((*gpu)->data(), (*first)->data(), kBytes), IsOk());
  ASSERT_THAT(q.copy(out_data, (*gpu)->data(), kBytes), IsOk());
  ASSERT_THAT(q.host_task([&] { saw_first = std::memcmp(out_data, one.data(), kBytes) == 0; }),
              IsOk());
  ASSERT_THAT(q.copy((*gpu)->data(), (*second)->data(), kBytes), IsOk());
  ASSERT_THAT(q.copy(out_data, (*gpu)->data(), kBytes), IsOk());
  ASSERT_THAT(q.synchronize(), IsOk());
  EXPECT_TRUE(saw_first);
  EXPECT_EQ(std::memcmp(out_data, two.data(), kBytes), 0);
}

TEST_F(CudaBackendGpuTest, WaitOrdersOneQueueAfterAnEventOfAnother) {
  Device& device = *device_;
  auto in = device.allocate_host(kBytes, MemoryKind::kPinned);
  auto out = device.allocate_host(kBytes, MemoryKind::kPinned);
  auto gpu = device.allocate(kBytes);
  auto producer = device.create_queue();
  auto consumer = device.create_queue();
  ASSERT_TRUE(in && out && gpu && producer && consumer);
  const auto data = pattern(kBytes, 3);
  std::memcpy((*in)->data(), data.data(), kBytes);
  std::memset((*out)->data(), 0, kBytes);

  Gate gate;
  ASSERT_THAT((*producer)->host_task(gate.task()), IsOk());
  ASSERT_THAT((*producer)->copy((*gpu)->data(), (*in)->data(), kBytes), IsOk());
  auto produced = (*producer)->record();
  ASSERT_THAT(produced, IsOk());
  ASSERT_THAT((*consumer)->wait(*produced), IsOk());
  ASSERT_THAT((*consumer)->copy((*out)->data(), (*gpu)->data(), kBytes), IsOk());
  auto consumed = (*consumer)->record();
  ASSERT_THAT(consumed, IsOk());

  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE((*consumed)->ready());
  gate.open();
  ASSERT_THAT((*consumer)->synchronize(), IsOk());
  EXPECT_EQ(std::memcmp((*out)->data(), data.data(), kBytes), 0);
  ASSERT_THAT((*producer)->synchronize(), IsOk());
}

TEST_F(CudaBackendGpuTest, HostTaskFailureReachesLaterEventsAndSynchronizeOnce) {
  Device& device = *device_;
  auto queue = device.create_queue();
  ASSERT_THAT(queue, IsOk());
  auto before = (*queue)->record();
  ASSERT_THAT((*queue)->host_task([] { throw std::runtime_error("boom"); }), IsOk());
  auto after = (*queue)->record();
  ASSERT_TRUE(before && after);
  EXPECT_THAT((*before)->wait(), IsOk());
  const auto failed = (*after)->wait();
  ASSERT_THAT(failed, StatusIs(Errc::kInternal));
  EXPECT_THAT(failed.error().message, HasSubstr("boom"));
  EXPECT_EQ(error_code((*queue)->synchronize()), Errc::kInternal);
  // Reported once, as on the host backend; events recorded before keep reporting it.
  EXPECT_THAT((*queue)->synchronize(), IsOk());
  EXPECT_THAT((*after)->wait(), Not(IsOk()));
  auto later = (*queue)->record();
  ASSERT_THAT(later, IsOk());
  EXPECT_THAT((*later)->wait(), IsOk());
  EXPECT_EQ(error_code((*queue)->host_task(std::function<void()>())), Errc::kInvalidArgument);
}

TEST_F(CudaBackendGpuTest, KindOfTellsEveryKindApart) {
  Device& device = *device_;
  for (MemoryKind kind : kAllKinds) {
    auto region = make_region(device, kind, kBytes);
    ASSERT_THAT(region, IsOk()) << to_string(kind);
    EXPECT_EQ(device.kind_of(region->data()), kind) << to_string(kind);
    EXPECT_EQ(device.kind_of(region->data() + kBytes - 1), kind) << to_string(kind);
    if (region->buffer) {
      EXPECT_EQ(region->buffer->kind(), kind);
      EXPECT_EQ(region->buffer->host_accessible(), kind != MemoryKind::kDevice);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(region->data()) % 4096, 0U) << to_string(kind);
    }
  }
  int on_stack = 0;
  EXPECT_EQ(device.kind_of(&on_stack), MemoryKind::kPageable);
  EXPECT_EQ(device.kind_of(nullptr), MemoryKind::kPageable);
}

TEST_F(CudaBackendGpuTest, RegisterHostPinsInPlaceAndRefusesOverlaps) {
  Device& device = *device_;
  std::vector<std::byte> user(16 << 20);
  {
    auto registration = device.register_host(user.data(), user.size());
    ASSERT_THAT(registration, IsOk());
    EXPECT_EQ((*registration)->data(), user.data());
    EXPECT_EQ((*registration)->size(), user.size());
    EXPECT_GT((*registration)->pin_time(), 0ns);
    EXPECT_EQ(device.kind_of(user.data() + 4096), MemoryKind::kRegistered);
    const auto overlapping = device.register_host(user.data() + 4096, 4096);
    ASSERT_THAT(overlapping, StatusIs(Errc::kInvalidArgument));
  }
  EXPECT_EQ(device.kind_of(user.data()), MemoryKind::kPageable);
  auto again = device.register_host(user.data(), user.size());
  EXPECT_THAT(again, IsOk());
  EXPECT_EQ(error_code(device.register_host(nullptr, 16)), Errc::kInvalidArgument);
}

TEST_F(CudaBackendGpuTest, CopiesRejectBadArguments) {
  Device& device = *device_;
  auto gpu = device.allocate(kBytes);
  auto host = device.allocate_host(kBytes, MemoryKind::kPinned);
  auto queue = device.create_queue();
  ASSERT_TRUE(gpu && host && queue);
  auto* g = static_cast<std::byte*>((*gpu)->data());
  auto* h = static_cast<std::byte*>((*host)->data());
  for (Queue* q : {queue->get(), static_cast<Queue*>(nullptr)}) {
    auto copy = [&](void* dst, const void* src, std::size_t bytes) {
      return q != nullptr ? q->copy(dst, src, bytes) : device.copy(dst, src, bytes);
    };
    EXPECT_EQ(error_code(copy(nullptr, h, 16)), Errc::kInvalidArgument);
    EXPECT_EQ(error_code(copy(g, nullptr, 16)), Errc::kInvalidArgument);
    EXPECT_EQ(error_code(copy(h + 8, h, 16)), Errc::kInvalidArgument);
    const auto past_end = copy(g + 8, h, kBytes);
    ASSERT_THAT(past_end, StatusIs(Errc::kInvalidArgument));
    EXPECT_THAT(past_end.error().message, HasSubstr("past the end"));
    EXPECT_EQ(error_code(copy(g, h + 1, kBytes)), Errc::kInvalidArgument);
    EXPECT_THAT(copy(g, h, 0), IsOk());
  }
  EXPECT_THAT((*queue)->synchronize(), IsOk());
}

TEST_F(CudaBackendGpuTest, AllocationsFailWithClearErrors) {
  Device& device = *device_;
  EXPECT_EQ(error_code(device.allocate(0)), Errc::kInvalidArgument);
  EXPECT_EQ(error_code(device.allocate_host(0, MemoryKind::kPinned)), Errc::kInvalidArgument);
  EXPECT_EQ(error_code(device.allocate_host(64, MemoryKind::kDevice)), Errc::kInvalidArgument);
  EXPECT_EQ(error_code(device.allocate_host(64, MemoryKind::kRegistered)), Errc::kInvalidArgument);
  const auto huge = device.allocate(std::size_t{1} << 50);  // 1 PiB
  ASSERT_THAT(huge, StatusIs(Errc::kDeviceError));
  EXPECT_THAT(huge.error().message, HasSubstr("cuMemAlloc_v2: "));
  // An out-of-memory error is not sticky: the device still works.
  auto small = device.allocate(4096);
  EXPECT_THAT(small, IsOk());
}

}  // namespace
}  // namespace acco::device
