// SPDX-License-Identifier: Apache-2.0
// The Relay operators of the zoo networks and of TVM's Relay passes: type relations (as
// src/relay/op/nn/*.cc and src/relay/op/tensor/*.cc), fusion patterns (TOpPattern, REFERENCE-ZOO
// §2.3) and lowering to te through topi with TVM's x86 strategy choices (REFERENCE-ZOO §3).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "engine/graph/ops/register.h"
#include "engine/graph/passes/layout.h"
#include "engine/support/error.h"
#include "engine/te/printer.h"
#include "engine/topi/broadcast.h"
#include "engine/topi/elemwise.h"
#include "engine/topi/nn.h"
#include "engine/topi/nn/flatten.h"
#include "engine/topi/nn/conv2d.h"
#include "engine/topi/nn/conv2d_transpose.h"
#include "engine/topi/nn/conv3d.h"
#include "engine/topi/nn/dense.h"
#include "engine/topi/nn/depthwise_conv2d.h"
#include "engine/topi/nn/pooling.h"
#include "engine/topi/nn/softmax.h"
#include "engine/topi/nn/winograd.h"
#include "engine/topi/transform.h"

namespace tb::graph {

namespace {

using Shape = std::vector<int64_t>;
using te::shapeToString;

// ---- helpers ------------------------------------------------------------------------

void checkArity(const std::vector<TensorType>& in, size_t n) {
    TB_USER_CHECK(in.size() == n) << "expects " << n << " input" << (n == 1 ? "" : "s") << ", got " << in.size();
}

void checkRank(const TensorType& t, size_t rank, const char* what) {
    TB_USER_CHECK(t.shape.size() == rank) << what << " must be " << rank << "-D, got " << shapeToString(t.shape);
}

int normAxis(int64_t axis, size_t ndim, const char* what = "axis") {
    int64_t n = int64_t(ndim);
    TB_USER_CHECK(axis >= -n && axis < n) << what << " " << axis << " is out of range for a " << n << "-D tensor";
    return int(axis < 0 ? axis + n : axis);
}

/// Relay's normalisation of a 2-D padding attribute to (top, left, bottom, right).
std::vector<int64_t> pad4(const std::vector<int64_t>& p) {
    if (p.size() == 1) return {p[0], p[0], p[0], p[0]};
    if (p.size() == 2) return {p[0], p[1], p[0], p[1]};
    TB_USER_CHECK(p.size() == 4) << "padding needs 1, 2 or 4 values, got " << shapeToString(p);
    return p;
}

/// N-D padding to (begin..., end...).
std::vector<int64_t> padN(const std::vector<int64_t>& p, size_t dims) {
    if (p.size() == 1) return std::vector<int64_t>(2 * dims, p[0]);
    if (p.size() == dims) {
        std::vector<int64_t> r(p);
        r.insert(r.end(), p.begin(), p.end());
        return r;
    }
    TB_USER_CHECK(p.size() == 2 * dims) << "padding needs 1, " << dims << " or " << 2 * dims << " values, got "
                                        << shapeToString(p);
    return p;
}

std::vector<int64_t> tupleN(const std::vector<int64_t>& v, size_t n, const char* what) {
    if (v.size() == 1) return std::vector<int64_t>(n, v[0]);
    TB_USER_CHECK(v.size() == n) << what << " needs 1 or " << n << " values, got " << shapeToString(v);
    return v;
}

void checkPositive(const std::vector<int64_t>& v, const char* what) {
    for (auto x : v) TB_USER_CHECK(x >= 1) << what << " values must be >= 1, got " << shapeToString(v);
}
void checkNonNegative(const std::vector<int64_t>& v, const char* what) {
    for (auto x : v) TB_USER_CHECK(x >= 0) << what << " values must be >= 0, got " << shapeToString(v);
}

/// Extent of primal axis `c` of a tensor in `layout` (block factor included).
int64_t primalExtent(const Shape& s, const Layout& l, char c) {
    int i = l.indexOf(c);
    TB_USER_CHECK(i >= 0) << "layout " << l.name() << " has no axis " << c;
    int64_t f = l.factorOf(char(std::tolower(static_cast<unsigned char>(c))));
    return s[size_t(i)] * (f > 0 ? f : 1);
}

Layout parseLayout(const Attrs& a, const char* key, const char* dflt) { return Layout(a.getString(key, dflt)); }

void checkLayoutRank(const TensorType& t, const Layout& l, const char* what) {
    TB_USER_CHECK(t.shape.size() == l.ndim()) << what << " of shape " << shapeToString(t.shape)
                                              << " does not match layout " << l.name();
}

int64_t convOut(int64_t in, int64_t padSum, int64_t k, int64_t dil, int64_t stride, const char* what) {
    int64_t dk = (k - 1) * dil + 1;
    int64_t out = (in + padSum - dk) / stride + 1;
    TB_USER_CHECK(in + padSum >= dk && out >= 1) << what << ": the (dilated) kernel of " << dk
                                                 << " does not fit the padded input of " << in + padSum;
    return out;
}

TensorType sameAsInput(const std::vector<TensorType>& in, const Attrs&) {
    checkArity(in, 1);
    return in[0];
}

// ---- convolutions ---------------------------------------------------------------------

TensorType inferConv2d(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 2);
    Layout dl = parseLayout(a, "data_layout", "NCHW");
    Layout kl = parseLayout(a, "kernel_layout", "OIHW");
    std::string outName = a.getString("out_layout", "");
    Layout ol = outName.empty() ? dl : Layout(outName);
    checkLayoutRank(in[0], dl, "data");
    checkLayoutRank(in[1], kl, "weight");
    for (char c : std::string("NCHW")) TB_USER_CHECK(dl.contains(c)) << "data layout " << dl.name() << " lacks " << c;
    for (char c : std::string("OIHW")) TB_USER_CHECK(kl.contains(c)) << "kernel layout " << kl.name() << " lacks " << c;
    const Shape& d = in[0].shape;
    const Shape& w = in[1].shape;
    int64_t N = primalExtent(d, dl, 'N'), C = primalExtent(d, dl, 'C'), H = primalExtent(d, dl, 'H'),
            W = primalExtent(d, dl, 'W');
    int64_t O = primalExtent(w, kl, 'O'), I = primalExtent(w, kl, 'I'), KH = primalExtent(w, kl, 'H'),
            KW = primalExtent(w, kl, 'W');
    int64_t groups = a.getInt("groups", 1);
    TB_USER_CHECK(groups >= 1) << "groups must be >= 1, got " << groups;
    auto strides = tupleN(a.getInts("strides", {1, 1}), 2, "strides");
    auto dil = tupleN(a.getInts("dilation", {1, 1}), 2, "dilation");
    auto pad = pad4(a.getInts("padding", {0, 0}));
    checkPositive(strides, "strides");
    checkPositive(dil, "dilation");
    checkNonNegative(pad, "padding");
    if (a.has("channels")) {
        TB_USER_CHECK(a.getInt("channels") == O) << "channels=" << a.getInt("channels")
                                                 << " but the weight has " << O << " output channels";
    }
    if (a.has("kernel_size")) {
        auto ks = tupleN(a.getInts("kernel_size"), 2, "kernel_size");
        TB_USER_CHECK(ks[0] == KH && ks[1] == KW) << "kernel_size " << shapeToString(ks) << " but the weight "
                                                  << shapeToString(w) << " is " << KH << "x" << KW;
    }
    TB_USER_CHECK(C == I * groups) << "data has " << C << " channels but the weight " << shapeToString(w)
                                   << " (layout " << kl.name() << ") expects " << I << " x groups " << groups;
    TB_USER_CHECK(O % groups == 0) << "output channels " << O << " are not divisible by groups " << groups;
    int64_t OH = convOut(H, pad[0] + pad[2], KH, dil[0], strides[0], "height");
    int64_t OW = convOut(W, pad[1] + pad[3], KW, dil[1], strides[1], "width");
    TensorType out;
    out.dtype = in[0].dtype;
    out.shape = Layout("NCHW").convertShape({N, O, OH, OW}, ol);
    return out;
}

TensorType inferConv3d(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 2);
    Layout dl = parseLayout(a, "data_layout", "NCDHW");
    Layout kl = parseLayout(a, "kernel_layout", "OIDHW");
    std::string outName = a.getString("out_layout", "");
    Layout ol = outName.empty() ? dl : Layout(outName);
    checkLayoutRank(in[0], dl, "data");
    checkLayoutRank(in[1], kl, "weight");
    const Shape& d = in[0].shape;
    const Shape& w = in[1].shape;
    int64_t N = primalExtent(d, dl, 'N'), C = primalExtent(d, dl, 'C');
    int64_t O = primalExtent(w, kl, 'O'), I = primalExtent(w, kl, 'I');
    int64_t groups = a.getInt("groups", 1);
    auto strides = tupleN(a.getInts("strides", {1, 1, 1}), 3, "strides");
    auto dil = tupleN(a.getInts("dilation", {1, 1, 1}), 3, "dilation");
    auto pad = padN(a.getInts("padding", {0, 0, 0}), 3);
    checkPositive(strides, "strides");
    checkPositive(dil, "dilation");
    checkNonNegative(pad, "padding");
    TB_USER_CHECK(C == I * groups) << "data has " << C << " channels but the weight " << shapeToString(w)
                                   << " expects " << I << " x groups " << groups;
    Shape o{N, O};
    const char* sp = "DHW";
    for (int i = 0; i < 3; ++i) {
        int64_t x = primalExtent(d, dl, sp[i]), k = primalExtent(w, kl, sp[i]);
        o.push_back(convOut(x, pad[size_t(i)] + pad[size_t(i) + 3], k, dil[size_t(i)], strides[size_t(i)], "spatial dim"));
    }
    TensorType out;
    out.dtype = in[0].dtype;
    out.shape = Layout("NCDHW").convertShape(o, ol);
    return out;
}

