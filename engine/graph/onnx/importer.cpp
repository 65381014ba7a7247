// SPDX-License-Identifier: Apache-2.0
// ONNX model parsing and the Importer's walk over a GraphProto: initializers, input binding
// (shapes, frozen constant inputs), dispatch to the converters, and the helpers the converter
// families share (see importer.h).
#include "engine/graph/onnx/importer.h"

#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <google/protobuf/io/coded_stream.h>

namespace tb::graph::onnx_detail {

// ---- model parsing ---------------------------------------------------------------------

onnx::ModelProto parseModel(const std::string& bytes, const std::string& src) {
    TB_USER_CHECK(!bytes.empty()) << "ONNX model '" << src << "' is empty";
    TB_USER_CHECK(bytes.size() < size_t(std::numeric_limits<int>::max()))
        << "ONNX model '" << src << "' is larger than 2 GiB, which protobuf cannot parse";
    onnx::ModelProto m;
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), int(bytes.size()));
    in.SetTotalBytesLimit(std::numeric_limits<int>::max());
    const bool ok = m.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
    TB_USER_CHECK(ok) << "'" << src << "' is not a valid ONNX model: the protobuf data is malformed or truncated ("
                      << bytes.size() << " bytes)";
    TB_USER_CHECK(m.has_graph() && m.graph().node_size() > 0 && m.graph().output_size() > 0)
        << "'" << src << "' is not a valid ONNX model: it has no graph, no nodes or no outputs (truncated file?)";
    return m;
}

