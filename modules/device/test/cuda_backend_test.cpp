// The CUDA backend's loading of the driver and its failures, against the fake libcuda.so.1
// (tests/fake_cuda): no driver, the toolkit's stub library, an old driver, no device, an
// uninitialised driver, out of memory, a refused pinned allocation, a device lost mid-copy (which
// breaks its whole context) and memory pinned elsewhere, each a clear error value, never a crash
// nor a hang. The data paths are tested in cuda_backend_gpu_test.cpp,
// which CI runs on the fake driver too.
#include "acco/device/cuda_backend.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

namespace acco::device {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// One device of the fake driver, as its config spells it.
std::string device_json(const std::string& pci, std::size_t memory_bytes = 1U << 30) {
  return R"({"name": "NVIDIA H100 80GB HBM3", "pci": ")" + pci + R"(", "memory_bytes": )" +
         std::to_string(memory_bytes) +
         R"(, "copy_engines": 3, "copy_bytes_per_second": 5e10, "copy_latency_ns": 1000})";
}

// Points the fake driver at a config holding `json`, written for this test alone.
class FakeCudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_compiled()) {
      GTEST_SKIP() << "built with ACCO_WITH_CUDA=OFF";
    }
  }
  void use_config(const std::string& json) {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = test->name();
    std::replace(name.begin(), name.end(), '/', '_');  // parameterised: "SaysWhatToDo/36"
    const std::string path = ::testing::TempDir() + "fake_cuda_" + name + ".json";
    std::ofstream(path) << json;
    ::setenv("ACCO_FAKE_CUDA_CONFIG", path.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
  }
  void TearDown() override {
    ::unsetenv("ACCO_FAKE_CUDA_CONFIG");  // NOLINT(concurrency-mt-unsafe)
  }

  // The fake's test-only counters (its library is loaded by then).
  static int fake_counter(const char* name) {
    void* fake = dlopen(ACCO_FAKE_CUDA_PATH, RTLD_NOW | RTLD_NOLOAD);
    if (fake == nullptr) {
      return -1;
    }
    auto* counter = reinterpret_cast<int (*)()>(dlsym(fake, name));
    const int value = counter != nullptr ? counter() : -1;
    dlclose(fake);
    return value;
  }

  const std::string fake_ = ACCO_FAKE_CUDA_PATH;
};

TEST(CudaBackendTest, IsCompiledUnlessConfiguredOut) {
  EXPECT_EQ(cuda_compiled(), ACCO_EXPECT_CUDA_BACKEND != 0);
  if (!cuda_compiled()) {
    const auto backend = make_cuda_backend();
    ASSERT_THAT(backend, StatusIs(Errc::kUnsupported));
    EXPECT_THAT(backend.error().message, HasSubstr("ACCO_WITH_CUDA=OFF"));
  }
}