TensorType inferConv2dTranspose(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 2);
    Layout dl = parseLayout(a, "data_layout", "NCHW");
    Layout kl = parseLayout(a, "kernel_layout", "IOHW");
    checkLayoutRank(in[0], dl, "data");
    checkLayoutRank(in[1], kl, "weight");
    const Shape& d = in[0].shape;
    const Shape& w = in[1].shape;
    int64_t N = primalExtent(d, dl, 'N'), C = primalExtent(d, dl, 'C'), H = primalExtent(d, dl, 'H'),
            W = primalExtent(d, dl, 'W');
    int64_t I = primalExtent(w, kl, 'I'), O = primalExtent(w, kl, 'O'), KH = primalExtent(w, kl, 'H'),
            KW = primalExtent(w, kl, 'W');
    int64_t groups = a.getInt("groups", 1);
    auto strides = tupleN(a.getInts("strides", {1, 1}), 2, "strides");
    auto dil = tupleN(a.getInts("dilation", {1, 1}), 2, "dilation");
    auto pad = pad4(a.getInts("padding", {0, 0}));
    auto outPad = tupleN(a.getInts("output_padding", {0, 0}), 2, "output_padding");
    checkPositive(strides, "strides");
    checkPositive(dil, "dilation");
    checkNonNegative(pad, "padding");
    TB_USER_CHECK(C == I) << "data has " << C << " channels but the weight " << shapeToString(w) << " expects " << I;
    int64_t CO = O * groups;
    if (a.has("channels")) {
        TB_USER_CHECK(a.getInt("channels") == CO) << "channels=" << a.getInt("channels") << " but the weight gives "
                                                  << CO;
    }
    int64_t OH = (H - 1) * strides[0] - pad[0] - pad[2] + dil[0] * (KH - 1) + 1 + outPad[0];
    int64_t OW = (W - 1) * strides[1] - pad[1] - pad[3] + dil[1] * (KW - 1) + 1 + outPad[1];
    TB_USER_CHECK(OH >= 1 && OW >= 1) << "output would be empty";
    TensorType out;
    out.dtype = in[0].dtype;
    out.shape = Layout("NCHW").convertShape({N, CO, OH, OW}, dl);
    return out;
}

