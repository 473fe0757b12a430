// nvidia-smi's abbreviations for NVML's P2P status values, shared by the NVML query, the report's
// JSON reader and the fake libnvidia-ml used in tests.
#pragma once

#include <array>
#include <string_view>

namespace acco::topo::detail {

// Indexed by nvmlGpuP2PStatus_t's value ("nvidia-smi topo -p2p").
inline constexpr std::array<std::string_view, 7> kP2pStatusNames = {"OK", "CNS", "GNS", "TNS",
                                                                    "DR", "NS",  "U"};

}  // namespace acco::topo::detail
