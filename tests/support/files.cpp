#include "acco/testing/files.hpp"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include <gtest/gtest.h>
#include <unistd.h>

namespace acco::testing {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool updating_goldens() {
  const char* update = std::getenv("ACCO_UPDATE_GOLDEN");
  return update != nullptr && std::string(update) == "1";
}

void expect_golden(const std::filesystem::path& file, const std::string& actual) {
  const auto path = std::filesystem::path(ACCO_TESTING_SOURCE_DIR) / "tests/data/golden" / file;
  if (updating_goldens()) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " missing; run with ACCO_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, slurp(path)) << "golden " << path.string()
                                 << " differs; review and rerun with ACCO_UPDATE_GOLDEN=1";
}

TempDir::TempDir() {
  // $TMPDIR when set; else /dev/shm, which is memory like sysfs and many times faster than a
  // disk for trees of a few thousand small files.
  std::filesystem::path parent = std::filesystem::temp_directory_path();
  if (std::getenv("TMPDIR") == nullptr && access("/dev/shm", W_OK) == 0) {
    parent = "/dev/shm";
  }
  std::string pattern = (parent / "acco-sysroot-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

DiskTempDir::DiskTempDir() {
  std::string pattern = (std::filesystem::current_path() / "acco-disk-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  }
  path_ = pattern;
}

DiskTempDir::~DiskTempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace acco::testing