// NHWC (the auto-scheduler's x86 form): weight [alpha, alpha, CO, CI]. NCHW (arm_cpu
// _alter_conv2d_layout, conv2d_nchw_winograd.arm_cpu): weight [alpha, alpha, CO/VC, CI, VC].
TensorType inferWinogradConv(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 2);
    Layout dl = parseLayout(a, "data_layout", "NCHW");
    TB_USER_CHECK(dl.name() == "NHWC" || dl.name() == "NCHW")
        << "only NHWC and NCHW winograd convolutions are supported, got " << dl.name();
    const bool nchw = dl.name() == "NCHW";
    checkRank(in[0], 4, "data");
    checkRank(in[1], nchw ? 5 : 4, "weight");
    int64_t tile = a.getInt("tile_size");
    int64_t CO = a.getInt("channels");
    auto ks = tupleN(a.getInts("kernel_size"), 2, "kernel_size");
    auto strides = tupleN(a.getInts("strides", {1, 1}), 2, "strides");
    auto dil = tupleN(a.getInts("dilation", {1, 1}), 2, "dilation");
    auto pad = pad4(a.getInts("padding", {0, 0}));
    const Shape& d = in[0].shape;
    const Shape& w = in[1].shape;
    const int64_t wco = nchw ? w[2] * w[4] : w[2], wci = w[3], ci = nchw ? d[1] : d[3];
    TB_USER_CHECK(w[0] == tile + ks[0] - 1 && w[1] == tile + ks[1] - 1 && wco == CO && wci == ci)
        << "winograd weight " << shapeToString(w) << " does not match tile_size " << tile << ", kernel "
        << shapeToString(ks) << ", " << CO << " output and " << ci << " input channels";
    const int64_t h = nchw ? d[2] : d[1], wd = nchw ? d[3] : d[2];
    const int64_t oh = convOut(h, pad[0] + pad[2], ks[0], dil[0], strides[0], "height");
    const int64_t ow = convOut(wd, pad[1] + pad[3], ks[1], dil[1], strides[1], "width");
    TensorType out;
    out.dtype = in[0].dtype;
    out.shape = nchw ? Shape{d[0], CO, oh, ow} : Shape{d[0], oh, ow, CO};
    return out;
}

TensorType inferWinogradWeightTransform(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 1);
    checkRank(in[0], 4, "weight (OIHW)");
    int64_t tile = a.getInt("tile_size");
    TB_USER_CHECK(tile >= 2) << "tile_size must be >= 2";
    const Shape& w = in[0].shape;
    TensorType out = in[0];
    out.shape = {tile + w[2] - 1, tile + w[3] - 1, w[0], w[1]};
    return out;
}

// ---- dense / matmul -------------------------------------------------------------------

TensorType inferDense(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 2);
    TB_USER_CHECK(!in[0].shape.empty()) << "data must have at least 1 dimension";
    checkRank(in[1], 2, "weight");
    int64_t K = in[0].shape.back();
    TB_USER_CHECK(in[1].shape[1] == K) << "data " << shapeToString(in[0].shape) << " and weight "
                                       << shapeToString(in[1].shape) << " disagree on the reduction extent";
    if (a.has("units")) {
        TB_USER_CHECK(a.getInt("units") == in[1].shape[0]) << "units=" << a.getInt("units") << " but the weight has "
                                                           << in[1].shape[0] << " rows";
    }
    TensorType out = in[0];
    out.shape.back() = in[1].shape[0];
    return out;
}

TensorType inferBatchMatmul(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 2);
    checkRank(in[0], 3, "lhs");
    checkRank(in[1], 3, "rhs");
    bool ta = a.getInt("transpose_a", 0) != 0, tb = a.getInt("transpose_b", 1) != 0;
    const Shape& x = in[0].shape;
    const Shape& y = in[1].shape;
    int64_t B = std::max(x[0], y[0]);
    TB_USER_CHECK((x[0] == y[0]) || x[0] == 1 || y[0] == 1) << "batch dims " << x[0] << " and " << y[0]
                                                           << " do not broadcast";
    int64_t M = ta ? x[2] : x[1], K = ta ? x[1] : x[2];
    int64_t N = tb ? y[1] : y[2], K2 = tb ? y[2] : y[1];
    TB_USER_CHECK(K == K2) << "reduction extents differ: " << shapeToString(x) << " vs " << shapeToString(y);
    TensorType out = in[0];
    out.shape = {B, M, N};
    return out;
}

TensorType inferBiasAdd(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 2);
    int axis = normAxis(a.getInt("axis", 1), in[0].shape.size());
    checkRank(in[1], 1, "bias");
    TB_USER_CHECK(in[1].shape[0] == in[0].shape[size_t(axis)])
        << "bias " << shapeToString(in[1].shape) << " does not match axis " << axis << " of "
        << shapeToString(in[0].shape);
    return in[0];
}

TensorType inferBatchNorm(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 5);
    int axis = normAxis(a.getInt("axis", 1), in[0].shape.size());
    int64_t c = in[0].shape[size_t(axis)];
    const char* names[] = {"gamma", "beta", "moving_mean", "moving_var"};
    for (size_t i = 1; i < 5; ++i) {
        TB_USER_CHECK(in[i].shape == Shape{c}) << names[i - 1] << " " << shapeToString(in[i].shape)
                                              << " must be [" << c << "] (axis " << axis << " of "
                                              << shapeToString(in[0].shape) << ")";
    }
    return in[0];
}

// ---- broadcast ------------------------------------------------------------------------

