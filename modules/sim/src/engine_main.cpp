// acco-sim-engine: reads one simulation request (wire.hpp) on stdin, answers on stdout. acco
// starts it for each run (sim::simulate); SimGrid's engine lives once per process.
#include <exception>
#include <iostream>
#include <iterator>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "engine.hpp"

int main() {
  try {
    std::string text{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    auto request = nlohmann::json::parse(text, nullptr, false);
    std::string().swap(text);  // neither the text nor the tree outlives the reading
    const auto answer =
        request.is_discarded()
            ? nlohmann::json{{"error", "the simulation request is not JSON"}, {"code", 0}}
            : acco::sim::run_engine(std::move(request));
    std::cout << answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return std::cout.good() ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "acco-sim-engine: " << e.what() << '\n';
    return 1;
  }
}
