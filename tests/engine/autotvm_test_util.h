// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the AutoTVM tests share (tst_autotvm_tune, tst_autotvm_feature, tst_autotvm_arm): task args
// as records serialize them, a quick runner setup, sampled config indices, and a config's compiled
// program compared with the interpreter on the same DAG.
#include <QString>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/autotvm/task.h"
#include "engine/lower/lower_state.h"
#include "engine/measure/local_runner.h"
#include "engine/support/error.h"
#include "engine/te/interpreter.h"
#include "test_measure_util.h"
#include "test_util.h"

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

/// The first, the last and `nRandom` seeded random indices of a space's range.
inline std::vector<std::int64_t> sampleIndices(const autotvm::ConfigSpace& space, int nRandom, unsigned seed) {
    std::vector<std::int64_t> out{0, space.rangeLength() - 1};
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> d(0, space.rangeLength() - 1);
    while (int(out.size()) < nRandom + 2) out.push_back(d(rng));
    return out;
}

/// Instantiates `cfg`, lowers and compiles it for this host, runs it on inputs seeded with `seed`
/// and compares with the interpreter on the same DAG: empty when equal, else the config and the
/// mismatch (or why it does not instantiate).
inline QString compareConfigWithInterpreter(const autotvm::Task& task, const autotvm::ConfigEntity& cfg,
                                            unsigned seed) {
    autotvm::TemplateInstance inst;
    try {
        inst = task.instantiate(cfg);
    } catch (const UserError& e) {
        return QStringLiteral("config %1 does not instantiate: %2").arg(cfg.index).arg(QString::fromUtf8(e.what()));
    }
    const auto inputs = randomInputs(*inst.dag, seed);
    const QString diff =
        compareOutputs(runCompiled(lower::lowerState(*inst.dag, inst.state), *inst.dag, inputs), te::evaluate(*inst.dag, inputs));
    if (diff.isEmpty()) return diff;
    return QStringLiteral("config %1 %2: %3").arg(cfg.index).arg(QString::fromStdString(cfg.entityJson().dump()), diff);
}

}  // namespace tb::test