TEST(CudaBackendTest, LoadsLibcudaUnlessTheEnvironmentNamesAnother) {
  const char* saved = std::getenv("ACCO_CUDA_LIBRARY");  // NOLINT(concurrency-mt-unsafe)
  const std::string restore = saved != nullptr ? saved : "";
  ::unsetenv("ACCO_CUDA_LIBRARY");  // NOLINT(concurrency-mt-unsafe)
  EXPECT_EQ(cuda_library(), "libcuda.so.1");
  ::setenv("ACCO_CUDA_LIBRARY", "", 1);  // NOLINT(concurrency-mt-unsafe)
  EXPECT_EQ(cuda_library(), "libcuda.so.1");
  ::setenv("ACCO_CUDA_LIBRARY", "/opt/driver/libcuda.so.1", 1);  // NOLINT(concurrency-mt-unsafe)
  EXPECT_EQ(cuda_library(), "/opt/driver/libcuda.so.1");
  if (saved != nullptr) {
    ::setenv("ACCO_CUDA_LIBRARY", restore.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
  } else {
    ::unsetenv("ACCO_CUDA_LIBRARY");  // NOLINT(concurrency-mt-unsafe)
  }
}

TEST(CudaBackendTest, FactoryGivesDevicesOrAOneLineReason) {
  const auto backend = make_cuda_backend();
  if (backend.has_value()) {
    EXPECT_EQ((*backend)->name(), "cuda");
    EXPECT_FALSE((*backend)->devices().empty());
    return;
  }
  EXPECT_THAT(backend, StatusIs(cuda_compiled() ? Errc::kUnavailable : Errc::kUnsupported));
  EXPECT_FALSE(backend.error().message.empty());
  EXPECT_THAT(backend.error().message, Not(HasSubstr("\n")));
}

TEST(CudaBackendTest, WithoutADriverLibraryTheBackendIsUnavailable) {
  if (!cuda_compiled()) {
    GTEST_SKIP() << "built with ACCO_WITH_CUDA=OFF";
  }
  const auto backend = make_cuda_backend("/nonexistent/libcuda.so.1");
  ASSERT_THAT(backend, StatusIs(Errc::kUnavailable));
  EXPECT_THAT(backend.error().message,
              AllOf(HasSubstr("cuda: /nonexistent/libcuda.so.1: cannot be loaded, no NVIDIA "
                              "driver installed?"),
                    Not(HasSubstr("\n"))));
  EXPECT_THAT(cuda_driver_info("/nonexistent/libcuda.so.1"), StatusIs(Errc::kUnavailable));
  EXPECT_THAT(make_cuda_backend(""), StatusIs(Errc::kUnavailable));
}

TEST_F(FakeCudaTest, DescribesEveryDeviceFromTheDriversAttributes) {
  use_config(R"({"driver_version": 12080, "devices": [)" + device_json("0000:18:00.0") + "," +
             device_json("0001:ab:1f.0", std::size_t{80} << 30) + "]}");
  const auto backend = make_cuda_backend(fake_);
  ASSERT_THAT(backend, IsOk());
  const auto devices = (*backend)->devices();
  ASSERT_EQ(devices.size(), 2U);
  const DeviceInfo& second = devices[1]->info();
  EXPECT_EQ(second.index, 1);
  EXPECT_EQ(second.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(second.backend, "cuda");
  EXPECT_EQ(second.pci, "0001:ab:1f.0");  // sysfs's spelling, as the topology has it
  EXPECT_EQ(second.memory_bytes, std::size_t{80} << 30);
  EXPECT_EQ(second.copy_engines, 3);
  EXPECT_EQ(devices[0]->info().pci, "0000:18:00.0");
}

TEST_F(FakeCudaTest, DriverInfoNamesTheHighestCudaVersion) {
  use_config(R"({"driver_version": 12080, "devices": [)" + device_json("0000:18:00.0") + "]}");
  const auto info = cuda_driver_info(fake_);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->library, fake_);
  EXPECT_EQ(info->version, 12080);
  EXPECT_EQ(info->cuda_version, "12.8");
  EXPECT_EQ(info->device_count, 1);
}

TEST_F(FakeCudaTest, TheToolkitsStubLibraryIsNamedAsSuch) {
  use_config(R"({"init_error": 34, "devices": [)" + device_json("0000:18:00.0") + "]}");
  const auto backend = make_cuda_backend(fake_);
  ASSERT_THAT(backend, StatusIs(Errc::kUnavailable));
  EXPECT_THAT(backend.error().message,
              HasSubstr("cuInit: CUDA_ERROR_STUB_LIBRARY: this is the CUDA toolkit's stub "
                        "library (stubs/libcuda.so), not a driver"));
}

// The driver's codes for a machine that keeps CUDA from working, each with what to do.
struct InitFailure {
  int code;
  const char* name;
  const char* remedy;
};

void PrintTo(const InitFailure& failure, std::ostream* out) {
  *out << failure.name;
}

class FakeCudaInitTest : public FakeCudaTest, public ::testing::WithParamInterface<InitFailure> {};

TEST_P(FakeCudaInitTest, SaysWhatToDo) {
  const InitFailure& failure = GetParam();
  use_config(R"({"init_error": )" + std::to_string(failure.code) + R"(, "devices": [)" +
             device_json("0000:18:00.0") + "]}");
  const auto backend = make_cuda_backend(fake_);
  ASSERT_THAT(backend, StatusIs(Errc::kUnavailable));
  EXPECT_THAT(backend.error().message,
              AllOf(HasSubstr(std::string("cuInit: ")),
                    HasSubstr(std::string("(") + failure.name + "): " + failure.remedy),
                    Not(HasSubstr("\n"))));
}

INSTANTIATE_TEST_SUITE_P(
    EveryMachineFault, FakeCudaInitTest,
    ::testing::Values(
        InitFailure{36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
                    "the installed NVIDIA driver is older than this call needs"},
        InitFailure{46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "the GPU is busy or unavailable"},
        InitFailure{102, "CUDA_ERROR_DEVICE_NOT_LICENSED",
                    "this (virtual) GPU has no valid NVIDIA vGPU license"},
        InitFailure{304, "CUDA_ERROR_OPERATING_SYSTEM", "a system call inside the driver failed"},
        InitFailure{802, "CUDA_ERROR_SYSTEM_NOT_READY",
                    "the system is not ready for CUDA yet: a driver daemon it needs is not running "
                    "(on NVSwitch systems, HGX and DGX, nvidia-fabricmanager)"},
        InitFailure{803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
                    "the CUDA driver library and the loaded nvidia kernel module are of different "
                    "versions"},
        InitFailure{804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
                    "a CUDA forward-compatibility libcuda (cuda-compat) is loaded"}),
    [](const ::testing::TestParamInfo<InitFailure>& param_info) {
      return std::to_string(param_info.param.code);
    });

TEST_F(FakeCudaTest, NoDeviceNamesCudaVisibleDevicesWhenSet) {
  use_config(R"({"devices": []})");
  const char* saved = std::getenv("CUDA_VISIBLE_DEVICES");  // NOLINT(concurrency-mt-unsafe)
  const std::string restore = saved != nullptr ? saved : "";
  ::setenv("CUDA_VISIBLE_DEVICES", "", 1);  // NOLINT(concurrency-mt-unsafe)
  const auto backend = make_cuda_backend(fake_);
  if (saved != nullptr) {
    ::setenv("CUDA_VISIBLE_DEVICES", restore.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
  } else {
    ::unsetenv("CUDA_VISIBLE_DEVICES");  // NOLINT(concurrency-mt-unsafe)
  }
  ASSERT_THAT(backend, StatusIs(Errc::kUnavailable));
  EXPECT_THAT(backend.error().message,
              HasSubstr("cuInit: no CUDA-capable device is detected (CUDA_ERROR_NO_DEVICE): "
                        "CUDA_VISIBLE_DEVICES is ''"));
}

TEST_F(FakeCudaTest, AMachineWithoutAGpuHasNoDevice) {
  use_config(R"({"devices": []})");
  const auto backend = make_cuda_backend(fake_);
  ASSERT_THAT(backend, StatusIs(Errc::kUnavailable));
  EXPECT_THAT(backend.error().message,
              HasSubstr("cuInit: no CUDA-capable device is detected (CUDA_ERROR_NO_DEVICE)"));
}

TEST_F(FakeCudaTest, AnUninitialisedDriverIsUnavailable) {
  use_config(R"({"errors": {"cuDeviceGetCount": 3}, "devices": [)" + device_json("0000:18:00.0") +
             "]}");
  const auto backend = make_cuda_backend(fake_);
  ASSERT_THAT(backend, StatusIs(Errc::kUnavailable));
  EXPECT_THAT(backend.error().message,
              HasSubstr("cuDeviceGetCount: initialization error (CUDA_ERROR_NOT_INITIALIZED)"));
}

TEST_F(FakeCudaTest, ADriverOlderThanAccoNeedsNamesTheMissingEntryPoint) {
  use_config(R"({"driver_version": 10020, "devices": [)" + device_json("0000:18:00.0") + "]}");
  const auto backend = make_cuda_backend(ACCO_FAKE_CUDA_OLD_PATH);
  ASSERT_THAT(backend, StatusIs(Errc::kUnavailable));
  EXPECT_THAT(backend.error().message,
              HasSubstr("driver 10020 (CUDA 10.2) lacks cuDevicePrimaryCtxRelease_v2, which acco "
                        "needs (CUDA 11.0 or later)"));
}

TEST_F(FakeCudaTest, AnUnreadableConfigIsAnErrorNotACrash) {
  use_config("{not json");
  const auto backend = make_cuda_backend(fake_);
  ASSERT_THAT(backend, StatusIs(Errc::kUnavailable));
  EXPECT_THAT(backend.error().message, HasSubstr("CUDA_ERROR_UNKNOWN"));
}

TEST_F(FakeCudaTest, OutOfDeviceMemoryIsADeviceErrorThatDoesNotStick) {
  use_config(R"({"devices": [)" + device_json("0000:18:00.0", 1U << 20) + "]}");
  auto backend = make_cuda_backend(fake_);
  ASSERT_THAT(backend, IsOk());
  Device& device = *(*backend)->devices().front();
  const auto huge = device.allocate(2U << 20);
  ASSERT_THAT(huge, StatusIs(Errc::kDeviceError));
  EXPECT_THAT(huge.error().message,
              HasSubstr("cuMemAlloc_v2: out of memory (CUDA_ERROR_OUT_OF_MEMORY)"));
  EXPECT_THAT(device.allocate(1U << 19), IsOk());
}

TEST_F(FakeCudaTest, ARefusedPinnedAllocationLeavesPageableMemory) {
  use_config(R"({"errors": {"cuMemHostAlloc": 2}, "devices": [)" + device_json("0000:18:00.0") +
             "]}");
  auto backend = make_cuda_backend(fake_);
  ASSERT_THAT(backend, IsOk());
  Device& device = *(*backend)->devices().front();
  const auto pinned = device.allocate_host(4096, MemoryKind::kPinned);
  ASSERT_THAT(pinned, StatusIs(Errc::kDeviceError));
  EXPECT_THAT(pinned.error().message,
              AllOf(HasSubstr("allocate_host pinned 4096 bytes"), HasSubstr("cuMemHostAlloc: ")));
  EXPECT_THAT(device.allocate_host(4096, MemoryKind::kPageable), IsOk());
}

// A device lost under a copy (700, CUDA_ERROR_ILLEGAL_ADDRESS) breaks its whole context, as on the
// real driver: the failing queue, work already queued in another queue of the device, and every
// later call on the device fail with that error, which names the device; another device goes on;
// destroying the backend destroys the context with what could not be freed, and a new backend
// starts on a working context.
TEST_F(FakeCudaTest, ADeviceLostMidCopyBreaksItsWholeContext) {
  use_config(R"({"copy_error": {"after": 1, "error": 700}, "devices": [)" +
             device_json("0000:18:00.0") + "," + device_json("0000:2a:00.0") + "]}");
  int reclaimed_before = 0;
  {
    auto backend = make_cuda_backend(fake_);
    ASSERT_THAT(backend, IsOk());
    reclaimed_before = fake_counter("acco_fake_cuda_reclaimed_allocations");
    Device& device = *(*backend)->devices().front();
    Device& healthy = *(*backend)->devices().back();
    auto host = device.allocate_host(1 << 16, MemoryKind::kPinned);
    auto gpu = device.allocate(1 << 16);
    auto queue = device.create_queue();
    auto other = device.create_queue();
    ASSERT_TRUE(host && gpu && queue && other);
    ASSERT_THAT((*queue)->copy((*gpu)->data(), (*host)->data(), 1 << 16), IsOk());
    auto good = (*queue)->record();
    ASSERT_TRUE(good);
    EXPECT_THAT((*good)->wait(), IsOk());
    // The failing copy waits behind `go`, work in the other queue behind `lost`: queued first.
    std::promise<void> go;
    std::promise<void> lost;
    std::shared_future<void> started = go.get_future().share();
    std::shared_future<void> gate = lost.get_future().share();
    ASSERT_THAT((*queue)->host_task([started] { started.wait(); }), IsOk());
    ASSERT_THAT((*queue)->copy((*host)->data(), (*gpu)->data(), 1 << 16), IsOk());
    auto bad = (*queue)->record();
    ASSERT_THAT((*other)->host_task([gate] { gate.wait(); }), IsOk());
    ASSERT_THAT((*other)->copy((*gpu)->data(), (*host)->data(), 64), IsOk());
    auto queued = (*other)->record();
    ASSERT_TRUE(queued && bad);
    go.set_value();
    const auto failed = (*bad)->wait();
    ASSERT_THAT(failed, StatusIs(Errc::kDeviceError));
    EXPECT_THAT(failed.error().message,
                HasSubstr("cuda device 0: event wait: cuEventSynchronize: an illegal memory access "
                          "was encountered (CUDA_ERROR_ILLEGAL_ADDRESS)"));
    lost.set_value();
    EXPECT_THAT((*queued)->wait(), StatusIs(Errc::kDeviceError, HasSubstr("ILLEGAL_ADDRESS")));
    EXPECT_THAT((*queue)->synchronize(), StatusIs(Errc::kDeviceError));
    EXPECT_THAT((*other)->synchronize(), StatusIs(Errc::kDeviceError));
    EXPECT_THAT((*queue)->copy((*gpu)->data(), (*host)->data(), 64),
                StatusIs(Errc::kDeviceError, HasSubstr("cuda device 0: queue copy: ")));
    EXPECT_THAT((*queue)->record(), StatusIs(Errc::kDeviceError));
    EXPECT_THAT(device.allocate(4096), StatusIs(Errc::kDeviceError));
    EXPECT_THAT(device.allocate_host(4096, MemoryKind::kPinned), StatusIs(Errc::kDeviceError));
    std::vector<char> user(4096);
    EXPECT_THAT(device.register_host(user.data(), user.size()), StatusIs(Errc::kDeviceError));
    EXPECT_THAT(device.create_queue(), StatusIs(Errc::kDeviceError));
    EXPECT_THAT(device.copy((*gpu)->data(), (*host)->data(), 64), StatusIs(Errc::kDeviceError));
    // The other device has a context of its own.
    auto its = healthy.allocate(64);
    auto its_queue = healthy.create_queue();
    ASSERT_TRUE(its && its_queue);
    ASSERT_THAT((*its_queue)->copy((*its)->data(), user.data(), 64), IsOk());
    EXPECT_THAT((*its_queue)->synchronize(), IsOk());
  }
  EXPECT_EQ(fake_counter("acco_fake_cuda_retained_contexts"), 0);
  EXPECT_EQ(fake_counter("acco_fake_cuda_live_allocations"), 0);
  // The pinned and the device buffer of the broken context: cuMemFree refused, the context's
  // destruction freed them.
  EXPECT_EQ(fake_counter("acco_fake_cuda_reclaimed_allocations"), reclaimed_before + 2);
  auto again = make_cuda_backend(fake_);
  ASSERT_THAT(again, IsOk());
  Device& device = *(*again)->devices().front();
  auto gpu = device.allocate(4096);
  ASSERT_THAT(gpu, IsOk());
  std::vector<char> user(64, 'x');
  EXPECT_THAT(device.copy((*gpu)->data(), user.data(), user.size()), IsOk());
}

// Host tasks are stream callbacks, which the driver calls exactly once even after the stream
// failed (cuLaunchHostFunc's host functions are not called after an error): every task queued
// before the loss runs, so nothing that waits for one (the engine's staging slots) waits for
// ever, and none leaks. Once the loss is known, a new task is refused and freed.
TEST_F(FakeCudaTest, HostTasksRunOnceEvenAfterTheDeviceIsLost) {
  use_config(R"({"copy_error": {"after": 0, "error": 999}, "devices": [)" +
             device_json("0000:18:00.0") + "]}");
  auto backend = make_cuda_backend(fake_);
  ASSERT_THAT(backend, IsOk());
  Device& device = *(*backend)->devices().front();
  auto host = device.allocate_host(4096, MemoryKind::kPinned);
  auto gpu = device.allocate(4096);
  auto queue = device.create_queue();
  ASSERT_TRUE(host && gpu && queue);
  std::promise<void> submitted;
  std::shared_future<void> gate = submitted.get_future().share();
  std::atomic<int> ran{0};
  ASSERT_THAT((*queue)->host_task([gate, &ran] {
    gate.wait();
    ++ran;
  }),
              IsOk());
  ASSERT_THAT((*queue)->copy((*gpu)->data(), (*host)->data(), 4096), IsOk());  // fails
  for (int i = 0; i < 3; ++i) {
    ASSERT_THAT((*queue)->host_task([&ran] { ++ran; }), IsOk());
  }
  submitted.set_value();
  EXPECT_THAT((*queue)->synchronize(),
              StatusIs(Errc::kDeviceError, HasSubstr("unknown error (CUDA_ERROR_UNKNOWN)")));
  EXPECT_EQ(ran.load(), 4);
  EXPECT_THAT((*queue)->host_task([&ran] { ++ran; }),
              StatusIs(Errc::kDeviceError,
                       HasSubstr("cuda device 0: queue host_task: cuStreamAddCallback: ")));
  EXPECT_THAT((*queue)->synchronize(), StatusIs(Errc::kDeviceError));
  EXPECT_EQ(ran.load(), 4);
}

// Memory pinned outside this backend's own table (by another backend here; by the CUDA runtime or
// another library in a real process) is refused by the driver, and acco says so as the caller's
// mistake.
TEST_F(FakeCudaTest, HostMemoryPinnedElsewhereIsRefusedByTheDriver) {
  use_config(R"({"devices": [)" + device_json("0000:18:00.0") + "]}");
  auto first = make_cuda_backend(fake_);
  auto second = make_cuda_backend(fake_);
  ASSERT_TRUE(first && second);
  Device& mine = *(*first)->devices().front();
  Device& theirs = *(*second)->devices().front();
  std::vector<char> user(1 << 16);
  auto registered = theirs.register_host(user.data(), user.size());
  auto pinned = theirs.allocate_host(1 << 16, MemoryKind::kPinned);
  ASSERT_TRUE(registered && pinned);
  for (auto* ptr : {static_cast<void*>(user.data() + 4096), (*pinned)->data()}) {
    EXPECT_THAT(mine.register_host(ptr, 4096),
                StatusIs(Errc::kInvalidArgument,
                         HasSubstr("register_host 4096 bytes: cuMemHostRegister_v2: part or all of "
                                   "the requested memory range is already mapped "
                                   "(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)")));
  }
}

// A driver whose cuInit fails is closed again (dlclose), not kept loaded for nothing. A copy of
// the fake under a name of its own, so no earlier test of this process has it loaded.
TEST_F(FakeCudaTest, ALibraryWhoseCuInitFailsIsUnloaded) {
  use_config(R"({"devices": []})");
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "acco_fake_cuda_unload";
  std::filesystem::create_directories(dir);
  const std::filesystem::path copy = dir / "libcuda.so.1";
  std::filesystem::copy_file(fake_, copy, std::filesystem::copy_options::overwrite_existing);
  ASSERT_EQ(dlopen(copy.c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr);
  EXPECT_THAT(make_cuda_backend(copy.string()),
              StatusIs(Errc::kUnavailable, HasSubstr("CUDA_ERROR_NO_DEVICE")));
  void* still = dlopen(copy.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_EQ(still, nullptr) << "still loaded after the failed cuInit";
  if (still != nullptr) {
    dlclose(still);
  }
}

TEST_F(FakeCudaTest, EveryPairOfPeersTheDriverAllowsGetsPeerAccess) {
  // Devices 0 and 1 reach each other; device 2 reaches nobody (a GPU on another PCIe root).
  std::string zero = device_json("0000:18:00.0");
  std::string one = device_json("0000:2a:00.0");
  zero.replace(zero.size() - 1, 1, R"(, "peers": [1]})");
  one.replace(one.size() - 1, 1, R"(, "peers": [0]})");
  use_config(R"({"devices": [)" + zero + "," + one + "," + device_json("0000:3a:00.0") + "]}");
  auto backend = make_cuda_backend(fake_);
  ASSERT_THAT(backend, IsOk());
  auto access = [](int from, int to) {
    void* fake = dlopen(ACCO_FAKE_CUDA_PATH, RTLD_NOW | RTLD_NOLOAD);
    auto* query = reinterpret_cast<int (*)(int, int)>(dlsym(fake, "acco_fake_cuda_peer_access"));
    const int value = query != nullptr ? query(from, to) : -1;
    dlclose(fake);
    return value;
  };
  EXPECT_EQ(access(0, 1), 1);
  EXPECT_EQ(access(1, 0), 1);
  EXPECT_EQ(access(0, 2), 0);
  EXPECT_EQ(access(2, 0), 0);
  EXPECT_EQ(access(2, 1), 0);
  // A copy between the peers moves the bytes.
  const auto devices = (*backend)->devices();
  auto a = devices[0]->allocate(4096);
  auto b = devices[1]->allocate(4096);
  ASSERT_TRUE(a && b);
  std::vector<char> data(4096, 'x');
  ASSERT_THAT(devices[0]->copy((*a)->data(), data.data(), data.size()), IsOk());
  ASSERT_THAT(devices[0]->copy((*b)->data(), (*a)->data(), data.size()), IsOk());
  std::vector<char> back(4096);
  ASSERT_THAT(devices[1]->copy(back.data(), (*b)->data(), back.size()), IsOk());
  EXPECT_EQ(back, data);
}

// cuMemcpy may return before its copy is done (device to device; pageable host to device once
// staged), so Device::copy waits for the legacy default stream it ran on before returning.
TEST_F(FakeCudaTest, ADeviceCopyWaitsForTheStreamItRanOn) {
  use_config(R"({"devices": [)" + device_json("0000:18:00.0") + "]}");
  auto backend = make_cuda_backend(fake_);
  ASSERT_THAT(backend, IsOk());
  Device& device = *(*backend)->devices().front();
  auto gpu = device.allocate(4096);
  ASSERT_TRUE(gpu);
  std::vector<char> host(4096, 7);
  const int before = fake_counter("acco_fake_cuda_legacy_stream_syncs");
  ASSERT_THAT(device.copy((*gpu)->data(), host.data(), host.size()), IsOk());
  ASSERT_THAT(device.copy(host.data(), (*gpu)->data(), host.size()), IsOk());
  EXPECT_EQ(fake_counter("acco_fake_cuda_legacy_stream_syncs"), before + 2);
}

TEST_F(FakeCudaTest, EveryAllocationAndContextIsReleased) {
  use_config(R"({"devices": [)" + device_json("0000:18:00.0") + "," + device_json("0000:2a:00.0") +
             "]}");
  int reclaimed_before = -1;
  {
    auto backend = make_cuda_backend(fake_);
    ASSERT_THAT(backend, IsOk());
    Device& device = *(*backend)->devices().back();
    std::vector<char> user(1 << 16);
    auto gpu = device.allocate(4096);
    auto pinned = device.allocate_host(4096, MemoryKind::kPinned);
    auto mapped = device.allocate_host(4096, MemoryKind::kMapped);
    auto registration = device.register_host(user.data(), user.size());
    ASSERT_TRUE(gpu && pinned && mapped && registration);
    EXPECT_EQ(fake_counter("acco_fake_cuda_live_allocations"), 4);
    EXPECT_EQ(fake_counter("acco_fake_cuda_retained_contexts"), 2);
    reclaimed_before = fake_counter("acco_fake_cuda_reclaimed_allocations");
    EXPECT_EQ(device.kind_of((*gpu)->data()), MemoryKind::kDevice);
  }
  EXPECT_EQ(fake_counter("acco_fake_cuda_live_allocations"), 0);
  EXPECT_EQ(fake_counter("acco_fake_cuda_retained_contexts"), 0);
  // Freed by acco itself, not by the contexts' destruction.
  EXPECT_EQ(fake_counter("acco_fake_cuda_reclaimed_allocations"), reclaimed_before);
}

}  // namespace
}  // namespace acco::device
