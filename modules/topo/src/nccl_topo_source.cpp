#include "acco/topo/nccl_topo_source.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "acco/core/units.hpp"
#include "acco/topo/sysfs_source.hpp"

namespace acco::topo {
namespace {

struct DocFree {
  void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};

bool is(const xmlNode* node, const char* name) {
  return node->type == XML_ELEMENT_NODE &&
         xmlStrcmp(node->name, reinterpret_cast<const xmlChar*>(name)) == 0;
}

std::optional<std::string> attribute(const xmlNode* node, const char* name) {
  xmlChar* value = xmlGetProp(node, reinterpret_cast<const xmlChar*>(name));
  if (value == nullptr) {
    return std::nullopt;
  }
  std::string text(reinterpret_cast<const char*>(value));
  xmlFree(value);
  return text;
}

Error malformed(const xmlNode* node, const std::string& what) {
  return Error{Errc::kInvalidArgument,
               fmt::format("NCCL topology: <{}> on line {}: {}",
                           reinterpret_cast<const char*>(node->name), xmlGetLineNo(node), what)};
}

// A whole number in [low, high], in decimal or (with 0x) hexadecimal.
Result<long long> number(const xmlNode* node, const char* name, const std::string& text,
                         long long low, long long high) {
  std::string_view digits = text;
  int base = 10;
  if (digits.starts_with("0x") || digits.starts_with("0X")) {
    digits.remove_prefix(2);
    base = 16;
  }
  long long value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || value < low ||
      value > high) {
    return tl::unexpected(
        malformed(node, fmt::format("{}=\"{}\" is not a whole number from {} to {}", name,
                                    units::quote_attribute(text), low, high)));
  }
  return value;
}

Result<std::optional<long long>> optional_number(const xmlNode* node, const char* name,
                                                 long long low, long long high) {
  const auto text = attribute(node, name);
  if (!text) {
    return std::optional<long long>();
  }
  ACCO_ASSIGN_OR_RETURN(const long long value, number(node, name, *text, low, high));
  return std::optional<long long>(value);
}

bool hex_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// "0000:17:00.0" (a domain of 4 to 8 hex digits, as NCCL and the kernel write it: bus, device
// 00-1f, function 0-7), or "17:00.0" in domain 0; lower case.
Result<std::string> bus_id(const xmlNode* node, const char* name, const std::string& text) {
  std::string id = text;
  std::transform(id.begin(), id.end(), id.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (std::count(id.begin(), id.end(), ':') == 1) {
    id = "0000:" + id;
  }
  const auto colon = id.find(':');
  const bool shaped = colon != std::string::npos && colon >= 4 && colon <= 8 &&
                      id.size() == colon + 8 && id[colon + 3] == ':' && id[colon + 6] == '.';
  const std::string_view v = id;
  if (!shaped || !hex_digits(v.substr(0, colon)) || !hex_digits(v.substr(colon + 1, 2)) ||
      !hex_digits(v.substr(colon + 4, 2)) || v.substr(colon + 4, 2) > "1f" || id[colon + 7] < '0' ||
      id[colon + 7] > '7') {
    return tl::unexpected(
        malformed(node, fmt::format("{}=\"{}\" is not a PCI address (0000:17:00.0)", name,
                                    units::quote_attribute(text))));
  }
  return id;
}

// What NCCL writes (xml.cc) for an NVLink whose far end a VM cannot see: an NVSwitch, assumed.
constexpr std::string_view kInvisibleNvlinkTarget = "fffffff:ffff:ff";

// "32.0 GT/s PCIe", "16 GT/s", "2.5 GT/s": the transfer rate; 0 for "Unknown" or nothing.
double link_speed(const std::string& text) {
  double gts = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), gts);
  return ec == std::errc() && gts > 0 && gts <= 256 ? gts : 0;
}

// The NVLink generation of a GPU of compute capability `sm`, in NVML's numbering as
// machine.hpp's NvLink keeps it: Pascal 1, Volta 2, Ampere 4, Hopper 5, later 6.
int nvlink_version(long long sm) {
  return sm < 70 ? 1 : sm < 80 ? 2 : sm < 90 ? 4 : sm < 100 ? 5 : 6;
}

struct Place {
  int numa = -1;
  std::shared_ptr<const std::vector<int>> cpus;  // shared by every element below a <cpu>
  std::string pci;                               // the enclosing <pci>'s address
  std::string root_bus;
};

