// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers of the tests that compile whole networks (tst_runtime, tst_autotvm_build): the logits of
// a zoo network, and a compiled network compared with the graph reference interpreter.
#include <cstdint>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/graph/interpreter.h"
#include "engine/measure/timer.h"
#include "engine/runtime/build_module.h"

namespace tb::test {

/// A buffer of `shape` filled with measure::fillRandom(seed).
inline te::Buffer randomInput(const std::vector<int64_t>& shape, uint64_t seed) {
    te::Buffer b = te::Buffer::zeros(shape);
    measure::fillRandom(b.data.data(), b.data.size(), seed);
    return b;
}

/// Runs `mod` (compiled from `g`) and the reference interpreter on the same random input (seeded
/// with `seed`); returns the relative max error of output 0 (1e30 when the shapes differ).
inline double compareWithInterpreter(runtime::CompiledModule& mod, const graph::Graph& g, uint64_t seed = 7) {
    te::Buffer in = randomInput(g.node(g.inputs()[0]).type.shape, seed);
    auto got = mod.run({in});
    auto want = graph::runGraph(g, std::vector<te::Buffer>{in});
    if (got.at(0).shape != want.at(0).shape) return 1e30;
    return runtime::relativeMaxError(got[0].data.data(), want[0].data.data(), want[0].data.size());
}

/// The zoo's Xavier-initialized networks end in a softmax that is nearly uniform (mobilenet's
/// output is 0.001 everywhere to 1e-10), which would hide errors: compare the logits instead.
inline graph::Graph withLogits(graph::Graph g) {
    const graph::Node& out = g.node(g.outputs().at(0));
    if (out.kind == graph::NodeKind::Op && out.op == "nn.softmax") {
        g.setOutputs({out.inputs.at(0)});
        return g.pruned();
    }
    return g;
}

}  // namespace tb::test