TensorType inferBroadcast(const std::vector<TensorType>& in, const Attrs&) {
    checkArity(in, 2);
    const Shape& x = in[0].shape;
    const Shape& y = in[1].shape;
    size_t n = std::max(x.size(), y.size());
    Shape out(n);
    for (size_t i = 0; i < n; ++i) {
        int64_t a = i < n - x.size() ? 1 : x[i - (n - x.size())];
        int64_t b = i < n - y.size() ? 1 : y[i - (n - y.size())];
        TB_USER_CHECK(a == b || a == 1 || b == 1) << "shapes " << shapeToString(x) << " and " << shapeToString(y)
                                                  << " do not broadcast";
        out[i] = a == 1 ? b : a;
    }
    TB_USER_CHECK(in[0].dtype == in[1].dtype) << "operand types differ";
    return TensorType{out, in[0].dtype};
}

// ---- pooling --------------------------------------------------------------------------

TensorType inferPool2d(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 1);
    Layout l = parseLayout(a, "layout", "NCHW");
    checkLayoutRank(in[0], l, "data");
    int h = l.indexOf('H'), w = l.indexOf('W');
    TB_USER_CHECK(h >= 0 && w >= 0 && !l.contains('h') && !l.contains('w')) << "layout " << l.name()
                                                                             << " has no plain H and W axes";
    auto ks = tupleN(a.getInts("pool_size"), 2, "pool_size");
    auto strides = tupleN(a.getInts("strides", {1, 1}), 2, "strides");
    auto dil = tupleN(a.getInts("dilation", {1, 1}), 2, "dilation");
    auto pad = pad4(a.getInts("padding", {0, 0}));
    checkPositive(ks, "pool_size");
    checkPositive(strides, "strides");
    checkPositive(dil, "dilation");
    checkNonNegative(pad, "padding");
    bool ceil = a.getInt("ceil_mode", 0) != 0;
    TensorType out = in[0];
    for (int k = 0; k < 2; ++k) {
        size_t idx = size_t(k == 0 ? h : w);
        int64_t x = in[0].shape[idx] + pad[size_t(k)] + pad[size_t(k) + 2];
        int64_t dk = (ks[size_t(k)] - 1) * dil[size_t(k)] + 1;
        TB_USER_CHECK(x >= dk) << "pool window " << dk << " does not fit the padded input " << x;
        int64_t s = strides[size_t(k)];
        out.shape[idx] = ceil ? (x - dk + s - 1) / s + 1 : (x - dk) / s + 1;
    }
    return out;
}

TensorType inferGlobalPool2d(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 1);
    Layout l = parseLayout(a, "layout", "NCHW");
    checkLayoutRank(in[0], l, "data");
    TensorType out = in[0];
    out.shape[size_t(l.indexOf('H'))] = 1;
    out.shape[size_t(l.indexOf('W'))] = 1;
    return out;
}

TensorType inferAdaptivePool2d(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 1);
    Layout l = parseLayout(a, "layout", "NCHW");
    checkLayoutRank(in[0], l, "data");
    TensorType out = in[0];
    auto os = a.getInts("output_size", {});
    int h = l.indexOf('H'), w = l.indexOf('W');
    if (!os.empty()) {
        os = tupleN(os, 2, "output_size");
        checkPositive(os, "output_size");
        out.shape[size_t(h)] = os[0];
        out.shape[size_t(w)] = os[1];
    }
    return out;
}

// ---- shape ops --------------------------------------------------------------------------

TensorType inferSoftmax(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 1);
    normAxis(a.getInt("axis", -1), in[0].shape.size());
    return in[0];
}

TensorType inferBatchFlatten(const std::vector<TensorType>& in, const Attrs&) {
    checkArity(in, 1);
    TB_USER_CHECK(in[0].shape.size() >= 2) << "data must have at least 2 dimensions, got "
                                           << shapeToString(in[0].shape);
    int64_t rest = 1;
    for (size_t i = 1; i < in[0].shape.size(); ++i) rest *= in[0].shape[i];
    return TensorType{{in[0].shape[0], rest}, in[0].dtype};
}

TensorType inferReshape(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 1);
    const Shape& s = in[0].shape;
    auto ns = a.getInts("newshape");
    Shape out;
    int infer = -1;
    size_t src = 0;
    for (size_t i = 0; i < ns.size(); ++i) {
        int64_t v = ns[i];
        if (v > 0) {
            out.push_back(v);
            ++src;
        } else if (v == 0) {
            TB_USER_CHECK(src < s.size()) << "newshape " << shapeToString(ns) << ": 0 copies a missing dimension";
            out.push_back(s[src++]);
        } else if (v == -1) {
            TB_USER_CHECK(infer < 0) << "newshape " << shapeToString(ns) << " has more than one -1";
            infer = int(out.size());
            out.push_back(1);
            ++src;
        } else if (v == -2) {
            for (; src < s.size(); ++src) out.push_back(s[src]);
        } else if (v == -3) {
            TB_USER_CHECK(src + 1 < s.size()) << "newshape " << shapeToString(ns) << ": -3 needs two dimensions";
            out.push_back(s[src] * s[src + 1]);
            src += 2;
        } else if (v == -4) {
            TB_USER_CHECK(i + 2 < ns.size() && src < s.size()) << "newshape " << shapeToString(ns) << ": bad -4";
            int64_t d = s[src++], a1 = ns[i + 1], a2 = ns[i + 2];
            if (a1 == -1) a1 = d / a2;
            if (a2 == -1) a2 = d / a1;
            TB_USER_CHECK(a1 * a2 == d) << "newshape " << shapeToString(ns) << ": -4 split does not match " << d;
            out.push_back(a1);
            out.push_back(a2);
            i += 2;
        } else {
            TB_USER_ERROR() << "newshape " << shapeToString(ns) << " has an invalid value " << v;
        }
    }
    int64_t total = in[0].numElements();
    if (infer >= 0) {
        int64_t known = 1;
        for (size_t i = 0; i < out.size(); ++i)
            if (int(i) != infer) known *= out[i];
        TB_USER_CHECK(known > 0 && total % known == 0) << "cannot reshape " << shapeToString(s) << " to "
                                                       << shapeToString(ns);
        out[size_t(infer)] = total / known;
    }
    int64_t n = 1;
    for (auto d : out) n *= d;
    TB_USER_CHECK(n == total) << "cannot reshape " << shapeToString(s) << " (" << total << " elements) to "
                              << shapeToString(out);
    return TensorType{out, in[0].dtype};
}

