#include "acco/device/host_backend.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/device/device.hpp"
#include "acco/testing/matchers.hpp"

#include "host/host_device.hpp"

namespace acco::device {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMiB = std::size_t{1} << 20;

std::unique_ptr<Backend> make_backend(const HostBackendOptions& options = {}) {
  Result<std::unique_ptr<Backend>> backend = make_host_backend(options);
  EXPECT_THAT(backend, IsOk());
  return backend ? std::move(*backend) : nullptr;
}

HostBackendOptions with_link(double bytes_per_second, std::chrono::nanoseconds latency = 0ns) {
  HostBackendOptions options;
  options.link = EmulatedLink{"test", bytes_per_second, latency};
  return options;
}

std::unique_ptr<Queue> make_queue(Device& device) {
  Result<std::unique_ptr<Queue>> queue = device.create_queue();
  EXPECT_THAT(queue, IsOk());
  return queue ? std::move(*queue) : nullptr;
}

// Host or device memory of one kind, however that kind is obtained.
class Memory {
 public:
  Memory(Device& device, MemoryKind kind, std::size_t bytes) {
    if (kind == MemoryKind::kDevice) {
      buffer_ = std::move(device.allocate(bytes).value());
    } else if (kind == MemoryKind::kRegistered) {
      storage_.resize(bytes);
      registration_ = std::move(device.register_host(storage_.data(), bytes).value());
    } else {
      buffer_ = std::move(device.allocate_host(bytes, kind).value());
    }
  }
  std::byte* data() const {
    return buffer_ ? static_cast<std::byte*>(buffer_->data())
                   : static_cast<std::byte*>(registration_->data());
  }

