// acco-sim-engine: reads one simulation request (wire.hpp) on stdin, answers on stdout. acco
// starts it for each run (sim::simulate); SimGrid's engine lives once per process.
#include <iostream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "engine.hpp"

int main() {
  const std::string text{std::istreambuf_iterator<char>(std::cin),
                         std::istreambuf_iterator<char>()};
  const auto request = nlohmann::json::parse(text, nullptr, false);
  const auto answer =
      request.is_discarded()
          ? nlohmann::json{{"error", "the simulation request is not JSON"}, {"code", 0}}
          : acco::sim::run_engine(request);
  std::cout << answer.dump() << '\n';
  return std::cout.good() ? 0 : 1;
}
