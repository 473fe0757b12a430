// Storage checks: GPUs whose nearest NVMe drive sits on another socket, how the block layer
// queues each NVMe namespace (scheduler, request counts and sizes, read-ahead, hardware and poll
// queues), and the file system that holds the data directory named with --data-dir, with what
// trying O_DIRECT and io_uring there showed.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "checks/check_support.hpp"
#include "checks/rule_checks.hpp"

namespace acco::topo::detail {
namespace {

// Below these the rules report (the reasons are in docs/findings.md next to each rule).
constexpr std::int64_t kNrRequestsInfo = 128;  // vendors rate random reads at 128+ in flight
constexpr std::int64_t kNrRequestsWarning = 32;
constexpr std::int64_t kMaxSectorsInfoKb = 512;
constexpr std::int64_t kMaxSectorsWarningKb = 128;  // the size drives rate sequential reads at
// The kernel's own cap for a new queue's max_sectors_kb (BLK_DEF_MAX_SECTORS, 2560 sectors).
constexpr std::int64_t kKernelDefaultMaxSectorsKb = 1280;
constexpr std::int64_t kReadAheadDefaultKb = 128;  // VM_READAHEAD_PAGES, the kernel default
constexpr std::int64_t kReadAheadLargeKb = 16384;

std::string queue_file(const NvmeNamespace& ns, const char* file) {
  return fmt::format("/sys/block/{}/queue/{}", ns.name, file);
}

// "ACTION==\"add|change\", KERNEL==\"nvme0n1\", ATTR{queue/<attr>}=\"<value>\"" in a rules file.
std::string udev_rule(const std::string& kernel, const char* attr, const std::string& value) {
  return fmt::format(
      "to keep it across reboots, add `ACTION==\"add|change\", KERNEL==\"{}\", "
      "ATTR{{queue/{}}}=\"{}\"` to /etc/udev/rules.d/60-acco-nvme.rules",
      kernel, attr, value);
}

Finding namespace_finding(const NvmeNamespace& ns, Severity severity) {
  Finding f;
  f.severity = severity;
  f.devices = {ns.name};
  return f;
}

bool one_of(std::string_view value, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), value) != names.end();
}

bool has_option(const std::string& options, std::string_view option) {
  for (std::size_t start = 0; start <= options.size();) {
    const auto end = std::min(options.find(',', start), options.size());
    if (std::string_view(options).substr(start, end - start) == option) {
      return true;
    }
    start = end + 1;
  }
  return false;
}

bool is_network_fs(std::string_view type) {
  return one_of(type, {"nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "lustre",
                       "gpfs", "beegfs", "9p", "virtiofs", "afs", "orangefs"});
}

bool is_memory_fs(std::string_view type) {
  return one_of(type, {"tmpfs", "ramfs"});
}

bool is_fuse(std::string_view type) {
  return type == "fuse" || type.substr(0, 5) == "fuse.";
}

// The mountinfo line that placed the data directory, as evidence.
Evidence mount_evidence(const DataDir& d) {
  return {"/proc/self/mountinfo",
          fmt::format("{} on {} type {} ({}; {}) device {}", d.mount.source, d.mount.mount_point,
                      d.mount.fs_type, d.mount.options, d.mount.super_options, d.mount.device)};
}

Finding data_dir_finding(const DataDir& d, Severity severity) {
  Finding f;
  f.severity = severity;
  f.devices = d.nvme_namespaces.empty() ? std::vector<std::string>{d.path} : d.nvme_namespaces;
  f.evidence = {mount_evidence(d)};
  return f;
}

}  // namespace

