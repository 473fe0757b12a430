#include "acco/topo/pci_ids.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

namespace acco::topo {
namespace {

std::optional<std::uint16_t> hex4(std::string_view s) {
  if (s.size() != 4) {
    return std::nullopt;
  }
  std::uint16_t value = 0;
  for (const char c : s) {
    int digit = 0;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    value = static_cast<std::uint16_t>((value << 4) | digit);
  }
  return value;
}

bool blank(char c) {
  return c == ' ' || c == '\t';
}

// UTF-8 as RFC 3629 has it (no overlong forms, surrogates or code points above U+10FFFF).
bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t more = 0;
    unsigned low = 0x80;
    unsigned high = 0xbf;  // the range of the byte after the lead byte
    if (c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0xc2 && c <= 0xdf) {
      more = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      more = 2;
      low = c == 0xe0 ? 0xa0 : 0x80;
      high = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
      more = 3;
      low = c == 0xf0 ? 0x90 : 0x80;
      high = c == 0xf4 ? 0x8f : 0xbf;
    } else {
      return false;
    }
    if (i + more >= s.size()) {
      return false;
    }
    for (std::size_t k = 1; k <= more; ++k) {
      const auto next = static_cast<unsigned char>(s[i + k]);
      if (next < (k == 1 ? low : 0x80) || next > (k == 1 ? high : 0xbf)) {
        return false;
      }
    }
    i += more + 1;
  }
  return true;
}

// A name ends at the line's end, less trailing blanks. One holding control characters or bytes
// that are not UTF-8 (a binary or damaged file) is not a name: nothing from it reaches a
// terminal or a JSON document.
bool valid_name(std::string_view name) {
  return !name.empty() && std::none_of(name.begin(), name.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  }) && valid_utf8(name);
}

// "vvvv  Name" (after the line's indentation): the id and where the name starts; nullopt when
// the id is not four hex digits followed by blanks and a name.
struct IdAndName {
  std::uint16_t id = 0;
  std::size_t name_at = 0;  // offset in the line
};
std::optional<IdAndName> id_and_name(std::string_view line, std::size_t at) {
  if (at > line.size()) {
    return std::nullopt;
  }
  const auto id = hex4(line.substr(at, 4));
  if (!id || at + 4 >= line.size() || !blank(line[at + 4])) {
    return std::nullopt;
  }
  std::size_t name = at + 4;
  while (name < line.size() && blank(line[name])) {
    ++name;
  }
  return IdAndName{*id, name};
}

std::uint64_t device_key(std::uint16_t vendor, std::uint16_t device) {
  return (std::uint64_t{vendor} << 16) | device;
}

std::uint64_t subsystem_key(const PciIdKey& k) {
  return (std::uint64_t{k.vendor} << 48) | (std::uint64_t{k.device} << 32) |
         (std::uint64_t{k.subsystem_vendor} << 16) | k.subsystem_device;
}

constexpr std::string_view kVersionPrefix = "Version:";

// "#\tVersion: 2023.04.10" in the header comment.
std::optional<std::string> version_of(std::string_view comment) {
  comment.remove_prefix(1);
  while (!comment.empty() && blank(comment.front())) {
    comment.remove_prefix(1);
  }
  if (comment.substr(0, kVersionPrefix.size()) != kVersionPrefix) {
    return std::nullopt;
  }
  comment.remove_prefix(kVersionPrefix.size());
  while (!comment.empty() && blank(comment.front())) {
    comment.remove_prefix(1);
  }
  return valid_name(comment) ? std::optional<std::string>(comment) : std::nullopt;
}

}  // namespace

