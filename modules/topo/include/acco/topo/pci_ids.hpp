// The PCI ID database (pci.ids from the PCI ID Project, what lspci names devices with): vendor,
// device and subsystem names by id. Parsed once per probe from the file's text, read under the
// sysroot; a probe names each PCI function from it (NVML's name wins for the GPUs it answers for).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "acco/core/fs.hpp"
#include "acco/core/result.hpp"
#include "acco/topo/machine.hpp"

namespace acco::topo {

// Where distributions install the database: Debian's pci.ids package, then hwdata (RHEL, Fedora,
// SUSE, Arch).
inline constexpr std::array<std::string_view, 2> kPciIdsPaths = {"/usr/share/misc/pci.ids",
                                                                 "/usr/share/hwdata/pci.ids"};

// The ids of one PCI function, as a lookup key.
struct PciIdKey {
  std::uint16_t vendor = 0;
  std::uint16_t device = 0;
  std::uint16_t subsystem_vendor = 0;
  std::uint16_t subsystem_device = 0;
  bool operator==(const PciIdKey&) const = default;
};

// What the database says of one function; each part empty when it is not listed.
struct PciIdNames {
  std::string vendor;     // "NVIDIA Corporation"
  std::string device;     // "GH100 [H100 SXM5 80GB]"
  std::string subsystem;  // the entry for the subsystem ids under that device
  bool operator==(const PciIdNames&) const = default;
};

// The database as a lookup. A plain value: copies own their text. Thread-safe to read.
class PciIds {
 public:
  [[nodiscard]] PciIdNames lookup(const PciIdKey& key) const;
  // The "#\tVersion: 2023.04.10" of the file's header; empty when it has none.
  [[nodiscard]] const std::string& version() const { return version_; }
  [[nodiscard]] std::size_t vendors() const { return vendors_.size(); }
  [[nodiscard]] std::size_t devices() const { return devices_.size(); }
  [[nodiscard]] std::size_t subsystems() const { return subsystems_.size(); }
  // Lines that were neither an entry, a comment, blank nor part of the class section: skipped.
  [[nodiscard]] std::size_t skipped_lines() const { return skipped_lines_; }
  // The entries naming `keys`, in the database's own format with its version line: a small
  // pci.ids that parses to the same names for them (what a snapshot keeps for its replay).
  [[nodiscard]] std::string excerpt(const std::vector<PciIdKey>& keys) const;

 private:
  friend PciIds parse_pci_ids(std::string text);
  struct Entry {
    std::uint64_t key = 0;
    std::uint32_t offset = 0;  // the name in text_
    std::uint32_t length = 0;
  };
  [[nodiscard]] std::string_view name(const std::vector<Entry>& table, std::uint64_t key) const;

  std::string text_;
  std::string version_;
  std::vector<Entry> vendors_;     // key: vendor
  std::vector<Entry> devices_;     // key: vendor << 16 | device
  std::vector<Entry> subsystems_;  // key: vendor << 48 | device << 32 | subvendor << 16 | subdevice
  std::size_t skipped_lines_ = 0;
};

// Parses pci.ids: "vvvv  Vendor", "\tdddd  Device", "\t\tssss ssss  Subsystem", "#" comments,
// blank lines, and the class section ("C cc  Class" and its tab-indented lines), which is not
// read. A line that is none of these (bad hex, a missing name, control characters) is skipped
// and counted, and a bad vendor or device line is not a parent for the lines below it. Never
// fails; the first of two entries for the same ids wins. Linear in the text (the 1.3 MB file of
// 2023 parses in a few milliseconds).
[[nodiscard]] PciIds parse_pci_ids(std::string text);

struct PciIdsFile {
  std::string path;  // the file read
  PciIds ids;
};

// Reads the database through `fs`: `path` when not empty, else the first of kPciIdsPaths that
// exists. kNotFound naming the paths looked at when there is none; other errors as
// core::Fs::read_file (which name the path), prefixed "PCI ID database".
[[nodiscard]] Result<PciIdsFile> read_pci_ids(const core::Fs& fs, const std::string& path = {});

// The name shown for `d`: NVML's name for a GPU it answered for, else the database's device
// entry, else "Vendor Device dddd" (lspci's words) when only the vendor is listed; empty when
// none of these names it.
[[nodiscard]] std::string model_name(const NvmlGpu* gpu, const PciIdNames& names,
                                     std::uint16_t device_id);

// Sets every PCI function's vendor_name, subsystem_name and model from `ids` (nullptr: no
// database, so only NVML's names) and machine.nvml, and machine.pci_ids.unlisted to the ids
// `ids` has no device entry for.
void name_devices(Machine& machine, const PciIds* ids);

// The keys of the machine's PCI functions, each once, in address order.
[[nodiscard]] std::vector<PciIdKey> pci_id_keys(const Machine& machine);

}  // namespace acco::topo
