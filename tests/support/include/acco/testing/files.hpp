// Files in tests: scratch directories, reading one whole, and golden files (expected output kept in
// the repository, rewritten on purpose with ACCO_UPDATE_GOLDEN=1 and reviewed as a diff).
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

// A fresh directory, removed with everything in it on destruction: under $TMPDIR when set,
// else /dev/shm when writable, else the system temp directory.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  // path() / name, as a string (a file the test makes there).
  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// The same on the disk the tests run from (the build tree) rather than in memory: where
// O_DIRECT and a real file system's behaviour matter.
class DiskTempDir {
 public:
  DiskTempDir();
  ~DiskTempDir();
  DiskTempDir(const DiskTempDir&) = delete;
  DiskTempDir& operator=(const DiskTempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace acco::testing
