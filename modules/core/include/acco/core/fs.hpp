// Every read of /sys and /proc goes through an Fs rooted at a sysroot, so a recorded machine
// replays exactly: the disk Fs reads a directory tree, the recording Fs remembers each answer,
// and the replay Fs answers from that record alone.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "acco/core/result.hpp"

namespace acco::core {

// The most read_file returns of one file: sysfs attributes are one page, the largest file read
// is the PCI ID database (1.3 MB in 2023); the rest of a longer file is not read.
inline constexpr std::size_t kMaxFileBytes = std::size_t{16} << 20;

// Paths are absolute as on a live system ("/sys/bus/pci/devices/0000:00:01.0/class").
// Errors: kNotFound when the path does not exist, kInvalidArgument when it exists but is not
// what the call expects (a directory read as a file), kUnavailable for permission errors.
class Fs {
 public:
  virtual ~Fs() = default;
  // Whole file content, at most kMaxFileBytes.
  [[nodiscard]] virtual Result<std::string> read_file(const std::string& path) const = 0;
  // Entry names, sorted, without "." and "..".
  [[nodiscard]] virtual Result<std::vector<std::string>> list_dir(
      const std::string& path) const = 0;
  // The raw target of a symbolic link, as readlink(2) returns it.
  [[nodiscard]] virtual Result<std::string> read_link(const std::string& path) const = 0;
  // The canonical absolute path with every link resolved, inside the sysroot's namespace.
  [[nodiscard]] virtual Result<std::string> real_path(const std::string& path) const = 0;
  [[nodiscard]] virtual bool exists(const std::string& path) const = 0;
};

// Reads the live tree under `sysroot` ("/" for this machine). The sysroot must be a directory.
[[nodiscard]] Result<std::unique_ptr<Fs>> make_disk_fs(const std::string& sysroot);

// What a RecordingFs saw: each call's answer, keyed by operation and path. A plain value that
// serialises to JSON (binary file content is stored as hex).
struct FsRecord {
  struct Answer {
    bool ok = false;
    std::string value;                 // file content, link target or real path
    std::vector<std::string> entries;  // directory listing
    Errc error = Errc::kNotFound;
    std::string error_message;
    bool operator==(const Answer&) const = default;
  };
  std::map<std::string, Answer> files, dirs, links, real_paths;
  std::map<std::string, bool> exists;
  bool operator==(const FsRecord&) const = default;
};

[[nodiscard]] nlohmann::json to_json(const FsRecord& record);
[[nodiscard]] Result<FsRecord> fs_record_from_json(const nlohmann::json& j);

// Forwards to `inner` and records every answer. Thread-safe. `inner` must outlive it.
class RecordingFs final : public Fs {
 public:
  explicit RecordingFs(const Fs& inner) : inner_(inner) {}
  [[nodiscard]] Result<std::string> read_file(const std::string& path) const override;
  [[nodiscard]] Result<std::vector<std::string>> list_dir(const std::string& path) const override;
  [[nodiscard]] Result<std::string> read_link(const std::string& path) const override;
  [[nodiscard]] Result<std::string> real_path(const std::string& path) const override;
  [[nodiscard]] bool exists(const std::string& path) const override;
  [[nodiscard]] FsRecord record() const;

 private:
  const Fs& inner_;
  mutable std::mutex mutex_;
  mutable FsRecord record_;
};

// Answers from a record; anything not recorded is kNotFound.
class ReplayFs final : public Fs {
 public:
  explicit ReplayFs(FsRecord record) : record_(std::move(record)) {}
  [[nodiscard]] Result<std::string> read_file(const std::string& path) const override;
  [[nodiscard]] Result<std::vector<std::string>> list_dir(const std::string& path) const override;
  [[nodiscard]] Result<std::string> read_link(const std::string& path) const override;
  [[nodiscard]] Result<std::string> real_path(const std::string& path) const override;
  [[nodiscard]] bool exists(const std::string& path) const override;

 private:
  FsRecord record_;
};

}  // namespace acco::core
