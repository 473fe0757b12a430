// Every recording format `acco analyze` reads, found by content as it finds them: acco's JSON
// Lines, a Chrome trace, nvidia-smi's CSV, dmon and -q text, Prometheus/DCGM scrapes.
#include <string>

#include "acco/analyze/recording.hpp"

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)acco::analyze::parse_recording(acco::fuzz::text(data, size), "fuzz");
  return 0;
}