TensorType inferTranspose(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 1);
    const Shape& s = in[0].shape;
    auto axes = a.getInts("axes", {});
    if (axes.empty())
        for (size_t i = s.size(); i-- > 0;) axes.push_back(int64_t(i));
    TB_USER_CHECK(axes.size() == s.size()) << "axes " << shapeToString(axes) << " do not match rank " << s.size();
    std::vector<char> seen(s.size(), 0);
    Shape out;
    for (auto ax : axes) {
        int k = normAxis(ax, s.size());
        TB_USER_CHECK(!seen[size_t(k)]) << "axes " << shapeToString(axes) << " repeat axis " << k;
        seen[size_t(k)] = 1;
        out.push_back(s[size_t(k)]);
    }
    return TensorType{out, in[0].dtype};
}

TensorType inferConcatenate(const std::vector<TensorType>& in, const Attrs& a) {
    TB_USER_CHECK(!in.empty()) << "needs at least one input";
    int axis = normAxis(a.getInt("axis", 0), in[0].shape.size());
    TensorType out = in[0];
    for (size_t k = 1; k < in.size(); ++k) {
        TB_USER_CHECK(in[k].shape.size() == in[0].shape.size())
            << "input " << k << " " << shapeToString(in[k].shape) << " has a different rank than "
            << shapeToString(in[0].shape);
        for (size_t i = 0; i < in[0].shape.size(); ++i) {
            if (int(i) == axis) continue;
            TB_USER_CHECK(in[k].shape[i] == in[0].shape[i]) << "input " << k << " " << shapeToString(in[k].shape)
                                                            << " differs from " << shapeToString(in[0].shape)
                                                            << " off the concatenation axis " << axis;
        }
        out.shape[size_t(axis)] += in[k].shape[size_t(axis)];
    }
    return out;
}

TensorType inferExpandDims(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 1);
    int64_t n = int64_t(in[0].shape.size());
    int64_t axis = a.getInt("axis");
    int64_t num = a.getInt("num_newaxis", 1);
    TB_USER_CHECK(axis >= -n - 1 && axis <= n) << "axis " << axis << " is out of range for a " << n << "-D tensor";
    TB_USER_CHECK(num >= 0) << "num_newaxis must be >= 0";
    if (axis < 0) axis += n + 1;
    Shape out(in[0].shape.begin(), in[0].shape.begin() + axis);
    for (int64_t i = 0; i < num; ++i) out.push_back(1);
    out.insert(out.end(), in[0].shape.begin() + axis, in[0].shape.end());
    return TensorType{out, in[0].dtype};
}

TensorType inferSqueeze(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 1);
    const Shape& s = in[0].shape;
    std::vector<char> drop(s.size(), 0);
    if (a.has("axis")) {
        for (auto ax : a.getInts("axis")) {
            int k = normAxis(ax, s.size());
            TB_USER_CHECK(s[size_t(k)] == 1) << "cannot squeeze axis " << k << " of extent " << s[size_t(k)];
            drop[size_t(k)] = 1;
        }
    } else {
        for (size_t i = 0; i < s.size(); ++i) drop[i] = s[i] == 1;
    }
    Shape out;
    for (size_t i = 0; i < s.size(); ++i)
        if (!drop[i]) out.push_back(s[i]);
    return TensorType{out, in[0].dtype};
}

TensorType inferLayoutTransform(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 1);
    Layout src(a.getString("src_layout")), dst(a.getString("dst_layout"));
    checkLayoutRank(in[0], src, "data");
    return TensorType{src.convertShape(in[0].shape, dst), in[0].dtype};
}

TensorType inferClip(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 1);
    TB_USER_CHECK(a.getFloat("a_min") <= a.getFloat("a_max")) << "a_min " << a.getFloat("a_min") << " > a_max "
                                                              << a.getFloat("a_max");
    return in[0];
}

TensorType inferPad(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 1);
    auto pw = a.getInts("pad_width");
    const Shape& s = in[0].shape;
    TB_USER_CHECK(pw.size() == 2 * s.size()) << "pad_width needs 2 values per dimension (" << 2 * s.size()
                                             << "), got " << shapeToString(pw);
    std::string mode = a.getString("pad_mode", "constant");
    TB_USER_CHECK(mode == "constant") << "pad_mode '" << mode << "' is not supported (only constant)";
    checkNonNegative(pw, "pad_width");
    TensorType out = in[0];
    for (size_t i = 0; i < s.size(); ++i) out.shape[i] += pw[2 * i] + pw[2 * i + 1];
    return out;
}


// ---- lowering (x86 strategy choices, REFERENCE-ZOO §3) ---------------------------------------

using TList = std::vector<te::Tensor>;


te::Tensor lowerConv2d(const TList& x, const Attrs& a) {
    std::string dl = a.getString("data_layout", "NCHW"), kl = a.getString("kernel_layout", "OIHW");
    int64_t groups = a.getInt("groups", 1);
    auto strides = tupleN(a.getInts("strides", {1, 1}), 2, "strides");
    auto dil = tupleN(a.getInts("dilation", {1, 1}), 2, "dilation");
    auto pad = pad4(a.getInts("padding", {0, 0}));
    if (groups == 1) {
        if (dl == "NHWC" && kl == "HWIO") return topi::nn::conv2dNhwc(x[0], x[1], strides, pad, dil);
        if (dl == "NCHW" && kl == "OIHW") return topi::nn::conv2dNchw(x[0], x[1], strides, pad, dil);
        return topi::nn::conv(x[0], x[1], strides, pad, dil, 1, dl, kl);
    }
    auto oihw = Layout(kl).convertShape(x[1].shape(), Layout("OIHW"));
    int64_t C = primalExtent(x[0].shape(), Layout(dl), 'C');
    bool depthwise = oihw[1] == 1 && groups == C;
    if (depthwise) {
        if (dl == "NHWC" && kl == "HWOI") return topi::nn::depthwiseConv2dNhwc(x[0], x[1], strides, pad, dil);
        if (dl == "NCHW" && kl == "OIHW") return topi::nn::depthwiseConv2dNchw(x[0], x[1], strides, pad, dil);
        TB_USER_ERROR() << "depthwise conv2d with layouts " << dl << "/" << kl
                        << " is not supported (NHWC/HWOI or NCHW/OIHW)";
    }
    if (dl == "NHWC" && kl == "HWIO") return topi::nn::groupConv2dNhwc(x[0], x[1], strides, pad, dil, groups);
    if (dl == "NCHW" && kl == "OIHW") return topi::nn::groupConv2dNchw(x[0], x[1], strides, pad, dil, groups);
    TB_USER_ERROR() << "group conv2d with layouts " << dl << "/" << kl << " is not supported";
}

