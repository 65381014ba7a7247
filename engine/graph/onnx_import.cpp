// SPDX-License-Identifier: Apache-2.0
#include "engine/graph/onnx_import.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>

#include <google/protobuf/io/coded_stream.h>
#include <onnx/onnx_pb.h>

#include "engine/support/error.h"

namespace tb::graph {

namespace {

using CPtr = std::shared_ptr<const ConstantData>;
using Shape = std::vector<int64_t>;

std::string shapeStr(const Shape& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

int64_t product(const Shape& s, size_t from = 0, size_t to = size_t(-1)) {
    int64_t n = 1;
    for (size_t i = from; i < std::min(to, s.size()); ++i) n *= s[i];
    return n;
}

// ---- constant tensors -----------------------------------------------------------------

bool isFloatData(const ConstantData& c) { return te::isFloat(c.type.dtype); }
double valueAt(const ConstantData& c, size_t k) { return isFloatData(c) ? double(c.f[k]) : double(c.i[k]); }

CPtr makeInts(Shape shape, std::vector<int64_t> v, DType t = DType::Int64) {
    auto c = std::make_shared<ConstantData>();
    c->type = {std::move(shape), t};
    c->i = std::move(v);
    return c;
}
CPtr makeFloats(Shape shape, std::vector<float> v) {
    auto c = std::make_shared<ConstantData>();
    c->type = {std::move(shape), DType::Float32};
    c->f = std::move(v);
    return c;
}
/// A constant of `shape` and dtype `t` from doubles (ints truncated towards zero).
CPtr makeFrom(Shape shape, DType t, const std::vector<double>& v) {
    if (te::isFloat(t)) return makeFloats(std::move(shape), std::vector<float>(v.begin(), v.end()));
    std::vector<int64_t> iv(v.size());
    for (size_t k = 0; k < v.size(); ++k) iv[k] = t == DType::Bool ? (v[k] != 0) : int64_t(std::trunc(v[k]));
    return makeInts(std::move(shape), std::move(iv), t);
}
/// The same data with another shape (element count unchanged).
CPtr reshaped(const ConstantData& c, Shape shape) {
    auto r = std::make_shared<ConstantData>(c);
    r->type.shape = std::move(shape);
    return r;
}
/// Float32 version of a constant (graph constants are float; int shape tensors convert exactly).
CPtr asFloat(const CPtr& c) {
    if (isFloatData(*c)) return c;
    std::vector<float> f(c->i.begin(), c->i.end());
    return makeFloats(c->type.shape, std::move(f));
}
std::vector<int64_t> toInts(const ConstantData& c) {
    if (!isFloatData(c)) return c.i;
    std::vector<int64_t> out;
    for (float f : c.f) out.push_back(int64_t(f));
    return out;
}

Shape rowMajorStrides(const Shape& s) {
    Shape st(s.size(), 1);
    for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
    return st;
}

/// numpy broadcasting of two shapes; UserError when incompatible.
Shape broadcastShapes(const Shape& a, const Shape& b) {
    size_t n = std::max(a.size(), b.size());
    Shape out(n);
    for (size_t i = 0; i < n; ++i) {
        int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
        int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
        TB_USER_CHECK(da == db || da == 1 || db == 1)
            << "shapes " << shapeStr(a) << " and " << shapeStr(b) << " cannot be broadcast together";
        out[i] = da == 1 ? db : da;
    }
    return out;
}

/// For each output element (row-major over `out`), the flat index into a tensor of shape `in`
/// broadcast to `out`.
std::vector<size_t> broadcastIndex(const Shape& in, const Shape& out) {
    const size_t n = out.size(), off = n - in.size();
    Shape inStrides = rowMajorStrides(in);
    std::vector<size_t> idx(size_t(product(out)));
    Shape pos(n, 0);
    for (size_t k = 0; k < idx.size(); ++k) {
        int64_t flat = 0;
        for (size_t d = off; d < n; ++d)
            if (in[d - off] != 1) flat += pos[d] * inStrides[d - off];
        idx[k] = size_t(flat);
        for (size_t d = n; d-- > 0;) {
            if (++pos[d] < out[d]) break;
            pos[d] = 0;
        }
    }
    return idx;
}

/// Element-wise n-ary function on constants with numpy broadcasting.
CPtr foldElementwise(const std::vector<CPtr>& ins, DType outType, const std::function<double(const std::vector<double>&)>& f) {
    Shape out;
    for (const auto& c : ins) out = broadcastShapes(out, c->type.shape);
    std::vector<std::vector<size_t>> idx;
    for (const auto& c : ins) idx.push_back(broadcastIndex(c->type.shape, out));
    std::vector<double> res(size_t(product(out)));
    std::vector<double> args(ins.size());
    for (size_t k = 0; k < res.size(); ++k) {
        for (size_t j = 0; j < ins.size(); ++j) args[j] = valueAt(*ins[j], idx[j][k]);
        res[k] = f(args);
    }
    return makeFrom(out, outType, res);
}

/// Gathers the elements at `srcIndex` of `c` into a new constant of `shape`.
CPtr gatherFlat(const ConstantData& c, Shape shape, const std::vector<size_t>& srcIndex) {
    auto r = std::make_shared<ConstantData>();
    r->type = {std::move(shape), c.type.dtype};
    if (isFloatData(c))
        for (size_t k : srcIndex) r->f.push_back(c.f[k]);
    else
        for (size_t k : srcIndex) r->i.push_back(c.i[k]);
    return r;
}

/// Source flat indices of a transpose of `in` by `perm`.
std::vector<size_t> transposeIndex(const Shape& in, const std::vector<int64_t>& perm, Shape* outShape) {
    const size_t n = in.size();
    Shape out(n);
    for (size_t i = 0; i < n; ++i) out[i] = in[size_t(perm[i])];
    Shape st = rowMajorStrides(in);
    std::vector<size_t> idx;
    idx.reserve(size_t(product(out)));
    Shape pos(n, 0);
    for (int64_t k = 0, total = product(out); k < total; ++k) {
        int64_t flat = 0;
        for (size_t d = 0; d < n; ++d) flat += pos[d] * st[size_t(perm[d])];
        idx.push_back(size_t(flat));
        for (size_t d = n; d-- > 0;) {
            if (++pos[d] < out[d]) break;
            pos[d] = 0;
        }
    }
    *outShape = out;
    return idx;
}

/// A normalized Slice: per axis start, step and count.
struct SliceSpec {
    std::vector<int64_t> begin, end, strides, axes;  // static, clamped, one entry per sliced axis
    Shape outShape;
};

SliceSpec normalizeSlice(const Shape& in, std::vector<int64_t> starts, std::vector<int64_t> ends,
                         std::vector<int64_t> axes, std::vector<int64_t> steps) {
    const int64_t r = int64_t(in.size());
    TB_USER_CHECK(starts.size() == ends.size()) << "Slice: starts and ends differ in length";
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    TB_USER_CHECK(axes.size() == starts.size() && steps.size() == starts.size())
        << "Slice: starts, ends, axes and steps differ in length";
    SliceSpec s;
    s.outShape = in;
    std::set<int64_t> seen;
    for (size_t i = 0; i < axes.size(); ++i) {
        int64_t ax = axes[i] < 0 ? axes[i] + r : axes[i];
        TB_USER_CHECK(ax >= 0 && ax < r) << "Slice: axis " << axes[i] << " out of range for rank " << r;
        TB_USER_CHECK(seen.insert(ax).second) << "Slice: axis " << ax << " repeated";
        int64_t dim = in[size_t(ax)], step = steps[i];
        TB_USER_CHECK(step != 0) << "Slice: step 0";
        int64_t b = starts[i], e = ends[i];
        if (b < 0) b += dim;
        if (e < 0 && e > std::numeric_limits<int64_t>::min() / 2) e += dim;
        int64_t count;
        if (step > 0) {
            b = std::clamp<int64_t>(b, 0, dim);
            e = std::clamp<int64_t>(e, 0, dim);
            count = e > b ? (e - b + step - 1) / step : 0;
        } else {
            b = std::clamp<int64_t>(b, -1, dim - 1);
            e = std::clamp<int64_t>(e, -1, dim - 1);
            count = b > e ? (b - e + (-step) - 1) / (-step) : 0;
        }
        s.axes.push_back(ax);
        s.begin.push_back(b);
        s.end.push_back(step > 0 ? b + count * step : b + count * step);
        s.strides.push_back(step);
        s.outShape[size_t(ax)] = count;
    }
    return s;
}

std::vector<size_t> sliceIndex(const Shape& in, const SliceSpec& s) {
    const size_t n = in.size();
    std::vector<int64_t> start(n, 0), step(n, 1);
    for (size_t i = 0; i < s.axes.size(); ++i) {
        start[size_t(s.axes[i])] = s.begin[i];
        step[size_t(s.axes[i])] = s.strides[i];
    }
    Shape st = rowMajorStrides(in);
    std::vector<size_t> idx;
    Shape pos(n, 0);
    for (int64_t k = 0, total = product(s.outShape); k < total; ++k) {
        int64_t flat = 0;
        for (size_t d = 0; d < n; ++d) flat += (start[d] + pos[d] * step[d]) * st[d];
        idx.push_back(size_t(flat));
        for (size_t d = n; d-- > 0;) {
            if (++pos[d] < s.outShape[d]) break;
            pos[d] = 0;
        }
    }
    return idx;
}

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

/// A tensor during import: a graph node, a known constant, or both (a constant once materialized).
struct Value {
    NodeId node = -1;
    CPtr constant;
    TensorType type;
};

class Importer;
using Converter = std::function<void(Importer&, const onnx::NodeProto&)>;
const std::map<std::string, Converter>& converters();

class Importer {
public:
    Importer(const onnx::ModelProto& m, std::string src, const OnnxImportOptions& opts)
        : m_model(m), m_src(std::move(src)), m_opts(opts) {
        for (const auto& o : m.opset_import())
            if (o.domain().empty() || o.domain() == "ai.onnx") m_opset = int(o.version());
    }

    Graph run() {
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
    NodeId node(const onnx::NodeProto& n, int i) { return materialize(n.input(i)); }

    void setConst(const onnx::NodeProto& n, int k, CPtr c) {
        Value v;
        v.type = c->type;
        v.constant = std::move(c);
        m_values[n.output(k)] = std::move(v);
    }
    void setNode(const onnx::NodeProto& n, int k, NodeId id) {
        Value v;
        v.node = id;
        v.type = m_graph.node(id).type;
        m_values[n.output(k)] = std::move(v);
    }
    void alias(const onnx::NodeProto& n, int k, const Value& v) { m_values[n.output(k)] = v; }

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
    bool isUsed(const std::string& tensor) const {
        for (const auto& n : m_model.graph().node())
            for (const auto& i : n.input())
                if (i == tensor) return true;
        for (const auto& o : m_model.graph().output())
            if (o.name() == tensor) return true;
        return false;
    }

    void checkSupported(const onnx::GraphProto& gp) const {
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

    void bindInput(const onnx::ValueInfoProto& in) {
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
                TB_USER_ERROR() << "'" << m_src << "': input '" << name << "' has dynamic dimensions (" << os.str()
                                << ") in its shape " << shown << "]; bind them with an input shape such as '" << name
                                << "=1,3,640,640'";
            }
        }
        NodeId id = m_graph.addInput(name, TensorType{shape, DType::Float32});
        Value v;
        v.node = id;
        v.type = m_graph.node(id).type;
        m_values[name] = std::move(v);
    }

    const onnx::ModelProto& m_model;
    std::string m_src;
    const OnnxImportOptions& m_opts;
    int m_opset = 1;
    Graph m_graph;
    std::map<std::string, Value> m_values;
};

// ---- converters -------------------------------------------------------------------------

using NP = onnx::NodeProto;

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

/// Output a reshape of input 0 (folded when constant).
void emitReshape(Importer& im, const NP& n, const Shape& to) {
    Value& x = im.in(n, 0);
    TB_USER_CHECK(product(to) == product(x.type.shape))
        << "cannot reshape " << shapeStr(x.type.shape) << " into " << shapeStr(to);
    if (x.constant) return im.setConst(n, 0, reshaped(*x.constant, to));
    im.setNode(n, 0, reshapeNode(im, n, im.node(n, 0), to, ""));
}

void binary(Importer& im, const NP& n, const std::string& relayOp, const std::function<double(double, double)>& f) {
    if (im.allConst(n)) {
        const ConstantData& a = im.constIn(n, 0, "A");
        const ConstantData& b = im.constIn(n, 1, "B");
        const bool fl = isFloatData(a) || isFloatData(b);
        const bool intDiv = !fl && relayOp == "divide";
        return im.setConst(n, 0, foldElementwise({im.in(n, 0).constant, im.in(n, 1).constant},
                                                 fl ? DType::Float32 : a.type.dtype,
                                                 [&](const std::vector<double>& v) {
                                                     return intDiv ? std::trunc(v[0] / v[1]) : f(v[0], v[1]);
                                                 }));
    }
    im.setNode(n, 0, im.op(n, relayOp, {im.node(n, 0), im.node(n, 1)}));
}

void unary(Importer& im, const NP& n, const std::string& relayOp, const std::function<double(double)>& f, Attrs a = {}) {
    if (im.allConst(n))
        return im.setConst(n, 0, foldElementwise({im.in(n, 0).constant}, DType::Float32,
                                                 [&](const std::vector<double>& v) { return f(v[0]); }));
    im.setNode(n, 0, im.op(n, relayOp, {im.node(n, 0)}, std::move(a)));
}

NodeId clipNode(Importer& im, const NP& n, NodeId x, double lo, double hi, const std::string& suffix) {
    Attrs a;
    a.set("a_min", lo);
    a.set("a_max", hi);
    return im.op(n, "clip", {x}, a, suffix);
}

/// Spatial padding [top, left, bottom, right] of a 2-D window op from ONNX pads / auto_pad.
std::vector<int64_t> windowPads(Importer& im, const NP& n, const Shape& inHW, const Shape& kernel, const Shape& strides,
                                const Shape& dilations, bool ceilMode = false) {
    std::string autoPad = im.attrString(n, "auto_pad", "NOTSET");
    std::vector<int64_t> pads = im.attrInts(n, "pads", {0, 0, 0, 0});
    TB_USER_CHECK(pads.size() == 4) << "expects 4 pads for a 2-D window, got " << pads.size();
    if (autoPad == "NOTSET") return pads;
    if (autoPad == "VALID") return {0, 0, 0, 0};
    TB_USER_CHECK(autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") << "unknown auto_pad '" << autoPad << "'";
    (void)ceilMode;
    std::vector<int64_t> out(4);
    for (size_t d = 0; d < 2; ++d) {
        int64_t o = (inHW[d] + strides[d] - 1) / strides[d];
        int64_t total = std::max<int64_t>(0, (o - 1) * strides[d] + (kernel[d] - 1) * dilations[d] + 1 - inHW[d]);
        int64_t small = total / 2, big = total - small;
        out[d] = autoPad == "SAME_UPPER" ? small : big;
        out[d + 2] = autoPad == "SAME_UPPER" ? big : small;
    }
    return out;
}

void requireRank4(const Shape& s, const char* what) {
    TB_USER_CHECK(s.size() == 4) << "only 2-D " << what << " (4-D NCHW input) is supported, got input shape "
                                 << shapeStr(s);
}

/// Adds a per-channel bias (input `bi`, shape [C]) to an NCHW result, as Relay's canonicalized
/// bias_add: `add(x, b[C, 1, 1])`.
NodeId addChannelBias(Importer& im, const NP& n, NodeId x, int bi) {
    const int64_t c = im.graph().node(x).type.shape[1];
    Value& b = im.in(n, bi);
    TB_USER_CHECK(b.type.shape == Shape{c}) << "bias must have shape [" << c << "], got " << shapeStr(b.type.shape);
    NodeId bn = b.constant ? im.constant(n, "_bias", reshaped(*b.constant, {c, 1, 1}))
                           : reshapeNode(im, n, im.node(n, bi), {c, 1, 1}, "_bias");
    return im.op(n, "add", {x, bn}, {}, "_add_bias");
}

void convertConv(Importer& im, const NP& n) {
    const Shape& xs = im.shape(n, 0);
    const Shape& ws = im.shape(n, 1);
    requireRank4(xs, "convolution");
    TB_USER_CHECK(ws.size() == 4) << "weight must be 4-D OIHW, got " << shapeStr(ws);
    const int64_t groups = im.attrInt(n, "group", 1);
    Shape strides = im.attrInts(n, "strides", {1, 1});
    Shape dil = im.attrInts(n, "dilations", {1, 1});
    Shape kernel = {ws[2], ws[3]};
    auto pads = windowPads(im, n, {xs[2], xs[3]}, kernel, strides, dil);
    Attrs a;
    a.set("strides", strides);
    a.set("padding", pads);
    a.set("dilation", dil);
    a.set("groups", groups);
    a.set("channels", ws[0]);
    a.set("kernel_size", kernel);
    a.set("data_layout", std::string("NCHW"));
    a.set("kernel_layout", std::string("OIHW"));
    NodeId y = im.op(n, "nn.conv2d", {im.node(n, 0), im.node(n, 1)}, a);
    if (im.has(n, 2)) y = addChannelBias(im, n, y, 2);
    im.setNode(n, 0, y);
}

void convertConvTranspose(Importer& im, const NP& n) {
    const Shape& xs = im.shape(n, 0);
    const Shape& ws = im.shape(n, 1);
    requireRank4(xs, "transposed convolution");
    TB_USER_CHECK(ws.size() == 4) << "weight must be 4-D IOHW, got " << shapeStr(ws);
    const int64_t groups = im.attrInt(n, "group", 1);
    Shape strides = im.attrInts(n, "strides", {1, 1});
    Shape dil = im.attrInts(n, "dilations", {1, 1});
    Shape opad = im.attrInts(n, "output_padding", {0, 0});
    Shape kernel = {ws[2], ws[3]};
    std::vector<int64_t> pads = im.attrInts(n, "pads", {0, 0, 0, 0});
    Shape outShape = im.attrInts(n, "output_shape");
    std::string autoPad = im.attrString(n, "auto_pad", "NOTSET");
    if (!outShape.empty() || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
        if (outShape.size() > 2) outShape = Shape(outShape.end() - 2, outShape.end());
        for (size_t d = 0; d < 2; ++d) {
            int64_t out = outShape.empty() ? xs[2 + d] * strides[d] : outShape[d];
            int64_t total = strides[d] * (xs[2 + d] - 1) + opad[d] + (kernel[d] - 1) * dil[d] + 1 - out;
            if (total < 0) {  // output_shape larger than the natural size: the rest is output padding
                opad[d] += -total;
                total = 0;
            }
            // ONNX: SAME_UPPER (and explicit output_shape) put the smaller half at the beginning.
            int64_t small = total / 2, big = total - small;
            pads[d] = autoPad == "SAME_LOWER" ? big : small;
            pads[d + 2] = autoPad == "SAME_LOWER" ? small : big;
        }
    } else if (autoPad == "VALID") {
        pads = {0, 0, 0, 0};
    }
    Attrs a;
    a.set("strides", strides);
    a.set("padding", pads);
    a.set("output_padding", opad);
    a.set("dilation", dil);
    a.set("groups", groups);
    a.set("channels", ws[1] * groups);
    a.set("kernel_size", kernel);
    a.set("data_layout", std::string("NCHW"));
    a.set("kernel_layout", std::string("IOHW"));
    NodeId y = im.op(n, "nn.conv2d_transpose", {im.node(n, 0), im.node(n, 1)}, a);
    if (im.has(n, 2)) y = addChannelBias(im, n, y, 2);
    im.setNode(n, 0, y);
}

/// y = a @ b with a [.., M, K] and b [.., K, N] (numpy matmul semantics, batch dims broadcast).
NodeId matmul(Importer& im, const NP& n, int ai, int bi, const std::string& sfx) {
    Value& a = im.in(n, ai);
    Value& b = im.in(n, bi);
    Shape as = a.type.shape, bs = b.type.shape;
    TB_USER_CHECK(!as.empty() && !bs.empty()) << "MatMul of a 0-d tensor";
    const bool a1 = as.size() == 1, b1 = bs.size() == 1;
    if (a1) as.insert(as.begin(), 1);
    if (b1) bs.push_back(1);
    const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
    TB_USER_CHECK(bs[bs.size() - 2] == K) << "MatMul: inner dimensions differ: " << shapeStr(a.type.shape) << " x "
                                          << shapeStr(b.type.shape);
    Shape batchA(as.begin(), as.end() - 2), batchB(bs.begin(), bs.end() - 2);
    Shape batch = broadcastShapes(batchA, batchB);
    Shape outShape = batch;
    if (!a1) outShape.push_back(M);
    if (!b1) outShape.push_back(N);

    NodeId y;
    if (b.constant && batchB.empty()) {
        // x [.., K] @ W [K, N] -> nn.dense(x, W^T) on rows (TVM's frontend does the same).
        Shape tshape;
        auto idx = transposeIndex({K, N}, {1, 0}, &tshape);
        NodeId w = im.constant(n, sfx + "_weight", gatherFlat(*reshaped(*b.constant, {K, N}), tshape, idx));
        NodeId x = reshapeNode(im, n, im.node(n, ai), {product(as, 0, as.size() - 1), K}, sfx + "_rows");
        Attrs da;
        da.set("units", N);
        y = im.op(n, "nn.dense", {x, w}, da, sfx);
    } else {
        const int64_t pa = product(batchA), pb = product(batchB), pbat = product(batch);
        NodeId x = im.node(n, ai), w = im.node(n, bi);
        TB_USER_CHECK(pa == pbat || pa == 1) << "MatMul: broadcasting " << shapeStr(a.type.shape) << " against "
                                             << shapeStr(b.type.shape) << " is not supported";
        TB_USER_CHECK(pb == pbat || pb == 1) << "MatMul: broadcasting " << shapeStr(b.type.shape) << " against "
                                             << shapeStr(a.type.shape) << " is not supported";
        x = reshapeNode(im, n, x, {pa, M, K}, sfx + "_a3d");
        w = reshapeNode(im, n, w, {pb, K, N}, sfx + "_b3d");
        Attrs ba;
        ba.set("transpose_a", int64_t(0));
        ba.set("transpose_b", int64_t(0));
        y = im.op(n, "nn.batch_matmul", {x, w}, ba, sfx);
    }
    return reshapeNode(im, n, y, outShape, sfx + "_out");
}

void convertGemm(Importer& im, const NP& n) {
    const double alpha = im.attrFloat(n, "alpha", 1.0), beta = im.attrFloat(n, "beta", 1.0);
    const bool ta = im.attrInt(n, "transA", 0) != 0, tb = im.attrInt(n, "transB", 0) != 0;
    Value& a = im.in(n, 0);
    Value& b = im.in(n, 1);
    TB_USER_CHECK(a.type.shape.size() == 2 && b.type.shape.size() == 2) << "Gemm needs 2-D A and B";
    NodeId x = im.node(n, 0);
    if (ta) {
        Attrs t;
        t.set("axes", std::vector<int64_t>{1, 0});
        x = im.op(n, "transpose", {x}, t, "_transA");
    }
    NodeId w;  // [N, K]
    if (b.constant && !tb) {
        Shape ts;
        auto idx = transposeIndex(b.type.shape, {1, 0}, &ts);
        w = im.constant(n, "_weight", gatherFlat(*b.constant, ts, idx));
    } else {
        w = im.node(n, 1);
        if (!tb) {
            Attrs t;
            t.set("axes", std::vector<int64_t>{1, 0});
            w = im.op(n, "transpose", {w}, t, "_transB");
        }
    }
    Attrs da;
    da.set("units", im.graph().node(w).type.shape[0]);
    NodeId y = im.op(n, "nn.dense", {x, w}, da);
    if (alpha != 1.0) y = im.op(n, "multiply", {y, im.scalar(n, "_alpha", float(alpha))}, {}, "_alpha_mul");
    if (im.has(n, 2) && beta != 0.0) {
        Value& c = im.in(n, 2);
        NodeId cn;
        if (c.constant) {
            cn = im.constant(n, "_C", foldElementwise({c.constant}, DType::Float32,
                                                      [&](const std::vector<double>& v) { return beta * v[0]; }));
        } else {
            cn = im.node(n, 2);
            if (beta != 1.0) cn = im.op(n, "multiply", {cn, im.scalar(n, "_beta", float(beta))}, {}, "_beta_mul");
        }
        y = im.op(n, "add", {y, cn}, {}, "_bias");
    }
    im.setNode(n, 0, y);
}

void convertPool(Importer& im, const NP& n, bool isMax) {
    const Shape& xs = im.shape(n, 0);
    requireRank4(xs, isMax ? "MaxPool" : "AveragePool");
    TB_USER_CHECK(n.output_size() < 2 || n.output(1).empty()) << "the Indices output of MaxPool is not supported";
    TB_USER_CHECK(im.attrInt(n, "storage_order", 0) == 0) << "storage_order=1 is not supported";
    Shape kernel = im.attrInts(n, "kernel_shape");
    TB_USER_CHECK(kernel.size() == 2) << "kernel_shape must have 2 values";
    Shape strides = im.attrInts(n, "strides", {1, 1});
    Shape dil = im.attrInts(n, "dilations", {1, 1});
    const bool ceil = im.attrInt(n, "ceil_mode", 0) != 0;
    auto pads = windowPads(im, n, {xs[2], xs[3]}, kernel, strides, dil, ceil);
    Attrs a;
    a.set("pool_size", kernel);
    a.set("strides", strides);
    a.set("dilation", dil);
    a.set("padding", pads);
    a.set("layout", std::string("NCHW"));
    a.set("ceil_mode", int64_t(ceil));
    if (!isMax) a.set("count_include_pad", im.attrInt(n, "count_include_pad", 0));
    im.setNode(n, 0, im.op(n, isMax ? "nn.max_pool2d" : "nn.avg_pool2d", {im.node(n, 0)}, a));
}

void convertGlobalPool(Importer& im, const NP& n, const std::string& op) {
    requireRank4(im.shape(n, 0), "global pooling");
    Attrs a;
    a.set("layout", std::string("NCHW"));
    im.setNode(n, 0, im.op(n, op, {im.node(n, 0)}, a));
}

void convertBatchNorm(Importer& im, const NP& n) {
    for (int k = 1; k < n.output_size(); ++k)
        TB_USER_CHECK(n.output(k).empty()) << "training-mode outputs (running mean/var) are not supported";
    TB_USER_CHECK(im.attrInt(n, "training_mode", 0) == 0) << "training_mode=1 is not supported";
    TB_USER_CHECK(im.shape(n, 0).size() >= 2) << "input must have a channel axis";
    Attrs a;
    a.set("axis", int64_t(1));
    a.set("epsilon", im.attrFloat(n, "epsilon", 1e-5));
    a.set("center", int64_t(1));
    a.set("scale", int64_t(1));
    std::vector<NodeId> ins;
    for (int i = 0; i < 5; ++i) ins.push_back(im.node(n, i));
    im.setNode(n, 0, im.op(n, "nn.batch_norm", ins, a));
}

void convertSoftmax(Importer& im, const NP& n, const std::string& relayOp) {
    const Shape& xs = im.shape(n, 0);
    const int64_t dflt = im.opset() >= 13 ? -1 : 1;
    const int axis = normAxis(im.attrInt(n, "axis", dflt), xs.size());
    Attrs a;
    if (im.opset() >= 13 || axis == int(xs.size()) - 1) {
        a.set("axis", int64_t(axis));
        return im.setNode(n, 0, im.op(n, relayOp, {im.node(n, 0)}, a));
    }
    // Opset < 13: softmax over the flattened dims [axis, rank) of a 2-D view.
    NodeId x = reshapeNode(im, n, im.node(n, 0), {product(xs, 0, size_t(axis)), product(xs, size_t(axis))}, "_2d");
    a.set("axis", int64_t(1));
    NodeId y = im.op(n, relayOp, {x}, a);
    im.setNode(n, 0, reshapeNode(im, n, y, xs, "_nd"));
}

void convertClip(Importer& im, const NP& n) {
    double lo = -std::numeric_limits<float>::max(), hi = std::numeric_limits<float>::max();
    if (im.opset() < 11) {
        lo = im.attrFloat(n, "min", lo);
        hi = im.attrFloat(n, "max", hi);
    } else {
        if (im.has(n, 1)) lo = valueAt(im.constIn(n, 1, "min"), 0);
        if (im.has(n, 2)) hi = valueAt(im.constIn(n, 2, "max"), 0);
    }
    if (im.in(n, 0).constant)
        return im.setConst(n, 0, foldElementwise({im.in(n, 0).constant}, im.in(n, 0).type.dtype,
                                                 [&](const std::vector<double>& v) { return std::min(std::max(v[0], lo), hi); }));
    im.setNode(n, 0, clipNode(im, n, im.node(n, 0), lo, hi, ""));
}

void convertHardSigmoid(Importer& im, const NP& n, bool swish) {
    Attrs a;
    if (!swish) {
        a.set("alpha", im.attrFloat(n, "alpha", 0.2));
        a.set("beta", im.attrFloat(n, "beta", 0.5));
    }
    im.setNode(n, 0, im.op(n, swish ? "hard_swish" : "hard_sigmoid", {im.node(n, 0)}, a));
}

std::vector<int64_t> reduceAxes(Importer& im, const NP& n, size_t rank, bool* noop) {
    std::vector<int64_t> axes;
    *noop = false;
    if (auto* a = im.attr(n, "axes")) {
        axes.assign(a->ints().begin(), a->ints().end());
    } else if (im.has(n, 1)) {
        axes = toInts(im.constIn(n, 1, "axes"));
    }
    if (axes.empty()) {
        if (im.attrInt(n, "noop_with_empty_axes", 0)) *noop = true;
        for (size_t i = 0; i < rank; ++i) axes.push_back(int64_t(i));
    }
    for (auto& ax : axes) ax = normAxis(ax, rank);
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    return axes;
}

void convertReduce(Importer& im, const NP& n, const std::string& relayOp, bool square) {
    const Shape& xs = im.shape(n, 0);
    bool noop;
    auto axes = reduceAxes(im, n, xs.size(), &noop);
    if (noop) return im.alias(n, 0, im.in(n, 0));
    NodeId x = im.node(n, 0);
    if (square) x = im.op(n, "multiply", {x, x}, {}, "_square");
    Attrs a;
    a.set("axis", axes);
    a.set("keepdims", int64_t(im.attrInt(n, "keepdims", 1) != 0));
    a.set("exclude", int64_t(0));
    im.setNode(n, 0, im.op(n, relayOp, {x}, a));
}

void convertResize(Importer& im, const NP& n, bool upsample) {
    const Shape& xs = im.shape(n, 0);
    requireRank4(xs, upsample ? "Upsample" : "Resize");
    std::string mode = im.attrString(n, "mode", "nearest");
    std::string ctm = im.attrString(n, "coordinate_transformation_mode", upsample || im.opset() < 11 ? "asymmetric" : "half_pixel");
    std::string nearest = im.attrString(n, "nearest_mode", upsample || im.opset() < 11 ? "floor" : "round_prefer_floor");
    if (im.opset() < 11 && !upsample) {  // Resize-10: asymmetric, floor for nearest
        ctm = "asymmetric";
        nearest = "floor";
    }
    std::vector<double> scales;
    Shape sizes;
    std::vector<double> roi;
    if (upsample) {
        if (im.opset() < 9) {
            for (float f : im.attrFloats(n, "scales")) scales.push_back(f);
        } else {
            const auto& s = im.constIn(n, 1, "scales");
            for (size_t k = 0; k < s.f.size(); ++k) scales.push_back(s.f[k]);
        }
    } else if (im.opset() < 11) {
        const auto& s = im.constIn(n, 1, "scales");
        for (size_t k = 0; k < s.f.size(); ++k) scales.push_back(s.f[k]);
    } else {
        if (im.has(n, 1) && product(im.shape(n, 1)) > 0) {
            const auto& r = im.constIn(n, 1, "roi");
            for (size_t k = 0; k < size_t(product(r.type.shape)); ++k) roi.push_back(valueAt(r, k));
        }
        if (im.has(n, 2) && product(im.shape(n, 2)) > 0) {
            const auto& s = im.constIn(n, 2, "scales");
            for (size_t k = 0; k < size_t(product(s.type.shape)); ++k) scales.push_back(valueAt(s, k));
        }
        if (im.has(n, 3) && product(im.shape(n, 3)) > 0) sizes = toInts(im.constIn(n, 3, "sizes"));
    }
    TB_USER_CHECK(!scales.empty() || !sizes.empty()) << "needs scales or sizes";
    Shape outHW(2);
    std::vector<double> scaleHW(2);
    if (!sizes.empty()) {
        TB_USER_CHECK(sizes.size() == 4 && sizes[0] == xs[0] && sizes[1] == xs[1])
            << "only resizing H and W of an NCHW tensor is supported (sizes " << shapeStr(sizes) << ")";
        for (size_t d = 0; d < 2; ++d) {
            outHW[d] = sizes[2 + d];
            scaleHW[d] = double(sizes[2 + d]) / double(xs[2 + d]);
        }
    } else {
        TB_USER_CHECK(scales.size() == 4 && scales[0] == 1.0 && scales[1] == 1.0)
            << "only resizing H and W of an NCHW tensor is supported";
        for (size_t d = 0; d < 2; ++d) {
            scaleHW[d] = scales[2 + d];
            outHW[d] = int64_t(std::floor(double(xs[2 + d]) * scales[2 + d]));
        }
    }
    Attrs a;
    a.set("size", outHW);
    a.set("layout", std::string("NCHW"));
    std::string method = mode == "nearest" ? "nearest_neighbor" : mode;
    TB_USER_CHECK(method == "nearest_neighbor" || method == "linear" || method == "cubic")
        << "unsupported resize mode '" << mode << "'";
    a.set("method", method);
    a.set("coordinate_transformation_mode", ctm);
    a.set("rounding_method", method == "nearest_neighbor" ? nearest : std::string());
    a.set("cubic_alpha", im.attrFloat(n, "cubic_coeff_a", -0.75));
    a.set("cubic_exclude", im.attrInt(n, "exclude_outside", 0));
    a.set("extrapolation_value", im.attrFloat(n, "extrapolation_value", 0.0));
    if (roi.size() == 8) a.set("roi", std::vector<double>{roi[2], roi[3], roi[6], roi[7]});
    // ONNX maps output to input coordinates with the given scale factors (not out/in); keep them.
    a.set("scale", scaleHW);
    im.setNode(n, 0, im.op(n, "image.resize2d", {im.node(n, 0)}, a));
}

void convertPad(Importer& im, const NP& n) {
    const Shape& xs = im.shape(n, 0);
    std::vector<int64_t> pads;
    double value = 0;
    std::string mode = im.attrString(n, "mode", "constant");
    if (im.opset() < 11) {
        pads = im.attrInts(n, im.attr(n, "pads") ? "pads" : "paddings");
        value = im.attrFloat(n, "value", 0.0);
    } else {
        pads = toInts(im.constIn(n, 1, "pads"));
        if (im.has(n, 2)) value = valueAt(im.constIn(n, 2, "constant_value"), 0);
        if (im.has(n, 3)) {
            auto axes = toInts(im.constIn(n, 3, "axes"));
            std::vector<int64_t> full(2 * xs.size(), 0);
            for (size_t i = 0; i < axes.size(); ++i) {
                int ax = normAxis(axes[i], xs.size());
                full[size_t(ax)] = pads[i];
                full[size_t(ax) + xs.size()] = pads[i + axes.size()];
            }
            pads = full;
        }
    }
    TB_USER_CHECK(pads.size() == 2 * xs.size()) << "expects " << 2 * xs.size() << " pads, got " << pads.size();
    std::vector<int64_t> width;  // Relay pad_width, flattened (before, after) per axis
    for (size_t d = 0; d < xs.size(); ++d) {
        TB_USER_CHECK(pads[d] >= 0 && pads[d + xs.size()] >= 0) << "negative pads (cropping) are not supported";
        width.push_back(pads[d]);
        width.push_back(pads[d + xs.size()]);
    }
    Attrs a;
    a.set("pad_width", width);
    if (mode == "reflect") {
        a.set("mode", std::string("REFLECT"));
        return im.setNode(n, 0, im.op(n, "nn.mirror_pad", {im.node(n, 0)}, a));
    }
    TB_USER_CHECK(mode == "constant") << "pad mode '" << mode << "' is not supported (constant and reflect are)";
    a.set("pad_value", value);
    im.setNode(n, 0, im.op(n, "nn.pad", {im.node(n, 0)}, a));
}

void convertSlice(Importer& im, const NP& n) {
    const Shape& xs = im.shape(n, 0);
    std::vector<int64_t> starts, ends, axes, steps;
    if (im.opset() < 10) {
        starts = im.attrInts(n, "starts");
        ends = im.attrInts(n, "ends");
        axes = im.attrInts(n, "axes");
    } else {
        starts = toInts(im.constIn(n, 1, "starts"));
        ends = toInts(im.constIn(n, 2, "ends"));
        if (im.has(n, 3)) axes = toInts(im.constIn(n, 3, "axes"));
        if (im.has(n, 4)) steps = toInts(im.constIn(n, 4, "steps"));
    }
    SliceSpec s = normalizeSlice(xs, starts, ends, axes, steps);
    Value& x = im.in(n, 0);
    if (x.constant) return im.setConst(n, 0, gatherFlat(*x.constant, s.outShape, sliceIndex(xs, s)));
    Attrs a;
    a.set("begin", s.begin);
    a.set("end", s.end);
    a.set("strides", s.strides);
    a.set("axes", s.axes);
    im.setNode(n, 0, im.op(n, "strided_slice", {im.node(n, 0)}, a));
}

void convertSplit(Importer& im, const NP& n) {
    const Shape& xs = im.shape(n, 0);
    const int axis = normAxis(im.attrInt(n, "axis", 0), xs.size());
    std::vector<int64_t> split = im.attrInts(n, "split");
    if (split.empty() && im.has(n, 1)) split = toInts(im.constIn(n, 1, "split"));
    const int64_t parts = n.output_size();
    if (split.empty()) {
        const int64_t chunk = (xs[size_t(axis)] + parts - 1) / parts;
        for (int64_t k = 0, left = xs[size_t(axis)]; k < parts; ++k, left -= chunk) split.push_back(std::min(chunk, left));
    }
    TB_USER_CHECK(int64_t(split.size()) == parts) << "split has " << split.size() << " sizes for " << parts << " outputs";
    int64_t begin = 0;
    for (int k = 0; k < n.output_size(); ++k) {
        SliceSpec s = normalizeSlice(xs, {begin}, {begin + split[size_t(k)]}, {axis}, {1});
        begin += split[size_t(k)];
        if (n.output(k).empty()) continue;
        Value& x = im.in(n, 0);
        if (x.constant) {
            im.setConst(n, k, gatherFlat(*x.constant, s.outShape, sliceIndex(xs, s)));
            continue;
        }
        Attrs a;
        a.set("begin", s.begin);
        a.set("end", s.end);
        a.set("strides", s.strides);
        a.set("axes", s.axes);
        im.setNode(n, k, im.op(n, "strided_slice", {im.node(n, 0)}, a, "_" + std::to_string(k)));
    }
}

void convertGather(Importer& im, const NP& n) {
    const Shape& xs = im.shape(n, 0);
    const int axis = normAxis(im.attrInt(n, "axis", 0), xs.size());
    const ConstantData& ind = im.constIn(n, 1, "indices");
    std::vector<int64_t> idx = toInts(ind);
    for (auto& i : idx) {
        if (i < 0) i += xs[size_t(axis)];
        TB_USER_CHECK(i >= 0 && i < xs[size_t(axis)]) << "index out of range for axis of extent " << xs[size_t(axis)];
    }
    Shape out(xs.begin(), xs.begin() + axis);
    out.insert(out.end(), ind.type.shape.begin(), ind.type.shape.end());
    out.insert(out.end(), xs.begin() + axis + 1, xs.end());
    Value& x = im.in(n, 0);
    if (x.constant) {
        const int64_t outer = product(xs, 0, size_t(axis)), inner = product(xs, size_t(axis) + 1), dim = xs[size_t(axis)];
        std::vector<size_t> src;
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t i : idx)
                for (int64_t r = 0; r < inner; ++r) src.push_back(size_t((o * dim + i) * inner + r));
        return im.setConst(n, 0, gatherFlat(*x.constant, out, src));
    }
    if (idx.size() == 1 && ind.type.shape.empty()) {  // a scalar index: slice, then drop the axis
        Attrs a;
        a.set("begin", std::vector<int64_t>{idx[0]});
        a.set("end", std::vector<int64_t>{idx[0] + 1});
        a.set("strides", std::vector<int64_t>{1});
        a.set("axes", std::vector<int64_t>{axis});
        NodeId s = im.op(n, "strided_slice", {im.node(n, 0)}, a, "_slice");
        return im.setNode(n, 0, reshapeNode(im, n, s, out, ""));
    }
    Attrs a;
    a.set("axis", int64_t(axis));
    a.set("mode", std::string("fast"));
    NodeId indices = im.constant(n, "_indices", makeInts(ind.type.shape, idx));
    im.setNode(n, 0, im.op(n, "take", {im.node(n, 0), indices}, a));
}

void convertConcat(Importer& im, const NP& n) {
    const Shape& s0 = im.shape(n, 0);
    const int axis = normAxis(im.attrInt(n, "axis", 0), s0.size());
    Shape out = s0;
    out[size_t(axis)] = 0;
    for (int i = 0; i < n.input_size(); ++i) {
        const Shape& s = im.shape(n, i);
        TB_USER_CHECK(s.size() == s0.size()) << "inputs of different rank";
        for (size_t d = 0; d < s.size(); ++d)
            TB_USER_CHECK(d == size_t(axis) || s[d] == s0[d]) << "input shapes " << shapeStr(s0) << " and " << shapeStr(s)
                                                              << " differ outside axis " << axis;
        out[size_t(axis)] += s[size_t(axis)];
    }
    if (im.allConst(n)) {
        auto r = std::make_shared<ConstantData>();
        bool fl = false;
        for (int i = 0; i < n.input_size(); ++i) fl = fl || isFloatData(*im.in(n, i).constant);
        r->type = {out, fl ? DType::Float32 : im.in(n, 0).constant->type.dtype};
        const int64_t outer = product(out, 0, size_t(axis));
        for (int64_t o = 0; o < outer; ++o)
            for (int i = 0; i < n.input_size(); ++i) {
                const ConstantData& c = *im.in(n, i).constant;
                const int64_t chunk = product(c.type.shape, size_t(axis));
                for (int64_t k = 0; k < chunk; ++k) {
                    double v = valueAt(c, size_t(o * chunk + k));
                    if (fl)
                        r->f.push_back(float(v));
                    else
                        r->i.push_back(int64_t(v));
                }
            }
        return im.setConst(n, 0, r);
    }
    if (n.input_size() == 1) return im.alias(n, 0, im.in(n, 0));
    std::vector<NodeId> ins;
    for (int i = 0; i < n.input_size(); ++i) ins.push_back(im.node(n, i));
    Attrs a;
    a.set("axis", int64_t(axis));
    im.setNode(n, 0, im.op(n, "concatenate", ins, a));
}

void convertTranspose(Importer& im, const NP& n) {
    const Shape& xs = im.shape(n, 0);
    std::vector<int64_t> perm = im.attrInts(n, "perm");
    if (perm.empty())
        for (size_t i = xs.size(); i-- > 0;) perm.push_back(int64_t(i));
    TB_USER_CHECK(perm.size() == xs.size()) << "perm has " << perm.size() << " entries for rank " << xs.size();
    for (auto& p : perm) p = normAxis(p, xs.size());
    Value& x = im.in(n, 0);
    if (x.constant) {
        Shape out;
        auto idx = transposeIndex(xs, perm, &out);
        return im.setConst(n, 0, gatherFlat(*x.constant, out, idx));
    }
    Attrs a;
    a.set("axes", perm);
    im.setNode(n, 0, im.op(n, "transpose", {im.node(n, 0)}, a));
}

void convertReshape(Importer& im, const NP& n) {
    const Shape& xs = im.shape(n, 0);
    std::vector<int64_t> target = im.opset() < 5 ? im.attrInts(n, "shape") : toInts(im.constIn(n, 1, "shape"));
    const bool allowZero = im.attrInt(n, "allowzero", 0) != 0;
    Shape out(target.size());
    int inferAt = -1;
    for (size_t i = 0; i < target.size(); ++i) {
        if (target[i] == -1) {
            TB_USER_CHECK(inferAt < 0) << "more than one -1 in shape " << shapeStr(target);
            inferAt = int(i);
            out[i] = 1;
        } else if (target[i] == 0 && !allowZero) {
            TB_USER_CHECK(i < xs.size()) << "shape " << shapeStr(target) << " copies dim " << i << " of " << shapeStr(xs);
            out[i] = xs[i];
        } else {
            TB_USER_CHECK(target[i] >= 0) << "invalid shape " << shapeStr(target);
            out[i] = target[i];
        }
    }
    if (inferAt >= 0) {
        const int64_t known = product(out);
        TB_USER_CHECK(known > 0 && product(xs) % known == 0) << "cannot reshape " << shapeStr(xs) << " into " << shapeStr(target);
        out[size_t(inferAt)] = product(xs) / known;
    }
    emitReshape(im, n, out);
}

void convertFlatten(Importer& im, const NP& n) {
    const Shape& xs = im.shape(n, 0);
    int64_t axis = im.attrInt(n, "axis", 1);
    if (axis < 0) axis += int64_t(xs.size());
    TB_USER_CHECK(axis >= 0 && axis <= int64_t(xs.size())) << "axis out of range";
    emitReshape(im, n, {product(xs, 0, size_t(axis)), product(xs, size_t(axis))});
}

void convertSqueeze(Importer& im, const NP& n) {
    const Shape& xs = im.shape(n, 0);
    std::vector<int64_t> axes = im.attrInts(n, "axes");
    if (axes.empty() && im.has(n, 1)) axes = toInts(im.constIn(n, 1, "axes"));
    std::vector<char> drop(xs.size(), 0);
    if (axes.empty()) {
        for (size_t d = 0; d < xs.size(); ++d) drop[d] = xs[d] == 1;
    } else {
        for (int64_t a : axes) {
            int ax = normAxis(a, xs.size());
            TB_USER_CHECK(xs[size_t(ax)] == 1) << "cannot squeeze axis " << a << " of extent " << xs[size_t(ax)];
            drop[size_t(ax)] = 1;
        }
    }
    Shape out;
    for (size_t d = 0; d < xs.size(); ++d)
        if (!drop[d]) out.push_back(xs[d]);
    emitReshape(im, n, out);
}

void convertUnsqueeze(Importer& im, const NP& n) {
    const Shape& xs = im.shape(n, 0);
    std::vector<int64_t> axes = im.attrInts(n, "axes");
    if (axes.empty() && im.has(n, 1)) axes = toInts(im.constIn(n, 1, "axes"));
    const size_t rank = xs.size() + axes.size();
    std::vector<char> isNew(rank, 0);
    for (int64_t a : axes) {
        int ax = normAxis(a, rank);
        TB_USER_CHECK(!isNew[size_t(ax)]) << "axis " << a << " repeated";
        isNew[size_t(ax)] = 1;
    }
    Shape out;
    size_t k = 0;
    for (size_t d = 0; d < rank; ++d) out.push_back(isNew[d] ? 1 : xs[k++]);
    emitReshape(im, n, out);
}

void convertExpand(Importer& im, const NP& n) {
    const Shape& xs = im.shape(n, 0);
    Shape out = broadcastShapes(xs, toInts(im.constIn(n, 1, "shape")));
    Value& x = im.in(n, 0);
    if (x.constant) return im.setConst(n, 0, gatherFlat(*x.constant, out, broadcastIndex(xs, out)));
    Attrs a;
    a.set("shape", out);
    im.setNode(n, 0, im.op(n, "broadcast_to", {im.node(n, 0)}, a));
}

void convertCast(Importer& im, const NP& n) {
    const int to = int(im.attrInt(n, "to", 0));
    using TP = onnx::TensorProto;
    const bool toFloat = to == TP::FLOAT || to == TP::DOUBLE || to == TP::FLOAT16;
    Value& x = im.in(n, 0);
    if (x.constant) {
        DType t = toFloat ? DType::Float32 : to == TP::BOOL ? DType::Bool : to == TP::INT64 ? DType::Int64 : DType::Int32;
        TB_USER_CHECK(toFloat || to == TP::BOOL || (to >= TP::UINT8 && to <= TP::INT64) || to == TP::UINT32 ||
                      to == TP::UINT64)
            << "unsupported cast target " << onnxTypeName(to);
        return im.setConst(n, 0, foldElementwise({x.constant}, t, [](const std::vector<double>& v) { return v[0]; }));
    }
    TB_USER_CHECK(toFloat) << "casting a run-time tensor to " << onnxTypeName(to)
                           << " is not supported (only float tensors flow through the graph)";
    im.alias(n, 0, x);
}

void convertConstant(Importer& im, const NP& n) {
    if (im.attr(n, "value")) return im.setConst(n, 0, std::make_shared<ConstantData>(im.attrTensor(n, "value").data));
    if (auto* a = im.attr(n, "value_float")) return im.setConst(n, 0, makeFloats({}, {a->f()}));
    if (auto* a = im.attr(n, "value_floats"))
        return im.setConst(n, 0, makeFloats({int64_t(a->floats_size())}, {a->floats().begin(), a->floats().end()}));
    if (auto* a = im.attr(n, "value_int")) return im.setConst(n, 0, makeInts({}, {a->i()}));
    if (auto* a = im.attr(n, "value_ints"))
        return im.setConst(n, 0, makeInts({int64_t(a->ints_size())}, {a->ints().begin(), a->ints().end()}));
    TB_USER_ERROR() << "Constant without a supported value attribute (sparse and string constants are not supported)";
}

void convertConstantOfShape(Importer& im, const NP& n) {
    Shape shape = toInts(im.constIn(n, 0, "input"));
    const int64_t count = product(shape);
    if (im.attr(n, "value")) {
        NamedTensor v = im.attrTensor(n, "value");
        TB_USER_CHECK(v.data.type.numElements() == 1) << "value must have one element";
        auto r = std::make_shared<ConstantData>();
        r->type = {shape, v.data.type.dtype};
        if (isFloatData(v.data))
            r->f.assign(size_t(count), v.data.f[0]);
        else
            r->i.assign(size_t(count), v.data.i[0]);
        return im.setConst(n, 0, r);
    }
    im.setConst(n, 0, makeFloats(shape, std::vector<float>(size_t(count), 0.0f)));
}

void convertShape(Importer& im, const NP& n) {
    const Shape& xs = im.shape(n, 0);
    const int64_t r = int64_t(xs.size());
    int64_t start = im.attrInt(n, "start", 0), end = im.attrInt(n, "end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, 0, r);
    Shape v(xs.begin() + start, xs.begin() + std::max(start, end));
    im.setConst(n, 0, makeInts({int64_t(v.size())}, v));
}

void convertRange(Importer& im, const NP& n) {
    const ConstantData& s = im.constIn(n, 0, "start");
    const double start = valueAt(s, 0), limit = valueAt(im.constIn(n, 1, "limit"), 0),
                 delta = valueAt(im.constIn(n, 2, "delta"), 0);
    TB_USER_CHECK(delta != 0) << "delta 0";
    const int64_t count = std::max<int64_t>(0, int64_t(std::ceil((limit - start) / delta)));
    std::vector<double> v;
    for (int64_t k = 0; k < count; ++k) v.push_back(start + double(k) * delta);
    im.setConst(n, 0, makeFrom({count}, s.type.dtype, v));
}

void convertWhere(Importer& im, const NP& n) {
    if (!im.allConst(n))
        return im.setNode(n, 0, im.op(n, "where", {im.node(n, 0), im.node(n, 1), im.node(n, 2)}));
    const bool fl = isFloatData(*im.in(n, 1).constant) || isFloatData(*im.in(n, 2).constant);
    im.setConst(n, 0, foldElementwise({im.in(n, 0).constant, im.in(n, 1).constant, im.in(n, 2).constant},
                                      fl ? DType::Float32 : im.in(n, 1).constant->type.dtype,
                                      [](const std::vector<double>& v) { return v[0] != 0 ? v[1] : v[2]; }));
}

void compareConst(Importer& im, const NP& n, const std::function<bool(double, double)>& f) {
    TB_USER_CHECK(im.allConst(n)) << n.op_type() << " is supported only on constants (folded at import)";
    im.setConst(n, 0, foldElementwise({im.in(n, 0).constant, im.in(n, 1).constant}, DType::Bool,
                                      [&](const std::vector<double>& v) { return f(v[0], v[1]) ? 1.0 : 0.0; }));
}

void variadic(Importer& im, const NP& n, const std::string& relayOp, const std::function<double(double, double)>& f,
              bool mean) {
    if (im.allConst(n)) {
        std::vector<CPtr> ins;
        for (int i = 0; i < n.input_size(); ++i) ins.push_back(im.in(n, i).constant);
        return im.setConst(n, 0, foldElementwise(ins, DType::Float32, [&](const std::vector<double>& v) {
            double acc = v[0];
            for (size_t k = 1; k < v.size(); ++k) acc = f(acc, v[k]);
            return mean ? acc / double(v.size()) : acc;
        }));
    }
    NodeId acc = im.node(n, 0);
    for (int i = 1; i < n.input_size(); ++i) acc = im.op(n, relayOp, {acc, im.node(n, i)}, {}, "_" + std::to_string(i));
    if (mean && n.input_size() > 1)
        acc = im.op(n, "divide", {acc, im.scalar(n, "_count", float(n.input_size()))});
    if (n.input_size() == 1) return im.alias(n, 0, im.in(n, 0));
    im.setNode(n, 0, acc);
}

const std::map<std::string, Converter>& converters() {
    static const std::map<std::string, Converter> table = [] {
        std::map<std::string, Converter> t;
        auto un = [&](const char* onnxOp, const char* relayOp, double (*f)(double)) {
            t[onnxOp] = [relayOp, f](Importer& im, const NP& n) { unary(im, n, relayOp, f); };
        };
        auto bin = [&](const char* onnxOp, const char* relayOp, double (*f)(double, double)) {
            t[onnxOp] = [relayOp, f](Importer& im, const NP& n) { binary(im, n, relayOp, f); };
        };
        t["Conv"] = convertConv;
        t["ConvTranspose"] = convertConvTranspose;
        t["Gemm"] = convertGemm;
        t["MatMul"] = [](Importer& im, const NP& n) { im.setNode(n, 0, matmul(im, n, 0, 1, "")); };
        t["BatchNormalization"] = convertBatchNorm;
        t["MaxPool"] = [](Importer& im, const NP& n) { convertPool(im, n, true); };
        t["AveragePool"] = [](Importer& im, const NP& n) { convertPool(im, n, false); };
        t["GlobalAveragePool"] = [](Importer& im, const NP& n) { convertGlobalPool(im, n, "nn.global_avg_pool2d"); };
        t["GlobalMaxPool"] = [](Importer& im, const NP& n) { convertGlobalPool(im, n, "nn.global_max_pool2d"); };
        t["Softmax"] = [](Importer& im, const NP& n) { convertSoftmax(im, n, "nn.softmax"); };
        t["LogSoftmax"] = [](Importer& im, const NP& n) { convertSoftmax(im, n, "nn.log_softmax"); };
        t["Relu"] = [](Importer& im, const NP& n) {
            unary(im, n, "nn.relu", [](double x) { return x > 0 ? x : 0.0; });
        };
        t["LeakyRelu"] = [](Importer& im, const NP& n) {
            const double alpha = im.attrFloat(n, "alpha", 0.01);
            Attrs a;
            a.set("alpha", alpha);
            unary(im, n, "nn.leaky_relu", [alpha](double x) { return x >= 0 ? x : alpha * x; }, a);
        };
        t["Clip"] = convertClip;
        t["HardSigmoid"] = [](Importer& im, const NP& n) { convertHardSigmoid(im, n, false); };
        t["HardSwish"] = [](Importer& im, const NP& n) { convertHardSigmoid(im, n, true); };
        un("Sigmoid", "sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
        un("Tanh", "tanh", [](double x) { return std::tanh(x); });
        un("Exp", "exp", [](double x) { return std::exp(x); });
        un("Log", "log", [](double x) { return std::log(x); });
        un("Sqrt", "sqrt", [](double x) { return std::sqrt(x); });
        un("Erf", "erf", [](double x) { return std::erf(x); });
        un("Abs", "abs", [](double x) { return std::fabs(x); });
        un("Neg", "negative", [](double x) { return -x; });
        un("Floor", "floor", [](double x) { return std::floor(x); });
        un("Ceil", "ceil", [](double x) { return std::ceil(x); });
        t["Reciprocal"] = [](Importer& im, const NP& n) {
            if (im.allConst(n)) return unary(im, n, "", [](double x) { return 1.0 / x; });
            im.setNode(n, 0, im.op(n, "divide", {im.scalar(n, "_one", 1.0f), im.node(n, 0)}));
        };
        bin("Add", "add", [](double a, double b) { return a + b; });
        bin("Sub", "subtract", [](double a, double b) { return a - b; });
        bin("Mul", "multiply", [](double a, double b) { return a * b; });
        bin("Div", "divide", [](double a, double b) { return a / b; });
        bin("Pow", "power", [](double a, double b) { return std::pow(a, b); });
        t["Sum"] = [](Importer& im, const NP& n) { variadic(im, n, "add", [](double a, double b) { return a + b; }, false); };
        t["Mean"] = [](Importer& im, const NP& n) { variadic(im, n, "add", [](double a, double b) { return a + b; }, true); };
        t["Max"] = [](Importer& im, const NP& n) {
            variadic(im, n, "maximum", [](double a, double b) { return a > b ? a : b; }, false);
        };
        t["Min"] = [](Importer& im, const NP& n) {
            variadic(im, n, "minimum", [](double a, double b) { return a < b ? a : b; }, false);
        };
        t["ReduceMean"] = [](Importer& im, const NP& n) { convertReduce(im, n, "mean", false); };
        t["ReduceSum"] = [](Importer& im, const NP& n) { convertReduce(im, n, "sum", false); };
        t["ReduceMax"] = [](Importer& im, const NP& n) { convertReduce(im, n, "max", false); };
        t["ReduceMin"] = [](Importer& im, const NP& n) { convertReduce(im, n, "min", false); };
        t["ReduceSumSquare"] = [](Importer& im, const NP& n) { convertReduce(im, n, "sum", true); };
        t["Resize"] = [](Importer& im, const NP& n) { convertResize(im, n, false); };
        t["Upsample"] = [](Importer& im, const NP& n) { convertResize(im, n, true); };
        t["Pad"] = convertPad;
        t["Flatten"] = convertFlatten;
        t["Reshape"] = convertReshape;
        t["Squeeze"] = convertSqueeze;
        t["Unsqueeze"] = convertUnsqueeze;
        t["Transpose"] = convertTranspose;
        t["Concat"] = convertConcat;
        t["Slice"] = convertSlice;
        t["Split"] = convertSplit;
        t["Gather"] = convertGather;
        t["Expand"] = convertExpand;
        t["Cast"] = convertCast;
        t["Identity"] = [](Importer& im, const NP& n) { im.alias(n, 0, im.in(n, 0)); };
        t["Dropout"] = [](Importer& im, const NP& n) {
            TB_USER_CHECK(n.output_size() < 2 || n.output(1).empty()) << "the mask output of Dropout is not supported";
            im.alias(n, 0, im.in(n, 0));
        };
        t["Constant"] = convertConstant;
        t["ConstantOfShape"] = convertConstantOfShape;
        t["Shape"] = convertShape;
        t["Size"] = [](Importer& im, const NP& n) { im.setConst(n, 0, makeInts({}, {product(im.shape(n, 0))})); };
        t["Range"] = convertRange;
        t["Where"] = convertWhere;
        t["Equal"] = [](Importer& im, const NP& n) { compareConst(im, n, [](double a, double b) { return a == b; }); };
        t["Less"] = [](Importer& im, const NP& n) { compareConst(im, n, [](double a, double b) { return a < b; }); };
        t["Greater"] = [](Importer& im, const NP& n) { compareConst(im, n, [](double a, double b) { return a > b; }); };
        t["Not"] = [](Importer& im, const NP& n) {
            TB_USER_CHECK(im.allConst(n)) << "Not is supported only on constants (folded at import)";
            im.setConst(n, 0, foldElementwise({im.in(n, 0).constant}, DType::Bool,
                                              [](const std::vector<double>& v) { return v[0] == 0 ? 1.0 : 0.0; }));
        };
        return t;
    }();
    return table;
}

}  // namespace

Graph importOnnxBytes(const std::string& bytes, const std::string& sourceName, const OnnxImportOptions& options) {
    onnx::ModelProto m = parseModel(bytes, sourceName);
    return Importer(m, sourceName, options).run();
}

Graph importOnnx(const std::string& path, const OnnxImportOptions& options) {
    return importOnnxBytes(readFile(path), path, options);
}

OnnxModelInfo inspectOnnx(const std::string& path) {
    onnx::ModelProto m = parseModel(readFile(path), path);
    OnnxModelInfo info;
    info.irVersion = m.ir_version();
    for (const auto& o : m.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") info.opset = o.version();
    info.producer = m.producer_name() + (m.producer_version().empty() ? "" : " " + m.producer_version());
    std::set<std::string> inits;
    for (const auto& t : m.graph().initializer()) inits.insert(t.name());
    for (const auto& in : m.graph().input()) {
        if (inits.count(in.name())) continue;
        OnnxInputInfo i;
        i.name = in.name();
        i.onnxType = elemTypeOf(in);
        for (const auto& d : in.type().tensor_type().shape().dim()) {
            const bool stat = d.has_dim_value() && d.dim_value() > 0;
            i.shape.push_back(stat ? d.dim_value() : -1);
            i.dimParams.push_back(stat ? std::string() : d.dim_param());
        }
        info.inputs.push_back(std::move(i));
    }
    for (const auto& o : m.graph().output()) info.outputs.push_back(o.name());
    for (const auto& n : m.graph().node())
        ++info.opTypes[n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : n.domain() + "." + n.op_type()];
    return info;
}

std::map<std::string, std::vector<int64_t>> parseShapeMap(const std::string& spec) {
    std::map<std::string, std::vector<int64_t>> out;
    std::stringstream entries(spec);
    std::string entry;
    while (std::getline(entries, entry, ';')) {
        if (entry.find_first_not_of(' ') == std::string::npos) continue;
        size_t eq = entry.find_first_of("=:");
        TB_USER_CHECK(eq != std::string::npos && eq > 0)
            << "shape binding '" << entry << "' in '" << spec << "' is not of the form name=d0,d1,...";
        std::string name = entry.substr(0, eq);
        name.erase(0, name.find_first_not_of(' '));
        name.erase(name.find_last_not_of(' ') + 1);
        std::string dims = entry.substr(eq + 1);
        std::vector<int64_t> shape;
        size_t pos = 0;
        while (pos <= dims.size()) {
            size_t next = dims.find_first_of(",x", pos);
            if (next == std::string::npos) next = dims.size();
            std::string tok = dims.substr(pos, next - pos);
            tok.erase(0, tok.find_first_not_of(' '));
            tok.erase(tok.find_last_not_of(' ') + 1);
            char* endp = nullptr;
            long long v = tok.empty() ? 0 : std::strtoll(tok.c_str(), &endp, 10);
            TB_USER_CHECK(!tok.empty() && endp && *endp == '\0' && v > 0)
                << "shape binding '" << entry << "' in '" << spec << "': '" << tok << "' is not a positive integer";
            shape.push_back(v);
            pos = next + 1;
        }
        TB_USER_CHECK(!out.count(name)) << "input '" << name << "' is bound twice in '" << spec << "'";
        out[name] = shape;
    }
    TB_USER_CHECK(!out.empty()) << "shape binding '" << spec << "' names no input";
    return out;
}

std::map<std::string, std::vector<int64_t>> shapeMapFromTensors(const std::vector<NamedTensor>& tensors) {
    std::map<std::string, std::vector<int64_t>> out;
    for (const auto& t : tensors) {
        TB_USER_CHECK(!t.name.empty()) << "a tensor without a name cannot bind an input shape";
        out[t.name] = t.data.type.shape;
    }
    return out;
}

}  // namespace tb::graph
