// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the AutoTVM tests share: task args as records serialize them and a quick runner setup.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/measure/local_runner.h"

namespace tb::test {

/// dense_*.x86 args: data [m, k], weight [n, k], no bias, float32.
inline nlohmann::ordered_json denseArgs(std::int64_t m, std::int64_t n, std::int64_t k) {
    return nlohmann::ordered_json::parse("[[\"TENSOR\", [" + std::to_string(m) + ", " + std::to_string(k) +
                                         "], \"float32\"], [\"TENSOR\", [" + std::to_string(n) + ", " +
                                         std::to_string(k) + "], \"float32\"], null, \"float32\"]");
}

/// A runner for tests: 3 runs x 2 repeats of at least 1 ms, one thread, 10 s limit.
inline measure::RunnerOptions quickRunner() {
    measure::RunnerOptions o;
    o.timeoutS = 10;
    o.number = 3;
    o.repeat = 2;
    o.minRepeatMs = 1;
    o.numThreads = 1;
    return o;
}

}  // namespace tb::test
