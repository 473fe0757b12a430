// The value parsers of flags, settings and sysfs attributes (sizes, durations, cpulists, masks,
// link speeds), each given the whole input.
#include "acco/core/units.hpp"
#include "acco/topo/link_model.hpp"

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace units = acco::units;
  const std::string_view text = acco::fuzz::text(data, size);
  (void)units::parse_int(text);
  (void)units::parse_int(text, 0);
  (void)units::parse_double(text);
  (void)units::parse_bytes(text);
  (void)units::parse_duration(text);
  if (auto cpus = units::parse_cpulist(text)) {
    (void)units::format_cpulist(*cpus);
  }
  (void)units::parse_cpumask(text);
  (void)acco::topo::parse_link_speed(text);
  (void)units::excerpt(text);
  (void)units::quote_attribute(text);
  return 0;
}