using Pending = std::vector<std::pair<const xmlNode*, Place>>;

// `node`'s child elements, to be read in document order (the last pushed is read first).
void push_children(const xmlNode* node, const Place& place, Pending& pending) {
  std::vector<const xmlNode*> children;
  for (const xmlNode* child = node->children; child != nullptr; child = child->next) {
    if (child->type == XML_ELEMENT_NODE) {
      children.push_back(child);
    }
  }
  std::reverse(children.begin(), children.end());
  for (const xmlNode* child : children) {
    pending.emplace_back(child, place);
  }
}

class Reader {
 public:
  // Every element below <system>, depth first in document order.
  Status read(const xmlNode* system) {
    Pending pending;
    push_children(system, Place{}, pending);
    while (!pending.empty()) {
      const auto [node, place] = std::move(pending.back());
      pending.pop_back();
      if (is(node, "cpu")) {
        ACCO_ASSIGN_OR_RETURN(const Place inner, cpu(node, place));
        push_children(node, inner, pending);
      } else if (is(node, "pci")) {
        ACCO_ASSIGN_OR_RETURN(const Place inner, pci(node, place));
        push_children(node, inner, pending);
      } else if (is(node, "gpu")) {
        ACCO_RETURN_IF_ERROR(gpu(node, place));
      } else if (is(node, "nic")) {
        push_children(node, place, pending);
      } else if (is(node, "net")) {
        ACCO_RETURN_IF_ERROR(net(node, place));
      }
      // <c2c>, <pcilink> and what later NCCL versions add are not modelled.
    }
    return {};
  }

