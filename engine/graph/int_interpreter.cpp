// SPDX-License-Identifier: Apache-2.0
#include "engine/graph/int_interpreter.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "engine/graph/op_registry.h"
#include "engine/support/error.h"
#include "engine/te/interpreter.h"

namespace tb::graph {

namespace {

int64_t wrapTo(QDType t, int64_t v) {
    switch (t) {
        case QDType::Int8: return int64_t(int8_t(uint8_t(uint64_t(v))));
        case QDType::Int32: return int64_t(int32_t(uint32_t(uint64_t(v))));
        default: return v;
    }
}
int64_t minOf(QDType t) {
    return t == QDType::Int8 ? -128 : t == QDType::Int32 ? int64_t(std::numeric_limits<int32_t>::min())
                                                          : std::numeric_limits<int64_t>::min();
}
int64_t maxOf(QDType t) {
    return t == QDType::Int8 ? 127 : t == QDType::Int32 ? int64_t(std::numeric_limits<int32_t>::max())
                                                         : std::numeric_limits<int64_t>::max();
}
// tir const(double, int dtype): truncation, saturated to the dtype so huge clip bounds stay bounds.
int64_t intBound(QDType t, double v) {
    if (v <= double(minOf(t))) return minOf(t);
    if (v >= double(maxOf(t))) return maxOf(t);
    return int64_t(v);
}

HostTensor make(std::vector<int64_t> shape, QDType t) {
    HostTensor r;
    r.shape = std::move(shape);
    r.dtype = t;
    if (t == QDType::Float32) r.f.assign(size_t(r.numElements()), 0.f);
    else r.i.assign(size_t(r.numElements()), 0);
    return r;
}

std::vector<int64_t> stridesOf(const std::vector<int64_t>& s) {
    std::vector<int64_t> st(s.size(), 1);
    for (int k = int(s.size()) - 2; k >= 0; --k) st[size_t(k)] = st[size_t(k) + 1] * s[size_t(k) + 1];
    return st;
}

// numpy broadcast of two shapes; for each output index the flat indices of both inputs.
struct Broadcast {
    std::vector<int64_t> out;
    std::vector<int64_t> ia, ib;
};
Broadcast broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    const size_t r = std::max(a.size(), b.size());
    std::vector<int64_t> pa(r, 1), pb(r, 1), out(r);
    std::copy(a.begin(), a.end(), pa.begin() + long(r - a.size()));
    std::copy(b.begin(), b.end(), pb.begin() + long(r - b.size()));
    for (size_t k = 0; k < r; ++k) {
        TB_USER_CHECK(pa[k] == pb[k] || pa[k] == 1 || pb[k] == 1) << "shapes do not broadcast";
        out[k] = std::max(pa[k], pb[k]);
    }
    auto sa = stridesOf(pa), sb = stridesOf(pb);
    Broadcast br;
    br.out = out;
    int64_t n = 1;
    for (auto d : out) n *= d;
    br.ia.resize(size_t(n));
    br.ib.resize(size_t(n));
    std::vector<int64_t> idx(r, 0);
    for (int64_t f = 0; f < n; ++f) {
        int64_t x = 0, y = 0;
        for (size_t k = 0; k < r; ++k) {
            if (pa[k] != 1) x += idx[k] * sa[k];
            if (pb[k] != 1) y += idx[k] * sb[k];
        }
        br.ia[size_t(f)] = x;
        br.ib[size_t(f)] = y;
        for (int k = int(r) - 1; k >= 0; --k) {
            if (++idx[size_t(k)] < out[size_t(k)]) break;
            idx[size_t(k)] = 0;
        }
    }
    return br;
}

HostTensor binary(const std::string& op, const HostTensor& a, const HostTensor& b, QDType outT) {
    TB_USER_CHECK(a.dtype == b.dtype) << op << " of " << qdtypeName(a.dtype) << " and " << qdtypeName(b.dtype);
    Broadcast br = broadcast(a.shape, b.shape);
    HostTensor r = make(br.out, outT);
    const size_t n = br.ia.size();
    if (a.isFloat()) {
        for (size_t k = 0; k < n; ++k) {
            const float x = a.f[size_t(br.ia[k])], y = b.f[size_t(br.ib[k])];
            float v = 0;
            if (op == "add") v = x + y;
            else if (op == "subtract") v = x - y;
            else if (op == "multiply") v = x * y;
            else if (op == "divide") v = x / y;
            else TB_USER_ERROR() << op << " on float32";
            r.f[k] = v;
        }
        return r;
    }
    for (size_t k = 0; k < n; ++k) {
        const int64_t x = a.i[size_t(br.ia[k])], y = b.i[size_t(br.ib[k])];
        uint64_t v = 0;
        if (op == "add") v = uint64_t(x) + uint64_t(y);
        else if (op == "subtract") v = uint64_t(x) - uint64_t(y);
        else if (op == "multiply") v = uint64_t(x) * uint64_t(y);
        else if (op == "right_shift") v = uint64_t(x >> std::clamp<int64_t>(y, 0, 63));
        else if (op == "left_shift") v = uint64_t(x) << std::clamp<int64_t>(y, 0, 63);
        else TB_USER_ERROR() << op << " on integers";
        r.i[k] = wrapTo(outT, int64_t(v));
    }
    return r;
}

// Data layout of a conv: "NCHW", or packed "NCHW{b}n{c}c" with kernel "OIHW{c}o{c}i".
struct ConvLayout {
    bool packed = false;
    int64_t bn = 1, bc = 1;
};
ConvLayout convLayout(const Attrs& a) {
    const std::string dl = a.getString("data_layout", "NCHW");
    ConvLayout L;
    if (dl == "NCHW") {
        TB_USER_CHECK(a.getString("kernel_layout", "OIHW") == "OIHW") << "kernel layout must be OIHW";
        return L;
    }
    int b = 0, c = 0;
    char tail[8] = {};
    TB_USER_CHECK(std::sscanf(dl.c_str(), "NCHW%dn%dc%7s", &b, &c, tail) == 2)
        << "integer conv2d supports NCHW and NCHW{b}n{c}c, not " << dl;
    L.packed = true;
    L.bn = b;
    L.bc = c;
    return L;
}

// Unpacked NCHW int32 tensor from packed (N/b, C/c, H, W, b, c).
std::vector<int32_t> unpackData(const HostTensor& t, const ConvLayout& L, int64_t& N, int64_t& C, int64_t& H,
                                int64_t& W) {
    std::vector<int32_t> out;
    if (!L.packed) {
        N = t.shape[0], C = t.shape[1], H = t.shape[2], W = t.shape[3];
        out.assign(t.i.begin(), t.i.end());
        return out;
    }
    N = t.shape[0] * t.shape[4], C = t.shape[1] * t.shape[5], H = t.shape[2], W = t.shape[3];
    out.resize(size_t(N * C * H * W));
    size_t k = 0;
    for (int64_t n0 = 0; n0 < t.shape[0]; ++n0)
        for (int64_t c0 = 0; c0 < t.shape[1]; ++c0)
            for (int64_t h = 0; h < H; ++h)
                for (int64_t w = 0; w < W; ++w)
                    for (int64_t n1 = 0; n1 < L.bn; ++n1)
                        for (int64_t c1 = 0; c1 < L.bc; ++c1)
                            out[size_t((((n0 * L.bn + n1) * C + c0 * L.bc + c1) * H + h) * W + w)] =
                                int32_t(t.i[k++]);
    return out;
}

HostTensor conv2dInt(const Node& node, const HostTensor& data, const HostTensor& kernel) {
    const Attrs& a = node.attrs;
    TB_USER_CHECK(a.getInt("groups", 1) == 1) << "integer conv2d supports groups 1";
    const ConvLayout L = convLayout(a);
    int64_t N, C, H, W;
    std::vector<int32_t> x = unpackData(data, L, N, C, H, W);
    int64_t O, KH, KW;
    std::vector<int32_t> w;
    if (!L.packed) {
        O = kernel.shape[0], KH = kernel.shape[2], KW = kernel.shape[3];
        TB_USER_CHECK(kernel.shape[1] == C) << "kernel input channels differ from the data's";
        w.assign(kernel.i.begin(), kernel.i.end());
    } else {
        // (O/c, I/c, KH, KW, c_o, c_i) -> OIHW
        const auto& s = kernel.shape;
        O = s[0] * s[4], KH = s[2], KW = s[3];
        TB_USER_CHECK(s[1] * s[5] == C) << "packed kernel input channels differ from the data's";
        w.resize(size_t(O * C * KH * KW));
        size_t k = 0;
        for (int64_t o0 = 0; o0 < s[0]; ++o0)
            for (int64_t i0 = 0; i0 < s[1]; ++i0)
                for (int64_t kh = 0; kh < KH; ++kh)
                    for (int64_t kw = 0; kw < KW; ++kw)
                        for (int64_t o1 = 0; o1 < s[4]; ++o1)
                            for (int64_t i1 = 0; i1 < s[5]; ++i1)
                                w[size_t((((o0 * s[4] + o1) * C + i0 * s[5] + i1) * KH + kh) * KW + kw)] =
                                    int32_t(kernel.i[k++]);
    }
    auto st = a.getInts("strides", {1, 1});
    auto pd = a.getInts("padding", {0, 0});
    auto dl = a.getInts("dilation", {1, 1});
    TB_USER_CHECK(dl[0] == 1 && dl[1] == 1) << "integer conv2d supports dilation 1";
    int64_t pt = pd[0], pl = pd.size() > 1 ? pd[1] : pd[0];
    int64_t pb = pd.size() == 4 ? pd[2] : pt, pr = pd.size() == 4 ? pd[3] : pl;
    const int64_t OH = (H + pt + pb - KH) / st[0] + 1, OW = (W + pl + pr - KW) / st[1] + 1;
    std::vector<uint32_t> acc(size_t(N * O * OH * OW), 0);
    for (int64_t n = 0; n < N; ++n)
        for (int64_t o = 0; o < O; ++o) {
            uint32_t* out = &acc[size_t((n * O + o) * OH * OW)];
            for (int64_t c = 0; c < C; ++c)
                for (int64_t kh = 0; kh < KH; ++kh)
                    for (int64_t kw = 0; kw < KW; ++kw) {
                        const uint32_t wv = uint32_t(w[size_t(((o * C + c) * KH + kh) * KW + kw)]);
                        if (wv == 0) continue;
                        const int32_t* xin = &x[size_t((n * C + c) * H * W)];
                        for (int64_t oh = 0; oh < OH; ++oh) {
                            const int64_t ih = oh * st[0] - pt + kh;
                            if (ih < 0 || ih >= H) continue;
                            for (int64_t ow = 0; ow < OW; ++ow) {
                                const int64_t iw = ow * st[1] - pl + kw;
                                if (iw < 0 || iw >= W) continue;
                                out[oh * OW + ow] += wv * uint32_t(xin[ih * W + iw]);
                            }
                        }
                    }
        }
    const QDType outT = parseQDType(a.getString("out_dtype", "int32"));
    if (!L.packed) {
        HostTensor r = make({N, O, OH, OW}, outT);
        for (size_t k = 0; k < acc.size(); ++k) r.i[k] = wrapTo(outT, int64_t(int32_t(acc[k])));
        return r;
    }
    HostTensor r = make({N / L.bn, O / L.bc, OH, OW, L.bn, L.bc}, outT);
    size_t k = 0;
    for (int64_t n0 = 0; n0 < N / L.bn; ++n0)
        for (int64_t c0 = 0; c0 < O / L.bc; ++c0)
            for (int64_t h = 0; h < OH; ++h)
                for (int64_t ww = 0; ww < OW; ++ww)
                    for (int64_t n1 = 0; n1 < L.bn; ++n1)
                        for (int64_t c1 = 0; c1 < L.bc; ++c1)
                            r.i[k++] = wrapTo(outT, int64_t(int32_t(
                                acc[size_t((((n0 * L.bn + n1) * O + c0 * L.bc + c1) * OH + h) * OW + ww)])));
    return r;
}

HostTensor maxPoolInt(const Node& node, const HostTensor& x) {
    const Attrs& a = node.attrs;
    TB_USER_CHECK(a.getString("layout", "NCHW") == "NCHW") << "integer max_pool2d supports NCHW";
    TB_USER_CHECK(a.getInt("ceil_mode", 0) == 0) << "integer max_pool2d supports ceil_mode 0";
    auto ks = a.getInts("pool_size");
    if (ks.size() == 1) ks.push_back(ks[0]);
    auto st = a.getInts("strides", {1, 1});
    auto pd = a.getInts("padding", {0, 0});
    int64_t pt = pd[0], pl = pd.size() > 1 ? pd[1] : pd[0];
    int64_t pb = pd.size() == 4 ? pd[2] : pt, pr = pd.size() == 4 ? pd[3] : pl;
    const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
    const int64_t OH = (H + pt + pb - ks[0]) / st[0] + 1, OW = (W + pl + pr - ks[1]) / st[1] + 1;
    HostTensor r = make({N, C, OH, OW}, x.dtype);
    size_t k = 0;
    for (int64_t nc = 0; nc < N * C; ++nc)
        for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow) {
                int64_t m = minOf(x.dtype);
                for (int64_t i = 0; i < ks[0]; ++i)
                    for (int64_t j = 0; j < ks[1]; ++j) {
                        const int64_t ih = oh * st[0] - pt + i, iw = ow * st[1] - pl + j;
                        if (ih >= 0 && ih < H && iw >= 0 && iw < W) m = std::max(m, x.i[size_t((nc * H + ih) * W + iw)]);
                    }
                r.i[k++] = m;
            }
    return r;
}

