// The storage rules: each NVMe block-queue rule fires on the DGX H100 with that one setting off
// and stays quiet on the healthy machine; the data-directory rules fire for the mounts of the
// DGX's mountinfo that deserve them, and the O_DIRECT and io_uring rules for what a live trial in
// the data directory showed. Also the reading of the queue files themselves.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"
#include "acco/topo/checks.hpp"
#include "acco/topo/probe.hpp"
#include "acco/topo/sysfs_source.hpp"

#include "machines.hpp"
#include "sysroot_builder.hpp"

namespace acco::topo {
namespace {

using acco::testing::DgxH100Options;
using ::acco::testing::IsOk;
using acco::testing::TempDir;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::Optional;

struct Probed {
  Machine machine;
  std::vector<Finding> findings;
};

// The probe acco runs (hwloc's core count included), without NVML.
Probed probe(const std::filesystem::path& dir, const std::string& data_dir = "") {
  ProbeRequest request;
  request.sysroot = dir.string();
  request.nvml = NvmlMode::kOff;
  request.data_dir = data_dir;
  auto r = topo::probe(request);
  EXPECT_THAT(r, IsOk());
  if (!r) {
    return {};
  }
  return {r->machine, r->findings};
}

Probed dgx(const DgxH100Options& options = {}, const std::string& data_dir = "") {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path(), options);
  return probe(dir.path(), data_dir);
}

std::vector<Finding> of_rule(const Probed& p, const std::string& rule) {
  std::vector<Finding> out;
  std::copy_if(p.findings.begin(), p.findings.end(), std::back_inserter(out),
               [&](const Finding& f) { return f.rule == rule; });
  return out;
}

const NvmeNamespace* ns(const Machine& m, const std::string& name) {
  const auto it = std::find_if(m.nvme_namespaces.begin(), m.nvme_namespaces.end(),
                               [&](const NvmeNamespace& n) { return n.name == name; });
  return it == m.nvme_namespaces.end() ? nullptr : &*it;
}

TEST(StorageSourceTest, EveryQueueFigureOfEachNamespaceIsRead) {
  const auto p = dgx();
  ASSERT_EQ(p.machine.nvme_namespaces.size(), 2U);
  const NvmeNamespace* n = ns(p.machine, "nvme0n1");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->controller, "nvme0");
  EXPECT_EQ(n->scheduler_text, "[none] mq-deadline");
  EXPECT_THAT(n->scheduler, Optional(std::string("none")));
  EXPECT_THAT(n->nr_requests, Optional(1023));
  EXPECT_THAT(n->max_sectors_kb, Optional(1280));
  EXPECT_THAT(n->max_hw_sectors_kb, Optional(2048));
  EXPECT_THAT(n->read_ahead_kb, Optional(128));
  EXPECT_THAT(n->logical_block_size, Optional(512));
  EXPECT_THAT(n->io_poll, Optional(false));
  EXPECT_THAT(n->hw_queues, Optional(128));
  EXPECT_THAT(p.machine.nvme_poll_queues, Optional(0));
  EXPECT_THAT(p.machine.input_issues, IsEmpty());
}

TEST(StorageSourceTest, ActiveSchedulerIsTheBracketedName) {
  EXPECT_THAT(active_scheduler("[none] mq-deadline kyber bfq\n"), Optional(std::string("none")));
  EXPECT_THAT(active_scheduler("none [mq-deadline] kyber"), Optional(std::string("mq-deadline")));
  EXPECT_THAT(active_scheduler("mq-deadline kyber [bfq] none"), Optional(std::string("bfq")));
  EXPECT_THAT(active_scheduler("none"), Optional(std::string("none")));
  EXPECT_EQ(active_scheduler("mq-deadline kyber"), std::nullopt);
  EXPECT_EQ(active_scheduler("[]"), std::nullopt);
  EXPECT_EQ(active_scheduler(""), std::nullopt);
}