te::Tensor lowerConv3d(const TList& x, const Attrs& a) {
    std::string dl = a.getString("data_layout", "NCDHW");
    auto strides = tupleN(a.getInts("strides", {1, 1, 1}), 3, "strides");
    auto dil = tupleN(a.getInts("dilation", {1, 1, 1}), 3, "dilation");
    auto pad = padN(a.getInts("padding", {0, 0, 0}), 3);
    int64_t groups = a.getInt("groups", 1);
    if (dl == "NCDHW") return topi::nn::conv3dNcdhw(x[0], x[1], strides, pad, dil, groups);
    if (dl == "NDHWC") return topi::nn::conv3dNdhwc(x[0], x[1], strides, pad, dil, groups);
    TB_USER_ERROR() << "conv3d layout " << dl << " is not supported (NCDHW or NDHWC)";
}

te::Tensor lowerConv2dTranspose(const TList& x, const Attrs& a) {
    std::string dl = a.getString("data_layout", "NCHW"), kl = a.getString("kernel_layout", "IOHW");
    // x86 conv2d_transpose_strategy_cpu asserts NCHW, as here.
    TB_USER_CHECK(dl == "NCHW" && kl == "IOHW") << "conv2d_transpose is supported in NCHW/IOHW only (as TVM's x86 "
                                                << "strategy), got " << dl << "/" << kl;
    TB_USER_CHECK(a.getInt("groups", 1) == 1) << "grouped conv2d_transpose is not supported";
    auto strides = tupleN(a.getInts("strides", {1, 1}), 2, "strides");
    auto dil = tupleN(a.getInts("dilation", {1, 1}), 2, "dilation");
    TB_USER_CHECK(dil[0] == 1 && dil[1] == 1) << "dilated conv2d_transpose is not supported";
    auto pad = pad4(a.getInts("padding", {0, 0}));
    auto outPad = tupleN(a.getInts("output_padding", {0, 0}), 2, "output_padding");
    return topi::nn::x86::conv2dTransposeNchw(x[0], x[1], strides, pad, outPad);
}

te::Tensor lowerConv2dNCHWc(const TList& x, const Attrs& a) {
    auto strides = tupleN(a.getInts("strides", {1, 1}), 2, "strides");
    auto dil = tupleN(a.getInts("dilation", {1, 1}), 2, "dilation");
    return topi::nn::conv2dNCHWc(x[0], x[1], strides, pad4(a.getInts("padding", {0, 0})), dil);
}

te::Tensor lowerDepthwiseConv2dNCHWc(const TList& x, const Attrs& a) {
    auto strides = tupleN(a.getInts("strides", {1, 1}), 2, "strides");
    auto dil = tupleN(a.getInts("dilation", {1, 1}), 2, "dilation");
    return topi::nn::depthwiseConv2dNCHWc(x[0], x[1], strides, pad4(a.getInts("padding", {0, 0})), dil);
}

te::Tensor lowerWinogradConv(const TList& x, const Attrs& a) {
    TB_USER_CHECK(a.getString("data_layout", "NCHW") == "NHWC")
        << "an NCHW winograd convolution is computed by its AutoTVM template (conv2d_nchw_winograd.arm_cpu) only";
    // conv2d_winograd_without_weight_transform_strategy_{cpu,cuda,mali} -> the auto-scheduler's
    // conv2d_winograd_nhwc_without_weight_transform (pre-computed weight). Its tile size is the one
    // the target's AlterOpLayout picked (x86 4; cuda and mali by the input height), stored here.
    return topi::nn::conv2dWinogradNhwc(x[0], x[1], pad4(a.getInts("padding", {0, 0})), true, a.getInt("tile_size", 4));
}

te::Tensor lowerWinogradWeightTransform(const TList& x, const Attrs& a) {
    return topi::nn::conv2dWinogradWeightTransform(x[0], a.getInt("tile_size"));
}

te::Tensor lowerDense(const TList& x, const Attrs&) {
    if (x[0].ndim() == 2) return topi::nn::dense(x[0], x[1]);
    // Relay dense on N-D data contracts the last axis: flatten the leading dims around a 2-D dense.
    std::vector<int64_t> s = x[0].shape();
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < s.size(); ++i) rows *= s[i];
    te::Tensor d = topi::nn::dense(topi::reshape(x[0], {rows, s.back()}), x[1]);
    s.back() = x[1].shape()[0];
    return topi::reshape(d, s);
}

te::Tensor lowerBatchMatmul(const TList& x, const Attrs& a) {
    return topi::nn::batchMatmul(x[0], x[1], a.getInt("transpose_a", 0) != 0, a.getInt("transpose_b", 1) != 0);
}