HostTensor transposeT(const HostTensor& x, std::vector<int64_t> axes) {
    const size_t r = x.shape.size();
    if (axes.empty())
        for (size_t k = 0; k < r; ++k) axes.push_back(int64_t(r - 1 - k));
    TB_USER_CHECK(axes.size() == r) << "transpose axes do not match the rank";
    std::vector<int64_t> out(r);
    for (size_t k = 0; k < r; ++k) out[k] = x.shape[size_t(axes[k])];
    HostTensor y = make(out, x.dtype);
    auto si = stridesOf(x.shape);
    std::vector<int64_t> idx(r, 0);
    const int64_t n = y.numElements();
    for (int64_t f = 0; f < n; ++f) {
        int64_t src = 0;
        for (size_t k = 0; k < r; ++k) src += idx[k] * si[size_t(axes[k])];
        if (y.isFloat()) y.f[size_t(f)] = x.f[size_t(src)];
        else y.i[size_t(f)] = x.i[size_t(src)];
        for (int k = int(r) - 1; k >= 0; --k) {
            if (++idx[size_t(k)] < out[size_t(k)]) break;
            idx[size_t(k)] = 0;
        }
    }
    return y;
}

HostTensor viaTe(const Node& node, const std::vector<const HostTensor*>& inputs) {
    const OpDef* def = findOp(node.op);
    TB_USER_CHECK(def) << "unknown operator '" << node.op << "'";
    std::vector<te::Tensor> ph;
    te::BufferMap given;
    for (size_t k = 0; k < inputs.size(); ++k) {
        TB_USER_CHECK(inputs[k]->isFloat()) << "float op " << node.op << " got a " << qdtypeName(inputs[k]->dtype)
                                            << " input";
        ph.push_back(te::placeholder(inputs[k]->shape, "p" + std::to_string(k), DType::Float32));
        te::Buffer b;
        b.shape = inputs[k]->shape;
        b.data = inputs[k]->f;
        given.emplace(ph.back().op(), std::move(b));
    }
    te::Tensor result = def->lower(ph, node.attrs);
    HostTensor r;
    r.dtype = QDType::Float32;
    if (result.op()->isPlaceholder()) {
        auto it = given.find(result.op());
        TB_CHECK(it != given.end()) << node.op << " lowered to a foreign placeholder";
        r.shape = it->second.shape;
        r.f = it->second.data;
        return r;
    }
    te::BufferMap res = te::evaluateTensors({result}, given, {});
    auto it = res.find(result.op());
    TB_CHECK(it != res.end()) << "no buffer for " << node.op;
    r.shape = it->second.shape;
    r.f = std::move(it->second.data);
    return r;
}

}  // namespace

