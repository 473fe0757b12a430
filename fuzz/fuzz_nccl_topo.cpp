// NCCL topology XML as `acco probe --nccl-topo FILE` and `acco sim --nccl-topo FILE` give it to
// acco: parsed by libxml2, walked into the machine model, then through the link model and the
// checks as a probe's machine is. Seeds: the test fixtures (a bare-metal dump, a KVM guest's flat
// dump, a cloud VM's seed).
#include "acco/topo/checks.hpp"
#include "acco/topo/link_model.hpp"
#include "acco/topo/nccl_topo_source.hpp"

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto machine = acco::topo::machine_from_nccl_topo(acco::fuzz::text(data, size));
  if (!machine) {
    return 0;
  }
  acco::topo::annotate_links(*machine);
  static_cast<void>(acco::topo::check(*machine));
  return 0;
}
