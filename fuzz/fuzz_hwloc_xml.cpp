// hwloc XML exports as `acco probe --hwloc-xml FILE` and a snapshot's copy give them to acco:
// loaded by libhwloc from memory, then turned into acco's machine model and merged into one
// read from sysfs. Seeds: exports of the test sysroots (a DGX H100, a workstation) and a minimal
// hand-written one.
#include <string>

#include "acco/topo/hwloc_source.hpp"
#include "acco/topo/machine.hpp"

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  acco::topo::HwlocInput input;
  input.kind = acco::topo::HwlocInputKind::kXmlText;
  input.value = std::string(acco::fuzz::text(data, size));
  const auto view = acco::topo::discover_hwloc(input);
  if (!view) {
    return 0;
  }
  acco::topo::Machine machine = acco::topo::machine_from_hwloc(*view, "fuzz");
  acco::topo::merge_hwloc(machine, *view);
  return 0;
}
