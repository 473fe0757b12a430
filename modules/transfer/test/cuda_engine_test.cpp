// The engine on the CUDA backend over the fake driver (tests/fake_cuda) when a device is lost in
// the middle of a copy: every strategy that stages through the pool returns the driver's error,
// naming the device, instead of waiting for a staging slot that the lost device will never hand
// back, and the engine can still be destroyed. Built with the CUDA backend only.
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/device/cuda_backend.hpp"
#include "acco/testing/matchers.hpp"
#include "acco/transfer/engine.hpp"

namespace acco::transfer {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

// Runs `work` on a thread of its own: a copy that hangs ends the test run with a message instead
// of stalling it (the hung thread cannot be stopped, so the process aborts).
Status finishes(const std::function<Status()>& work) {
  std::promise<Status> done;
  std::future<Status> result = done.get_future();
  std::thread worker([&] { done.set_value(work()); });
  if (result.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    std::fprintf(stderr, "the copy still waits after 60 s: hung\n");  // NOLINT
    std::abort();
  }
  worker.join();
  return result.get();
}

Status copied(Engine& engine, void* dst, const void* src, std::size_t bytes) {
  ACCO_ASSIGN_OR_RETURN(Transfer transfer, engine.copy(dst, src, bytes));
  ACCO_RETURN_IF_ERROR(transfer.wait());
  return {};
}

class CudaEngineTest : public ::testing::Test {
 protected:
  // One H100 whose copy engine moves 200 MB/s (a 4 MiB chunk takes 20 ms, far longer than the
  // caller's host copy, so every staging slot is in flight when the device is lost), lost at
  // the fourth asynchronous copy.
  void SetUp() override {
    if (!device::cuda_compiled()) {
      GTEST_SKIP() << "built with ACCO_WITH_CUDA=OFF";
    }
    config_ = ::testing::TempDir() + "fake_cuda_engine.json";
    std::ofstream(config_) << R"({"copy_error": {"after": 3, "error": 700}, "devices": [)"
                           << R"({"name": "NVIDIA H100 80GB HBM3", "pci": "0000:18:00.0",)"
                           << R"( "memory_bytes": 1073741824, "copy_bytes_per_second": 2e8,)"
                           << R"( "pageable_bytes_per_second": 2e8}]})";
    ::setenv("ACCO_FAKE_CUDA_CONFIG", config_.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
  }
  void TearDown() override {
    ::unsetenv("ACCO_FAKE_CUDA_CONFIG");  // NOLINT(concurrency-mt-unsafe)
  }

  std::string config_;
};

TEST_F(CudaEngineTest, ADeviceLostMidCopyIsAnErrorNamingItNotAHang) {
  auto backend = device::make_cuda_backend(ACCO_FAKE_CUDA_PATH);
  ASSERT_THAT(backend, IsOk());
  device::Device& device = *(*backend)->devices().front();
  constexpr std::size_t kBytes = std::size_t{64} << 20;  // 16 chunks
  auto gpu = device.allocate(kBytes);
  ASSERT_THAT(gpu, IsOk());
  std::vector<std::byte> pageable(kBytes);
  auto engine = Engine::create(device);
  ASSERT_THAT(engine, IsOk());
  ASSERT_GE((*engine)->profile().slots, 2);

  const auto lost =
      AllOf(HasSubstr("cuda device 0: "), HasSubstr("an illegal memory access was encountered "
                                                    "(CUDA_ERROR_ILLEGAL_ADDRESS)"));
  // Host to device, pipelined through the slots: the loss comes at the fourth chunk.
  EXPECT_THAT(finishes([&] { return copied(**engine, (*gpu)->data(), pageable.data(), kBytes); }),
              StatusIs(Errc::kDeviceError, lost));
  // Every slot came back: the other direction, and a batch, fail at once too.
  EXPECT_THAT(finishes([&] { return copied(**engine, pageable.data(), (*gpu)->data(), kBytes); }),
              StatusIs(Errc::kDeviceError, lost));
  EXPECT_THAT(
      finishes([&]() -> Status {
        Batch batch = (*engine)->batch();
        for (std::size_t i = 0; i < 8; ++i) {
          ACCO_RETURN_IF_ERROR(batch.add(pageable.data() + i * 4096,
                                         static_cast<std::byte*>((*gpu)->data()) + i * 4096, 4096));
        }
        ACCO_ASSIGN_OR_RETURN(Transfer transfer, batch.submit());
        ACCO_RETURN_IF_ERROR(transfer.wait());
        return {};
      }),
      StatusIs(Errc::kDeviceError, lost));
  EXPECT_THAT(finishes([&]() -> Status {
                engine->reset();  // drains its queues, unpins its pool
                return {};
              }),
              IsOk());
}

}  // namespace
}  // namespace acco::transfer