void check_nvme_gpu_remote(const Machine& m, std::vector<Finding>& out) {
  for (const auto& [gpu, drive] : gpus_with_remote_nearest(m, DeviceKind::kNvme)) {
    Finding f;
    f.severity = Severity::kWarning;
    f.devices = {gpu->address, drive->address};
    f.evidence = numa_evidence(*gpu);
    const auto theirs = numa_evidence(*drive);
    f.evidence.insert(f.evidence.end(), theirs.begin(), theirs.end());
    f.message = fmt::format(
        "gpu {} has no NVMe drive on its socket: the nearest, {}, is across the CPU "
        "interconnect (SYS), so storage-to-GPU reads (GPUDirect Storage) cross sockets",
        gpu->address, drive->address);
    f.recommendation =
        "Place an NVMe drive on each GPU socket, or stage data for this GPU from a drive on "
        "NUMA node " +
        std::to_string(gpu->numa_node);
    out.push_back(std::move(f));
  }
}

void check_nvme_scheduler_not_none(const Machine& m, std::vector<Finding>& out) {
  for (const auto& ns : m.nvme_namespaces) {
    if (!ns.scheduler || *ns.scheduler == "none") {
      continue;
    }
    Finding f = namespace_finding(ns, Severity::kWarning);
    f.evidence = {{queue_file(ns, "scheduler"), ns.scheduler_text}};
    f.message = fmt::format(
        "{} queues its requests through the {} I/O scheduler: an NVMe drive has no seek to "
        "reorder for, and the scheduler adds a lock and a sort to every request, which caps "
        "IOPS at high queue depth",
        ns.name, *ns.scheduler);
    f.recommendation = fmt::format("`echo none > {}`; {}", queue_file(ns, "scheduler"),
                                   udev_rule("nvme[0-9]*n[0-9]*", "scheduler", "none"));
    out.push_back(std::move(f));
  }
}

void check_nvme_nr_requests_low(const Machine& m, std::vector<Finding>& out) {
  for (const auto& ns : m.nvme_namespaces) {
    if (!ns.nr_requests || *ns.nr_requests >= kNrRequestsInfo) {
      continue;
    }
    Finding f = namespace_finding(
        ns, *ns.nr_requests < kNrRequestsWarning ? Severity::kWarning : Severity::kInfo);
    f.evidence = {{queue_file(ns, "nr_requests"), std::to_string(*ns.nr_requests)}};
    f.message = fmt::format(
        "{} queues at most {} requests per hardware queue: a reader on one CPU submits to one "
        "hardware queue, so it cannot keep more in flight, and NVMe drives reach their rated "
        "random-read IOPS only with {} or more",
        ns.name, *ns.nr_requests, kNrRequestsInfo);
    f.recommendation = fmt::format(
        "`echo 1023 > {}` (the kernel refuses more than the driver's queue depth; raise that "
        "with `options nvme io_queue_depth=1024` in /etc/modprobe.d/nvme.conf); {}",
        queue_file(ns, "nr_requests"), udev_rule(ns.name, "nr_requests", "1023"));
    out.push_back(std::move(f));
  }
}

void check_nvme_max_sectors_small(const Machine& m, std::vector<Finding>& out) {
  for (const auto& ns : m.nvme_namespaces) {
    if (!ns.max_sectors_kb || !ns.max_hw_sectors_kb ||
        *ns.max_sectors_kb >= *ns.max_hw_sectors_kb || *ns.max_sectors_kb >= kMaxSectorsInfoKb) {
      continue;
    }
    Finding f = namespace_finding(
        ns, *ns.max_sectors_kb < kMaxSectorsWarningKb ? Severity::kWarning : Severity::kInfo);
    f.evidence = {{queue_file(ns, "max_sectors_kb"), std::to_string(*ns.max_sectors_kb)},
                  {queue_file(ns, "max_hw_sectors_kb"), std::to_string(*ns.max_hw_sectors_kb)}};
    const auto target = std::to_string(std::min(*ns.max_hw_sectors_kb, kKernelDefaultMaxSectorsKb));
    f.message = fmt::format(
        "{} splits reads larger than {} KiB although the controller takes {} KiB: a large read "
        "becomes several commands, each with its own completion and interrupt",
        ns.name, *ns.max_sectors_kb, *ns.max_hw_sectors_kb);
    f.recommendation = fmt::format("`echo {} > {}`; {}", target, queue_file(ns, "max_sectors_kb"),
                                   udev_rule(ns.name, "max_sectors_kb", target));
    out.push_back(std::move(f));
  }
}

