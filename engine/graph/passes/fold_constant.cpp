// SPDX-License-Identifier: Apache-2.0
// Relay FoldConstant (src/relay/transforms/fold_constant.cc): evaluate every call whose arguments
// are all constants. Broadcast arithmetic, reshapes, transposes and the winograd weight transform
// run as float32 loops (what TVM's compiled kernels compute); anything else goes through the op's
// te lowering and the reference interpreter.
#include <cmath>
#include <functional>

#include "engine/graph/op_registry.h"
#include "engine/graph/passes/pass_util.h"
#include "engine/graph/passes/passes.h"
#include "engine/support/error.h"
#include "engine/te/interpreter.h"

namespace tb::graph {

namespace {

using Shape = std::vector<int64_t>;

std::vector<int64_t> rowMajorStrides(const Shape& s) {
    std::vector<int64_t> st(s.size(), 1);
    for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
    return st;
}

/// Strides of `s` read through the broadcast output shape `out` (0 on broadcast dims).
std::vector<int64_t> broadcastStrides(const Shape& s, const Shape& out) {
    std::vector<int64_t> st(out.size(), 0);
    auto own = rowMajorStrides(s);
    size_t base = out.size() - s.size();
    for (size_t i = 0; i < s.size(); ++i) st[base + i] = s[i] == 1 ? 0 : own[i];
    return st;
}

std::vector<float> binaryLoop(const std::string& op, const ConstantData& a, const ConstantData& b, const Shape& out) {
    std::function<float(float, float)> f;
    if (op == "add") f = [](float x, float y) { return x + y; };
    else if (op == "subtract") f = [](float x, float y) { return x - y; };
    else if (op == "multiply") f = [](float x, float y) { return x * y; };
    else f = [](float x, float y) { return x / y; };
    int64_t n = 1;
    for (auto d : out) n *= d;
    std::vector<float> r(static_cast<size_t>(n));
    auto sa = broadcastStrides(a.type.shape, out), sb = broadcastStrides(b.type.shape, out);
    std::vector<int64_t> idx(out.size(), 0);
    int64_t oa = 0, ob = 0;
    for (int64_t k = 0; k < n; ++k) {
        r[size_t(k)] = f(a.f[size_t(oa)], b.f[size_t(ob)]);
        for (size_t d = out.size(); d-- > 0;) {  // odometer increment
            ++idx[d];
            oa += sa[d];
            ob += sb[d];
            if (idx[d] < out[d]) break;
            oa -= sa[d] * out[d];
            ob -= sb[d] * out[d];
            idx[d] = 0;
        }
    }
    return r;
}

std::vector<float> transposeLoop(const ConstantData& x, const Shape& out, std::vector<int64_t> axes) {
    const Shape& s = x.type.shape;
    if (axes.empty())
        for (size_t i = s.size(); i-- > 0;) axes.push_back(int64_t(i));
    auto st = rowMajorStrides(s);
    std::vector<int64_t> ost(out.size());
    for (size_t i = 0; i < out.size(); ++i) ost[i] = st[size_t(axes[i] < 0 ? axes[i] + int64_t(s.size()) : axes[i])];
    int64_t n = x.type.numElements();
    std::vector<float> r(static_cast<size_t>(n));
    std::vector<int64_t> idx(out.size(), 0);
    int64_t off = 0;
    for (int64_t k = 0; k < n; ++k) {
        r[size_t(k)] = x.f[size_t(off)];
        for (size_t d = out.size(); d-- > 0;) {
            ++idx[d];
            off += ost[d];
            if (idx[d] < out[d]) break;
            off -= ost[d] * out[d];
            idx[d] = 0;
        }
    }
    return r;
}

/// G of Winograd F(m, 3) from Cook-Toom points 0, -1, 1, 1/2, -2, ... (python/tvm/topi/nn/
/// winograd_util.py): row i < alpha-1 is [1, a_i, a_i^2] / prod_{k != i}(a_i - a_k), the last row
/// [0, 0, 1]. For m = 4 (alpha 6): [1,0,0], [-1/3,1/3,-1/3], [1/3,1/3,1/3], [-16/15,-8/15,-4/15],
/// [1/15,-2/15,4/15], [0,0,1].
std::vector<std::vector<double>> winogradG(int64_t m, int64_t r) {
    // _interpolation_points: the tables of degree 2..6 are prefixes of this list.
    const double pts[] = {0, -1, 1, 0.5, -2, -0.5};
    int64_t alpha = m + r - 1;
    TB_USER_CHECK(alpha - 1 >= 2 && alpha - 1 <= 6) << "winograd tile " << m << " with kernel " << r
                                                    << " is not supported";
    std::vector<std::vector<double>> G(size_t(alpha), std::vector<double>(size_t(r), 0.0));
    for (int64_t i = 0; i < alpha - 1; ++i) {
        double f = 1;
        for (int64_t k = 0; k < alpha - 1; ++k)
            if (k != i) f *= pts[i] - pts[k];
        if (i == 0 && f < 0) f = -f;  // _cook_toom_convolution flips a negative f[0, 0]
        for (int64_t j = 0; j < r; ++j) G[size_t(i)][size_t(j)] = std::pow(pts[i], double(j)) / f;
    }
    G[size_t(alpha - 1)][size_t(r - 1)] = 1;
    return G;
}

/// topi.nn.conv2d_winograd_weight_transform: kernel [CO, CI, KH, KW] -> [alpha, alpha, CO, CI],
/// U = G g G^T (summed over kh, kw; the interpreter's order: kh outer, kw inner).
std::vector<float> winogradWeightTransform(const ConstantData& w, int64_t tile) {
    const Shape& s = w.type.shape;
    int64_t CO = s[0], CI = s[1], KH = s[2], KW = s[3];
    TB_USER_CHECK(KH == KW) << "winograd weight transform needs a square kernel";
    auto G = winogradG(tile, KH);
    int64_t alpha = tile + KH - 1;
    std::vector<float> r(size_t(alpha * alpha * CO * CI));
    for (int64_t e = 0; e < alpha; ++e)
        for (int64_t nu = 0; nu < alpha; ++nu)
            for (int64_t co = 0; co < CO; ++co)
                for (int64_t ci = 0; ci < CI; ++ci) {
                    double acc = 0;
                    for (int64_t kh = 0; kh < KH; ++kh)
                        for (int64_t kw = 0; kw < KW; ++kw)
                            acc += double(w.f[size_t(((co * CI + ci) * KH + kh) * KW + kw)]) *
                                   float(G[size_t(e)][size_t(kh)]) * float(G[size_t(nu)][size_t(kw)]);
                    r[size_t(((e * alpha + nu) * CO + co) * CI + ci)] = float(acc);
                }
    return r;
}

std::vector<float> viaInterpreter(const Node& n, const std::vector<const ConstantData*>& in) {
    const OpDef* def = findOp(n.op);
    TB_CHECK(def && def->lower) << "no lowering for " << n.op;
    std::vector<te::Tensor> phs;
    te::BufferMap given;
    for (size_t i = 0; i < in.size(); ++i) {
        phs.push_back(te::placeholder(in[i]->type.shape, "p" + std::to_string(i)));
        given[phs.back().op()] = te::Buffer{in[i]->type.shape, in[i]->f};
    }
    te::Tensor out = def->lower(phs, n.attrs);
    for (const auto& p : phs)
        if (out.op() == p.op()) return given[p.op()].data;  // identity lowering
    auto res = te::evaluateTensors({out}, given);
    return std::move(res.at(out.op()).data);
}

bool foldable(const Graph& g, const Node& n) {
    if (n.kind != NodeKind::Op || n.inputs.empty()) return false;
    const OpDef* def = findOp(n.op);
    if (!def || def->pattern == OpPattern::Opaque) return false;
    if (n.type.dtype != te::DType::Float32) return false;
    for (NodeId p : n.inputs) {
        const Node& k = g.node(p);
        if (k.kind != NodeKind::Constant || k.type.dtype != te::DType::Float32) return false;
        if (int64_t(k.value->f.size()) != k.type.numElements()) return false;
    }
    return true;
}

}  // namespace

Graph foldConstant(const Graph& src) {
    detail::GraphRebuilder rb(src);
    Graph& g = rb.out;
    for (NodeId id = 0; id < NodeId(src.size()); ++id) {
        NodeId nid = rb.copyMapped(id);
        const Node& n = g.node(nid);
        if (!foldable(g, n)) continue;
        std::vector<const ConstantData*> in;
        for (NodeId p : n.inputs) in.push_back(g.node(p).value.get());
        std::vector<float> v;
        const std::string& op = n.op;
        if (op == "add" || op == "subtract" || op == "multiply" || op == "divide") {
            v = binaryLoop(op, *in[0], *in[1], n.type.shape);
        } else if (op == "expand_dims" || op == "reshape" || op == "squeeze" || op == "nn.batch_flatten") {
            v = in[0]->f;
        } else if (op == "transpose") {
            v = transposeLoop(*in[0], n.type.shape, n.attrs.getInts("axes", {}));
        } else if (op == "nn.contrib_conv2d_winograd_weight_transform") {
            v = winogradWeightTransform(*in[0], n.attrs.getInt("tile_size"));
        } else if (op == "sqrt") {
            v = in[0]->f;
            for (auto& x : v) x = std::sqrt(x);
        } else {
            v = viaInterpreter(n, in);
        }
        // The folded constant replaces the op node (which becomes unreachable and is pruned).
        rb.map[size_t(id)] = detail::addFloatConstant(g, n.name, n.type.shape, std::move(v));
    }
    return rb.finish();
}

}  // namespace tb::graph