std::string readFile(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    TB_USER_CHECK(f) << "cannot open ONNX model '" << path << "'";
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

int elemTypeOf(const onnx::ValueInfoProto& v) {
    return v.type().has_tensor_type() ? v.type().tensor_type().elem_type() : 0;
}
// ---- the importer ---------------------------------------------------------------------

Graph Importer::run() {
    const auto& gp = m_model.graph();
    checkSupported(gp);
    std::set<std::string> inits;
    for (const auto& t : gp.initializer()) {
        inits.insert(t.name());
        NamedTensor nt = tensorFromProto(t, "'" + m_src + "': initializer '" + t.name() + "'");
        Value v;
        v.constant = std::make_shared<ConstantData>(std::move(nt.data));
        v.type = v.constant->type;
        m_values[t.name()] = std::move(v);
    }
    for (const auto& [name, _] : m_opts.inputShapes) {
        bool found = false;
        for (const auto& in : gp.input()) found = found || in.name() == name;
        TB_USER_CHECK(found) << "'" << m_src << "': the shape binding names '" << name
                             << "', which is not an input of the model";
    }
    for (const auto& in : gp.input()) {
        if (inits.count(in.name())) continue;
        bindInput(in);
    }
    for (const auto& n : gp.node()) {
        for (const auto& i : n.input())
            TB_USER_CHECK(i.empty() || m_values.count(i))
                << "'" << m_src << "' is malformed or truncated: node '" << nodeName(n) << "' (" << n.op_type()
                << ") reads tensor '" << i << "', which no input, initializer or earlier node defines";
        const Converter& conv = converters().at(n.op_type());
        try {
            conv(*this, n);
        } catch (const UserError& e) {
            TB_USER_ERROR() << "'" << m_src << "': node '" << nodeName(n) << "' (" << n.op_type() << "): " << e.what();
        }
        for (const auto& o : n.output())
            TB_USER_CHECK(o.empty() || m_values.count(o) || !isUsed(o))
                << "'" << m_src << "': node '" << nodeName(n) << "' (" << n.op_type() << "): output '" << o
                << "' is used but not supported";
    }
    for (const auto& o : gp.output()) {
        TB_USER_CHECK(m_values.count(o.name()))
            << "'" << m_src << "' is malformed or truncated: graph output '" << o.name() << "' is never computed";
        m_graph.addOutput(materialize(o.name()));
    }
    return m_graph;
}

bool Importer::isUsed(const std::string& tensor) const {
    for (const auto& n : m_model.graph().node())
        for (const auto& i : n.input())
            if (i == tensor) return true;
    for (const auto& o : m_model.graph().output())
        if (o.name() == tensor) return true;
    return false;
}

void Importer::checkSupported(const onnx::GraphProto& gp) const {
    std::map<std::string, std::vector<std::string>> bad;
    for (const auto& n : gp.node()) {
        const bool stdDomain = n.domain().empty() || n.domain() == "ai.onnx";
        std::string type = stdDomain ? n.op_type() : n.domain() + "." + n.op_type();
        if (!stdDomain || !converters().count(n.op_type())) bad[type].push_back(nodeName(n));
    }
    if (bad.empty()) return;
    std::ostringstream os;
    os << "'" << m_src << "' uses " << bad.size() << " unsupported ONNX operator type"
       << (bad.size() > 1 ? "s" : "") << ":";
    for (const auto& [type, nodes] : bad) {
        os << " " << type << " (" << nodes.size() << " node" << (nodes.size() > 1 ? "s" : "") << ": ";
        for (size_t i = 0; i < nodes.size(); ++i) {
            if (i == 8) {
                os << ", ...";
                break;
            }
            os << (i ? ", " : "") << "'" << nodes[i] << "'";
        }
        os << ");";
    }
    std::string msg = os.str();
    msg.back() = '.';
    throw UserError(msg);
}

void Importer::bindInput(const onnx::ValueInfoProto& in) {
    const std::string& name = in.name();
    const int et = elemTypeOf(in);
    if (auto it = m_opts.constantInputs.find(name); it != m_opts.constantInputs.end()) {
        Value v;
        v.constant = std::make_shared<ConstantData>(it->second);
        v.type = v.constant->type;
        const auto& dims = in.type().tensor_type().shape().dim();
        TB_USER_CHECK(dims.size() == 0 || size_t(dims.size()) == v.type.shape.size())
            << "'" << m_src << "': the constant given for input '" << name << "' has rank "
            << v.type.shape.size() << ", the model declares " << dims.size();
        m_values[name] = std::move(v);
        return;
    }
    TB_USER_CHECK(in.type().has_tensor_type())
        << "'" << m_src << "': input '" << name << "' is not a tensor (sequences and maps are not supported)";
    TB_USER_CHECK(et == onnx::TensorProto::FLOAT || et == onnx::TensorProto::DOUBLE || et == onnx::TensorProto::FLOAT16)
        << "'" << m_src << "': input '" << name << "' has element type " << onnxTypeName(et)
        << "; only float inputs can be fed at run time (give integer inputs as constants with "
           "OnnxImportOptions::constantInputs)";
    const auto& tt = in.type().tensor_type();
    Shape shape;
    std::vector<std::string> unbound;
    for (int d = 0; d < tt.shape().dim_size(); ++d) {
        const auto& dim = tt.shape().dim(d);
        if (dim.has_dim_value() && dim.dim_value() > 0) {
            shape.push_back(dim.dim_value());
        } else {
            shape.push_back(-1);
            unbound.push_back(dim.has_dim_param() ? dim.dim_param() : "?");
        }
    }
    auto it = m_opts.inputShapes.find(name);
    if (it != m_opts.inputShapes.end()) {
        const Shape& given = it->second;
        TB_USER_CHECK(!tt.has_shape() || given.size() == shape.size())
            << "'" << m_src << "': input '" << name << "' has rank " << shape.size() << " but the binding "
            << shapeStr(given) << " has rank " << given.size();
        for (size_t d = 0; d < given.size(); ++d) {
            TB_USER_CHECK(given[d] > 0) << "'" << m_src << "': the binding of input '" << name
                                        << "' has a non-positive extent " << shapeStr(given);
            TB_USER_CHECK(!tt.has_shape() || shape[d] < 0 || shape[d] == given[d])
                << "'" << m_src << "': input '" << name << "' has static shape " << shapeStr(shape)
                << " but the binding is " << shapeStr(given);
        }
        shape = given;
    } else {
        TB_USER_CHECK(tt.has_shape()) << "'" << m_src << "': input '" << name
                                      << "' has no declared shape; bind it (e.g. " << name << "=1,3,224,224)";
        if (!unbound.empty()) {
            std::ostringstream os;
            for (size_t i = 0; i < unbound.size(); ++i) os << (i ? ", " : "") << unbound[i];
            std::string shown = "[";
            for (size_t d = 0; d < shape.size(); ++d)
                shown += (d ? ", " : "") + (shape[d] < 0 ? std::string("?") : std::to_string(shape[d]));
            std::string example;
            for (int64_t e : suggestInputShape(shape)) example += (example.empty() ? "" : ",") + std::to_string(e);
            TB_USER_ERROR() << "'" << m_src << "': input '" << name << "' has dynamic dimensions (" << os.str()
                            << ") in its shape " << shown << "]; bind them with an input shape such as '" << name
                            << "=" << example << "'";
        }
    }
    NodeId id = m_graph.addInput(name, TensorType{shape, DType::Float32});
    Value v;
    v.node = id;
    v.type = m_graph.node(id).type;
    m_values[name] = std::move(v);
}

// ---- helpers shared by the converters -------------------------------------------------------

int normAxis(int64_t axis, size_t rank) {
    int64_t r = int64_t(rank);
    TB_USER_CHECK(axis >= -r && axis < r) << "axis " << axis << " out of range for rank " << rank;
    return int(axis < 0 ? axis + r : axis);
}

NodeId reshapeNode(Importer& im, const NP& n, NodeId x, const Shape& to, const std::string& suffix) {
    if (im.graph().node(x).type.shape == to) return x;
    Attrs a;
    a.set("newshape", std::vector<int64_t>(to));
    return im.op(n, "reshape", {x}, a, suffix);
}

}  // namespace tb::graph::onnx_detail