void check_nvme_read_ahead_small(const Machine& m, std::vector<Finding>& out) {
  for (const auto& ns : m.nvme_namespaces) {
    if (!ns.read_ahead_kb || *ns.read_ahead_kb >= kReadAheadDefaultKb) {
      continue;
    }
    const bool off = *ns.read_ahead_kb == 0;
    Finding f = namespace_finding(ns, off ? Severity::kWarning : Severity::kInfo);
    f.evidence = {{queue_file(ns, "read_ahead_kb"), std::to_string(*ns.read_ahead_kb)}};
    f.message =
        off ? fmt::format(
                  "{} has read-ahead off: buffered reads (no O_DIRECT) of a file on it read one "
                  "page-cache folio at a time, each waiting for the drive",
                  ns.name)
            : fmt::format(
                  "{} reads ahead only {} KiB, below the kernel's default of {} KiB: buffered "
                  "sequential reads (no O_DIRECT) reach the drive in small requests",
                  ns.name, *ns.read_ahead_kb, kReadAheadDefaultKb);
    f.recommendation =
        fmt::format("`echo {} > {}` (O_DIRECT readers do not use read-ahead); {}",
                    kReadAheadDefaultKb, queue_file(ns, "read_ahead_kb"),
                    udev_rule(ns.name, "read_ahead_kb", std::to_string(kReadAheadDefaultKb)));
    out.push_back(std::move(f));
  }
}

void check_nvme_read_ahead_large(const Machine& m, std::vector<Finding>& out) {
  for (const auto& ns : m.nvme_namespaces) {
    if (!ns.read_ahead_kb || *ns.read_ahead_kb <= kReadAheadLargeKb) {
      continue;
    }
    Finding f = namespace_finding(ns, Severity::kInfo);
    f.evidence = {{queue_file(ns, "read_ahead_kb"), std::to_string(*ns.read_ahead_kb)}};
    f.message = fmt::format(
        "{} reads ahead {} KiB: each buffered sequential stream holds up to that much page "
        "cache, and a page fault in a memory-mapped file reads that much around it, so random "
        "reads of small records (mmap'd arrays, LMDB) read far more than they use",
        ns.name, *ns.read_ahead_kb);
    f.recommendation =
        fmt::format("For random or memory-mapped access, `echo 4096 > {}`; {}",
                    queue_file(ns, "read_ahead_kb"), udev_rule(ns.name, "read_ahead_kb", "4096"));
    out.push_back(std::move(f));
  }
}

void check_nvme_queues_few(const Machine& m, std::vector<Finding>& out) {
  // blk-mq puts SMT siblings on one queue when queues are short, and two threads of one core
  // sharing a queue cost nothing, so cores are what a queue per submitter needs.
  const bool by_cores = m.cpu.cores > 0;
  const int submitters = by_cores ? m.cpu.cores : static_cast<int>(m.online_cpus.size());
  if (submitters <= 1) {
    return;
  }
  for (const auto& ns : m.nvme_namespaces) {
    if (!ns.hw_queues || *ns.hw_queues <= 0 || *ns.hw_queues >= submitters) {
      continue;
    }
    Finding f = namespace_finding(ns, Severity::kInfo);
    f.evidence = {{fmt::format("/sys/block/{}/mq", ns.name),
                   fmt::format("{} hardware queue(s)", *ns.hw_queues)},
                  {by_cores ? std::string("hwloc") : std::string("/sys/devices/system/cpu/online"),
                   fmt::format("{} {}", submitters, by_cores ? "cores" : "online CPUs")}};
    f.message = fmt::format(
        "{} has {} hardware queue(s) for {} {}: up to {} cores submit to one queue and contend "
        "for its lock and doorbell at high IOPS",
        ns.name, *ns.hw_queues, submitters, by_cores ? "cores" : "CPUs",
        (submitters + *ns.hw_queues - 1) / *ns.hw_queues);
    f.recommendation = fmt::format(
        "The controller grants the queues (`nvme get-feature /dev/{} -f 7 -H` shows how many); "
        "in a VM give its NVMe device more (QEMU `-device nvme,max_ioqpairs=N`), else run the "
        "readers on few CPUs",
        ns.controller.empty() ? ns.name : ns.controller);
    out.push_back(std::move(f));
  }
}

