// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file int_interpreter.h
/// \brief The reference interpreter of quantized graphs: exact int8/int32 arithmetic where the
/// realized graph is integer, float32 (through the te interpreter) where it stays float.
///
/// Why a separate path: te and the graph interpreter (interpreter.h) compute in float32, which
/// cannot hold an int32 accumulator exactly (2^24 < 2^31) and has no int8. relay.quantize
/// (passes/quantize.h) produces a graph whose convolutions take int8 and accumulate in int32,
/// requantized with add/right_shift/clip/cast; this interpreter runs it bit-exactly, and is the
/// oracle the VTA network runner (engine/vta/vta_network.h) must reproduce bit for bit.
///
/// Types: te has no int8, so a quantized graph's TensorType carries Int32 for int8 and int32
/// tensors (Float32 for float) and the exact dtype is the node attr "dtype" ("float32", "int8",
/// "int32", "int64"), set by quantize() on every node. A node without it is float32.
///
/// Integer semantics follow TVM's on CPU: int32 add/subtract/multiply/left_shift wrap (two's
/// complement), right_shift is arithmetic, clip bounds are the attrs truncated to the dtype
/// (tir const of a double), cast float->int truncates toward zero (fptosi) and int->narrower int
/// wraps, conv2d accumulates int8 x int8 products in int32 (wrapping), max_pool2d pads with the
/// dtype's minimum, global_avg_pool2d divides the int sum truncating (TVM's div on ints).
/// Supported integer ops: cast, add, subtract, multiply, right_shift, left_shift, clip, nn.relu,
/// round (float only), nn.conv2d (NCHW/OIHW and packed NCHW{b}n{c}c/OIHW{c}o{c}i), nn.max_pool2d,
/// nn.global_avg_pool2d, reshape, transpose, nn.batch_flatten, annotation.stop_fusion,
/// broadcast_to. Float op nodes go through the op registry's te lowering as in runGraph.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace tb::graph {

/// The element types of a quantized graph.
enum class QDType : uint8_t { Float32, Int8, Int32, Int64 };
/// "float32", "int8", "int32", "int64".
const char* qdtypeName(QDType t);
/// The inverse; throws tb::UserError naming an unknown dtype.
QDType parseQDType(const std::string& name);
/// The dtype of a node: its "dtype" attr, float32 when absent.
QDType nodeDType(const Node& node);

/// A host tensor of a quantized graph: float data in `f` or integer data (already wrapped to the
/// dtype's range) in `i`, row-major.
struct HostTensor {
    std::vector<int64_t> shape;
    QDType dtype = QDType::Float32;
    std::vector<float> f;
    std::vector<int64_t> i;
    int64_t numElements() const;
    bool isFloat() const { return dtype == QDType::Float32; }
    /// The value at flat index k as double (for diffs).
    double value(int64_t k) const { return isFloat() ? double(f[size_t(k)]) : double(i[size_t(k)]); }
    bool operator==(const HostTensor&) const = default;
};

/// The tensor of a constant node (dtype from the node's "dtype" attr; integer data from
/// ConstantData::i, float data from ConstantData::f).
HostTensor constantTensor(const Node& constant);
/// A constant holding `t`, for Graph::addConstant (its node needs the "dtype" attr set too).
std::shared_ptr<const ConstantData> constantData(const HostTensor& t);

/// Evaluates one op node on its inputs (in node.inputs order). Throws tb::UserError naming the
/// node and the problem for an unsupported op/dtype/layout combination.
HostTensor evalQuantNode(const Node& node, const std::vector<const HostTensor*>& inputs);

/// Options of runIntGraph.
struct IntRunOptions {
    /// When set and it returns true for an op node, `take` computes the node's value instead,
    /// reading any already computed node through `value` (a group's inputs: the nodes in `skip`
    /// are not evaluated, and the inputs of skipped nodes are kept alive). Lets the VTA runner
    /// execute a conv2d and its epilogue on the simulator at the epilogue's last node.
    std::function<bool(NodeId)> external;
    std::function<HostTensor(NodeId, const std::function<const HostTensor&(NodeId)>& value)> take;
    /// Nodes not evaluated (index = node id; shorter vectors mean "not skipped").
    std::vector<char> skip;
    /// Called after each evaluated op node with its value.
    std::function<void(NodeId, const HostTensor&)> onNode;
};

/// Runs a quantized (or plain float) graph. `inputs` in g.inputs() order, each of its input
/// node's shape (float32). Returns one tensor per output. Buffers are released after their last
/// use. Throws tb::UserError on a wrong input count/shape or an unsupported node.
std::vector<HostTensor> runIntGraph(const Graph& g, const std::vector<HostTensor>& inputs,
                                    const IntRunOptions& options = {});

}  // namespace tb::graph
