// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to engine/graph/passes: rebuilding a graph node by node (the role of Relay's
// ExprMutator), constant helpers and Relay's ExpandBiasToMatchAxis (src/relay/transforms/pattern_util.h).

#include <memory>
#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace tb::graph::detail {

/// Copies a source graph into `out` while a pass rewrites some nodes. `map[src] = out id`.
class GraphRebuilder {
public:
    explicit GraphRebuilder(const Graph& src) : map(src.size(), -1), m_src(src) {}

    Graph out;
    std::vector<NodeId> map;

    const Graph& src() const { return m_src; }
    /// Copies src node `id` with the given (already mapped) inputs; inputs and constants ignore them.
    NodeId copy(NodeId id, std::vector<NodeId> inputs);
    /// Copies src node `id` with its inputs mapped through `map` (they must be mapped already).
    NodeId copyMapped(NodeId id);
    /// Copies every src node in order (for passes that only touch a few nodes: call before editing).
    /// Output ids of copied inputs keep the graph input order.
    NodeId addOp(const std::string& op, std::vector<NodeId> inputs, Attrs attrs = {}, const std::string& name = {}) {
        return out.addOp(op, std::move(inputs), std::move(attrs), name);
    }
    /// Sets the outputs (mapped) and returns the result with unreachable nodes removed.
    Graph finish();

private:
    const Graph& m_src;
};

inline bool isConstant(const Graph& g, NodeId id) { return g.node(id).kind == NodeKind::Constant; }
inline bool isOp(const Graph& g, NodeId id, const char* op) {
    const Node& n = g.node(id);
    return n.kind == NodeKind::Op && n.op == op;
}

/// Op classes that the layout passes (AlterOpLayout, ConvertLayout) treat alike: element-wise
/// binary ops with numpy broadcasting, element-wise unary ops, and 2-D pools.
bool isBroadcastBinaryOp(const std::string& op);
bool isUnaryElemwiseOp(const std::string& op);
bool isPool2dOp(const std::string& op);

/// A new float32 constant node.
NodeId addFloatConstant(Graph& g, const std::string& name, std::vector<int64_t> shape, std::vector<float> values);

/// Relay ExpandBiasToMatchAxis(bias, ndim, {axis}) for one axis: `expand_dims(bias, axis=1,
/// num_newaxis=ndim-axis-1)` when that is > 0, else bias itself.
NodeId expandBiasToMatchAxis(Graph& g, NodeId bias, size_t targetNdim, int axis);

/// Relay MatchBroadcastToLeftAxes(lhs, rhs, axes): rhs broadcasts onto lhs touching only `axes`
/// (every other rhs dim is 1, the axes dims equal lhs's). `squeezeAxes` (optional) receives the
/// rhs dims to squeeze so that only the axes remain.
bool matchBroadcastToLeftAxes(const std::vector<int64_t>& lhs, const std::vector<int64_t>& rhs,
                              const std::vector<int>& axes, std::vector<int64_t>* squeezeAxes = nullptr);

/// Number of references of every node (consumer edges + 1 per graph output), as Relay's GetExprRefCount.
std::vector<int> refCounts(const Graph& g);

}  // namespace tb::graph::detail