TEST(StorageSourceTest, MissingQueueFilesStayUnknownWithoutAnIssue) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  const auto queue = dir.path() / "sys/block/nvme0n1/queue";
  for (const char* file : {"scheduler", "nr_requests", "max_sectors_kb", "max_hw_sectors_kb",
                           "read_ahead_kb", "logical_block_size", "io_poll"}) {
    std::filesystem::remove(queue / file);
  }
  std::filesystem::remove_all(dir.path() / "sys/block/nvme0n1/mq");
  std::filesystem::remove(dir.path() / "sys/module/nvme/parameters/poll_queues");
  const auto p = probe(dir.path());
  const NvmeNamespace* n = ns(p.machine, "nvme0n1");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->scheduler, std::nullopt);
  EXPECT_EQ(n->scheduler_text, "");
  EXPECT_EQ(n->nr_requests, std::nullopt);
  EXPECT_EQ(n->max_sectors_kb, std::nullopt);
  EXPECT_EQ(n->read_ahead_kb, std::nullopt);
  EXPECT_EQ(n->io_poll, std::nullopt);
  EXPECT_EQ(n->hw_queues, std::nullopt);
  EXPECT_EQ(p.machine.nvme_poll_queues, std::nullopt);
  EXPECT_THAT(p.machine.input_issues, IsEmpty());
  EXPECT_THAT(of_rule(p, "nvme-poll-queues-none"), IsEmpty());
}

TEST(StorageSourceTest, GarbledQueueFilesAreInputIssues) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  const auto queue = dir.path() / "sys/block/nvme0n1/queue";
  std::ofstream(queue / "scheduler") << "mq-deadline kyber\n";
  std::ofstream(queue / "nr_requests") << "lots\n";
  const auto p = probe(dir.path());
  std::vector<std::string> paths;
  for (const auto& i : p.machine.input_issues) {
    paths.push_back(i.path);
  }
  EXPECT_THAT(paths, Contains("/sys/block/nvme0n1/queue/scheduler"));
  EXPECT_THAT(paths, Contains("/sys/block/nvme0n1/queue/nr_requests"));
  EXPECT_EQ(ns(p.machine, "nvme0n1")->nr_requests, std::nullopt);
}

TEST(StorageSourceTest, MultipathPathsAndPartitionsAreNotNamespaces) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  std::filesystem::create_directories(dir.path() / "sys/block/nvme0c0n1/queue");
  std::filesystem::create_directories(dir.path() / "sys/block/nvme0n1p1/queue");
  const auto p = probe(dir.path());
  EXPECT_THAT(p.machine.nvme_namespaces, ElementsAre(Field(&NvmeNamespace::name, "nvme0n1"),
                                                     Field(&NvmeNamespace::name, "nvme1n1")));
}

TEST(StorageChecksTest, HealthyDgxReportsOnlyTheMissingPollQueues) {
  const auto p = dgx();
  for (const char* rule :
       {"nvme-scheduler-not-none", "nvme-nr-requests-low", "nvme-max-sectors-small",
        "nvme-read-ahead-small", "nvme-read-ahead-large", "nvme-queues-few", "data-dir-fs",
        "data-dir-mount-options", "data-dir-not-nvme"}) {
    EXPECT_THAT(of_rule(p, rule), IsEmpty()) << rule;
  }
  const auto poll = of_rule(p, "nvme-poll-queues-none");
  ASSERT_EQ(poll.size(), 1U);
  EXPECT_EQ(poll[0].severity, Severity::kInfo);
  EXPECT_THAT(poll[0].devices, ElementsAre("nvme0n1", "nvme1n1"));
  EXPECT_EQ(poll[0].evidence.front().source, "/sys/module/nvme/parameters/poll_queues");
  EXPECT_THAT(poll[0].recommendation, HasSubstr("options nvme poll_queues=4"));
}

TEST(StorageChecksTest, PollQueuesConfiguredAreQuiet) {
  EXPECT_THAT(of_rule(dgx({.nvme_poll_queues = true}), "nvme-poll-queues-none"), IsEmpty());
}

TEST(StorageChecksTest, SchedulerOtherThanNoneIsAWarningWithTheEchoAndUdevFix) {
  const auto p = dgx({.nvme_scheduler = 1});
  const auto f = of_rule(p, "nvme-scheduler-not-none");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_THAT(f[0].devices, ElementsAre("nvme1n1"));
  EXPECT_EQ(f[0].evidence.front().source, "/sys/block/nvme1n1/queue/scheduler");
  EXPECT_EQ(f[0].evidence.front().value, "none [mq-deadline] kyber bfq");
  EXPECT_THAT(f[0].message, HasSubstr("mq-deadline"));
  EXPECT_THAT(f[0].recommendation, HasSubstr("echo none > /sys/block/nvme1n1/queue/scheduler"));
  EXPECT_THAT(f[0].recommendation, HasSubstr("ATTR{queue/scheduler}=\"none\""));
}

