// Reading sysfs and procfs files through an Fs for a caller that goes on past what it cannot
// read (topo's probe, power's host sensors): an absent file is only absent, and each file that
// exists but cannot be read or understood adds one FileIssue, so every reader says only what it
// expected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acco/core/fs.hpp"

namespace acco::core {

// One input file that exists but could not be read or understood.
struct FileIssue {
  std::string path;     // "/sys/bus/pci/devices/0000:18:00.0/max_link_speed"
  std::string problem;  // one line; a read error's is the Fs's message, which names the path
  bool operator==(const FileIssue&) const = default;
};

// The whole text, trimmed, as an unsigned decimal number (no sign, no base prefix), as sysfs and
// procfs counters hold them; nullopt otherwise.
[[nodiscard]] std::optional<std::uint64_t> parse_u64(std::string_view text);

// Not thread-safe (it appends to `issues`); `fs` and `issues` must outlive it.
class SysfsReader {
 public:
  SysfsReader(const Fs& fs, std::vector<FileIssue>& issues) : fs_(fs), issues_(issues) {}

  // The content as read; nullopt when the file is absent (no issue) or unreadable (an issue).
  [[nodiscard]] std::optional<std::string> read(const std::string& path);
  // As read(), but a permission error (kUnavailable) is silent too: files only root may read.
  [[nodiscard]] std::optional<std::string> read_if_permitted(const std::string& path);
  // As read(), and an empty file is an issue too ("the file is empty"): every sysfs and procfs
  // attribute ends in a newline, so zero bytes means a capture that failed to copy it.
  [[nodiscard]] std::optional<std::string> read_attribute(const std::string& path);
  // read_attribute() trimmed.
  [[nodiscard]] std::optional<std::string> text(const std::string& path);
  // text() as an integer in `base` (units::parse_int); one that does not parse is an issue.
  [[nodiscard]] std::optional<std::int64_t> integer(const std::string& path, int base = 10);
  // A sysfs counter: read() as one unsigned decimal number; otherwise nullopt, and malformed()
  // when the file was read.
  [[nodiscard]] std::optional<std::uint64_t> counter(const std::string& path);
  // Entry names, sorted; empty when the directory is absent (no issue) or unreadable (an issue).
  [[nodiscard]] std::vector<std::string> list(const std::string& path);
  // The basename of a link's target ("nvidia" for .../drivers/nvidia); empty when absent.
  [[nodiscard]] std::string link_name(const std::string& path);
  [[nodiscard]] bool exists(const std::string& path) const { return fs_.exists(path); }

  // Adds {path, problem}.
  void issue(const std::string& path, std::string problem);
  // Adds {path, "<path>: expected <expected>, got '<got>'"}, `got` cut to its first line, at most
  // 60 characters, escaped.
  void malformed(const std::string& path, std::string_view expected, std::string_view got);

  [[nodiscard]] const Fs& fs() const { return fs_; }

 private:
  const Fs& fs_;
  std::vector<FileIssue>& issues_;
};

}  // namespace acco::core
