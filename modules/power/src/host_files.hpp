// Private: reads host files through an Fs and notes, once per file, what could not be read or
// understood, so each reader says only what it expected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acco/core/fs.hpp"

namespace acco::power::detail {

class HostFiles {
 public:
  HostFiles(const core::Fs& fs, std::vector<std::string>& issues) : fs_(fs), issues_(issues) {}

  // The content; nullopt when the file is absent (no issue) or unreadable (an issue).
  [[nodiscard]] std::optional<std::string> read(const std::string& path);
  // As read(), but a permission error is silent too: files only root may read.
  [[nodiscard]] std::optional<std::string> read_if_permitted(const std::string& path);
  // Entry names, sorted; empty when the directory is absent (no issue) or unreadable (an issue).
  [[nodiscard]] std::vector<std::string> list(const std::string& path);
  [[nodiscard]] bool exists(const std::string& path) const { return fs_.exists(path); }
  // A sysfs counter: one unsigned decimal number; nullopt when absent, unreadable or malformed.
  [[nodiscard]] std::optional<std::uint64_t> counter(const std::string& path);
  // Adds "<path>: expected <expected>, got '<first line of got>'".
  void malformed(const std::string& path, std::string_view expected, std::string_view got);

  [[nodiscard]] const core::Fs& fs() const { return fs_; }

 private:
  const core::Fs& fs_;
  std::vector<std::string>& issues_;
};

// The whole trimmed text as an unsigned decimal number.
[[nodiscard]] std::optional<std::uint64_t> parse_u64(std::string_view text);
// Split on spaces and tabs, empty fields dropped.
[[nodiscard]] std::vector<std::string_view> words(std::string_view line);
// Lines without their '\n'; a final line without one is kept.
[[nodiscard]] std::vector<std::string_view> lines(std::string_view text);
// "name" is "prefix" followed by one or more digits: ("temp12", "temp") -> 12.
[[nodiscard]] std::optional<int> numbered(std::string_view name, std::string_view prefix);

}  // namespace acco::power::detail
