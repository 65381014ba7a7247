// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers of the AutoTVM template tests (tst_autotvm_tune, tst_autotvm_arm): sampled config
// indices, and a config's compiled program compared with the interpreter on the same DAG.
#include <QString>

#include <cstdint>
#include <random>
#include <vector>

#include "engine/autotvm/task.h"
#include "engine/lower/lower_state.h"
#include "engine/support/error.h"
#include "engine/te/interpreter.h"
#include "test_measure_util.h"
#include "test_util.h"

namespace tb::test {

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