te::Tensor lowerBatchNorm(const TList& x, const Attrs& a) {
    // Relay has no compute for batch_norm once SimplifyInference ran; for direct evaluation this is
    // the same arithmetic: x * scale + shift with scale = gamma / sqrt(var + eps), shift = beta - mean*scale.
    size_t ndim = x[0].ndim();
    int axis = normAxis(a.getInt("axis", 1), ndim);
    int pad = int(ndim) - axis - 1;
    auto expand = [&](const te::Tensor& t) { return pad > 0 ? topi::expandDims(t, 1, pad) : t; };
    te::Tensor scale = topi::divide(te::Expr(1.0f), topi::sqrt(topi::add(x[4], te::Expr(float(a.getFloat("epsilon", 1e-5))))));
    if (a.getInt("scale", 1)) scale = topi::multiply(scale, x[1]);
    // -mean*scale (+ beta); written without unary minus, same float values.
    te::Tensor ms = topi::multiply(x[3], scale);
    te::Tensor shift = a.getInt("center", 1) ? topi::subtract(x[2], ms) : topi::multiply(ms, te::Expr(-1.0f));
    return topi::add(topi::multiply(x[0], expand(scale)), expand(shift));
}

std::function<te::Tensor(const TList&, const Attrs&)> lowerBinary(const std::string& op) {
    return [op](const TList& x, const Attrs&) -> te::Tensor {
        if (op == "add") return topi::add(x[0], x[1]);
        if (op == "subtract") return topi::subtract(x[0], x[1]);
        if (op == "multiply") return topi::multiply(x[0], x[1]);
        return topi::divide(x[0], x[1]);
    };
}

te::Tensor lowerPool2d(const TList& x, const Attrs& a, topi::nn::PoolType type) {
    auto ks = tupleN(a.getInts("pool_size"), 2, "pool_size");
    auto strides = tupleN(a.getInts("strides", {1, 1}), 2, "strides");
    auto dil = tupleN(a.getInts("dilation", {1, 1}), 2, "dilation");
    return topi::nn::pool2d(x[0], ks, strides, dil, pad4(a.getInts("padding", {0, 0})), type,
                            a.getInt("ceil_mode", 0) != 0, a.getString("layout", "NCHW"),
                            a.getInt("count_include_pad", 0) != 0);
}
te::Tensor lowerMaxPool2d(const TList& x, const Attrs& a) { return lowerPool2d(x, a, topi::nn::PoolType::Max); }
te::Tensor lowerAvgPool2d(const TList& x, const Attrs& a) { return lowerPool2d(x, a, topi::nn::PoolType::Avg); }
te::Tensor lowerGlobalAvgPool2d(const TList& x, const Attrs& a) {
    return topi::nn::globalPool(x[0], topi::nn::PoolType::Avg, a.getString("layout", "NCHW"));
}
te::Tensor lowerGlobalMaxPool2d(const TList& x, const Attrs& a) {
    return topi::nn::globalPool(x[0], topi::nn::PoolType::Max, a.getString("layout", "NCHW"));
}
te::Tensor lowerAdaptiveAvgPool2d(const TList& x, const Attrs& a) {
    Layout l(a.getString("layout", "NCHW"));
    auto os = a.getInts("output_size", {});
    if (os.empty()) os = {x[0].shape()[size_t(l.indexOf('H'))], x[0].shape()[size_t(l.indexOf('W'))]};
    return topi::nn::adaptivePool(x[0], tupleN(os, 2, "output_size"), topi::nn::PoolType::Avg, l.name());
}
te::Tensor lowerSoftmax(const TList& x, const Attrs& a) { return topi::nn::softmax(x[0], int(a.getInt("axis", -1))); }

// ---- registration -------------------------------------------------------------------------

OpDef def(const char* name, OpPattern p,
          std::function<TensorType(const std::vector<TensorType>&, const Attrs&)> infer,
          std::function<te::Tensor(const std::vector<te::Tensor>&, const Attrs&)> lower) {
    OpDef d;
    d.name = name;
    d.pattern = p;
    d.inferType = std::move(infer);
    d.lower = std::move(lower);
    return d;
}

}  // namespace

