#include "acco/core/file.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acco/core/json.hpp"
#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::core {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(FileTest, AtomicWriteReplacesContentAndLeavesNoTemporary) {
  const acco::testing::TempDir scratch;
  const auto& dir = scratch.path();
  const auto path = (dir / "out.json").string();
  ASSERT_THAT(write_file_atomic(path, "first"), IsOk());
  ASSERT_THAT(write_file_atomic(path, "second"), IsOk());
  EXPECT_EQ(read_text_file(path).value(), "second");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
}

TEST(FileTest, AtomicWriteIntoMissingDirectoryFailsCleanly) {
  auto r = write_file_atomic("/nonexistent-acco-dir/out.json", "x");
  EXPECT_THAT(r, StatusIs(Errc::kNotFound));
  // As an output a caller asked for: the same message, every failure kCannotWrite.
  auto output = write_output_file("/nonexistent-acco-dir/out.json", "x");
  ASSERT_THAT(output, StatusIs(Errc::kCannotWrite));
  EXPECT_EQ(output.error().message, r.error().message);
}

// A symbolic link is written through; a pipe (as a device node) is refused and left as it was
// (found by a robustness sweep: `--snapshot /dev/full` had replaced the device with a file).
TEST(FileTest, AtomicWriteFollowsLinksAndNeverReplacesWhatIsNotARegularFile) {
  namespace fs = std::filesystem;
  const acco::testing::TempDir scratch;
  const auto& dir = scratch.path();
  fs::create_directories(dir / "sub");
  fs::create_symlink("sub/real.json", dir / "link.json");  // dangling until written
  ASSERT_THAT(write_file_atomic((dir / "link.json").string(), "through"), IsOk());
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir / "link.json")));
  EXPECT_EQ(read_text_file((dir / "sub" / "real.json").string()).value(), "through");
  const auto pipe = dir / "pipe";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  EXPECT_THAT(write_file_atomic(pipe.string(), "x"),
              StatusIs(Errc::kUnavailable, HasSubstr("is not a regular file (a pipe)")));
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(pipe)));
  EXPECT_THAT(write_file_atomic(dir.string(), "x"),
              StatusIs(Errc::kUnavailable, HasSubstr("(a directory)")));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), {}), 3);  // sub, link.json, pipe
}

TEST(FileTest, ADeviceIsNotReadAsAnInputFile) {
  EXPECT_THAT(read_text_file("/dev/zero"),
              StatusIs(Errc::kInvalidArgument, HasSubstr("is a device or socket")));
}

// A named pipe that no one writes held open() for ever (`--profile FIFO`, `serve --governor
// --state-file FIFO` never started); it reads as empty now. A pipe with a writer is read whole.
TEST(FileTest, ANamedPipeWithoutAWriterReadsAsEmptyInsteadOfBlocking) {
  namespace fs = std::filesystem;
  const acco::testing::TempDir scratch;
  const fs::path& dir = scratch.path();
  const fs::path pipe = dir / "pipe";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  EXPECT_EQ(read_text_file(pipe.string()).value(), "");
  EXPECT_THAT(read_json_file(pipe.string()), StatusIs(Errc::kInvalidArgument));
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "{\"a\": 1}", 8), 8);
  ::close(fds[1]);
  EXPECT_EQ(read_text_file("/dev/fd/" + std::to_string(fds[0])).value(), "{\"a\": 1}");
  ::close(fds[0]);
}

