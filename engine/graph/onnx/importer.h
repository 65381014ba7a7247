// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to the ONNX importer (engine/graph/onnx_import.cpp and engine/graph/onnx/): the
// Importer that walks an ONNX GraphProto in order and builds a Relay-level tb::graph::Graph,
// the per-tensor Value it tracks, the converter signature, and helpers shared by the operator
// converters (convert_nn.cpp, convert_elementwise.cpp, convert_shape.cpp). Follows TVM's
// python/tvm/relay/frontend/onnx.py (GraphProto.from_onnx and the per-op converters).

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "engine/graph/graph.h"
#include "engine/graph/onnx/constant_fold.h"
#include "engine/graph/onnx_import.h"
#include "engine/graph/tensor_io.h"
#include "engine/support/error.h"

namespace tb::graph::onnx_detail {

// ---- model parsing (importer.cpp) ----

/// Parses serialized ONNX bytes; UserError naming `src` when empty, over 2 GiB, malformed or graphless.
onnx::ModelProto parseModel(const std::string& bytes, const std::string& src);
/// The whole file as bytes; UserError when it cannot be opened.
std::string readFile(const std::string& path);
/// The ONNX element type of a tensor value (0 when not a tensor).
int elemTypeOf(const onnx::ValueInfoProto& v);

// ---- the importer ----

/// A tensor during import: a graph node, a known constant, or both (a constant once materialized).
struct Value {
    NodeId node = -1;
    CPtr constant;
    TensorType type;
};

class Importer;
using Converter = std::function<void(Importer&, const onnx::NodeProto&)>;
/// The op-type -> converter table (onnx_import.cpp).
const std::map<std::string, Converter>& converters();

class Importer {
public:
    Importer(const onnx::ModelProto& m, std::string src, const OnnxImportOptions& opts)
        : m_model(m), m_src(std::move(src)), m_opts(opts) {
        for (const auto& o : m.opset_import())
            if (o.domain().empty() || o.domain() == "ai.onnx") m_opset = int(o.version());
    }

    /// Converts every node in order and returns the graph; UserError on unsupported operators,
    /// unbound dynamic inputs or malformed models.
    Graph run();

    // ---- access for converters ----
    int opset() const { return m_opset; }
    Graph& graph() { return m_graph; }

    bool has(const onnx::NodeProto& n, int i) const { return i < n.input_size() && !n.input(i).empty(); }
    Value& in(const onnx::NodeProto& n, int i) {
        TB_USER_CHECK(has(n, i)) << "missing input " << i;
        return m_values.at(n.input(i));
    }
    const Shape& shape(const onnx::NodeProto& n, int i) { return in(n, i).type.shape; }
    /// Constant value of input i; UserError naming `what` when it is computed at run time.
    const ConstantData& constIn(const onnx::NodeProto& n, int i, const char* what) {
        Value& v = in(n, i);
        TB_USER_CHECK(v.constant) << "input '" << what << "' ('" << n.input(i)
                                  << "') must be a constant (an initializer, a Constant node, a value computable at "
                                     "import, or a graph input frozen with OnnxImportOptions::constantInputs)";
        return *v.constant;
    }
    bool isConst(const onnx::NodeProto& n, int i) { return has(n, i) && bool(in(n, i).constant); }
    bool allConst(const onnx::NodeProto& n) {
        for (int i = 0; i < n.input_size(); ++i)
            if (has(n, i) && !in(n, i).constant) return false;
        return true;
    }
    NodeId node(const onnx::NodeProto& n, int i) {
        TB_USER_CHECK(has(n, i)) << "missing input " << i;
        return materialize(n.input(i));
    }
    /// The name of output k; UserError when the node has fewer outputs (a malformed model).
    const std::string& outputName(const onnx::NodeProto& n, int k) const {
        TB_USER_CHECK(k < n.output_size()) << "missing output " << k << " (the node has " << n.output_size() << ")";
        return n.output(k);
    }

    void setConst(const onnx::NodeProto& n, int k, CPtr c) {
        Value v;
        v.type = c->type;
        v.constant = std::move(c);
        m_values[outputName(n, k)] = std::move(v);
    }
    void setNode(const onnx::NodeProto& n, int k, NodeId id) {
        Value v;
        v.node = id;
        v.type = m_graph.node(id).type;
        m_values[outputName(n, k)] = std::move(v);
    }
    void alias(const onnx::NodeProto& n, int k, const Value& v) { m_values[outputName(n, k)] = v; }

    NodeId op(const onnx::NodeProto& n, const std::string& relayOp, std::vector<NodeId> inputs, Attrs attrs = {},
              const std::string& suffix = {}) {
        return m_graph.addOp(relayOp, std::move(inputs), std::move(attrs), nodeName(n) + suffix);
    }
    NodeId constant(const onnx::NodeProto& n, const std::string& suffix, CPtr c) {
        return m_graph.addConstant(nodeName(n) + suffix, asFloat(c));
    }
    NodeId scalar(const onnx::NodeProto& n, const std::string& suffix, float v) {
        return constant(n, suffix, makeFloats({}, {v}));
    }