void check_nvme_poll_queues_none(const Machine& m, std::vector<Finding>& out) {
  if (!m.nvme_poll_queues || *m.nvme_poll_queues > 0 || m.nvme_namespaces.empty()) {
    return;
  }
  const bool pcie = std::any_of(m.nvme_controllers.begin(), m.nvme_controllers.end(),
                                [](const NvmeController& c) { return c.transport == "pcie"; });
  if (!pcie) {
    return;
  }
  Finding f;
  f.severity = Severity::kInfo;
  f.evidence = {{"/sys/module/nvme/parameters/poll_queues", "0"}};
  for (const auto& ns : m.nvme_namespaces) {
    f.devices.push_back(ns.name);
    if (ns.io_poll) {
      f.evidence.push_back({queue_file(ns, "io_poll"), *ns.io_poll ? "1" : "0"});
    }
  }
  f.message =
      "the nvme driver has no poll queues: io_uring rings set up with IORING_SETUP_IOPOLL (and "
      "preadv2 with RWF_HIPRI) cannot poll for completions and wait for interrupts instead, "
      "which costs latency at queue depth 1-4";
  f.recommendation =
      "Add `options nvme poll_queues=4` to /etc/modprobe.d/nvme.conf, then rebuild the initramfs "
      "(`update-initramfs -u` or `dracut -f`) and reboot, or boot with `nvme.poll_queues=4`; the "
      "driver reads it when a controller resets";
  out.push_back(std::move(f));
}

void check_data_dir_fs(const Machine& m, std::vector<Finding>& out) {
  if (!m.data_dir) {
    return;
  }
  const DataDir& d = *m.data_dir;
  if (!d.unavailable.empty()) {
    Finding f;
    f.severity = Severity::kInfo;
    f.devices = {d.path};
    f.evidence = {{"/proc/self/mountinfo", d.unavailable}};
    f.message = fmt::format("the file system holding {} is unknown: {}", d.path, d.unavailable);
    f.recommendation =
        "Run acco on the machine itself (or take the snapshot with --data-dir, which records "
        "/proc/self/mountinfo)";
    out.push_back(std::move(f));
    return;
  }
  const std::string& type = d.mount.fs_type;
  if (type == "overlay") {
    Finding f = data_dir_finding(d, Severity::kWarning);
    f.message = fmt::format(
        "{} is on overlayfs (a container's root file system): every read goes through the "
        "overlay to a layer below, whose file system decides whether O_DIRECT works, and "
        "writes copy whole files up into the writable layer",
        d.path);
    f.recommendation =
        "Bind-mount the data directory from the host's NVMe file system into the container "
        "(`docker run -v /host/data:/data`, a hostPath or local volume in Kubernetes)";
    out.push_back(std::move(f));
  } else if (is_memory_fs(type)) {
    Finding f = data_dir_finding(d, Severity::kInfo);
    f.message = fmt::format(
        "{} is on {}: its files live in memory, so reads never reach a drive and the NVMe "
        "figures do not apply; open(O_DIRECT) fails with EINVAL on tmpfs before Linux 6.6",
        d.path, type);
    f.recommendation =
        "Point --data-dir at the directory the data set is loaded from, if this one is a "
        "staging copy";
    out.push_back(std::move(f));
  } else if (is_fuse(type)) {
    Finding f = data_dir_finding(d, Severity::kWarning);
    f.message = fmt::format(
        "{} is on a FUSE file system ({}): a user-space daemon serves every read, which "
        "bounds throughput and adds a context switch per request, and O_DIRECT reaches the "
        "daemon only where it was mounted to pass it on",
        d.path, type);
    f.recommendation =
        "Copy the data set to a local NVMe file system before the run, or use the storage's "
        "kernel client where one exists";
    out.push_back(std::move(f));
  } else if (is_network_fs(type)) {
    Finding f = data_dir_finding(d, Severity::kInfo);
    f.message = fmt::format(
        "{} is on a network file system ({} from {}): reads are bounded by the network and the "
        "servers, not by local NVMe, and the NVMe rules above do not apply to it",
        d.path, type, d.mount.source);
    f.recommendation =
        "For repeated epochs, stage the data set on a local NVMe drive; otherwise measure the "
        "file system itself (fio on the mount) rather than the drives";
    out.push_back(std::move(f));
  }
}

