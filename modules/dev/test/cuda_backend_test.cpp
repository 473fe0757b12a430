// The CUDA backend's factory on a machine without a GPU (CI): a clean error value, never a crash.
// The backend itself is tested in cuda_backend_gpu_test.cpp, which needs a GPU.
#include "acco/dev/cuda_backend.hpp"

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

namespace acco::dev {
namespace {

using ::acco::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(CudaBackendTest, FactoryGivesDevicesOrAOneLineReason) {
  const auto backend = make_cuda_backend();
  if (backend.has_value()) {
    ASSERT_TRUE(cuda_compiled());
    EXPECT_EQ((*backend)->name(), "cuda");
    EXPECT_FALSE((*backend)->devices().empty());
    return;
  }
  EXPECT_THAT(backend, StatusIs(cuda_compiled() ? Errc::kUnavailable : Errc::kUnsupported));
  EXPECT_FALSE(backend.error().message.empty());
  EXPECT_THAT(backend.error().message, Not(HasSubstr("\n")));
}

TEST(CudaBackendTest, WithoutAnNvidiaDriverTheBackendIsUnavailable) {
  if (!cuda_compiled()) {
    GTEST_SKIP() << "built without the CUDA backend";
  }
  if (std::filesystem::exists("/dev/nvidiactl")) {
    GTEST_SKIP() << "an NVIDIA driver is loaded here";
  }
  for (int attempt = 0; attempt < 2; ++attempt) {  // the runtime's failed init must not stick oddly
    const auto backend = make_cuda_backend();
    ASSERT_THAT(backend, StatusIs(Errc::kUnavailable));
    EXPECT_THAT(backend.error().message, HasSubstr("cudaGetDeviceCount: "));
  }
}

TEST(CudaBackendTest, BuildWithoutCudaSaysSo) {
  if (cuda_compiled()) {
    GTEST_SKIP() << "built with the CUDA backend";
  }
  const auto backend = make_cuda_backend();
  ASSERT_THAT(backend, StatusIs(Errc::kUnsupported));
  EXPECT_THAT(backend.error().message, HasSubstr("ACCO_WITH_CUDA"));
}

}  // namespace
}  // namespace acco::dev