TEST(StorageChecksTest, FewQueuedRequestsAreAWarningBelow32) {
  const auto f = of_rule(dgx({.nvme_nr_requests = 0}), "nvme-nr-requests-low");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_THAT(f[0].devices, ElementsAre("nvme0n1"));
  EXPECT_EQ(f[0].evidence.front().value, "16");
  EXPECT_THAT(f[0].recommendation, HasSubstr("echo 1023 > /sys/block/nvme0n1/queue/nr_requests"));
}

TEST(StorageChecksTest, SmallMaxSectorsBelowTheHardwareIsReportedWithTheKernelDefaultAsFix) {
  const auto f = of_rule(dgx({.nvme_max_sectors = 0}), "nvme-max-sectors-small");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  ASSERT_EQ(f[0].evidence.size(), 2U);
  EXPECT_EQ(f[0].evidence[0].value, "64");
  EXPECT_EQ(f[0].evidence[1].value, "2048");
  EXPECT_THAT(f[0].recommendation,
              HasSubstr("echo 1280 > /sys/block/nvme0n1/queue/max_sectors_kb"));
}

TEST(StorageChecksTest, MaxSectorsAtTheHardwareLimitIsQuietHoweverSmall) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  for (const char* file : {"max_sectors_kb", "max_hw_sectors_kb"}) {
    std::ofstream(dir.path() / "sys/block/nvme0n1/queue" / file) << "128\n";
  }
  EXPECT_THAT(of_rule(probe(dir.path()), "nvme-max-sectors-small"), IsEmpty());
}

TEST(StorageChecksTest, ReadAheadOffIsAWarning) {
  const auto f = of_rule(dgx({.nvme_read_ahead_off = 0}), "nvme-read-ahead-small");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_EQ(f[0].evidence.front().source, "/sys/block/nvme0n1/queue/read_ahead_kb");
  EXPECT_THAT(f[0].recommendation, HasSubstr("echo 128 > /sys/block/nvme0n1/queue/read_ahead_kb"));
}

TEST(StorageChecksTest, ReadAheadBelowTheDefaultIsInfo) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  std::ofstream(dir.path() / "sys/block/nvme1n1/queue/read_ahead_kb") << "64\n";
  const auto f = of_rule(probe(dir.path()), "nvme-read-ahead-small");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_THAT(f[0].devices, ElementsAre("nvme1n1"));
}

TEST(StorageChecksTest, HugeReadAheadIsInfo) {
  const auto p = dgx({.nvme_read_ahead_large = 1});
  const auto f = of_rule(p, "nvme-read-ahead-large");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_EQ(f[0].evidence.front().value, "65536");
  EXPECT_THAT(of_rule(p, "nvme-read-ahead-small"), IsEmpty());
}

TEST(StorageChecksTest, FewerHardwareQueuesThanCoresIsInfo) {
  const auto f = of_rule(dgx({.nvme_queues_few = 0}), "nvme-queues-few");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_EQ(f[0].evidence[0].value, "8 hardware queue(s)");
  EXPECT_THAT(f[0].message, HasSubstr("8 hardware queue(s) for 112 cores"));
}

TEST(StorageChecksTest, DataDirOnNvmeWithGoodOptionsIsQuiet) {
  for (const char* path : {"/raid/imagenet", "/home/user", "/scratch space/x"}) {
    const auto p = dgx({}, path);
    for (const char* rule : {"data-dir-fs", "data-dir-mount-options", "data-dir-not-nvme"}) {
      EXPECT_THAT(of_rule(p, rule), IsEmpty()) << rule << " for " << path;
    }
  }
}

TEST(StorageChecksTest, DataDirOnOverlayIsAWarning) {
  const auto f = of_rule(dgx({}, "/var/lib/docker/overlay2/l1/merged/data"), "data-dir-fs");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_THAT(f[0].message, HasSubstr("overlayfs"));
  EXPECT_EQ(f[0].evidence.front().source, "/proc/self/mountinfo");
  EXPECT_THAT(f[0].evidence.front().value, HasSubstr("type overlay"));
}