void check_data_dir_mount_options(const Machine& m, std::vector<Finding>& out) {
  if (!m.data_dir || !m.data_dir->unavailable.empty()) {
    return;
  }
  const DataDir& d = *m.data_dir;
  const Mount& mount = d.mount;
  if (has_option(mount.options, "sync") || has_option(mount.super_options, "sync")) {
    Finding f = data_dir_finding(d, Severity::kWarning);
    f.message = fmt::format(
        "{} is mounted with sync: every write waits for the drive, so checkpoints and "
        "preprocessed shards written there crawl",
        d.path);
    f.recommendation =
        fmt::format("`mount -o remount,async {}` and remove sync from its options in /etc/fstab",
                    mount.mount_point);
    out.push_back(std::move(f));
  }
  if (mount.fs_type == "ext4" && has_option(mount.super_options, "data=journal")) {
    Finding f = data_dir_finding(d, Severity::kWarning);
    f.message = fmt::format(
        "{} is on ext4 with data=journal: ext4 does no direct I/O in that mode, so O_DIRECT "
        "reads and writes fall back to the page cache, and every write is written twice",
        d.path);
    f.recommendation = fmt::format(
        "Mount {} with data=ordered (the default): change it in /etc/fstab and remount (the "
        "journalling mode cannot change on remount)",
        mount.mount_point);
    out.push_back(std::move(f));
  }
  // mountinfo shows "relatime" or "noatime"; neither is strictatime, an on-disk inode update per
  // read. File systems without atime (network, overlay, memory) are left alone.
  const bool block_backed = !is_memory_fs(mount.fs_type) && !is_network_fs(mount.fs_type) &&
                            !is_fuse(mount.fs_type) && mount.fs_type != "overlay";
  if (block_backed && !has_option(mount.options, "noatime") &&
      !has_option(mount.options, "relatime")) {
    Finding f = data_dir_finding(d, Severity::kInfo);
    f.message = fmt::format(
        "{} is mounted with strictatime: every read of a file also writes its inode's access "
        "time, a write per file opened",
        d.path);
    f.recommendation =
        fmt::format("`mount -o remount,noatime {}` and add noatime to its options in /etc/fstab",
                    mount.mount_point);
    out.push_back(std::move(f));
  }
}

void check_data_dir_not_nvme(const Machine& m, std::vector<Finding>& out) {
  if (!m.data_dir || !m.data_dir->unavailable.empty() || !m.data_dir->nvme_namespaces.empty()) {
    return;
  }
  const DataDir& d = *m.data_dir;
  const std::string& type = d.mount.fs_type;
  if (is_memory_fs(type) || is_network_fs(type) || is_fuse(type) || type == "overlay") {
    return;  // data-dir-fs says what it is on
  }
  Finding f = data_dir_finding(d, Severity::kInfo);
  if (!d.device_evidence.empty()) {
    f.evidence.push_back({d.device_evidence, "no NVMe namespace below it"});
  }
  f.message = fmt::format(
      "{} is on {} ({}), which is not an NVMe namespace: the NVMe queue rules and GPU locality "
      "do not describe the drive it is read from",
      d.path, d.mount.source, type);
  f.recommendation =
      "Keep the data set on an NVMe file system (`acco probe --json` lists nvme_namespaces); if "
      "this is one behind a layer acco does not follow, check `lsblk -s " +
      d.mount.source + "`";
  out.push_back(std::move(f));
}

