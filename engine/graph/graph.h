// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file graph.h
/// \brief The graph IR: a network as a DAG of operator nodes over typed tensors (Relay's role).
///
/// Networks enter TuneBench here, from the built-in zoo (zoo.h) or an ONNX file (onnx_import.h).
/// Passes (passes.h) rewrite the graph as TVM's Relay pipeline does (batch-norm folding, constant
/// folding, scale-axis folding, layout conversion, winograd/NCHWc alteration), fusion groups nodes
/// into primitive functions, and task extraction turns each group with a reduction into a te
/// ComputeDAG (a search task). Operator names and attribute names follow Relay (`nn.conv2d` with
/// `strides`, `padding`, `dilation`, `groups`, `data_layout`, `kernel_layout`, ...), because that is
/// the vocabulary TVM users read and REFERENCE-ZOO.md is written in.
///
/// Representation: nodes are stored in topological order and identified by their index (`NodeId`);
/// every node has exactly one output tensor; inputs refer to earlier nodes. A node is a graph input
/// (`kind == Input`), a constant (weights, with data), or an operator application.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/te/expr.h"

namespace tb::graph {

using te::DType;
using NodeId = int;

/// Shape (static extents) and element type of a tensor.
struct TensorType {
    std::vector<int64_t> shape;
    DType dtype = DType::Float32;
    int64_t numElements() const {
        int64_t n = 1;
        for (auto d : shape) n *= d;
        return n;
    }
    bool operator==(const TensorType&) const = default;
};

/// Operator attribute values (Relay attrs): ints, floats, strings and lists of them.
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>>;

/// An ordered attribute map with typed getters that throw UserError naming the key when the value
/// is missing or has the wrong type (attrs come from model files).
class Attrs {
public:
    void set(const std::string& key, AttrValue v) { m_map[key] = std::move(v); }
    bool has(const std::string& key) const { return m_map.count(key) != 0; }
    int64_t getInt(const std::string& key) const;
    int64_t getInt(const std::string& key, int64_t dflt) const;
    double getFloat(const std::string& key) const;   ///< accepts an int value too
    double getFloat(const std::string& key, double dflt) const;
    std::string getString(const std::string& key) const;
    std::string getString(const std::string& key, const std::string& dflt) const;
    std::vector<int64_t> getInts(const std::string& key) const;
    std::vector<int64_t> getInts(const std::string& key, const std::vector<int64_t>& dflt) const;
    std::vector<double> getFloats(const std::string& key) const;
    const std::map<std::string, AttrValue>& map() const { return m_map; }
    bool operator==(const Attrs&) const = default;

private:
    std::map<std::string, AttrValue> m_map;
};

/// Constant tensor data (weights). Float tensors use `f`; integer tensors (shapes, indices from
/// ONNX) use `i`. Shared and immutable once in a graph.
struct ConstantData {
    TensorType type;
    std::vector<float> f;
    std::vector<int64_t> i;
};

enum class NodeKind : uint8_t { Input, Constant, Op };

struct Node {
    NodeKind kind = NodeKind::Op;
    std::string op;                 ///< Relay op name for Op nodes ("nn.conv2d", "add", ...)
    std::string name;               ///< a readable name (ONNX node/initializer name, zoo layer name)
    std::vector<NodeId> inputs;     ///< producers, all with smaller ids
    Attrs attrs;
    TensorType type;                ///< output type (filled by type inference for Op nodes)
    std::shared_ptr<const ConstantData> value;  ///< for Constant nodes
};

/// A network. Build with addInput/addConstant/addOp (each infers the new node's type through the
/// op registry, so shape errors surface at the node that causes them), then mark outputs.
class Graph {
public:
    NodeId addInput(const std::string& name, TensorType type);
    NodeId addConstant(const std::string& name, std::shared_ptr<const ConstantData> value);
    /// Adds an operator node; infers its type (UserError naming the node when inputs do not fit).
    NodeId addOp(const std::string& op, std::vector<NodeId> inputs, Attrs attrs = {}, const std::string& name = {});
    void addOutput(NodeId id) { m_outputs.push_back(id); }

    const std::vector<Node>& nodes() const { return m_nodes; }
    const Node& node(NodeId id) const { return m_nodes.at(size_t(id)); }
    Node& mutableNode(NodeId id) { return m_nodes.at(size_t(id)); }
    const std::vector<NodeId>& inputs() const { return m_inputs; }
    const std::vector<NodeId>& outputs() const { return m_outputs; }
    void setOutputs(std::vector<NodeId> outs) { m_outputs = std::move(outs); }
    size_t size() const { return m_nodes.size(); }

    /// Consumers of every node (index = producer id), counting graph outputs as no consumer.
    std::vector<std::vector<NodeId>> consumers() const;
    /// Re-runs type inference over all op nodes (after a pass edited attrs or inputs).
    void inferTypes();
    /// A copy without nodes unreachable from the outputs, ids renumbered in topological order.
    Graph pruned() const;
    /// Readable text, one node per line: `%7 = nn.conv2d(%3, %6, strides=[2, 2], ...) : [1, 112, 112, 32]`.
    std::string print() const;

private:
    std::vector<Node> m_nodes;
    std::vector<NodeId> m_inputs;
    std::vector<NodeId> m_outputs;
};

}  // namespace tb::graph