// SQLite on a device or a pipe said "disk I/O error" (or held open() on a pipe): what is there
// is named instead; an absent path or a link to a file is fine.
TEST(FileTest, CheckFileOrAbsentNamesWhatIsThere) {
  namespace fs = std::filesystem;
  const acco::testing::TempDir scratch;
  const fs::path& dir = scratch.path();
  EXPECT_THAT(check_file_or_absent((dir / "absent.db").string()), IsOk());
  std::ofstream((dir / "file.db").string()) << "x";
  fs::create_symlink(dir / "file.db", dir / "link.db");
  EXPECT_THAT(check_file_or_absent((dir / "link.db").string()), IsOk());
  ASSERT_EQ(::mkfifo((dir / "pipe.db").c_str(), 0600), 0);
  EXPECT_THAT(check_file_or_absent((dir / "pipe.db").string()),
              StatusIs(Errc::kInvalidArgument, HasSubstr("pipe.db: is a pipe, expected a file")));
  EXPECT_THAT(
      check_file_or_absent("/dev/null"),
      StatusIs(Errc::kInvalidArgument, "/dev/null: is a character device, expected a file"));
  EXPECT_THAT(check_file_or_absent(dir.string()),
              StatusIs(Errc::kInvalidArgument, HasSubstr("is a directory, expected a file")));
  // A link made before its file is fine where the file can be created.
  fs::create_symlink(dir / "later.db", dir / "early.db");
  EXPECT_THAT(check_file_or_absent((dir / "early.db").string()), IsOk());
  fs::create_symlink(dir / "no-dir" / "x.db", dir / "dangling.db");
  EXPECT_THAT(check_file_or_absent((dir / "dangling.db").string()),
              StatusIs(Errc::kNotFound, HasSubstr("x.db', whose directory does not exist")));
}

// Checked before a long run writes its report or trace at the end, so minutes of work are not
// lost to a typo in the directory.
TEST(FileTest, AnOutputFileIsCheckedBeforeTheRunThatWritesIt) {
  namespace fs = std::filesystem;
  const acco::testing::TempDir scratch;
  const fs::path& dir = scratch.path();
  EXPECT_THAT(check_output_file((dir / "report.html").string()), IsOk());
  EXPECT_THAT(check_output_directory((dir / "trace.json").string()), IsOk());
  EXPECT_THAT(check_output_directory("trace.json"), IsOk());  // the working directory
  const std::string missing = (dir / "no-dir" / "out.json").string();
  const std::string expected =
      "cannot write " + missing + ": directory " + (dir / "no-dir").string() + " does not exist";
  EXPECT_THAT(check_output_file(missing), StatusIs(Errc::kCannotWrite, expected));
  EXPECT_THAT(check_output_directory(missing), StatusIs(Errc::kCannotWrite, expected));
  // A directory where the file goes: check_file_or_absent's message, as kCannotWrite.
  EXPECT_THAT(check_output_file(dir.string()),
              StatusIs(Errc::kCannotWrite, HasSubstr("is a directory, expected a file")));
  if (::geteuid() != 0) {  // root may write anywhere
    const fs::path locked = dir / "locked";
    fs::create_directories(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_THAT(check_output_file((locked / "out.html").string()),
                StatusIs(Errc::kCannotWrite, HasSubstr("locked is not writable (")));
    fs::permissions(locked, fs::perms::owner_all);
    std::ofstream((dir / "read-only.html").string()) << "x";
    fs::permissions(dir / "read-only.html", fs::perms::owner_read);
    EXPECT_THAT(check_output_file((dir / "read-only.html").string()),
                StatusIs(Errc::kCannotWrite, HasSubstr(": the file is not writable (")));
  }
}

// A replaced file kept nothing of its own (a robustness sweep: a 0444 models file was replaced
// by a 0644 one): its permissions are kept, and one the user cannot write is not replaced.
TEST(FileTest, AReplacedFileKeepsItsPermissionsAndAReadOnlyOneIsLeftAlone) {
  namespace fs = std::filesystem;
  const acco::testing::TempDir scratch;
  const fs::path& dir = scratch.path();
  const auto file = (dir / "kept.json").string();
  ASSERT_THAT(write_file_atomic(file, "first"), IsOk());
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  ASSERT_THAT(write_file_atomic(file, "second"), IsOk());
  EXPECT_EQ(read_text_file(file).value(), "second");
  EXPECT_EQ(fs::status(file).permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  if (::geteuid() != 0) {  // root may write any file
    fs::permissions(file, fs::perms::owner_read);
    EXPECT_THAT(write_file_atomic(file, "third"),
                StatusIs(Errc::kUnavailable, HasSubstr("(not replaced)")));
    EXPECT_EQ(read_text_file(file).value(), "second");
  }
}

// `serve` died on `GET /%ff`: the 404 body's dump() threw on the path's bytes.

}  // namespace
}  // namespace acco::core
