// Files the probe reads from /proc and /usr/share: mountinfo and the PCI ID database; and the
// addresses the daemon and `top --from` are given (listen address, server URL); the versions the
// software checks compare.
#include <string>

#include "acco/monitor/client.hpp"
#include "acco/monitor/server.hpp"
#include "acco/topo/mounts.hpp"
#include "acco/topo/pci_ids.hpp"
#include "acco/topo/software.hpp"

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(acco::fuzz::text(data, size));
  (void)acco::topo::parse_mountinfo(text);
  const auto ids = acco::topo::parse_pci_ids(text);
  (void)ids.lookup({0x10de, 0x2330, 0x10de, 0x16c1});
  (void)acco::monitor::parse_listen(text);
  (void)acco::monitor::parse_server_url(text);
  (void)acco::topo::compare_versions(text, "580.65.06");  // driver and library versions
  (void)acco::topo::cuda_major(text);
  return 0;
}
