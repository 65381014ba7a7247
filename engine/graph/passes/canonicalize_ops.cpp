// SPDX-License-Identifier: Apache-2.0
// Relay CanonicalizeOps (src/relay/transforms/canonicalize_ops.cc): bias_add -> add + expand_dims.
#include "engine/graph/passes/pass_util.h"
#include "engine/graph/passes/passes.h"

namespace tb::graph {

Graph canonicalizeOps(const Graph& src) {
    detail::GraphRebuilder rb(src);
    for (NodeId id = 0; id < NodeId(src.size()); ++id) {
        const Node& n = src.node(id);
        if (n.kind == NodeKind::Op && n.op == "nn.bias_add") {
            NodeId x = rb.map[size_t(n.inputs[0])], b = rb.map[size_t(n.inputs[1])];
            size_t ndim = rb.out.node(x).type.shape.size();
            int axis = int(n.attrs.getInt("axis", 1));
            if (axis < 0) axis += int(ndim);
            NodeId eb = detail::expandBiasToMatchAxis(rb.out, b, ndim, axis);
            rb.map[size_t(id)] = rb.out.addOp("add", {x, eb}, {}, n.name);
        } else {
            rb.copyMapped(id);
        }
    }
    return rb.finish();
}

}  // namespace tb::graph