  Machine finish() && {
    std::sort(m_.pci_devices.begin(), m_.pci_devices.end(),
              [](const PciDevice& a, const PciDevice& b) { return a.address < b.address; });
    std::sort(m_.numa_nodes.begin(), m_.numa_nodes.end(),
              [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
    for (NumaNode& n : m_.numa_nodes) {  // a numaid repeated in several <cpu> elements
      std::sort(n.cpus.begin(), n.cpus.end());
      n.cpus.erase(std::unique(n.cpus.begin(), n.cpus.end()), n.cpus.end());
    }
    if (m_.numa_nodes.size() == 1) {
      m_.numa_nodes.front().distances = {10};  // the kernel's distance to itself
    }
    std::sort(m_.online_cpus.begin(), m_.online_cpus.end());
    m_.online_cpus.erase(std::unique(m_.online_cpus.begin(), m_.online_cpus.end()),
                         m_.online_cpus.end());
    m_.sysfs_read = false;
    m_.cpu.unavailable = "an NCCL topology file holds no CPU topology";
    return std::move(m_);
  }

 private:
  // Every CPU list entry the machine will hold (the nodes', the online list, each device's own
  // copy) against one budget: a 16 MiB file of huge masks and many devices below them would
  // otherwise ask for memory out of proportion to its size (a real one: 1,000 devices x 1,000
  // CPUs).
  Status count_cpus(const xmlNode* node, std::size_t entries) {
    cpu_entries_ += entries;
    if (cpu_entries_ > kMaxCpuEntries) {
      return tl::unexpected(
          malformed(node, fmt::format("more than {} CPUs listed across the file", kMaxCpuEntries)));
    }
    return {};
  }

  Result<Place> cpu(const xmlNode* node, const Place& outer) {
    Place place = outer;
    ACCO_ASSIGN_OR_RETURN(const auto numa, optional_number(node, "numaid", -1, 4095));
    place.numa = static_cast<int>(numa.value_or(-1));
    const auto affinity = attribute(node, "affinity");
    if (affinity && !affinity->empty()) {
      auto cpus = units::parse_cpumask(*affinity);
      if (!cpus) {
        return tl::unexpected(
            malformed(node, fmt::format("affinity=\"{}\" is not a CPU mask (00000000,00ffffff)",
                                        units::quote_attribute(*affinity))));
      }
      ACCO_RETURN_IF_ERROR(count_cpus(node, cpus->size() * (numa.value_or(-1) >= 0 ? 2 : 1)));
      place.cpus = std::make_shared<const std::vector<int>>(std::move(*cpus));
      m_.online_cpus.insert(m_.online_cpus.end(), place.cpus->begin(), place.cpus->end());
    }
    if (place.numa >= 0) {
      auto it = std::find_if(m_.numa_nodes.begin(), m_.numa_nodes.end(),
                             [&](const NumaNode& n) { return n.id == place.numa; });
      if (it == m_.numa_nodes.end()) {
        NumaNode n;
        n.id = place.numa;
        m_.numa_nodes.push_back(std::move(n));
        it = std::prev(m_.numa_nodes.end());
      }
      if (affinity && !affinity->empty()) {
        it->cpus.insert(it->cpus.end(), place.cpus->begin(),
                        place.cpus->end());  // sorted at the end
        it->cpus_source = "NCCL topology <cpu affinity>";
        it->cpus_text = units::quote_attribute(*affinity);
      }
    }
    place.pci.clear();
    return place;
  }

  Result<Place> pci(const xmlNode* node, const Place& outer) {
    const auto busid = attribute(node, "busid");
    if (!busid) {
      return tl::unexpected(malformed(node, "no busid"));
    }
    PciDevice d;
    ACCO_ASSIGN_OR_RETURN(d.address, bus_id(node, "busid", *busid));
    if (!addresses_.insert(d.address).second) {
      return tl::unexpected(malformed(node, fmt::format("busid {} appears twice", d.address)));
    }
    d.parent = outer.pci;
    d.root_bus =
        outer.pci.empty() ? "pci" + d.address.substr(0, d.address.size() - 5) : outer.root_bus;
    ACCO_ASSIGN_OR_RETURN(const auto class_code, optional_number(node, "class", 0, 0xffffff));
    ACCO_ASSIGN_OR_RETURN(const auto vendor, optional_number(node, "vendor", 0, 0xffff));
    ACCO_ASSIGN_OR_RETURN(const auto device, optional_number(node, "device", 0, 0xffff));
    ACCO_ASSIGN_OR_RETURN(const auto sub_vendor,
                          optional_number(node, "subsystem_vendor", 0, 0xffff));
    ACCO_ASSIGN_OR_RETURN(const auto sub_device,
                          optional_number(node, "subsystem_device", 0, 0xffff));
    ACCO_ASSIGN_OR_RETURN(const auto width, optional_number(node, "link_width", 0, 32));
    d.class_code = static_cast<std::uint32_t>(class_code.value_or(0));
    d.vendor_id = static_cast<std::uint16_t>(vendor.value_or(0));
    d.device_id = static_cast<std::uint16_t>(device.value_or(0));
    d.subsystem_vendor_id = static_cast<std::uint16_t>(sub_vendor.value_or(0));
    d.subsystem_device_id = static_cast<std::uint16_t>(sub_device.value_or(0));
    // A seed may leave the class out: a <gpu> or <nic> inside says what the function is.
    for (const xmlNode* child = node->children; child != nullptr && d.class_code == 0;
         child = child->next) {
      d.class_code = is(child, "gpu") ? 0x030200U : is(child, "nic") ? 0x020000U : 0U;
    }
    d.kind = d.class_code >> 8U == 0x0604U ? DeviceKind::kBridge
                                           : classify_pci(d.class_code, d.vendor_id);
    d.numa_node = outer.numa;
    if (outer.cpus) {
      ACCO_RETURN_IF_ERROR(count_cpus(node, outer.cpus->size()));
      d.local_cpus = *outer.cpus;
    }
    if (d.numa_node >= 0) {
      d.numa_source = "NCCL topology <cpu numaid>";
    }
    // NCCL dumps one link figure (the device's maximum): taken as the current link as well.
    d.current = {link_speed(attribute(node, "link_speed").value_or("")),
                 static_cast<int>(width.value_or(0))};
    d.max = d.current;
    Place place = outer;
    place.pci = d.address;
    place.root_bus = d.root_bus;
    m_.pci_devices.push_back(std::move(d));
    return place;
  }

  Status gpu(const xmlNode* node, const Place& place) {
    if (place.pci.empty()) {
      return tl::unexpected(malformed(node, "a <gpu> outside a <pci>"));
    }
    NvmlGpu g;
    ACCO_ASSIGN_OR_RETURN(const auto dev, optional_number(node, "dev", 0, 4095));
    ACCO_ASSIGN_OR_RETURN(const auto sm, optional_number(node, "sm", 0, 1000));
    g.index = static_cast<int>(dev.value_or(static_cast<long long>(m_.nvml.gpus.size())));
    g.pci = place.pci;
    for (const xmlNode* link = node->children; link != nullptr; link = link->next) {
      if (!is(link, "nvlink")) {
        continue;
      }
      const auto target = attribute(link, "target");
      if (!target) {
        return tl::unexpected(malformed(link, "no target"));
      }
      ACCO_ASSIGN_OR_RETURN(const auto count, optional_number(link, "count", 1, 64));
      std::string remote(kInvisibleNvlinkTarget);
      if (*target != kInvisibleNvlinkTarget) {
        ACCO_ASSIGN_OR_RETURN(remote, bus_id(link, "target", *target));
      }
      nvlinks_ += static_cast<std::size_t>(count.value_or(1));
      if (nvlinks_ > kMaxNvlinks) {
        return tl::unexpected(
            malformed(link, fmt::format("more than {} NVLinks in the file", kMaxNvlinks)));
      }
      for (long long i = 0; i < count.value_or(1); ++i) {
        g.nvlinks.push_back(
            {static_cast<int>(g.nvlinks.size()), true, remote, sm ? nvlink_version(*sm) : 0});
      }
    }
    m_.nvml.gpus.push_back(std::move(g));
    return {};
  }

  Status net(const xmlNode* node, const Place& place) {
    const auto name = attribute(node, "name");
    if (!name || name->empty()) {
      return tl::unexpected(malformed(node, "no name"));
    }
    ACCO_ASSIGN_OR_RETURN(const auto speed, optional_number(node, "speed", 0, 100'000'000));
    NetInterface n;
    n.name = *name;
    n.pci = place.pci;
    if (speed && *speed > 0) {
      n.speed_mbps = *speed;
    }
    n.operstate = "unknown";
    m_.net_interfaces.push_back(std::move(n));
    return {};
  }

  static constexpr std::size_t kMaxCpuEntries = std::size_t{1} << 24U;
  // A node has a few hundred (a DGX H100: 8 GPUs x 18); NVLink switch systems list them per node.
  static constexpr std::size_t kMaxNvlinks = std::size_t{1} << 16U;

  Machine m_;
  std::set<std::string> addresses_;  // every <pci> read so far
  std::size_t cpu_entries_ = 0;      // local CPUs copied into the devices so far
  std::size_t nvlinks_ = 0;          // NVLinks read so far
};

}  // namespace

Result<Machine> machine_from_nccl_topo(std::string_view xml) {
  if (xml.size() > kMaxNcclTopoBytes) {
    return fail(Errc::kInvalidArgument,
                fmt::format("NCCL topology: {} bytes, more than the {} read", xml.size(),
                            kMaxNcclTopoBytes));
  }
  // No network, no messages on stderr: errors come back as values (the last one reset first:
  // an empty input fails without setting one).
  xmlResetLastError();
  const std::unique_ptr<xmlDoc, DocFree> doc(
      xmlReadMemory(xml.data(), static_cast<int>(xml.size()), "nccl-topo.xml", nullptr,
                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
  if (!doc) {
    const xmlError* e = xmlGetLastError();
    std::string why = e != nullptr && e->message != nullptr ? e->message : "not XML";
    while (!why.empty() && std::isspace(static_cast<unsigned char>(why.back())) != 0) {
      why.pop_back();
    }
    return fail(Errc::kInvalidArgument, fmt::format("NCCL topology: not XML (line {}: {})",
                                                    e != nullptr ? e->line : 0, why));
  }
  // A DOCTYPE could declare entities, which xmlGetProp expands past every limit here; NCCL never
  // writes one.
  if (doc->intSubset != nullptr) {
    return fail(Errc::kInvalidArgument,
                "NCCL topology: a <!DOCTYPE> (entity declarations) is not read; NCCL writes none");
  }
  const xmlNode* root = xmlDocGetRootElement(doc.get());
  if (root == nullptr || !is(root, "system")) {
    return fail(Errc::kInvalidArgument,
                fmt::format("NCCL topology: the root element is <{}>, expected <system>",
                            root != nullptr ? reinterpret_cast<const char*>(root->name) : ""));
  }
  Reader reader;
  ACCO_RETURN_IF_ERROR(reader.read(root));
  return std::move(reader).finish();
}

}  // namespace acco::topo
