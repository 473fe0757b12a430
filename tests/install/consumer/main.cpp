// Prints the bandwidth of a Gen4 x16 link through the installed acco::topo.
#include <cstdio>

#include "acco/topo/link_model.hpp"

int main() {
  std::printf("%.2f\n", acco::topo::link_bytes_per_second({16, 16}));
  return 0;
}
