// `acco bench --suite storage` as a user runs it: the test file created with --create, acco's
// reader and fio (when installed) on the same file, the device path against the naive one; JSON
// conforms to docs/schemas/bench.schema.json; bad flags are one line with exit 64.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_acco.hpp"

namespace acco::testing {
namespace {

using ::testing::HasSubstr;

// On the build tree's disk, where O_DIRECT normally works (TempDir may be tmpfs).
using DiskDir = DiskTempDir;

TEST(StorageBenchTest, CreatesItsFileAndMeasuresAccoBesideFio) {
  DiskDir dir;
  const auto file = (dir.path() / "data.bin").string();
  const auto r = acco("bench --suite storage --file " + file +
                      " --create 8MiB --bytes 4MiB --quick --reps 2 --no-history --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::filesystem::file_size(file), 8U << 20);
  EXPECT_THAT(r.err, HasSubstr("wrote 8.00 MiB of test data"));
  expect_conforms(r.out, "bench.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  std::vector<std::string> keys;
  for (const auto& result : j["results"]) {
    keys.push_back(result["case"]);
    const std::string key = result["case"];
    if (key.rfind("fio_", 0) == 0) {
      EXPECT_THAT(result["status"], ::testing::AnyOf("ok", "waived")) << result.dump();
    } else {
      EXPECT_EQ(result["status"], "ok") << result.dump();
      EXPECT_GT(result["median_bytes_per_second"].get<double>(), 0);
    }
  }
  EXPECT_THAT(keys, ::testing::IsSupersetOf({"storage_read_64KiB_qd1", "fio_read_64KiB_qd1",
                                             "storage_read_1MiB_qd32", "fio_read_1MiB_qd32",
                                             "storage_h2d", "storage_h2d_naive"}));
  // No transfer case runs in the storage suite.
  EXPECT_THAT(keys, ::testing::Not(::testing::Contains("h2d_pinned_plain")));

  // A second run reuses the file and prints the comparison table.
  const auto text =
      acco("bench --suite storage --file " + file + " --bytes 4MiB --quick --reps 1 --no-history");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.err, ::testing::Not(HasSubstr("wrote")));
  EXPECT_THAT(text.out, HasSubstr("storage_h2d_naive"));
  EXPECT_THAT(text.out, HasSubstr("vs naive"));
}

TEST(StorageBenchTest, BadFlagsAreOneLineWithExit64) {
  DiskDir dir;
  const auto missing = (dir.path() / "nope.bin").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--suite storage", "--suite storage: expected --file PATH"},
      {"--suite disks", "--suite: 'disks' is not one of transfer, storage"},
      {"--file " + missing, "--file and --create belong to --suite storage"},
      {"--suite storage --file " + missing, "is not a regular file (give --create SIZE"},
      {"--suite storage --file " + missing + " --create lots", "--create: 'lots' is not a size"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = acco("bench " + args);
    EXPECT_EQ(r.exit_code, 64) << args;
    EXPECT_THAT(r.err, HasSubstr(message)) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(missing));
}

}  // namespace
}  // namespace acco::testing