PciIds parse_pci_ids(std::string text) {
  PciIds ids;
  ids.text_ = std::move(text);
  const std::string_view all(ids.text_);
  // About 17 600 devices and 15 400 subsystems in 2023's file: reserving spares the regrowth.
  ids.devices_.reserve(all.size() / 80);
  ids.subsystems_.reserve(all.size() / 90);
  enum class Section {
    kVendors,
    kClasses
  };
  Section section = Section::kVendors;
  // The vendor and device lines above, when they were good; kNone otherwise. (Plain integers:
  // GCC 12 takes std::optional's value here for uninitialised.)
  constexpr std::uint32_t kNone = 0x10000;
  std::uint32_t vendor = kNone;
  std::uint32_t device = kNone;
  const auto add = [&](std::vector<PciIds::Entry>& table, std::uint64_t key, std::size_t line_at,
                       std::string_view line, std::size_t name_at) {
    std::string_view name = line.substr(name_at);
    while (!name.empty() && blank(name.back())) {
      name.remove_suffix(1);
    }
    // Offsets are 32-bit: a text past 4 GiB (no database is) names nothing beyond that.
    if (!valid_name(name) || line_at + name_at + name.size() > UINT32_MAX) {
      return false;
    }
    table.push_back({key, static_cast<std::uint32_t>(line_at + name_at),
                     static_cast<std::uint32_t>(name.size())});
    return true;
  };
  std::size_t at = 0;
  while (at < all.size()) {
    auto end = all.find('\n', at);
    if (end == std::string_view::npos) {
      end = all.size();
    }
    std::string_view line = all.substr(at, end - at);
    const std::size_t line_at = at;
    at = end + 1;
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) {
      continue;
    }
    if (line[first] == '#') {
      if (ids.version_.empty()) {
        ids.version_ = version_of(line.substr(first)).value_or("");
      }
      continue;
    }
    const auto tabs = std::min(line.find_first_not_of('\t'), line.size());
    if (tabs == 0) {  // a vendor, the start of the class section, or neither
      vendor = kNone;
      device = kNone;
      if (line.substr(0, 2) == "C ") {
        section = Section::kClasses;
        continue;
      }
      const auto v = id_and_name(line, 0);
      if (v && add(ids.vendors_, v->id, line_at, line, v->name_at)) {
        section = Section::kVendors;
        vendor = v->id;
        continue;
      }
    } else if (section == Section::kClasses) {
      continue;  // subclasses and programming interfaces
    } else if (tabs == 1) {
      device = kNone;
      const auto d = id_and_name(line, 1);
      if (vendor != kNone && d &&
          add(ids.devices_, device_key(static_cast<std::uint16_t>(vendor), d->id), line_at, line,
              d->name_at)) {
        device = d->id;
        continue;
      }
    } else if (tabs == 2) {
      const auto sub_vendor = id_and_name(line, 2);
      const auto sub_device =
          sub_vendor ? id_and_name(line, sub_vendor->name_at) : std::optional<IdAndName>();
      if (vendor != kNone && device != kNone && sub_device &&
          add(ids.subsystems_,
              subsystem_key({static_cast<std::uint16_t>(vendor), static_cast<std::uint16_t>(device),
                             sub_vendor->id, sub_device->id}),
              line_at, line, sub_device->name_at)) {
        continue;
      }
    }
    ++ids.skipped_lines_;
  }
  for (auto* table : {&ids.vendors_, &ids.devices_, &ids.subsystems_}) {
    std::stable_sort(table->begin(), table->end(),
                     [](const PciIds::Entry& a, const PciIds::Entry& b) { return a.key < b.key; });
  }
  return ids;
}

std::string_view PciIds::name(const std::vector<Entry>& table, std::uint64_t key) const {
  const auto it = std::lower_bound(table.begin(), table.end(), key,
                                   [](const Entry& e, std::uint64_t k) { return e.key < k; });
  if (it == table.end() || it->key != key) {
    return {};
  }
  return std::string_view(text_).substr(it->offset, it->length);
}

PciIdNames PciIds::lookup(const PciIdKey& key) const {
  return {std::string(name(vendors_, key.vendor)),
          std::string(name(devices_, device_key(key.vendor, key.device))),
          std::string(name(subsystems_, subsystem_key(key)))};
}

