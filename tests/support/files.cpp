#include "acco/testing/files.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

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

}  // namespace acco::testing