const char* qdtypeName(QDType t) {
    switch (t) {
        case QDType::Float32: return "float32";
        case QDType::Int8: return "int8";
        case QDType::Int32: return "int32";
        case QDType::Int64: return "int64";
    }
    return "?";
}

QDType parseQDType(const std::string& name) {
    if (name == "float32") return QDType::Float32;
    if (name == "int8") return QDType::Int8;
    if (name == "int32") return QDType::Int32;
    if (name == "int64") return QDType::Int64;
    TB_USER_ERROR() << "unsupported dtype '" << name << "' (float32, int8, int32, int64)";
    return QDType::Float32;
}

QDType nodeDType(const Node& node) {
    return node.attrs.has("dtype") ? parseQDType(node.attrs.getString("dtype")) : QDType::Float32;
}

int64_t HostTensor::numElements() const {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
}

HostTensor constantTensor(const Node& constant) {
    TB_CHECK(constant.kind == NodeKind::Constant && constant.value) << "not a constant node";
    HostTensor t;
    t.shape = constant.value->type.shape;
    t.dtype = nodeDType(constant);
    if (t.isFloat()) {
        if (!constant.value->f.empty()) t.f = constant.value->f;
        else
            for (int64_t v : constant.value->i) t.f.push_back(float(v));
    } else {
        if (!constant.value->i.empty()) t.i = constant.value->i;
        else
            for (float v : constant.value->f) t.i.push_back(int64_t(v));
    }
    TB_CHECK(int64_t(t.isFloat() ? t.f.size() : t.i.size()) == t.numElements()) << "constant size mismatch";
    return t;
}

