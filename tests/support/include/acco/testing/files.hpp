// Files in tests: reading one whole, and golden files (expected output kept in the repository,
// rewritten on purpose with ACCO_UPDATE_GOLDEN=1 and reviewed as a diff).
#pragma once

#include <filesystem>
#include <string>

namespace acco::testing {

// The whole content of `path`, bytes as they are; empty when it cannot be read.
[[nodiscard]] std::string slurp(const std::filesystem::path& path);

// True when ACCO_UPDATE_GOLDEN=1: tests write what they produce instead of comparing it.
[[nodiscard]] bool updating_goldens();

// Compares `actual` with the golden file `file`, relative to tests/data/golden or absolute (a
// non-fatal failure when it differs, a fatal one when it is missing); with ACCO_UPDATE_GOLDEN=1
// writes `actual` to it instead.
void expect_golden(const std::filesystem::path& file, const std::string& actual);

}  // namespace acco::testing