std::string PciIds::excerpt(const std::vector<PciIdKey>& keys) const {
  // Vendor -> device -> subsystems, each line once and in the database's order of ids.
  std::map<std::uint16_t, std::map<std::uint16_t, std::set<std::uint32_t>>> tree;
  for (const auto& k : keys) {
    if (name(vendors_, k.vendor).empty()) {
      continue;
    }
    auto& devices = tree[k.vendor];
    if (name(devices_, device_key(k.vendor, k.device)).empty()) {
      continue;
    }
    auto& subsystems = devices[k.device];
    if (!name(subsystems_, subsystem_key(k)).empty()) {
      subsystems.insert((std::uint32_t{k.subsystem_vendor} << 16) | k.subsystem_device);
    }
  }
  std::string out = "# The entries of a PCI ID database that name one machine's devices\n";
  if (!version_.empty()) {
    out += fmt::format("#\tVersion: {}\n", version_);
  }
  for (const auto& [vendor, devices] : tree) {
    out += fmt::format("{:04x}  {}\n", vendor, name(vendors_, vendor));
    for (const auto& [device, subsystems] : devices) {
      out += fmt::format("\t{:04x}  {}\n", device, name(devices_, device_key(vendor, device)));
      for (const std::uint32_t s : subsystems) {
        const PciIdKey k{vendor, device, static_cast<std::uint16_t>(s >> 16),
                         static_cast<std::uint16_t>(s & 0xffff)};
        out += fmt::format("\t\t{:04x} {:04x}  {}\n", k.subsystem_vendor, k.subsystem_device,
                           name(subsystems_, subsystem_key(k)));
      }
    }
  }
  return out;
}

Result<PciIdsFile> read_pci_ids(const core::Fs& fs, const std::string& path) {
  const auto read = [&](const std::string& file) -> Result<PciIdsFile> {
    ACCO_ASSIGN_OR_RETURN(std::string text, fs.read_file(file), "PCI ID database");
    return PciIdsFile{file, parse_pci_ids(std::move(text))};
  };
  if (!path.empty()) {
    return read(path);
  }
  for (const auto candidate : kPciIdsPaths) {
    if (fs.exists(std::string(candidate))) {
      return read(std::string(candidate));
    }
  }
  return fail(Errc::kNotFound,
              fmt::format("no PCI ID database at {} or {}", kPciIdsPaths[0], kPciIdsPaths[1]));
}

std::string model_name(const NvmlGpu* gpu, const PciIdNames& names, std::uint16_t device_id) {
  if (gpu != nullptr && !gpu->name.empty()) {
    return gpu->name;
  }
  if (!names.device.empty()) {
    return names.device;
  }
  return names.vendor.empty() ? std::string()
                              : fmt::format("{} Device {:04x}", names.vendor, device_id);
}

void name_devices(Machine& machine, const PciIds* ids) {
  auto& unlisted = machine.pci_ids.unlisted;
  unlisted.clear();
  for (auto& d : machine.pci_devices) {
    const PciIdNames names =
        ids != nullptr
            ? ids->lookup({d.vendor_id, d.device_id, d.subsystem_vendor_id, d.subsystem_device_id})
            : PciIdNames{};
    d.vendor_name = names.vendor;
    d.subsystem_name = names.subsystem;
    d.model = model_name(machine.nvml_gpu(d.address), names, d.device_id);
    if (ids != nullptr && names.device.empty()) {
      auto id = fmt::format("{:04x}:{:04x}", d.vendor_id, d.device_id);
      if (std::find(unlisted.begin(), unlisted.end(), id) == unlisted.end()) {
        unlisted.push_back(std::move(id));
      }
    }
  }
}

std::vector<PciIdKey> pci_id_keys(const Machine& machine) {
  std::vector<PciIdKey> keys;
  for (const auto& d : machine.pci_devices) {
    const PciIdKey k{d.vendor_id, d.device_id, d.subsystem_vendor_id, d.subsystem_device_id};
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
      keys.push_back(k);
    }
  }
  return keys;
}

}  // namespace acco::topo
