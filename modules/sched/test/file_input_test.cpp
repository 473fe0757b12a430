#include "acco/sched/file_input.hpp"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/device/host_backend.hpp"
#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::sched {
namespace {

using ::acco::testing::DiskTempDir;
using acco::testing::IsOk;
using ::testing::HasSubstr;

std::vector<int> numbers(std::size_t n, int seed) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = static_cast<int>(i) * 7 + seed;
  }
  return v;
}

struct Fixture {
  std::unique_ptr<device::Backend> backend;
  std::unique_ptr<Runtime> runtime;
};

Fixture make(int devices) {
  device::HostBackendOptions host;
  host.devices = devices;
  auto backend = device::make_host_backend(host);
  EXPECT_THAT(backend, IsOk());
  std::vector<DeviceSpec> specs;
  for (device::Device* d : (*backend)->devices()) {
    DeviceSpec spec;
    spec.device = d;
    specs.push_back(spec);
  }
  auto runtime = Runtime::create(std::move(specs));
  EXPECT_THAT(runtime, IsOk());
  return {std::move(*backend), std::move(*runtime)};
}

TEST(FileLoaderTest, ShardsLoadedByTasksFeedTheTasksThatReadThem) {
  DiskTempDir dir;
  const auto data = numbers(300000, 3);  // 1.2 MB: several blocks
  const auto path = (dir.path() / "shard.bin").string();
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(data.data()),
             static_cast<std::streamsize>(data.size() * sizeof(int)));
  FileLoader loader;
  auto f = make(2);
  // Two halves of the file into two buffers, each summed by a task that reads it.
  const std::size_t half = data.size() / 2;
  std::vector<int> a(half, 0);
  std::vector<int> b(half, 0);
  auto ha = f.runtime->register_data(a.data(), half * sizeof(int));
  auto hb = f.runtime->register_data(b.data(), half * sizeof(int));
  ASSERT_THAT(ha, IsOk());
  ASSERT_THAT(hb, IsOk());
  ASSERT_THAT(f.runtime->submit(loader.task({path, 0, half * sizeof(int)}, *ha)), IsOk());
  ASSERT_THAT(f.runtime->submit(loader.task({path, half * sizeof(int), std::nullopt}, *hb)),
              IsOk());
  std::atomic<long long> sum{0};
  auto summer = std::make_shared<Codelet>();
  summer->type = "sum";
  summer->implementations.emplace_back("host", [&sum](TaskContext& ctx) {
    const auto* v = static_cast<const int*>(ctx.data(0));
    long long s = 0;
    for (std::size_t i = 0; i < ctx.bytes(0) / sizeof(int); ++i) {
      s += v[i];
    }
    sum += s;
  });
  for (const auto h : {*ha, *hb}) {
    Task t;
    t.codelet = summer;
    t.accesses = {{h, Access::kRead}};
    ASSERT_THAT(f.runtime->submit(std::move(t)), IsOk());
  }
  ASSERT_THAT(f.runtime->wait_all(), IsOk());
  long long expected = 0;
  for (const int x : data) {
    expected += x;
  }
  EXPECT_EQ(sum.load(), expected);
  ASSERT_THAT(f.runtime->write_back(*ha), IsOk());
  ASSERT_THAT(f.runtime->write_back(*hb), IsOk());
  EXPECT_EQ(std::vector<int>(data.begin(), data.begin() + static_cast<long>(half)), a);
  EXPECT_EQ(std::vector<int>(data.begin() + static_cast<long>(half), data.end()), b);
  EXPECT_EQ(loader.bytes_loaded(), data.size() * sizeof(int));
}

TEST(FileLoaderTest, AMissingFileOrAShortRangeFailsTheTaskNamingIt) {
  DiskTempDir dir;
  const auto path = (dir.path() / "small.bin").string();
  std::ofstream(path) << std::string(100, 'x');
  FileLoader loader;
  auto f = make(1);
  std::vector<char> first(4096);
  std::vector<char> second(4096);
  auto h1 = f.runtime->register_data(first.data(), first.size());
  auto h2 = f.runtime->register_data(second.data(), second.size());
  ASSERT_THAT(h1, IsOk());
  ASSERT_THAT(h2, IsOk());
  ASSERT_THAT(f.runtime->submit(loader.task({path + ".nope", 0, std::nullopt}, *h1)), IsOk());
  ASSERT_THAT(f.runtime->submit(loader.task({path, 0, std::nullopt}, *h2)), IsOk());
  const auto status = f.runtime->wait_all();
  ASSERT_FALSE(status.has_value());
  const auto failures = f.runtime->failures();
  ASSERT_EQ(failures.size(), 2U);
  EXPECT_THAT(failures[0].error, HasSubstr("small.bin.nope: no such file"));
  EXPECT_THAT(failures[1].error, HasSubstr("the task's buffer 4096"));
}

}  // namespace
}  // namespace acco::sched
