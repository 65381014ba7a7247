// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file fuse_ops.h
/// \brief Operator fusion: partitions a graph into primitive functions, exactly as Relay's
/// FuseOps (src/relay/transforms/fuse_ops.cc, src/relay/analysis/graph_partitioner.cc).
///
/// Each fused group becomes one compiled kernel, and each group with a reduction becomes one
/// tuning task, so the partition decides the task list: a convolution absorbs the element-wise /
/// broadcast epilogue that follows it (bias add, residual add, relu) up to the first value with
/// another consumer, injective ops group among themselves, softmax stays alone. The algorithm is
/// TVM's (REFERENCE-ZOO §2.3): an indexed forward graph in post-DFS order (graph inputs first,
/// then a DFS from the outputs visiting arguments left to right; a concatenate's inputs pass
/// through a tuple node), the post-dominator tree with edge patterns (a broadcast edge counts as
/// element-wise when the argument already has the output shape), and three fusion phases
/// (anchor epilogues, injective chains, injective ops into tuples), at most 256 ops per group.

#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace tb::graph {

/// One primitive function.
struct FusedGroup {
    /// The op nodes of the group in post-order from the root (arguments left to right): the order
    /// TVM lowers them in and names the function after.
    std::vector<NodeId> nodes;
    /// The node whose value leaves the group (the function's result).
    NodeId root = -1;
    /// External inputs in parameter order p0, p1, ... (Relay `GetOrAllocParam`: first use while the
    /// group is rebuilt from its root, arguments left to right, recursing into members first).
    /// Graph inputs, constants (weights are lifted to params) and other groups' results.
    std::vector<NodeId> params;
    /// TVM's readable function name: "fused_" + the op names with '.' -> '_', e.g.
    /// "fused_nn_conv2d_add_nn_relu".
    std::string name;
};

/// Partitions every op node of `g` reachable from its outputs into groups (a node is in exactly
/// one group). Groups are returned in topological order of their roots. `maxDepth` is Relay's
/// `relay.FuseOps.max_depth` (default 256). Scalar constants read by a group's op are members of
/// the group (they become `compile_engine_const` stages), other constants are params.
std::vector<FusedGroup> fuseOps(const Graph& g, int maxDepth = 256);

}  // namespace tb::graph