TEST(StorageChecksTest, DataDirOnFuseIsAWarningAndOnNfsOrTmpfsInfo) {
  const auto fuse = of_rule(dgx({}, "/mnt/s3/bucket"), "data-dir-fs");
  ASSERT_EQ(fuse.size(), 1U);
  EXPECT_EQ(fuse[0].severity, Severity::kWarning);
  const auto nfs = dgx({}, "/mnt/datasets");
  ASSERT_EQ(of_rule(nfs, "data-dir-fs").size(), 1U);
  EXPECT_EQ(of_rule(nfs, "data-dir-fs")[0].severity, Severity::kInfo);
  EXPECT_THAT(of_rule(nfs, "data-dir-fs")[0].message, HasSubstr("storage01:/export/datasets"));
  EXPECT_THAT(of_rule(nfs, "data-dir-not-nvme"), IsEmpty());
  EXPECT_THAT(of_rule(nfs, "data-dir-mount-options"), IsEmpty());
  const auto shm = of_rule(dgx({}, "/dev/shm/cache"), "data-dir-fs");
  ASSERT_EQ(shm.size(), 1U);
  EXPECT_EQ(shm[0].severity, Severity::kInfo);
  EXPECT_THAT(shm[0].message, HasSubstr("tmpfs"));
}

TEST(StorageChecksTest, DataDirMountedSyncIsAWarning) {
  const auto f = of_rule(dgx({.raid_sync = true}, "/raid"), "data-dir-mount-options");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_THAT(f[0].message, HasSubstr("sync"));
  EXPECT_THAT(f[0].recommendation, HasSubstr("mount -o remount,async /raid"));
  EXPECT_THAT(f[0].devices, ElementsAre("nvme1n1"));
}

TEST(StorageChecksTest, DataDirOnExt4DataJournalIsAWarning) {
  const auto f = of_rule(dgx({.raid_data_journal = true}, "/raid"), "data-dir-mount-options");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_THAT(f[0].message, HasSubstr("data=journal"));
}

TEST(StorageChecksTest, DataDirWithStrictAtimeIsInfo) {
  const auto f = of_rule(dgx({.raid_strictatime = true}, "/raid"), "data-dir-mount-options");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_THAT(f[0].recommendation, HasSubstr("remount,noatime /raid"));
}

TEST(StorageChecksTest, DataDirNotOnNvmeIsInfoNamingTheSource) {
  const auto p = dgx({}, "/boot/efi");
  const auto f = of_rule(p, "data-dir-not-nvme");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_THAT(f[0].message, HasSubstr("/dev/sda1"));
  EXPECT_THAT(f[0].devices, ElementsAre("/boot/efi"));
  EXPECT_THAT(of_rule(p, "data-dir-fs"), IsEmpty());
}

TEST(StorageChecksTest, DataDirWithoutAMountTableIsInfo) {
  TempDir dir;
  acco::testing::write_workstation(dir.path());
  const auto f = of_rule(probe(dir.path(), "/data"), "data-dir-fs");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_THAT(f[0].message, HasSubstr("unknown"));
}

// The DGX with `data_dir` and what a live trial there would have shown (a sysroot's probe never
// tries, so the value is set on the machine and the checks run on it).
std::vector<Finding> with_trial(const std::string& data_dir, const DirectIo& trial,
                                const DgxH100Options& options = {}) {
  Machine m = dgx(options, data_dir).machine;
  EXPECT_TRUE(m.data_dir.has_value());
  if (m.data_dir) {
    m.data_dir->direct_io = trial;
    m.data_dir->direct_io_untried.clear();
  }
  return check(m);
}

std::vector<Finding> of_rule(const std::vector<Finding>& findings, const std::string& rule) {
  std::vector<Finding> out;
  std::copy_if(findings.begin(), findings.end(), std::back_inserter(out),
               [&](const Finding& f) { return f.rule == rule; });
  return out;
}

DirectIo works() {
  DirectIo d;
  d.o_direct = true;
  d.io_uring = true;
  d.memory_alignment = 512;
  d.offset_alignment = 512;
  d.alignment_source = "statx";
  return d;
}

TEST(StorageChecksTest, ASysrootsDataDirIsNotTriedForDirectIo) {
  const auto p = dgx({}, "/raid");
  ASSERT_TRUE(p.machine.data_dir.has_value());
  EXPECT_FALSE(p.machine.data_dir->direct_io.has_value());
  EXPECT_EQ(p.machine.data_dir->direct_io_untried, "recorded machine");
  EXPECT_THAT(of_rule(p, "data-dir-direct-io-refused"), IsEmpty());
  EXPECT_THAT(of_rule(p, "data-dir-io-uring-refused"), IsEmpty());
}

