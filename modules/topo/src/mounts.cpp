#include "acco/topo/mounts.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "acco/core/units.hpp"

namespace acco::topo {
namespace {

constexpr const char* kMountInfo = "/proc/self/mountinfo";

// proc(5): show_mountinfo writes space, tab, newline and backslash in a path as \ooo.
std::string unescape(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (std::size_t i = 0; i < field.size(); ++i) {
    const auto octal = [&](std::size_t k) { return field[k] >= '0' && field[k] <= '7'; };
    if (field[i] == '\\' && i + 3 < field.size() && octal(i + 1) && octal(i + 2) && octal(i + 3)) {
      out += static_cast<char>(((field[i + 1] - '0') << 6) | ((field[i + 2] - '0') << 3) |
                               (field[i + 3] - '0'));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> out;
  for (auto& w : units::split(line, ' ')) {
    if (!w.empty()) {
      out.push_back(std::move(w));
    }
  }
  return out;
}

// True when `dir` is `path` or a directory above it ("/data" holds "/data/x", not "/database").
bool holds(std::string_view dir, std::string_view path) {
  if (dir == "/") {
    return true;
  }
  return path.substr(0, dir.size()) == dir &&
         (path.size() == dir.size() || path[dir.size()] == '/');
}

bool is_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// The NVMe namespaces below block device `name` ("dm-0", "md0", "nvme0n1p2"): its own name,
// else those of its slaves, as far down as device mapper and md stack.
std::set<std::string> namespaces_below(const core::Fs& fs, const std::string& name) {
  constexpr std::size_t kMaxDepth = 8;  // dm on md on dm...; only a looping capture goes deeper
  std::set<std::string> out;
  std::vector<std::pair<std::string, std::size_t>> pending = {{name, 0}};  // device, depth
  while (!pending.empty()) {
    const auto [device, depth] = pending.back();
    pending.pop_back();
    if (auto ns = nvme_namespace_of(device); !ns.empty()) {
      out.insert(std::move(ns));
      continue;
    }
    if (depth >= kMaxDepth) {
      continue;
    }
    auto slaves = fs.list_dir("/sys/block/" + device + "/slaves");
    for (const auto& slave : slaves.value_or(std::vector<std::string>{})) {
      pending.emplace_back(slave, depth + 1);
    }
  }
  return out;
}

}  // namespace

Result<std::vector<Mount>> parse_mountinfo(std::string_view text) {
  std::vector<Mount> mounts;
  int number = 0;
  for (const auto& line : units::split(text, '\n')) {
    ++number;
    if (units::trim(line).empty()) {
      continue;
    }
    // "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue": optional
    // fields until a lone "-", then type, source and super options.
    const auto w = words(line);
    const auto dash = std::find(w.begin(), w.end(), "-");
    const auto before = dash - w.begin();
    const auto after = w.end() - dash - 1;
    auto id = before >= 5 ? units::parse_int(w[0]) : units::parse_int("");
    auto parent = before >= 5 ? units::parse_int(w[1]) : units::parse_int("");
    if (dash == w.end() || before < 5 || after < 2 || !id || !parent) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("line {}: cannot parse '{}' (expected 'ID PARENT MAJ:MIN ROOT MOUNT "
                              "OPTIONS [FIELDS] - TYPE SOURCE SUPER_OPTIONS')",
                              number, units::excerpt(line)));
    }
    Mount m;
    m.id = static_cast<int>(*id);
    m.parent = static_cast<int>(*parent);
    m.device = w[2];
    m.root = unescape(w[3]);
    m.mount_point = unescape(w[4]);
    m.options = unescape(w[5]);
    m.fs_type = unescape(*(dash + 1));
    m.source = unescape(*(dash + 2));
    m.super_options = after >= 3 ? unescape(*(dash + 3)) : std::string();
    mounts.push_back(std::move(m));
  }
  return mounts;
}

const Mount* mount_holding(const std::vector<Mount>& mounts, std::string_view path) {
  const Mount* best = nullptr;
  for (const auto& m : mounts) {
    if (holds(m.mount_point, path) &&
        (best == nullptr || m.mount_point.size() >= best->mount_point.size())) {
      best = &m;
    }
  }
  return best;
}

std::string nvme_namespace_of(std::string_view device) {
  const auto slash = device.find_last_of('/');
  std::string_view name = slash == std::string_view::npos ? device : device.substr(slash + 1);
  // nvme<ctrl>n<ns>[p<part>]; multipath paths nvme<subsys>c<ctrl>n<ns> are not block devices
  // a file system sits on.
  if (name.substr(0, 4) != "nvme") {
    return {};
  }
  const auto n = name.find('n', 4);
  if (n == std::string_view::npos || !is_digits(name.substr(4, n - 4))) {
    return {};
  }
  const auto p = name.find('p', n);
  const auto ns = name.substr(n + 1, p == std::string_view::npos ? p : p - n - 1);
  if (!is_digits(ns) || (p != std::string_view::npos && !is_digits(name.substr(p + 1)))) {
    return {};
  }
  return std::string(name.substr(0, p));
}

void read_data_dir(const core::Fs& fs, const std::string& path, Machine& machine) {
  DataDir d;
  d.path = path;
  auto text = fs.read_file(kMountInfo);
  if (!text) {
    d.unavailable = fmt::format("cannot read {}: {}", kMountInfo, text.error().message);
    machine.data_dir = std::move(d);
    return;
  }
  auto mounts = parse_mountinfo(*text);
  if (!mounts) {
    machine.input_issues.push_back({kMountInfo, mounts.error().message});
    d.unavailable = fmt::format("{}: {}", kMountInfo, mounts.error().message);
    machine.data_dir = std::move(d);
    return;
  }
  const Mount* m = mount_holding(*mounts, path);
  if (m == nullptr) {
    d.unavailable = fmt::format("no mount in {} holds {}", kMountInfo, path);
    machine.data_dir = std::move(d);
    return;
  }
  d.mount = *m;
  std::set<std::string> found;
  if (auto ns = nvme_namespace_of(m->source); !ns.empty() && m->source.rfind("/dev/", 0) == 0) {
    found.insert(std::move(ns));
    d.device_evidence = m->source;
  } else if (!m->device.empty()) {
    // /dev/mapper/vg-data, /dev/md0, /dev/disk/by-uuid/...: the device number leads to the block
    // device ("/sys/devices/.../nvme0n1/nvme0n1p2" or ".../virtual/block/dm-0").
    const auto link = "/sys/dev/block/" + m->device;
    if (auto real = fs.real_path(link)) {
      found = namespaces_below(fs, real->substr(real->find_last_of('/') + 1));
      d.device_evidence = link;
    }
  }
  d.nvme_namespaces.assign(found.begin(), found.end());
  machine.data_dir = std::move(d);
}

}  // namespace acco::topo
