// SPDX-License-Identifier: Apache-2.0
// Relay SimplifyInference (src/relay/transforms/simplify_inference.cc, BatchNormToInferUnpack).
#include <cmath>

#include "engine/graph/passes/pass_util.h"
#include "engine/graph/passes/passes.h"
#include "engine/support/error.h"

namespace tb::graph {

using detail::GraphRebuilder;

namespace {

Attrs none() { return {}; }

NodeId scalarConst(Graph& g, float v) { return detail::addFloatConstant(g, "", {}, {v}); }

NodeId batchNormToInferUnpack(GraphRebuilder& rb, const Node& bn) {
    Graph& g = rb.out;
    NodeId x = rb.map[size_t(bn.inputs[0])];
    NodeId gamma = rb.map[size_t(bn.inputs[1])], beta = rb.map[size_t(bn.inputs[2])];
    NodeId mean = rb.map[size_t(bn.inputs[3])], var = rb.map[size_t(bn.inputs[4])];
    size_t ndim = g.node(x).type.shape.size();
    int axis = int(bn.attrs.getInt("axis", 1));
    if (axis < 0) axis += int(ndim);
    // TVM makes epsilon a float32 scalar of the data type.
    float eps = float(bn.attrs.getFloat("epsilon", 1e-5));
    bool useScale = bn.attrs.getInt("scale", 1) != 0, center = bn.attrs.getInt("center", 1) != 0;

    NodeId scale, shift;
    auto isF32 = [&](NodeId n) {
        const Node& k = g.node(n);
        return k.kind == NodeKind::Constant && k.type.dtype == te::DType::Float32 && !k.value->f.empty();
    };
    if (isF32(gamma) && isF32(beta) && isF32(mean) && isF32(var)) {
        // Same float32 operations, in the same order, as the Relay expressions below after FoldConstant.
        const auto& gv = g.node(gamma).value->f;
        const auto& bv = g.node(beta).value->f;
        const auto& mv = g.node(mean).value->f;
        const auto& vv = g.node(var).value->f;
        std::vector<float> s(vv.size()), t(vv.size());
        for (size_t i = 0; i < vv.size(); ++i) {
            float sq = std::sqrt(vv[i] + eps);
            float sc = 1.0f / sq;
            if (useScale) sc = sc * gv[i];
            float sh = -mv[i] * sc;
            if (center) sh = sh + bv[i];
            s[i] = sc;
            t[i] = sh;
        }
        std::vector<int64_t> shape{int64_t(vv.size())};
        for (int64_t k = 0; k < int64_t(ndim) - axis - 1; ++k) shape.push_back(1);
        scale = detail::addFloatConstant(g, bn.name + "_scale", shape, std::move(s));
        shift = detail::addFloatConstant(g, bn.name + "_shift", shape, std::move(t));
    } else {
        NodeId varEps = g.addOp("add", {var, scalarConst(g, eps)}, none());
        NodeId sq = g.addOp("sqrt", {varEps}, none());
        scale = g.addOp("divide", {scalarConst(g, 1.0f), sq}, none());
        if (useScale) scale = g.addOp("multiply", {scale, gamma}, none());
        // -mean*scale: multiply(negative(mean), scale); expressed as (mean*scale)*-1, which is the
        // same float32 value.
        shift = g.addOp("multiply", {g.addOp("multiply", {mean, scale}, none()), scalarConst(g, -1.0f)}, none());
        if (center) shift = g.addOp("add", {shift, beta}, none());
        scale = detail::expandBiasToMatchAxis(g, scale, ndim, axis);
        shift = detail::expandBiasToMatchAxis(g, shift, ndim, axis);
    }
    NodeId out = g.addOp("multiply", {x, scale}, none());
    return g.addOp("add", {out, shift}, none());
}

}  // namespace

Graph simplifyInference(const Graph& src) {
    GraphRebuilder rb(src);
    for (NodeId id = 0; id < NodeId(src.size()); ++id) {
        const Node& n = src.node(id);
        if (n.kind == NodeKind::Op && n.op == "nn.batch_norm") {
            rb.map[size_t(id)] = batchNormToInferUnpack(rb, n);
        } else if (n.kind == NodeKind::Op && n.op == "nn.dropout") {
            rb.map[size_t(id)] = rb.map[size_t(n.inputs[0])];
        } else {
            rb.copyMapped(id);
        }
    }
    return rb.finish();
}

}  // namespace tb::graph