TEST(StorageChecksTest, ATrialWhereBothWorkIsQuiet) {
  const auto f = with_trial("/raid", works());
  EXPECT_THAT(of_rule(f, "data-dir-direct-io-refused"), IsEmpty());
  EXPECT_THAT(of_rule(f, "data-dir-io-uring-refused"), IsEmpty());
}

TEST(StorageChecksTest, RefusedODirectIsAWarningWithTheErrorAsEvidence) {
  DirectIo trial = works();
  trial.o_direct = false;
  trial.o_direct_error = "open(O_DIRECT): Invalid argument";
  const auto f = of_rule(with_trial("/var/lib/docker/overlay2/l1/merged/data", trial),
                         "data-dir-direct-io-refused");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_EQ(f[0].evidence.front().value, "open(O_DIRECT): Invalid argument");
  EXPECT_THAT(f[0].evidence.front().source, HasSubstr("O_DIRECT read of a scratch file"));
  EXPECT_THAT(f[0].evidence.back().value, HasSubstr("type overlay"));
  EXPECT_THAT(f[0].message, HasSubstr("on overlay refuses O_DIRECT"));
  EXPECT_THAT(f[0].message, HasSubstr("page cache"));
  EXPECT_THAT(f[0].recommendation, HasSubstr("Bind-mount"));
  EXPECT_THAT(of_rule(with_trial("/var/lib/docker/overlay2/l1/merged/data", trial),
                      "data-dir-io-uring-refused"),
              IsEmpty());
}

TEST(StorageChecksTest, RefusedODirectOnExt4DataJournalNamesTheMountOption) {
  DirectIo trial = works();
  trial.o_direct = false;
  trial.o_direct_error = "pread(O_DIRECT): Invalid argument";
  const auto f = of_rule(with_trial("/raid", trial, {.raid_data_journal = true}),
                         "data-dir-direct-io-refused");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_THAT(f[0].devices, ElementsAre("nvme1n1"));
  EXPECT_THAT(f[0].recommendation, HasSubstr("Mount /raid with data=ordered"));
}

TEST(StorageChecksTest, RefusedODirectOnTmpfsIsOnlyInfo) {
  DirectIo trial = works();
  trial.o_direct = false;
  trial.o_direct_error = "open(O_DIRECT): Invalid argument";
  const auto f = of_rule(with_trial("/dev/shm/cache", trial), "data-dir-direct-io-refused");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_THAT(f[0].recommendation, HasSubstr("already in memory"));
}

TEST(StorageChecksTest, RefusedODirectWithAnUnknownMountIsStillAWarning) {
  TempDir dir;
  acco::testing::write_workstation(dir.path());
  Machine m = probe(dir.path(), "/data").machine;
  ASSERT_TRUE(m.data_dir.has_value());
  ASSERT_FALSE(m.data_dir->unavailable.empty());
  DirectIo trial = works();
  trial.o_direct = false;
  trial.o_direct_error = "open(O_DIRECT): Invalid argument";
  m.data_dir->direct_io = trial;
  const auto f = of_rule(check(m), "data-dir-direct-io-refused");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_THAT(f[0].devices, ElementsAre("/data"));
  EXPECT_EQ(f[0].evidence.size(), 1U);
  EXPECT_THAT(f[0].message, HasSubstr("/data refuses O_DIRECT"));
}

TEST(StorageChecksTest, RefusedIoUringIsAWarningWithTheSysctlAndSeccompFix) {
  DirectIo trial = works();
  trial.io_uring = false;
  trial.io_uring_error =
      "io_uring not permitted here (Operation not permitted: seccomp or kernel.io_uring_disabled)";
  const auto all = with_trial("/raid", trial);
  const auto f = of_rule(all, "data-dir-io-uring-refused");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_THAT(f[0].devices, ElementsAre("/raid"));
  EXPECT_EQ(f[0].evidence.front().value, trial.io_uring_error);
  EXPECT_THAT(f[0].message, HasSubstr("falls back to pread"));
  EXPECT_THAT(f[0].recommendation, HasSubstr("sysctl kernel.io_uring_disabled=0"));
  EXPECT_THAT(f[0].recommendation,
              HasSubstr("io_uring_setup, io_uring_enter and io_uring_register"));
  EXPECT_THAT(of_rule(all, "data-dir-direct-io-refused"), IsEmpty());
}

}  // namespace
}  // namespace acco::topo
