// SPDX-License-Identifier: Apache-2.0
#include "engine/graph/passes/pass_util.h"

#include "engine/support/error.h"

namespace tb::graph::detail {

NodeId GraphRebuilder::copy(NodeId id, std::vector<NodeId> inputs) {
    const Node& n = m_src.node(id);
    NodeId r;
    switch (n.kind) {
        case NodeKind::Input: r = out.addInput(n.name, n.type); break;
        case NodeKind::Constant: r = out.addConstant(n.name, n.value); break;
        default: r = out.addOp(n.op, std::move(inputs), n.attrs, n.name); break;
    }
    map[size_t(id)] = r;
    return r;
}

NodeId GraphRebuilder::copyMapped(NodeId id) {
    std::vector<NodeId> in;
    for (NodeId p : m_src.node(id).inputs) {
        TB_CHECK(map[size_t(p)] >= 0) << "input %" << p << " of %" << id << " not rebuilt yet";
        in.push_back(map[size_t(p)]);
    }
    return copy(id, std::move(in));
}

Graph GraphRebuilder::finish() {
    std::vector<NodeId> outs;
    for (NodeId o : m_src.outputs()) {
        TB_CHECK(map[size_t(o)] >= 0) << "output %" << o << " not rebuilt";
        outs.push_back(map[size_t(o)]);
    }
    out.setOutputs(outs);
    return out.pruned();
}

NodeId addFloatConstant(Graph& g, const std::string& name, std::vector<int64_t> shape, std::vector<float> values) {
    auto d = std::make_shared<ConstantData>();
    d->type = TensorType{std::move(shape), te::DType::Float32};
    TB_CHECK(int64_t(values.size()) == d->type.numElements()) << "constant " << name << " size";
    d->f = std::move(values);
    return g.addConstant(name, d);
}

NodeId expandBiasToMatchAxis(Graph& g, NodeId bias, size_t targetNdim, int axis) {
    int64_t pad = int64_t(targetNdim) - axis - 1;
    if (pad <= 0) return bias;
    Attrs a;
    a.set("axis", int64_t(1));
    a.set("num_newaxis", pad);
    return g.addOp("expand_dims", {bias}, a);
}

bool matchBroadcastToLeftAxes(const std::vector<int64_t>& lhs, const std::vector<int64_t>& rhs,
                              const std::vector<int>& axes, std::vector<int64_t>* squeezeAxes) {
    if (lhs.size() < rhs.size()) return false;
    size_t base = lhs.size() - rhs.size();
    size_t j = 0;
    for (size_t i = 0; i < lhs.size(); ++i) {
        if (j < axes.size() && int(i) == axes[j]) {
            if (i < base || lhs[i] != rhs[i - base]) return false;
            ++j;
        } else if (i >= base) {
            if (rhs[i - base] != 1) return false;
            if (squeezeAxes) squeezeAxes->push_back(int64_t(i - base));
        }
    }
    return true;
}

std::vector<int> refCounts(const Graph& g) {
    std::vector<int> c(g.size(), 0);
    for (const auto& n : g.nodes())
        for (NodeId p : n.inputs) c[size_t(p)]++;
    for (NodeId o : g.outputs()) c[size_t(o)]++;
    return c;
}

bool isBroadcastBinaryOp(const std::string& op) {
    return op == "add" || op == "subtract" || op == "multiply" || op == "divide" || op == "maximum" ||
           op == "minimum" || op == "power";
}

bool isUnaryElemwiseOp(const std::string& op) {
    return op == "nn.relu" || op == "tanh" || op == "sigmoid" || op == "exp" || op == "sqrt" || op == "clip" ||
           op == "nn.leaky_relu" || op == "negative" || op == "erf" || op == "log" || op == "abs" ||
           op == "floor" || op == "ceil" || op == "round" || op == "nn.dropout";
}

bool isPool2dOp(const std::string& op) {
    return op == "nn.max_pool2d" || op == "nn.avg_pool2d" || op == "nn.global_avg_pool2d" ||
           op == "nn.global_max_pool2d" || op == "nn.adaptive_avg_pool2d";
}

}  // namespace tb::graph::detail