std::shared_ptr<const ConstantData> constantData(const HostTensor& t) {
    auto c = std::make_shared<ConstantData>();
    c->type.shape = t.shape;
    c->type.dtype = t.isFloat() ? DType::Float32 : t.dtype == QDType::Int64 ? DType::Int64 : DType::Int32;
    if (t.isFloat()) c->f = t.f;
    else c->i = t.i;
    return c;
}

HostTensor evalQuantNode(const Node& node, const std::vector<const HostTensor*>& in) {
    const std::string& op = node.op;
    const QDType outT = nodeDType(node);
    auto arity = [&](size_t n) {
        TB_USER_CHECK(in.size() == n) << op << " takes " << n << " inputs, got " << in.size();
    };
    try {
        if (op == "cast" || op == "annotation.cast_hint") {
            arity(1);
            const QDType to = parseQDType(node.attrs.getString("dtype"));
            HostTensor r = make(in[0]->shape, to);
            const int64_t n = r.numElements();
            for (int64_t k = 0; k < n; ++k) {
                if (to == QDType::Float32) r.f[size_t(k)] = in[0]->isFloat() ? in[0]->f[size_t(k)] : float(in[0]->i[size_t(k)]);
                else if (in[0]->isFloat()) {
                    const float v = in[0]->f[size_t(k)];
                    TB_USER_CHECK(std::isfinite(v)) << "cast of a non-finite value";
                    r.i[size_t(k)] = wrapTo(to, int64_t(std::trunc(double(v))));
                } else r.i[size_t(k)] = wrapTo(to, in[0]->i[size_t(k)]);
            }
            return r;
        }
        if (op == "annotation.stop_fusion") {
            arity(1);
            return *in[0];
        }
        if (op == "round") {
            arity(1);
            TB_USER_CHECK(in[0]->isFloat()) << "round of an integer tensor";
            HostTensor r = *in[0];
            for (float& v : r.f) v = std::round(v);
            return r;
        }
        if (op == "add" || op == "subtract" || op == "multiply" || op == "right_shift" || op == "left_shift" ||
            (op == "divide" && in.size() == 2 && in[0]->isFloat())) {
            arity(2);
            return binary(op, *in[0], *in[1], in[0]->dtype);
        }
        if (op == "clip") {
            arity(1);
            HostTensor r = *in[0];
            const double lo = node.attrs.getFloat("a_min"), hi = node.attrs.getFloat("a_max");
            if (r.isFloat()) {
                for (float& v : r.f) v = std::min(std::max(v, float(lo)), float(hi));
            } else {
                const int64_t l = intBound(r.dtype, lo), h = intBound(r.dtype, hi);
                for (int64_t& v : r.i) v = std::min(std::max(v, l), h);
            }
            return r;
        }
        if (op == "nn.relu" && !in[0]->isFloat()) {
            HostTensor r = *in[0];
            for (int64_t& v : r.i) v = std::max<int64_t>(v, 0);
            return r;
        }
        if (op == "reshape" || op == "nn.batch_flatten") {
            arity(1);
            HostTensor r = *in[0];
            r.shape = node.type.shape;
            TB_USER_CHECK(r.numElements() == in[0]->numElements()) << "reshape changes the element count";
            return r;
        }
        if (op == "transpose") {
            arity(1);
            return transposeT(*in[0], node.attrs.getInts("axes", {}));
        }
        if (op == "broadcast_to") {
            arity(1);
            HostTensor ones = make(node.type.shape, in[0]->dtype);
            Broadcast br = broadcast(in[0]->shape, ones.shape);
            for (size_t k = 0; k < br.ia.size(); ++k) {
                if (ones.isFloat()) ones.f[k] = in[0]->f[size_t(br.ia[k])];
                else ones.i[k] = in[0]->i[size_t(br.ia[k])];
            }
            return ones;
        }
        if (!in.empty() && !in[0]->isFloat()) {
            if (op == "nn.conv2d") {
                arity(2);
                TB_USER_CHECK(in[0]->dtype == QDType::Int8 && in[1]->dtype == QDType::Int8)
                    << "integer conv2d takes int8 data and weight";
                return conv2dInt(node, *in[0], *in[1]);
            }
            if (op == "nn.max_pool2d") return maxPoolInt(node, *in[0]);
            if (op == "nn.global_avg_pool2d") {
                TB_USER_CHECK(node.attrs.getString("layout", "NCHW") == "NCHW") << "layout must be NCHW";
                const auto& s = in[0]->shape;
                HostTensor r = make({s[0], s[1], 1, 1}, outT);
                const int64_t hw = s[2] * s[3];
                for (int64_t nc = 0; nc < s[0] * s[1]; ++nc) {
                    int64_t sum = 0;
                    for (int64_t k = 0; k < hw; ++k) sum += in[0]->i[size_t(nc * hw + k)];
                    r.i[size_t(nc)] = wrapTo(outT, wrapTo(outT, sum) / hw);
                }
                return r;
            }
            TB_USER_ERROR() << "no integer implementation";
        }
        TB_USER_CHECK(outT == QDType::Float32) << "no integer implementation";
        return viaTe(node, in);
    } catch (const UserError& e) {
        TB_USER_ERROR() << "node '" << node.name << "' (" << op << ", " << qdtypeName(outT) << "): " << e.what();
    }
    return {};
}

