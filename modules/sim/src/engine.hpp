// The simulation on SimGrid, run by acco-sim-engine (engine_main.cpp): SimGrid is loaded in that
// program only, never in acco or in a program that links the library.
#pragma once

#include <nlohmann/json.hpp>

namespace acco::sim {

// {"result": acco.sim/1's run} or {"error": message, "code": Errc}; never throws. The request is
// freed once read, before the run.
[[nodiscard]] nlohmann::json run_engine(nlohmann::json request);

}  // namespace acco::sim
