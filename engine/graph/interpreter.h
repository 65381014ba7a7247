// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file interpreter.h
/// \brief The graph reference interpreter: runs a whole Graph on host float32 buffers.
///
/// Every node is lowered on its own through the op registry (`findOp(op)->lower`, the same te
/// computes task extraction and the compiler use) and evaluated by the te reference interpreter
/// (te/interpreter.h). Running node by node, with no fusion and no scheduling, makes this the
/// oracle for compiled networks: a compiled PP-OCR or mobilenet must reproduce what this computes.
/// It is also what checks the ONNX importer against ONNX Runtime's outputs.
///
/// Memory: a node's buffer is released as soon as its last consumer has run (graph outputs are
/// kept), so peak memory is the live set of the network, not its sum. Speed comes from the te
/// interpreter (compiled op bodies, specialized reduction loops, threads over the spatial domain).

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/te/interpreter.h"

namespace tb::graph {

/// Per-node timing of one run (filled when requested).
struct NodeRunInfo {
    NodeId node = -1;
    std::string op;
    std::string name;
    double milliseconds = 0;
};

/// Options of one graph run.
struct GraphRunOptions {
    /// Options of the te interpreter for each node (threads, specialization).
    te::EvalOptions eval;
    /// When set, one entry per evaluated op node, in execution order.
    std::vector<NodeRunInfo>* profile = nullptr;
    /// When set, called after each op node with its output buffer (for debugging / tracing).
    std::function<void(NodeId, const te::Buffer&)> onNode;
};

/// The buffer of a constant node (float data as is; integer data converted to float).
te::Buffer constantBuffer(const ConstantData& c);

/// Runs `g`. `inputs` are given in `g.inputs()` order; each must have exactly its input node's
/// shape. Returns one buffer per `g.outputs()` entry, in order.
/// Throws UserError on a wrong input count or shape (naming the input), or when a node cannot be
/// lowered (naming the node and op); InternalError on a broken graph invariant.
std::vector<te::Buffer> runGraph(const Graph& g, const std::vector<te::Buffer>& inputs,
                                 const GraphRunOptions& options = {});

/// Same, with inputs by name (every graph input must be given; unknown names are a UserError).
std::vector<te::Buffer> runGraph(const Graph& g, const std::map<std::string, te::Buffer>& inputs,
                                 const GraphRunOptions& options = {});

}  // namespace tb::graph
