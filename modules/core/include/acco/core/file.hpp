// Files of acco's own on the real file system (not a sysroot, which is core::Fs): reading an
// input whole with a size limit, checking a path before opening it as a database or a log or
// before a long run that writes it at its end, and atomic writes, so every caller gets the same
// one-line messages and never leaves half a file.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "acco/core/result.hpp"

namespace acco::core {

// A path acco opens as a database or a log of its own: absent, or (through its links) a regular
// file, or a symbolic link to a file not made yet in a directory that exists. Else
// kInvalidArgument naming what is there ("is a pipe, expected a file"; a device or a pipe would
// hold SQLite or a sink in open() or fail later with "disk I/O error"), or kNotFound for a link
// whose target's directory does not exist.
[[nodiscard]] Status check_file_or_absent(const std::string& path);

// An output file written at the end of a long run (a report, a profile), checked before the run
// starts: its directory (that of the file its links lead to) exists and can be written, and what
// is at the path is absent or a regular file that may be replaced. kCannotWrite otherwise: "cannot
// write PATH: directory D does not exist", "... directory D is not writable (why)", "... the file
// is not writable (why)", or check_file_or_absent's message. The write may still fail later (a
// full disk).
[[nodiscard]] Status check_output_file(const std::string& path);
// Only that the directory `path` names (its parent, "." for none) exists: kCannotWrite "cannot
// write PATH: directory D does not exist" otherwise.
[[nodiscard]] Status check_output_directory(const std::string& path);

// The largest input file acco reads whole (snapshots, configs, traces, recordings).
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{2} << 30;
// Reads a whole file from the real file system; kNotFound when absent; kInvalidArgument for a
// directory, a device or a socket, or a file (or pipe) above kMaxInputFileBytes.
[[nodiscard]] Result<std::string> read_text_file(const std::string& path);
// Writes `content` to `path` atomically: a temporary file in the same directory, fsync, rename.
// Nothing is left behind on failure. A symbolic link is written through (the file it names is
// replaced); a path that exists and is not a regular file is refused (kUnavailable).
[[nodiscard]] Status write_file_atomic(const std::string& path, std::string_view content);
// write_file_atomic for an output a caller asked for (a report, a trace, a snapshot): every
// failure is kCannotWrite (exit 73), with write_file_atomic's message.
[[nodiscard]] Status write_output_file(const std::string& path, std::string_view content);

}  // namespace acco::core