void check_data_dir_direct_io_refused(const Machine& m, std::vector<Finding>& out) {
  if (!m.data_dir || !m.data_dir->direct_io || m.data_dir->direct_io->o_direct) {
    return;
  }
  const DataDir& d = *m.data_dir;
  const std::string& type = d.mount.fs_type;
  // On tmpfs the data is in memory already: the page cache is all there is to read from.
  const bool memory = d.unavailable.empty() && is_memory_fs(type);
  Finding f;
  if (d.unavailable.empty()) {
    f = data_dir_finding(d, memory ? Severity::kInfo : Severity::kWarning);
  } else {
    f.severity = Severity::kWarning;
    f.devices = {d.path};
  }
  f.evidence.insert(
      f.evidence.begin(),
      {fmt::format("O_DIRECT read of a scratch file in {}", d.path), d.direct_io->o_direct_error});
  const std::string on = d.unavailable.empty() ? fmt::format(" on {}", type) : std::string();
  f.message = fmt::format(
      "{}{} refuses O_DIRECT ({}): acco's reader, fio --direct=1 and GPUDirect Storage fall back "
      "to buffered reads through the page cache, which copy every byte once more and push other "
      "data out of memory",
      d.path, on, d.direct_io->o_direct_error);
  if (memory) {
    f.recommendation =
        "Nothing to fix for data already in memory (tmpfs takes O_DIRECT from Linux 6.6); for "
        "the data set itself, point --data-dir at the ext4 or xfs file system it is loaded from";
  } else if (type == "overlay") {
    f.recommendation =
        "Bind-mount the data directory from the host's ext4 or xfs file system on the NVMe drive "
        "(`docker run -v /host/data:/data`, a hostPath or local volume in Kubernetes)";
  } else if (type == "ext4" && has_option(d.mount.super_options, "data=journal")) {
    f.recommendation = fmt::format(
        "Mount {} with data=ordered (ext4 does no direct I/O with data=journal): change it in "
        "/etc/fstab and mount it afresh",
        d.mount.mount_point);
  } else {
    f.recommendation =
        "Put the data set on ext4 or xfs on a local NVMe drive, where O_DIRECT works; a FUSE or "
        "network file system takes O_DIRECT only where its daemon or client supports it";
  }
  out.push_back(std::move(f));
}

void check_data_dir_io_uring_refused(const Machine& m, std::vector<Finding>& out) {
  if (!m.data_dir || !m.data_dir->direct_io || m.data_dir->direct_io->io_uring) {
    return;
  }
  const DataDir& d = *m.data_dir;
  Finding f;
  f.severity = Severity::kWarning;
  f.devices = {d.path};
  f.evidence = {{"io_uring_setup (a ring of 4 entries)", d.direct_io->io_uring_error}};
  f.message = fmt::format(
      "io_uring cannot be set up for this process ({}): acco's reader falls back to pread on one "
      "thread, one request in flight, and fio's io_uring engine fails, so reads of {} reach a "
      "fraction of what the drive serves at depth",
      d.direct_io->io_uring_error, d.path);
  f.recommendation =
      "`sysctl kernel.io_uring_disabled=0` (1 allows only the group in kernel.io_uring_group, 2 "
      "allows nobody), and `kernel.io_uring_disabled = 0` in /etc/sysctl.d/ to keep it; in a "
      "container, a seccomp profile that allows io_uring_setup, io_uring_enter and "
      "io_uring_register (`docker run --security-opt seccomp=PROFILE.json`; recent Docker and "
      "containerd default profiles block them)";
  out.push_back(std::move(f));
}

}  // namespace acco::topo::detail