void registerNnOps(OpTable& t) {
    using P = OpPattern;
    t.add(def("nn.conv2d", P::OutEWiseFusable, inferConv2d, lowerConv2d));
    t.add(def("nn.conv3d", P::OutEWiseFusable, inferConv3d, lowerConv3d));
    t.add(def("nn.conv2d_transpose", P::OutEWiseFusable, inferConv2dTranspose, lowerConv2dTranspose));
    t.add(def("nn.contrib_conv2d_NCHWc", P::OutEWiseFusable, inferConv2d, lowerConv2dNCHWc));
    t.add(def("nn.contrib_depthwise_conv2d_NCHWc", P::OutEWiseFusable, inferConv2d, lowerDepthwiseConv2dNCHWc));
    t.add(def("nn.contrib_conv2d_winograd_without_weight_transform", P::OutEWiseFusable, inferWinogradConv,
              lowerWinogradConv));
    t.add(def("nn.contrib_conv2d_winograd_weight_transform", P::OutEWiseFusable, inferWinogradWeightTransform,
              lowerWinogradWeightTransform));
    t.add(def("nn.dense", P::OutEWiseFusable, inferDense, lowerDense));
    t.add(def("nn.batch_matmul", P::OutEWiseFusable, inferBatchMatmul, lowerBatchMatmul));
    t.add(def("nn.bias_add", P::Broadcast, inferBiasAdd, [](const std::vector<te::Tensor>& x, const Attrs& a) {
              return topi::nn::biasAdd(x[0], x[1], int(a.getInt("axis", 1)));
          }));
    t.add(def("nn.batch_norm", P::OutEWiseFusable, inferBatchNorm, lowerBatchNorm));
    t.add(def("nn.relu", P::ElemWise, sameAsInput,
              [](const std::vector<te::Tensor>& x, const Attrs&) { return topi::relu(x[0]); }));
    t.add(def("tanh", P::ElemWise, sameAsInput,
              [](const std::vector<te::Tensor>& x, const Attrs&) { return topi::tanh(x[0]); }));
    t.add(def("sigmoid", P::ElemWise, sameAsInput,
              [](const std::vector<te::Tensor>& x, const Attrs&) { return topi::sigmoid(x[0]); }));
    t.add(def("exp", P::ElemWise, sameAsInput,
              [](const std::vector<te::Tensor>& x, const Attrs&) { return topi::exp(x[0]); }));
    t.add(def("sqrt", P::ElemWise, sameAsInput,
              [](const std::vector<te::Tensor>& x, const Attrs&) { return topi::sqrt(x[0]); }));
    t.add(def("clip", P::ElemWise, inferClip, [](const std::vector<te::Tensor>& x, const Attrs& a) {
              return topi::clip(x[0], a.getFloat("a_min"), a.getFloat("a_max"));
          }));
    t.add(def("add", P::Broadcast, inferBroadcast, lowerBinary("add")));
    t.add(def("subtract", P::Broadcast, inferBroadcast, lowerBinary("subtract")));
    t.add(def("multiply", P::Broadcast, inferBroadcast, lowerBinary("multiply")));
    t.add(def("divide", P::Broadcast, inferBroadcast, lowerBinary("divide")));
    t.add(def("nn.max_pool2d", P::OutEWiseFusable, inferPool2d, lowerMaxPool2d));
    t.add(def("nn.avg_pool2d", P::OutEWiseFusable, inferPool2d, lowerAvgPool2d));
    t.add(def("nn.global_avg_pool2d", P::OutEWiseFusable, inferGlobalPool2d, lowerGlobalAvgPool2d));
    t.add(def("nn.global_max_pool2d", P::OutEWiseFusable, inferGlobalPool2d, lowerGlobalMaxPool2d));
    t.add(def("nn.adaptive_avg_pool2d", P::OutEWiseFusable, inferAdaptivePool2d, lowerAdaptiveAvgPool2d));
    t.add(def("nn.softmax", P::OutEWiseFusable, inferSoftmax, lowerSoftmax));
    t.add(def("nn.batch_flatten", P::Injective, inferBatchFlatten,
              [](const std::vector<te::Tensor>& x, const Attrs&) { return topi::nn::flatten(x[0]); }));
    t.add(def("reshape", P::Injective, inferReshape, [](const std::vector<te::Tensor>& x, const Attrs& a) {
              return topi::reshape(x[0], inferReshape({TensorType{x[0].shape(), x[0].dtype()}}, a).shape);
          }));
    t.add(def("transpose", P::Injective, inferTranspose, [](const std::vector<te::Tensor>& x, const Attrs& a) {
              std::vector<int> axes;
              for (auto v : a.getInts("axes", {})) axes.push_back(int(v));
              return topi::transpose(x[0], axes);
          }));
    t.add(def("concatenate", P::Injective, inferConcatenate, [](const std::vector<te::Tensor>& x, const Attrs& a) {
              return topi::concatenate(x, int(a.getInt("axis", 0)));
          }));
    t.add(def("expand_dims", P::Broadcast, inferExpandDims, [](const std::vector<te::Tensor>& x, const Attrs& a) {
              return topi::expandDims(x[0], int(a.getInt("axis")), int(a.getInt("num_newaxis", 1)));
          }));
    t.add(def("squeeze", P::Injective, inferSqueeze, [](const std::vector<te::Tensor>& x, const Attrs& a) {
              std::optional<std::vector<int>> axes;
              if (a.has("axis")) {
                  axes.emplace();
                  for (auto v : a.getInts("axis")) axes->push_back(int(v));
              }
              return topi::squeeze(x[0], axes);
          }));
    t.add(def("layout_transform", P::Injective, inferLayoutTransform,
              [](const std::vector<te::Tensor>& x, const Attrs& a) {
                  return topi::layoutTransform(x[0], a.getString("src_layout"), a.getString("dst_layout"));
              }));
    t.add(def("nn.dropout", P::Opaque, sameAsInput,
              [](const std::vector<te::Tensor>& x, const Attrs&) { return topi::identity(x[0]); }));
    t.add(def("nn.pad", P::Injective, inferPad, [](const std::vector<te::Tensor>& x, const Attrs& a) {
              auto pw = a.getInts("pad_width");
              std::vector<int64_t> before, after;
              for (size_t i = 0; i < pw.size() / 2; ++i) {
                  before.push_back(pw[2 * i]);
                  after.push_back(pw[2 * i + 1]);
              }
              return topi::pad(x[0], before, after, te::floatImm(a.getFloat("pad_value", 0.0)));
          }));
    // The ops relay.quantize creates (passes/quantize.h). te has no int8, so these have no te
    // lowering: the integer interpreter (int_interpreter.h) runs them. The exact dtype of a
    // realized node is its "dtype" attr; TensorType holds Int32 for int8/int32 and Float32 for float.
    auto noLower = [](const char* op) {
        return [op](const std::vector<te::Tensor>&, const Attrs&) -> te::Tensor {
            TB_USER_ERROR() << op << " has no te lowering; run quantized graphs with runIntGraph (int_interpreter.h)";
            return {};
        };
    };
    auto castType = [](const std::vector<TensorType>& in, const Attrs& a) {
        checkArity(in, 1);
        const std::string dt = a.getString("dtype");
        TB_USER_CHECK(dt == "float32" || dt == "int8" || dt == "int32" || dt == "int64")
            << "cast to unsupported dtype '" << dt << "'";
        TensorType t = in[0];
        t.dtype = dt == "float32" ? DType::Float32 : dt == "int64" ? DType::Int64 : DType::Int32;
        return t;
    };
    t.add(def("cast", P::ElemWise, castType, noLower("cast")));
    // A hint only (its input stays float until realize turns it into a cast).
    t.add(def("annotation.cast_hint", P::ElemWise, sameAsInput, noLower("annotation.cast_hint")));
    t.add(def("annotation.stop_fusion", P::Opaque, sameAsInput,
              [](const std::vector<te::Tensor>& x, const Attrs&) { return topi::identity(x[0]); }));
    t.add(def("relay.op.annotation.simulated_quantize", P::ElemWise, sameAsInput,
              noLower("relay.op.annotation.simulated_quantize")));
    t.add(def("round", P::ElemWise, sameAsInput, noLower("round")));
    t.add(def("right_shift", P::Broadcast, inferBroadcast, noLower("right_shift")));
    t.add(def("left_shift", P::Broadcast, inferBroadcast, noLower("left_shift")));
}

}  // namespace tb::graph