std::vector<HostTensor> runIntGraph(const Graph& g, const std::vector<HostTensor>& inputs, const IntRunOptions& opt) {
    TB_USER_CHECK(inputs.size() == g.inputs().size())
        << "the graph has " << g.inputs().size() << " inputs, " << inputs.size() << " were given";
    const size_t n = g.size();
    std::vector<int> uses(n, 0);
    std::vector<char> isOutput(n, 0);
    for (const Node& node : g.nodes())
        for (NodeId p : node.inputs) ++uses[size_t(p)];
    for (NodeId o : g.outputs()) isOutput[size_t(o)] = 1;
    std::vector<std::optional<HostTensor>> buf(n);
    for (size_t k = 0; k < inputs.size(); ++k) {
        const Node& in = g.node(g.inputs()[k]);
        TB_USER_CHECK(inputs[k].shape == in.type.shape) << "input '" << in.name << "' has the wrong shape";
        TB_USER_CHECK(int64_t(inputs[k].f.size()) == inputs[k].numElements() && inputs[k].isFloat())
            << "input '" << in.name << "' must hold float32 values for its shape";
        buf[size_t(g.inputs()[k])] = inputs[k];
    }
    for (size_t id = 0; id < n; ++id) {
        const Node& node = g.nodes()[id];
        if (node.kind == NodeKind::Input) continue;
        if (node.kind == NodeKind::Constant) {
            buf[id] = constantTensor(node);
            continue;
        }
        const bool skipped = id < opt.skip.size() && opt.skip[id];
        if (skipped) continue;  // its inputs stay alive for the group's last node
        std::optional<HostTensor> out;
        if (opt.external && opt.external(NodeId(id))) {
            out = opt.take(NodeId(id), [&](NodeId p) -> const HostTensor& {
                TB_CHECK(buf[size_t(p)]) << "node %" << p << " has no value for the external group";
                return *buf[size_t(p)];
            });
        } else {
            std::vector<const HostTensor*> args;
            for (NodeId p : node.inputs) {
                TB_CHECK(buf[size_t(p)]) << "node %" << p << " read after release";
                args.push_back(&*buf[size_t(p)]);
            }
            out = evalQuantNode(node, args);
        }
        TB_CHECK(out->shape == node.type.shape) << "node %" << id << " (" << node.op << ") computed the wrong shape";
        if (opt.onNode) opt.onNode(NodeId(id), *out);
        for (NodeId p : node.inputs)
            if (--uses[size_t(p)] == 0 && !isOutput[size_t(p)] && !(size_t(p) < opt.skip.size() && opt.skip[size_t(p)]))
                buf[size_t(p)].reset();
        if (uses[id] > 0 || isOutput[id]) buf[id] = std::move(*out);
    }
    std::vector<HostTensor> results;
    for (NodeId o : g.outputs()) {
        TB_CHECK(buf[size_t(o)]) << "output %" << o << " was not computed";
        results.push_back(*buf[size_t(o)]);
    }
    return results;
}

}  // namespace tb::graph