 private:
  std::vector<std::byte> storage_;
  std::unique_ptr<Buffer> buffer_;
  std::unique_ptr<Registration> registration_;
};

// Bytes that differ from their neighbours and from other seeds.
std::vector<std::byte> pattern(std::size_t bytes, std::uint32_t seed) {
  std::vector<std::byte> data(bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    data[i] = static_cast<std::byte>((i * 2654435761U + seed) >> 7);
  }
  return data;
}

// memcpy and memcmp rather than loops: the sanitizers check them a range at a time.
void fill(std::byte* data, const std::vector<std::byte>& bytes) {
  std::memcpy(data, bytes.data(), bytes.size());
}

bool same(const std::byte* a, const std::byte* b, std::size_t bytes) {
  return std::memcmp(a, b, bytes) == 0;
}

// Blocks the threads that wait until it is opened.
class Gate {
 public:
  void open() {
    {
      const std::lock_guard lock(mutex_);
      open_ = true;
    }
    opened_.notify_all();
  }
  bool wait(std::chrono::seconds timeout = 30s) {
    std::unique_lock lock(mutex_);
    return opened_.wait_for(lock, timeout, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable opened_;
  bool open_ = false;
};

// Every party waits until all have arrived (or the timeout passes, so a failure cannot hang).
class Rendezvous {
 public:
  explicit Rendezvous(int parties) : parties_(parties) {}
  bool arrive_and_wait() {
    std::unique_lock lock(mutex_);
    ++arrived_;
    all_arrived_.notify_all();
    return all_arrived_.wait_for(lock, 30s, [&] { return arrived_ >= parties_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable all_arrived_;
  int parties_;
  int arrived_ = 0;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

constexpr MemoryKind kAllKinds[] = {MemoryKind::kDevice, MemoryKind::kPageable, MemoryKind::kPinned,
                                    MemoryKind::kRegistered, MemoryKind::kMapped};

TEST(HostBackendTest, DataArrivesIntactForEveryPairOfKindsThroughQueueAndPlainCopy) {
  auto backend = make_backend();
  Device& device = *backend->devices()[0];
  auto queue = make_queue(device);
  // A whole staging chunk and a partial one.
  constexpr std::size_t kBytes = 3 * kMiB + 123;
  const std::vector<std::byte> first_data = pattern(kBytes, 7);
  const std::vector<std::byte> second_data = pattern(kBytes, 99);
  for (const MemoryKind from : kAllKinds) {
    for (const MemoryKind to : kAllKinds) {
      SCOPED_TRACE(std::string(to_string(from)) + " -> " + to_string(to));
      Memory source(device, from, kBytes);
      Memory there(device, to, kBytes);
      Memory back(device, from, kBytes);
      fill(source.data(), first_data);
      ASSERT_THAT(queue->copy(there.data(), source.data(), kBytes), IsOk());
      ASSERT_THAT(queue->copy(back.data(), there.data(), kBytes), IsOk());
      ASSERT_THAT(queue->synchronize(), IsOk());
      EXPECT_TRUE(same(there.data(), first_data.data(), kBytes));
      EXPECT_TRUE(same(back.data(), first_data.data(), kBytes));

      fill(source.data(), second_data);
      ASSERT_THAT(device.copy(there.data(), source.data(), kBytes), IsOk());
      ASSERT_THAT(device.copy(back.data(), there.data(), kBytes), IsOk());
      EXPECT_TRUE(same(back.data(), second_data.data(), kBytes));
    }
  }
}

TEST(HostBackendTest, DataArrivesIntactBetweenTwoDevices) {
  HostBackendOptions options = with_link(0);
  options.devices = 2;
  auto backend = make_backend(options);
  Device& first = *backend->devices()[0];
  Device& second = *backend->devices()[1];
  constexpr std::size_t kBytes = 3 * kMiB + 5;
  Memory a(first, MemoryKind::kDevice, kBytes);
  Memory b(second, MemoryKind::kDevice, kBytes);
  Memory back(first, MemoryKind::kDevice, kBytes);
  const std::vector<std::byte> data = pattern(kBytes, 3);
  fill(a.data(), data);
  auto queue = make_queue(first);
  ASSERT_THAT(queue->copy(b.data(), a.data(), kBytes), IsOk());
  ASSERT_THAT(queue->copy(back.data(), b.data(), kBytes), IsOk());
  ASSERT_THAT(queue->synchronize(), IsOk());
  EXPECT_TRUE(same(back.data(), data.data(), kBytes));
  EXPECT_EQ(first.kind_of(b.data()), MemoryKind::kDevice);
}

TEST(HostBackendTest, OperationsInOneQueueRunInSubmissionOrder) {
  // Latency makes every DMA slow, so an out-of-order run would show.
  auto backend = make_backend(with_link(1e9, 200us));
  Device& device = *backend->devices()[0];
  auto queue = make_queue(device);
  constexpr std::size_t kBytes = 64 * 1024;
  Memory source(device, MemoryKind::kPinned, kBytes);
  Memory on_device(device, MemoryKind::kDevice, kBytes);
  Memory result(device, MemoryKind::kPinned, kBytes);
  std::vector<int> seen;
  for (int i = 0; i < 20; ++i) {
    ASSERT_THAT(
        queue->host_task([&, i] { std::fill_n(source.data(), kBytes, static_cast<std::byte>(i)); }),
        IsOk());
    ASSERT_THAT(queue->copy(on_device.data(), source.data(), kBytes), IsOk());
    ASSERT_THAT(queue->copy(result.data(), on_device.data(), kBytes), IsOk());
    ASSERT_THAT(queue->host_task([&, i] {
      const bool all_i = std::all_of(result.data(), result.data() + kBytes,
                                     [&](std::byte b) { return b == static_cast<std::byte>(i); });
      seen.push_back(all_i ? i : -1);
    }),
                IsOk());
  }
  ASSERT_THAT(queue->synchronize(), IsOk());
  std::vector<int> expected(20);
  for (int i = 0; i < 20; ++i) {
    expected[static_cast<std::size_t>(i)] = i;
  }
  EXPECT_EQ(seen, expected);
}

TEST(HostBackendTest, QueuesRunConcurrentlyWithEachOther) {
  auto backend = make_backend();
  Device& device = *backend->devices()[0];
  auto first = make_queue(device);
  auto second = make_queue(device);
  Rendezvous rendezvous(2);
  bool first_met = false;
  bool second_met = false;
  ASSERT_THAT(first->host_task([&] { first_met = rendezvous.arrive_and_wait(); }), IsOk());
  ASSERT_THAT(second->host_task([&] { second_met = rendezvous.arrive_and_wait(); }), IsOk());
  ASSERT_THAT(first->synchronize(), IsOk());
  ASSERT_THAT(second->synchronize(), IsOk());
  EXPECT_TRUE(first_met);
  EXPECT_TRUE(second_met);
}

TEST(HostBackendTest, QueuesRunConcurrentlyWithTheSubmitter) {
  auto backend = make_backend();
  auto queue = make_queue(*backend->devices()[0]);
  Gate gate;
  bool opened = false;
  ASSERT_THAT(queue->host_task([&] { opened = gate.wait(); }), IsOk());
  Result<std::shared_ptr<Event>> event = queue->record();
  ASSERT_THAT(event, IsOk());
  EXPECT_FALSE((*event)->ready());
  gate.open();
  ASSERT_THAT((*event)->wait(), IsOk());
  EXPECT_TRUE((*event)->ready());
  EXPECT_TRUE(opened);
}

TEST(HostBackendTest, WaitingForAnEventOfAnotherQueueOrdersTheWork) {
  auto backend = make_backend();
  Device& device = *backend->devices()[0];
  auto producer = make_queue(device);
  auto consumer = make_queue(device);
  Gate gate;
  int value = 0;  // plain int: TSan checks that the event orders the two tasks
  int observed = -1;
  ASSERT_THAT(producer->host_task([&] {
    (void)gate.wait();
    value = 42;
  }),
              IsOk());
  Result<std::shared_ptr<Event>> produced = producer->record();
  ASSERT_THAT(produced, IsOk());
  ASSERT_THAT(consumer->wait(*produced), IsOk());
  ASSERT_THAT(consumer->host_task([&] { observed = value; }), IsOk());
  Result<std::shared_ptr<Event>> consumed = consumer->record();
  ASSERT_THAT(consumed, IsOk());
  EXPECT_FALSE((*consumed)->ready());
  gate.open();
  ASSERT_THAT(consumer->synchronize(), IsOk());
  EXPECT_EQ(observed, 42);
}

TEST(HostBackendTest, QueuesWaitingOnEachOthersEventsDoNotDeadlock) {
  auto backend = make_backend();
  Device& device = *backend->devices()[0];
  auto a = make_queue(device);
  auto b = make_queue(device);
  std::vector<int> order;
  std::mutex order_mutex;
  const auto note = [&](int step) {
    return [&, step] {
      const std::lock_guard lock(order_mutex);
      order.push_back(step);
    };
  };
  for (int round = 0; round < 10; ++round) {
    ASSERT_THAT(a->host_task(note(2 * round)), IsOk());
    ASSERT_THAT(b->wait(a->record().value()), IsOk());
    ASSERT_THAT(b->host_task(note(2 * round + 1)), IsOk());
    ASSERT_THAT(a->wait(b->record().value()), IsOk());
  }
  ASSERT_THAT(a->synchronize(), IsOk());
  ASSERT_THAT(b->synchronize(), IsOk());
  ASSERT_EQ(order.size(), 20U);
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
}

TEST(HostBackendTest, ErrorsOfOperationsReachEventsAndSynchronizeOnce) {
  auto backend = make_backend();
  Device& device = *backend->devices()[0];
  auto queue = make_queue(device);
  Result<std::shared_ptr<Event>> before = queue->record();
  ASSERT_THAT(queue->host_task([] { throw std::runtime_error("boom"); }), IsOk());
  ASSERT_THAT(queue->host_task([] { throw std::runtime_error("second"); }), IsOk());
  bool later_ran = false;
  ASSERT_THAT(queue->host_task([&] { later_ran = true; }), IsOk());
  Result<std::shared_ptr<Event>> after = queue->record();

  const Status status = queue->synchronize();
  ASSERT_THAT(status, StatusIs(Errc::kInternal));
  EXPECT_THAT(status.error().message, HasSubstr("boom"));
  EXPECT_TRUE(later_ran);
  EXPECT_THAT((*before)->wait(), IsOk());
  const Status at_event = (*after)->wait();
  ASSERT_THAT(at_event, Not(IsOk()));
  EXPECT_THAT(at_event.error().message, HasSubstr("boom"));

  // Reported once: the queue is usable again.
  EXPECT_THAT(queue->synchronize(), IsOk());
  EXPECT_THAT(queue->record().value()->wait(), IsOk());
}

TEST(HostBackendTest, BadCopiesAreRejectedWhenSubmitted) {
  auto backend = make_backend();
  Device& device = *backend->devices()[0];
  auto queue = make_queue(device);
  constexpr std::size_t kBytes = 8192;
  Memory on_device(device, MemoryKind::kDevice, kBytes);
  Memory pinned(device, MemoryKind::kPinned, kBytes);
  std::vector<std::byte> host(2 * kBytes);

  const auto expect_invalid = [](const Status& status, const std::string& words) {
    ASSERT_THAT(status, StatusIs(Errc::kInvalidArgument)) << words;
    EXPECT_THAT(status.error().message, HasSubstr(words));
  };
  expect_invalid(queue->copy(nullptr, host.data(), 1), "null destination");
  expect_invalid(queue->copy(host.data(), nullptr, 1), "null source");
  expect_invalid(queue->copy(host.data() + 100, host.data(), 200), "overlap");
  expect_invalid(queue->copy(on_device.data(), on_device.data() + 10, 100), "overlap");
  expect_invalid(queue->copy(on_device.data() + 1, host.data(), kBytes), "past the end");
  expect_invalid(queue->copy(host.data(), on_device.data(), kBytes + 1), "past the end");
  expect_invalid(queue->copy(pinned.data(), on_device.data(), kBytes + 1), "past the end");
  expect_invalid(device.copy(host.data(), on_device.data() + kBytes - 1, 2), "past the end");
  expect_invalid(queue->host_task(nullptr), "empty");
  expect_invalid(queue->wait(nullptr), "null event");

  EXPECT_THAT(queue->copy(nullptr, nullptr, 0), IsOk()) << "zero bytes is a no-op";
  EXPECT_THAT(queue->copy(on_device.data(), host.data(), 0), IsOk());
  EXPECT_THAT(queue->synchronize(), IsOk());
}

TEST(HostBackendTest, ACopyRunningPastARegistrationIsStagedAsPageable) {
  auto backend = make_backend();
  Device& device = *backend->devices()[0];
  constexpr std::size_t kBytes = 3 * 4096;
  std::vector<std::byte> host = pattern(2 * kBytes, 5);
  auto registration = device.register_host(host.data(), kBytes);
  ASSERT_THAT(registration, IsOk());
  Memory on_device(device, MemoryKind::kDevice, host.size());
  ASSERT_THAT(device.copy(on_device.data(), host.data(), host.size()), IsOk());
  EXPECT_TRUE(same(on_device.data(), host.data(), host.size()));
}

TEST(HostBackendTest, KindOfRecognisesEveryKindByAnyAddressInside) {
  HostBackendOptions options;
  options.devices = 2;
  auto backend = make_backend(options);
  Device& device = *backend->devices()[0];
  Device& other = *backend->devices()[1];
  constexpr std::size_t kBytes = 10000;  // not a whole number of pages
  for (const MemoryKind kind : kAllKinds) {
    SCOPED_TRACE(to_string(kind));
    Memory memory(device, kind, kBytes);
    EXPECT_EQ(device.kind_of(memory.data()), kind);
    EXPECT_EQ(device.kind_of(memory.data() + kBytes / 2), kind);
    EXPECT_EQ(device.kind_of(memory.data() + kBytes - 1), kind);
    EXPECT_EQ(device.kind_of(memory.data() + kBytes), MemoryKind::kPageable);
    // One address space per backend, like unified addressing.
    EXPECT_EQ(other.kind_of(memory.data()), kind);
  }
  int on_stack = 0;
  EXPECT_EQ(device.kind_of(&on_stack), MemoryKind::kPageable);
  EXPECT_EQ(device.kind_of(nullptr), MemoryKind::kPageable);

  auto buffer = device.allocate_host(kBytes, MemoryKind::kPinned).value();
  const void* freed = buffer->data();
  EXPECT_EQ(buffer->kind(), MemoryKind::kPinned);
  EXPECT_TRUE(buffer->host_accessible());
  buffer.reset();
  EXPECT_EQ(device.kind_of(freed), MemoryKind::kPageable);
}

TEST(HostBackendTest, BuffersArePageAlignedAndReportTheirSize) {
  auto backend = make_backend();
  Device& device = *backend->devices()[0];
  for (const MemoryKind kind : {MemoryKind::kPageable, MemoryKind::kPinned, MemoryKind::kMapped}) {
    auto buffer = device.allocate_host(100, kind).value();
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer->data()) % 4096, 0U);
    EXPECT_EQ(buffer->size(), 100U);
    EXPECT_EQ(buffer->kind(), kind);
  }
  auto on_device = device.allocate(100).value();
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(on_device->data()) % 4096, 0U);
  EXPECT_EQ(on_device->kind(), MemoryKind::kDevice);
  EXPECT_TRUE(on_device->host_accessible());
}

TEST(HostBackendTest, AllocatingBeyondTheBudgetIsADeviceError) {
  HostBackendOptions options;
  options.memory_bytes_per_device = 1 * kMiB;
  auto backend = make_backend(options);
  Device& device = *backend->devices()[0];
  auto first = device.allocate(kMiB / 2);
  ASSERT_THAT(first, IsOk());
  auto second = device.allocate(kMiB / 2);
  ASSERT_THAT(second, IsOk());
  auto third = device.allocate(1);
  ASSERT_THAT(third, StatusIs(Errc::kDeviceError));
  EXPECT_THAT(third.error().message, HasSubstr("out of device memory"));
  auto huge = device.allocate(SIZE_MAX);
  ASSERT_THAT(huge, StatusIs(Errc::kDeviceError));

  first->reset();  // freeing returns its pages to the budget
  EXPECT_THAT(device.allocate(kMiB / 2), IsOk());
  // Host memory does not count against the device's budget.
  EXPECT_THAT(device.allocate_host(2 * kMiB, MemoryKind::kPinned), IsOk());
}

TEST(HostBackendTest, BadAllocationsAreInvalidArguments) {
  auto backend = make_backend();
  Device& device = *backend->devices()[0];
  EXPECT_THAT(device.allocate(0), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(device.allocate_host(0, MemoryKind::kPinned), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(device.allocate_host(64, MemoryKind::kDevice), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(device.allocate_host(64, MemoryKind::kRegistered), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(device.register_host(nullptr, 64), StatusIs(Errc::kInvalidArgument));
  int value = 0;
  EXPECT_THAT(device.register_host(&value, 0), StatusIs(Errc::kInvalidArgument));
}

TEST(HostBackendTest, OverlappingRegistrationsAreRejected) {
  auto backend = make_backend();
  Device& device = *backend->devices()[0];
  std::vector<std::byte> host(4 * 4096);
  auto first = device.register_host(host.data(), 2 * 4096);
  ASSERT_THAT(first, IsOk());
  EXPECT_GE((*first)->pin_time().count(), 0);
  EXPECT_EQ((*first)->size(), 2U * 4096);

  auto overlapping = device.register_host(host.data() + 4096, 2 * 4096);
  ASSERT_THAT(overlapping, StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(overlapping.error().message, HasSubstr("overlaps registered memory"));
  EXPECT_THAT(device.register_host(host.data(), 1), Not(IsOk()));

  auto adjacent = device.register_host(host.data() + 2 * 4096, 2 * 4096);
  EXPECT_THAT(adjacent, IsOk()) << "touching ranges do not overlap";

  auto pinned = device.allocate_host(4096, MemoryKind::kPinned).value();
  EXPECT_THAT(device.register_host(pinned->data(), 4096), Not(IsOk()));

  first->reset();
  EXPECT_THAT(device.register_host(host.data(), 4096), IsOk());
}

TEST(HostBackendTest, AnEmulatedLinkBoundsTheCopyTimeFromBelow) {
  auto backend = make_backend(with_link(1e9));
  Device& device = *backend->devices()[0];
  auto queue = make_queue(device);
  constexpr std::size_t kBytes = 32 * kMiB;
  Memory source(device, MemoryKind::kPinned, kBytes);
  Memory on_device(device, MemoryKind::kDevice, kBytes);
  const auto start = Clock::now();
  ASSERT_THAT(queue->copy(on_device.data(), source.data(), kBytes), IsOk());
  ASSERT_THAT(queue->synchronize(), IsOk());
  EXPECT_GE(seconds_since(start), 0.99 * kBytes / 1e9);
}

TEST(HostBackendTest, PageableCopiesPayTheLatencyOfEveryStagedChunk) {
  auto backend = make_backend(with_link(0, 5ms));
  Device& device = *backend->devices()[0];
  constexpr std::size_t kBytes = 8 * kMiB;  // four 2 MiB chunks
  std::vector<std::byte> pageable(kBytes);
  Memory on_device(device, MemoryKind::kDevice, kBytes);
  const auto start = Clock::now();
  ASSERT_THAT(device.copy(on_device.data(), pageable.data(), kBytes), IsOk());
  EXPECT_GE(seconds_since(start), 4 * 0.005);
}

TEST(HostBackendTest, TheLinkIsSharedByAllQueuesOfADevice) {
  auto backend = make_backend(with_link(1e9));
  Device& device = *backend->devices()[0];
  constexpr std::size_t kBytes = 32 * kMiB;
  Memory first_source(device, MemoryKind::kPinned, kBytes);
  Memory second_source(device, MemoryKind::kPinned, kBytes);
  Memory first_target(device, MemoryKind::kDevice, kBytes);
  Memory second_target(device, MemoryKind::kDevice, kBytes);
  auto first = make_queue(device);
  auto second = make_queue(device);
  const auto start = Clock::now();
  ASSERT_THAT(first->copy(first_target.data(), first_source.data(), kBytes), IsOk());
  ASSERT_THAT(second->copy(second_target.data(), second_source.data(), kBytes), IsOk());
  ASSERT_THAT(first->synchronize(), IsOk());
  ASSERT_THAT(second->synchronize(), IsOk());
  EXPECT_GE(seconds_since(start), 0.99 * 2 * kBytes / 1e9);
}

TEST(HostBackendTest, CopyEnginesBoundTheTransfersInFlight) {
  HostBackendOptions options = with_link(0, 50ms);
  options.copy_engines = 1;
  auto backend = make_backend(options);
  Device& device = *backend->devices()[0];
  Memory source(device, MemoryKind::kPinned, 4096);
  Memory first_target(device, MemoryKind::kDevice, 4096);
  Memory second_target(device, MemoryKind::kDevice, 4096);
  auto first = make_queue(device);
  auto second = make_queue(device);
  const auto start = Clock::now();
  ASSERT_THAT(first->copy(first_target.data(), source.data(), 4096), IsOk());
  ASSERT_THAT(second->copy(second_target.data(), source.data(), 4096), IsOk());
  ASSERT_THAT(first->synchronize(), IsOk());
  ASSERT_THAT(second->synchronize(), IsOk());
  EXPECT_GE(seconds_since(start), 2 * 0.05);
}

TEST(HostBackendTest, TheTwoDirectionsOfTheLinkAreIndependent) {
  auto backend = make_backend(with_link(1e9));
  auto* device = dynamic_cast<host::HostDevice*>(backend->devices()[0]);
  ASSERT_NE(device, nullptr);
  // Book the host-to-device direction for a thousand seconds; nothing sleeps on the booking.
  const auto booked = device->to_device().reserve(std::size_t{1000} * 1'000'000'000);
  const auto other_direction = device->to_host().reserve(1);
  EXPECT_LT(other_direction.start, booked.end);
  const auto same_direction = device->to_device().reserve(1);
  EXPECT_GE(same_direction.start, booked.end);
}

TEST(HostBackendTest, CopiesInBothDirectionsAtOnceArriveIntact) {
  auto backend = make_backend(with_link(4e9));
  Device& device = *backend->devices()[0];
  constexpr std::size_t kBytes = 8 * kMiB;
  Memory up_source(device, MemoryKind::kPinned, kBytes);
  Memory up_target(device, MemoryKind::kDevice, kBytes);
  Memory down_source(device, MemoryKind::kDevice, kBytes);
  Memory down_target(device, MemoryKind::kPinned, kBytes);
  const std::vector<std::byte> up_data = pattern(kBytes, 1);
  const std::vector<std::byte> down_data = pattern(kBytes, 2);
  fill(up_source.data(), up_data);
  fill(down_source.data(), down_data);
  auto up = make_queue(device);
  auto down = make_queue(device);
  ASSERT_THAT(up->copy(up_target.data(), up_source.data(), kBytes), IsOk());
  ASSERT_THAT(down->copy(down_target.data(), down_source.data(), kBytes), IsOk());
  ASSERT_THAT(up->synchronize(), IsOk());
  ASSERT_THAT(down->synchronize(), IsOk());
  EXPECT_TRUE(same(up_target.data(), up_data.data(), kBytes));
  EXPECT_TRUE(same(down_target.data(), down_data.data(), kBytes));
}

TEST(HostBackendTest, APageableSourceMayBeReusedOnceQueueCopyReturns) {
  auto backend = make_backend(with_link(1e9));
  Device& device = *backend->devices()[0];
  auto queue = make_queue(device);
  constexpr std::size_t kBytes = 5 * kMiB;
  const std::vector<std::byte> original = pattern(kBytes, 11);
  std::vector<std::byte> pageable = original;
  Memory on_device(device, MemoryKind::kDevice, kBytes);
  ASSERT_THAT(queue->copy(on_device.data(), pageable.data(), kBytes), IsOk());
  std::fill(pageable.begin(), pageable.end(), std::byte{0});
  ASSERT_THAT(queue->synchronize(), IsOk());
  EXPECT_TRUE(same(on_device.data(), original.data(), kBytes));
}

TEST(HostBackendTest, EventTimesAreOrderedAndCoverTheWorkBetweenThem) {
  auto backend = make_backend(with_link(1e9));
  Device& device = *backend->devices()[0];
  auto queue = make_queue(device);
  constexpr std::size_t kBytes = 16 * kMiB;
  Memory source(device, MemoryKind::kPinned, kBytes);
  Memory on_device(device, MemoryKind::kDevice, kBytes);
  auto start = queue->record().value();
  ASSERT_THAT(queue->copy(on_device.data(), source.data(), kBytes), IsOk());
  auto end = queue->record().value();
  ASSERT_THAT(end->wait(), IsOk());
  ASSERT_TRUE(start->ready());

  const auto elapsed = end->since(*start);
  ASSERT_THAT(elapsed, IsOk());
  EXPECT_GE(elapsed->count(), static_cast<std::int64_t>(0.99 * kBytes));  // 1 byte per ns
  EXPECT_EQ(start->since(*start).value().count(), 0);
  EXPECT_LE(start->since(*end).value().count(), 0);

  auto other_queue = make_queue(device);
  auto later = other_queue->record().value();
  ASSERT_THAT(later->wait(), IsOk());
  EXPECT_GE(later->since(*start).value().count(), 0) << "queues of one device share a clock";
}

TEST(HostBackendTest, SinceRejectsIncompleteEventsAndEventsOfOtherDevices) {
  HostBackendOptions options;
  options.devices = 2;
  auto backend = make_backend(options);
  auto queue = make_queue(*backend->devices()[0]);
  auto other_queue = make_queue(*backend->devices()[1]);
  auto done = queue->record().value();
  ASSERT_THAT(done->wait(), IsOk());
  auto elsewhere = other_queue->record().value();
  ASSERT_THAT(elsewhere->wait(), IsOk());
  EXPECT_THAT(elsewhere->since(*done), StatusIs(Errc::kInvalidArgument));

  Gate gate;
  ASSERT_THAT(queue->host_task([&] { (void)gate.wait(); }), IsOk());
  auto pending = queue->record().value();
  EXPECT_THAT(pending->since(*done), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(done->since(*pending), StatusIs(Errc::kInvalidArgument));
  gate.open();
  ASSERT_THAT(queue->synchronize(), IsOk());
  EXPECT_THAT(pending->since(*done), IsOk());
}

TEST(HostBackendTest, DestroyingAQueueRunsTheWorkStillPending) {
  auto backend = make_backend(with_link(1e9, 1ms));
  Device& device = *backend->devices()[0];
  constexpr std::size_t kBytes = kMiB;
  Memory source(device, MemoryKind::kPinned, kBytes);
  Memory on_device(device, MemoryKind::kDevice, kBytes);
  std::atomic<int> tasks_run{0};
  auto queue = make_queue(device);
  for (int i = 0; i < 10; ++i) {
    ASSERT_THAT(queue->copy(on_device.data(), source.data(), kBytes), IsOk());
    ASSERT_THAT(queue->host_task([&] { ++tasks_run; }), IsOk());
  }
  auto event = queue->record().value();
  queue.reset();
  EXPECT_EQ(tasks_run.load(), 10);
  EXPECT_TRUE(event->ready());
  EXPECT_THAT(event->wait(), IsOk());
}

TEST(HostBackendTest, QueuesBuffersAndEventsMayOutliveTheBackend) {
  auto backend = make_backend(with_link(1e9));
  Device& device = *backend->devices()[0];
  auto queue = make_queue(device);
  auto buffer = device.allocate(kMiB).value();
  auto pinned = device.allocate_host(kMiB, MemoryKind::kPinned).value();
  ASSERT_THAT(device.copy(buffer->data(), pinned->data(), kMiB), IsOk());
  backend.reset();
  ASSERT_THAT(queue->copy(pinned->data(), buffer->data(), kMiB), IsOk());
  auto event = queue->record().value();
  EXPECT_THAT(queue->synchronize(), IsOk());
  EXPECT_TRUE(event->ready());
}

TEST(HostBackendTest, DeviceInfoDescribesTheEmulation) {
  HostBackendOptions options;
  options.devices = 2;
  options.link = parse_link("pcie4x16,2us").value();
  options.link.name = "pcie4x16";
  options.speed_factors = {0.5};
  options.memory_bytes_per_device = 8 * kMiB;
  options.copy_engines = 3;
  auto backend = make_backend(options);
  EXPECT_EQ(backend->name(), "host");
  ASSERT_EQ(backend->devices().size(), 2U);
  const DeviceInfo& info = backend->devices()[1]->info();
  EXPECT_EQ(info.index, 1);
  EXPECT_EQ(info.name, "host 1 (pcie4x16)");
  EXPECT_EQ(info.backend, "host");
  EXPECT_EQ(info.pci, "");
  EXPECT_EQ(info.memory_bytes, 8 * kMiB);
  EXPECT_DOUBLE_EQ(info.link_bytes_per_second, options.link.bytes_per_second);
  EXPECT_EQ(info.link_latency, 2us);
  EXPECT_EQ(info.copy_engines, 3);
  EXPECT_DOUBLE_EQ(info.speed_factor, 1.0);
  EXPECT_DOUBLE_EQ(backend->devices()[0]->info().speed_factor, 0.5);
  EXPECT_EQ(make_backend()->devices()[0]->info().name, "host 0 (unlimited)");
}

TEST(HostBackendTest, BadOptionsAreInvalidArguments) {
  const auto expect_invalid = [](const HostBackendOptions& options) {
    const auto backend = make_host_backend(options);
    ASSERT_THAT(backend, StatusIs(Errc::kInvalidArgument));
  };
  HostBackendOptions options;
  options.devices = 0;
  expect_invalid(options);
  options = {};
  options.copy_engines = 0;
  expect_invalid(options);
  options = {};
  options.speed_factors = {-1};
  expect_invalid(options);
  options = {};
  options.speed_factors = {1, 1};
  expect_invalid(options);
  options = {};
  options.link.bytes_per_second = -5;
  expect_invalid(options);
  options = {};
  options.link.latency = -1ns;
  expect_invalid(options);
}

TEST(MemoryKindTest, EveryKindHasAName) {
  EXPECT_STREQ(to_string(MemoryKind::kDevice), "device");
  EXPECT_STREQ(to_string(MemoryKind::kPageable), "pageable");
  EXPECT_STREQ(to_string(MemoryKind::kPinned), "pinned");
  EXPECT_STREQ(to_string(MemoryKind::kRegistered), "registered");
  EXPECT_STREQ(to_string(MemoryKind::kMapped), "mapped");
}

}  // namespace
}  // namespace acco::device