    // ---- attributes ----
    const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& name) const {
        for (const auto& a : n.attribute())
            if (a.name() == name) return &a;
        return nullptr;
    }
    int64_t attrInt(const onnx::NodeProto& n, const std::string& name, int64_t dflt) const {
        auto* a = attr(n, name);
        return a ? a->i() : dflt;
    }
    double attrFloat(const onnx::NodeProto& n, const std::string& name, double dflt) const {
        auto* a = attr(n, name);
        return a ? double(a->f()) : dflt;
    }
    std::string attrString(const onnx::NodeProto& n, const std::string& name, const std::string& dflt) const {
        auto* a = attr(n, name);
        return a ? a->s() : dflt;
    }
    std::vector<int64_t> attrInts(const onnx::NodeProto& n, const std::string& name, std::vector<int64_t> dflt = {}) const {
        auto* a = attr(n, name);
        return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : dflt;
    }
    std::vector<float> attrFloats(const onnx::NodeProto& n, const std::string& name) const {
        auto* a = attr(n, name);
        return a ? std::vector<float>(a->floats().begin(), a->floats().end()) : std::vector<float>{};
    }
    NamedTensor attrTensor(const onnx::NodeProto& n, const std::string& name) const {
        auto* a = attr(n, name);
        TB_USER_CHECK(a && a->has_t()) << "missing tensor attribute '" << name << "'";
        return tensorFromProto(a->t(), "attribute '" + name + "'");
    }

    static std::string nodeName(const onnx::NodeProto& n) {
        return !n.name().empty() ? n.name() : n.output_size() ? n.output(0) : n.op_type();
    }

    NodeId materialize(const std::string& name) {
        Value& v = m_values.at(name);
        if (v.node < 0) {
            TB_CHECK(v.constant) << "value " << name << " has neither node nor constant";
            v.node = m_graph.addConstant(name, asFloat(v.constant));
        }
        return v.node;
    }

private:
    bool isUsed(const std::string& tensor) const;
    void checkSupported(const onnx::GraphProto& gp) const;
    void bindInput(const onnx::ValueInfoProto& in);


    const onnx::ModelProto& m_model;
    std::string m_src;
    const OnnxImportOptions& m_opts;
    int m_opset = 1;
    Graph m_graph;
    std::map<std::string, Value> m_values;
};

// ---- helpers shared by the converters (importer.cpp unless noted) ----

using NP = onnx::NodeProto;

/// `axis` normalized to [0, rank); UserError when out of range.
int normAxis(int64_t axis, size_t rank);
/// `x` reshaped to `to` (x itself when it already has that shape).
NodeId reshapeNode(Importer& im, const NP& n, NodeId x, const Shape& to, const std::string& suffix);

// convert_elementwise.cpp
/// Two-input element-wise op `relayOp`, folded with `f` when both inputs are constant.
void binary(Importer& im, const NP& n, const std::string& relayOp, const std::function<double(double, double)>& f);
/// One-input element-wise op `relayOp`, folded with `f` when the input is constant.
void unary(Importer& im, const NP& n, const std::string& relayOp, const std::function<double(double)>& f,
           Attrs a = {});
/// A comparison, supported only on constants (folded to a Bool constant).
void compareConst(Importer& im, const NP& n, const std::function<bool(double, double)>& f);
/// Sum/Mean/Max/Min over any number of inputs, as a chain of binary `relayOp`s.
void variadic(Importer& im, const NP& n, const std::string& relayOp, const std::function<double(double, double)>& f,
              bool mean);
void convertReduce(Importer& im, const NP& n, const std::string& relayOp, bool square);
void convertCast(Importer& im, const NP& n);
void convertWhere(Importer& im, const NP& n);

// convert_nn.cpp
/// y = a @ b with a [.., M, K] and b [.., K, N] (numpy matmul semantics, batch dims broadcast).
NodeId matmul(Importer& im, const NP& n, int ai, int bi, const std::string& sfx);
void convertConv(Importer& im, const NP& n);
void convertConvTranspose(Importer& im, const NP& n);
void convertGemm(Importer& im, const NP& n);
void convertPool(Importer& im, const NP& n, bool isMax);
void convertGlobalPool(Importer& im, const NP& n, const std::string& op);
void convertBatchNorm(Importer& im, const NP& n);
void convertSoftmax(Importer& im, const NP& n, const std::string& relayOp);
void convertClip(Importer& im, const NP& n);
void convertHardSigmoid(Importer& im, const NP& n, bool swish);
void convertResize(Importer& im, const NP& n, bool upsample);
void convertPad(Importer& im, const NP& n);

// convert_shape.cpp
void convertReshape(Importer& im, const NP& n);
void convertFlatten(Importer& im, const NP& n);
void convertSqueeze(Importer& im, const NP& n);
void convertUnsqueeze(Importer& im, const NP& n);
void convertExpand(Importer& im, const NP& n);
void convertSlice(Importer& im, const NP& n);
void convertSplit(Importer& im, const NP& n);
void convertGather(Importer& im, const NP& n);
void convertConcat(Importer& im, const NP& n);
void convertTranspose(Importer& im, const NP& n);
void convertShape(Importer& im, const NP& n);
void convertConstant(Importer& im, const NP& n);
void convertConstantOfShape(Importer& im, const NP& n);
void convertRange(Importer& im, const NP& n);

}  // namespace tb::graph::onnx_detail
