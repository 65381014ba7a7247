// SPDX-License-Identifier: Apache-2.0
// Relay operators that imported ONNX models need beyond the zoo's (ops/nn.cpp): activations
// (nn.leaky_relu, hard_sigmoid, hard_swish), more unary/binary math (power, erf, log, maximum, ...),
// reductions (mean, sum, max, min), slicing and gathering (strided_slice, take, broadcast_to),
// nn.log_softmax, nn.mirror_pad and image.resize2d. Attribute names follow Relay; computes come
// from topi where it has them, otherwise they are written here with TVM's stage names.
//
// An op that ops/nn.cpp registers too is skipped here (nn.cpp wins), so the two files can grow
// independently without a duplicate-registration failure.
#include <algorithm>
#include <cmath>
#include <set>

#include "engine/graph/ops/register.h"
#include "engine/support/error.h"
#include "engine/te/printer.h"
#include "engine/topi/broadcast.h"
#include "engine/topi/elemwise.h"
#include "engine/topi/image/resize.h"
#include "engine/topi/nn.h"
#include "engine/topi/reduction.h"
#include "engine/topi/tags.h"
#include "engine/topi/transform.h"

namespace tb::graph {

namespace {

using Shape = std::vector<int64_t>;
using te::Expr;
using te::shapeToString;
using te::Tensor;
using te::Var;

Expr ci(int64_t v) { return te::intImm(v, te::DType::Int32); }
Expr cf(double v) { return te::floatImm(v, te::DType::Float32); }

void checkArity(const std::vector<TensorType>& in, size_t n) {
    TB_USER_CHECK(in.size() == n) << "expects " << n << " input" << (n == 1 ? "" : "s") << ", got " << in.size();
}

int normAxis(int64_t axis, size_t ndim) {
    int64_t n = int64_t(ndim);
    TB_USER_CHECK(axis >= -n && axis < n) << "axis " << axis << " is out of range for a " << n << "-D tensor";
    return int(axis < 0 ? axis + n : axis);
}

TensorType sameAsInput(const std::vector<TensorType>& in, const Attrs&) {
    checkArity(in, 1);
    return in[0];
}

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
    return TensorType{out, in[0].dtype};
}

// ---- reductions: Relay `mean`, `sum`, `max`, `min` (axis, keepdims, exclude) --------------

std::vector<int> reduceAxes(size_t ndim, const Attrs& a) {
    std::set<int> axes;
    if (a.has("axis")) {
        for (auto v : a.getInts("axis")) axes.insert(normAxis(v, ndim));
    } else {
        for (size_t i = 0; i < ndim; ++i) axes.insert(int(i));
    }
    if (a.getInt("exclude", 0)) {
        std::set<int> keep;
        for (size_t i = 0; i < ndim; ++i)
            if (!axes.count(int(i))) keep.insert(int(i));
        axes = keep;
    }
    return {axes.begin(), axes.end()};
}

TensorType inferReduce(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 1);
    TB_USER_CHECK(!in[0].shape.empty()) << "cannot reduce a 0-d tensor";
    auto axes = reduceAxes(in[0].shape.size(), a);
    const bool keep = a.getInt("keepdims", 0) != 0;
    Shape out;
    for (size_t i = 0; i < in[0].shape.size(); ++i) {
        const bool reduced = std::find(axes.begin(), axes.end(), int(i)) != axes.end();
        if (!reduced)
            out.push_back(in[0].shape[i]);
        else if (keep)
            out.push_back(1);
    }
    return TensorType{out, in[0].dtype};
}

using ReduceFn = Tensor (*)(const Tensor&, const std::optional<std::vector<int>>&, bool);
std::function<Tensor(const std::vector<Tensor>&, const Attrs&)> lowerReduce(ReduceFn f) {
    return [f](const std::vector<Tensor>& x, const Attrs& a) {
        auto axes = reduceAxes(x[0].ndim(), a);
        TB_USER_CHECK(!axes.empty()) << "no axis to reduce";
        return f(x[0], axes, a.getInt("keepdims", 0) != 0);
    };
}

// ---- strided_slice (begin, end, strides, axes; static, already clamped by the importer) --

struct SliceParams {
    Shape begin, stride, out;
};

SliceParams sliceParams(const Shape& in, const Attrs& a) {
    auto begin = a.getInts("begin"), end = a.getInts("end");
    auto strides = a.getInts("strides", {});
    auto axes = a.getInts("axes", {});
    if (axes.empty())
        for (size_t i = 0; i < begin.size(); ++i) axes.push_back(int64_t(i));
    if (strides.empty()) strides.assign(begin.size(), 1);
    if (strides.size() == 1 && begin.size() > 1) strides.assign(begin.size(), strides[0]);
    TB_USER_CHECK(begin.size() == end.size() && begin.size() == axes.size() && strides.size() == begin.size())
        << "begin " << shapeToString(begin) << ", end " << shapeToString(end) << ", strides " << shapeToString(strides)
        << " and axes " << shapeToString(axes) << " differ in length";
    SliceParams p{Shape(in.size(), 0), Shape(in.size(), 1), in};
    for (size_t i = 0; i < axes.size(); ++i) {
        const int ax = normAxis(axes[i], in.size());
        const int64_t d = in[size_t(ax)], s = strides[i];
        TB_USER_CHECK(s != 0) << "stride 0";
        int64_t b = begin[i], e = end[i];
        if (b < 0) b += d;
        if (e < 0 && s > 0) e += d;
        int64_t count;
        if (s > 0) {
            b = std::clamp<int64_t>(b, 0, d);
            e = std::clamp<int64_t>(e, 0, d);
            count = e > b ? (e - b + s - 1) / s : 0;
        } else {
            b = std::clamp<int64_t>(b, 0, d - 1);
            e = std::clamp<int64_t>(e, -1, d - 1);
            count = b > e ? (b - e - s - 1) / (-s) : 0;
        }
        TB_USER_CHECK(count > 0) << "empty slice on axis " << ax;
        p.begin[size_t(ax)] = b;
        p.stride[size_t(ax)] = s;
        p.out[size_t(ax)] = count;
    }
    return p;
}

TensorType inferStridedSlice(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 1);
    return TensorType{sliceParams(in[0].shape, a).out, in[0].dtype};
}

Tensor lowerStridedSlice(const std::vector<Tensor>& x, const Attrs& a) {
    SliceParams p = sliceParams(x[0].shape(), a);
    bool positive = true;
    for (auto s : p.stride) positive = positive && s > 0;
    if (positive) {
        Shape end(p.begin.size());
        for (size_t i = 0; i < end.size(); ++i) end[i] = p.begin[i] + (p.out[i] - 1) * p.stride[i] + 1;
        return topi::stridedSlice(x[0], p.begin, end, p.stride);
    }
    return te::compute(p.out, te::axisNames(p.out.size(), "ax"), [&](const std::vector<Var>& v) {
        std::vector<Expr> idx;
        for (size_t i = 0; i < v.size(); ++i) idx.push_back(v[i] * ci(p.stride[i]) + ci(p.begin[i]));
        return x[0](idx);
    }, "T_strided_slice", te::ComputeOptions{topi::tag::kInjective, {}, {}});
}

// ---- take(data, indices, axis): indices arrive as a float tensor of integral values ---------

TensorType inferTake(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 2);
    const int axis = normAxis(a.getInt("axis", 0), in[0].shape.size());
    Shape out(in[0].shape.begin(), in[0].shape.begin() + axis);
    out.insert(out.end(), in[1].shape.begin(), in[1].shape.end());
    out.insert(out.end(), in[0].shape.begin() + axis + 1, in[0].shape.end());
    return TensorType{out, in[0].dtype};
}

Tensor lowerTake(const std::vector<Tensor>& x, const Attrs& a) {
    const Tensor& data = x[0];
    const Tensor& ind = x[1];
    const int axis = normAxis(a.getInt("axis", 0), data.ndim());
    const TensorType t = inferTake({{data.shape(), data.dtype()}, {ind.shape(), ind.dtype()}}, a);
    const int64_t dim = data.shape()[size_t(axis)];
    return te::compute(t.shape, te::axisNames(t.shape.size(), "ax"), [&](const std::vector<Var>& v) {
        std::vector<Expr> iidx(v.begin() + axis, v.begin() + axis + long(ind.ndim()));
        Expr raw = te::cast(te::DType::Int32, ind(iidx));
        // "clip" mode as TVM's default: indices clamped into [0, dim).
        Expr k = te::min(te::max(raw, ci(0)), ci(dim - 1));
        std::vector<Expr> didx(v.begin(), v.begin() + axis);
        didx.push_back(k);
        didx.insert(didx.end(), v.begin() + axis + long(ind.ndim()), v.end());
        return data(didx);
    }, "T_take", te::ComputeOptions{topi::tag::kInjective, {}, {}});
}

// ---- broadcast_to(shape) ----------------------------------------------------------------

TensorType inferBroadcastTo(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 1);
    TensorType shapeT{a.getInts("shape"), in[0].dtype};
    TensorType out = inferBroadcast({in[0], shapeT}, a);
    TB_USER_CHECK(out.shape == shapeT.shape) << "cannot broadcast " << shapeToString(in[0].shape) << " to "
                                             << shapeToString(shapeT.shape);
    return out;
}

Tensor lowerBroadcastTo(const std::vector<Tensor>& x, const Attrs& a) {
    const Shape out = a.getInts("shape");
    const Shape& in = x[0].shape();
    const size_t off = out.size() - in.size();
    return te::compute(out, te::axisNames(out.size(), "ax"), [&](const std::vector<Var>& v) {
        std::vector<Expr> idx;
        for (size_t i = 0; i < in.size(); ++i) idx.push_back(in[i] == 1 && out[i + off] != 1 ? ci(0) : Expr(v[i + off]));
        return x[0](idx);
    }, "T_broadcast_to", te::ComputeOptions{topi::tag::kBroadcast, {}, {}});
}

// ---- where(condition, x, y) with broadcasting ------------------------------------------------

TensorType inferWhere(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 3);
    TensorType t = inferBroadcast({in[0], in[1]}, a);
    t = inferBroadcast({t, in[2]}, a);
    t.dtype = in[1].dtype;
    return t;
}

Tensor lowerWhere(const std::vector<Tensor>& x, const Attrs& a) {
    const TensorType t = inferWhere({{x[0].shape(), x[0].dtype()}, {x[1].shape(), x[1].dtype()},
                                     {x[2].shape(), x[2].dtype()}}, a);
    const Shape& out = t.shape;
    auto index = [&](const Tensor& src, const std::vector<Var>& v) {
        const Shape& s = src.shape();
        const size_t off = out.size() - s.size();
        std::vector<Expr> idx;
        for (size_t i = 0; i < s.size(); ++i) idx.push_back(s[i] == 1 && out[i + off] != 1 ? ci(0) : Expr(v[i + off]));
        return src(idx);
    };
    return te::compute(out, te::axisNames(out.size(), "ax"), [&](const std::vector<Var>& v) {
        Expr c = index(x[0], v);
        Expr cond = te::isFloat(c.dtype()) ? te::ne(c, cf(0.0)) : te::ne(c, te::makeConst(c.dtype(), 0));
        return te::select(cond, index(x[1], v), index(x[2], v));
    }, "T_where", te::ComputeOptions{topi::tag::kBroadcast, {}, {}});
}

// ---- nn.log_softmax (python/tvm/topi/nn/softmax.py log_softmax) ---------------------------

Tensor lowerLogSoftmax(const std::vector<Tensor>& x, const Attrs& a) {
    const Tensor& data = x[0];
    const Shape& shape = data.shape();
    const int axis = normAxis(a.getInt("axis", -1), shape.size());
    Shape reduced;
    for (size_t i = 0; i < shape.size(); ++i)
        if (int(i) != axis) reduced.push_back(shape[i]);
    auto withK = [&](const std::vector<Var>& v, const Var& k) {
        std::vector<Expr> idx(v.begin(), v.end());
        idx.insert(idx.begin() + axis, k);
        return idx;
    };
    auto k1 = te::reduceAxis(shape[size_t(axis)], "k");
    Tensor maxElem = te::compute(reduced, te::axisNames(reduced.size(), "i"), [&](const std::vector<Var>& v) {
        return te::reduceMax(data(withK(v, k1.var)), {k1});
    }, "T_softmax_maxelem");
    auto k2 = te::reduceAxis(shape[size_t(axis)], "k");
    Tensor expsum = te::compute(reduced, te::axisNames(reduced.size(), "i"), [&](const std::vector<Var>& v) {
        std::vector<Expr> r(v.begin(), v.end());
        return te::sum(te::exp(data(withK(v, k2.var)) - maxElem(r)), {k2});
    }, "compute");
    te::ComputeOptions opts;
    opts.attrs["axis"] = int64_t(axis);
    return te::compute(shape, te::axisNames(shape.size(), "i"), [&](const std::vector<Var>& v) {
        std::vector<Expr> r;
        for (size_t i = 0; i < v.size(); ++i)
            if (int(i) != axis) r.push_back(v[i]);
        std::vector<Expr> all(v.begin(), v.end());
        return data(all) - maxElem(r) - te::log(expsum(r));
    }, "compute", opts);
}

// ---- nn.mirror_pad (REFLECT / SYMMETRIC) ---------------------------------------------------

TensorType inferMirrorPad(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 1);
    auto pw = a.getInts("pad_width");
    const Shape& s = in[0].shape;
    TB_USER_CHECK(pw.size() == 2 * s.size()) << "pad_width needs 2 values per dimension";
    const std::string mode = a.getString("mode", "SYMMETRIC");
    TB_USER_CHECK(mode == "REFLECT" || mode == "SYMMETRIC") << "unknown mirror_pad mode '" << mode << "'";
    TensorType out = in[0];
    for (size_t i = 0; i < s.size(); ++i) {
        const int64_t limit = mode == "REFLECT" ? s[i] - 1 : s[i];
        TB_USER_CHECK(pw[2 * i] >= 0 && pw[2 * i + 1] >= 0 && pw[2 * i] <= limit && pw[2 * i + 1] <= limit)
            << "pad_width " << shapeToString(pw) << " is too large for " << shapeToString(s) << " in mode " << mode;
        out.shape[i] += pw[2 * i] + pw[2 * i + 1];
    }
    return out;
}

Tensor lowerMirrorPad(const std::vector<Tensor>& x, const Attrs& a) {
    const TensorType t = inferMirrorPad({{x[0].shape(), x[0].dtype()}}, a);
    const auto pw = a.getInts("pad_width");
    const bool reflect = a.getString("mode", "SYMMETRIC") == "REFLECT";
    const Shape& in = x[0].shape();
    return te::compute(t.shape, te::axisNames(t.shape.size(), "ax"), [&](const std::vector<Var>& v) {
        std::vector<Expr> idx;
        for (size_t i = 0; i < v.size(); ++i) {
            const int64_t before = pw[2 * i], n = in[i];
            if (before == 0 && pw[2 * i + 1] == 0) {
                idx.push_back(v[i]);
                continue;
            }
            Expr j = Expr(v[i]) - ci(before);
            // below 0: mirror around 0 (reflect: -j, symmetric: -j - 1); above n-1: around n-1.
            Expr lo = reflect ? ci(0) - j : ci(-1) - j;
            Expr hi = reflect ? ci(2 * (n - 1)) - j : ci(2 * n - 1) - j;
            idx.push_back(te::select(j < ci(0), lo, te::select(j >= ci(n), hi, j)));
        }
        return x[0](idx);
    }, "MirrorPadOutput", te::ComputeOptions{topi::tag::kInjective, {}, {}});
}

// ---- image.resize2d (NCHW), ONNX Resize semantics ------------------------------------------

TensorType inferResize2d(const std::vector<TensorType>& in, const Attrs& a) {
    checkArity(in, 1);
    TB_USER_CHECK(a.getString("layout", "NCHW") == "NCHW") << "only the NCHW layout is supported";
    TB_USER_CHECK(in[0].shape.size() == 4) << "data must be 4-D NCHW, got " << shapeToString(in[0].shape);
    auto size = a.getInts("size");
    TB_USER_CHECK(size.size() == 2 && size[0] > 0 && size[1] > 0) << "size must be 2 positive extents, got "
                                                                   << shapeToString(size);
    const std::string method = a.getString("method", "linear");
    TB_USER_CHECK(method == "nearest_neighbor" || method == "linear" || method == "cubic")
        << "unknown resize method '" << method << "'";
    TensorType out = in[0];
    out.shape[2] = size[0];
    out.shape[3] = size[1];
    return out;
}

/// Input coordinate (float expression) of output index `x` along one axis, as ONNX defines it
/// (onnx/backend/test/case/node/resize.py): the resized length is the real `inLen * scale`, which
/// differs from the integer output extent when the scale does not divide.
Expr resizeCoord(const std::string& mode, Expr x, int64_t inLen, double scale, double roiStart, double roiEnd) {
    Expr xf = te::cast(te::DType::Float32, x);
    const double outLen = double(inLen) * scale;
    if (mode == "half_pixel") return (xf + cf(0.5)) / cf(scale) - cf(0.5);
    if (mode == "pytorch_half_pixel") return outLen > 1 ? (xf + cf(0.5)) / cf(scale) - cf(0.5) : cf(0.0);
    if (mode == "align_corners") return outLen == 1 ? cf(0.0) : xf * cf(double(inLen - 1) / (outLen - 1));
    if (mode == "asymmetric") return xf / cf(scale);
    if (mode == "tf_half_pixel_for_nn") return (xf + cf(0.5)) / cf(scale);
    if (mode == "tf_crop_and_resize")
        return outLen > 1 ? cf(roiStart * double(inLen - 1)) + xf * cf((roiEnd - roiStart) * double(inLen - 1) / (outLen - 1))
                          : cf(0.5 * (roiStart + roiEnd) * double(inLen - 1));
    TB_USER_ERROR() << "unknown coordinate_transformation_mode '" << mode << "'";
}

Expr clampIndex(Expr i, int64_t n) { return te::min(te::max(i, ci(0)), ci(n - 1)); }
Expr toIndex(Expr f) { return te::cast(te::DType::Int32, f); }

Tensor lowerResize2d(const std::vector<Tensor>& x, const Attrs& a) {
    const Tensor& data = x[0];
    const TensorType t = inferResize2d({{data.shape(), data.dtype()}}, a);
    const Shape& in = data.shape();
    const std::string method = a.getString("method", "linear");
    const std::string ctm = a.getString("coordinate_transformation_mode", "half_pixel");
    std::string rounding = a.getString("rounding_method", "");
    if (rounding.empty()) rounding = "round_prefer_floor";
    const double alpha = a.getFloat("cubic_alpha", -0.75);
    const bool exclude = a.getInt("cubic_exclude", 0) != 0;
    const double extrapolation = a.getFloat("extrapolation_value", 0.0);
    std::vector<double> roi = a.has("roi") ? a.getFloats("roi") : std::vector<double>{0, 0, 1, 1};
    TB_USER_CHECK(roi.size() == 4) << "roi needs 4 values (start h, start w, end h, end w)";
    std::vector<double> scale;
    if (a.has("scale")) {
        scale = a.getFloats("scale");
        TB_USER_CHECK(scale.size() == 2 && scale[0] > 0 && scale[1] > 0) << "scale needs 2 positive values";
    } else {  // Relay: the ratio of the sizes
        scale = {double(t.shape[2]) / double(in[2]), double(t.shape[3]) / double(in[3])};
    }
    const bool crop = ctm == "tf_crop_and_resize";
    // topi's resize2d (TVM semantics) maps coordinates with the size ratio in float32, in another
    // order of operations than ONNX. For upsampling by a power of two in a mode without the real
    // resized length both are exact and agree: use topi there (the FPN necks of detectors).
    auto pow2Factor = [&](int d) {
        const int64_t f = t.shape[size_t(d)] / in[size_t(d)];
        return f >= 1 && f * in[size_t(d)] == t.shape[size_t(d)] && (f & (f - 1)) == 0 &&
               std::fabs(scale[size_t(d - 2)] - double(f)) < 1e-12;
    };
    if (pow2Factor(2) && pow2Factor(3) && method != "cubic" &&
        (ctm == "asymmetric" || ctm == "half_pixel" || ctm == "tf_half_pixel_for_nn"))
        return topi::image::resize2d(data, {t.shape[2], t.shape[3]}, "NCHW", method, ctm, rounding);

    return te::compute(t.shape, {"i0", "i1", "i2", "i3"}, [&](const std::vector<Var>& v) {
        Expr cy = resizeCoord(ctm, v[2], in[2], scale[0], roi[0], roi[2]);
        Expr cx = resizeCoord(ctm, v[3], in[3], scale[1], roi[1], roi[3]);
        auto load = [&](Expr iy, Expr ix) { return data(v[0], v[1], iy, ix); };
        Expr value;
        if (method == "nearest_neighbor") {
            auto round = [&](Expr c) -> Expr {
                if (rounding == "floor") return te::floor(c);
                if (rounding == "ceil") return te::ceil(c);
                if (rounding == "round_prefer_ceil") return te::floor(c + cf(0.5));
                if (rounding == "round_prefer_floor") return te::ceil(c - cf(0.5));
                if (rounding == "round") return te::round(c);
                TB_USER_ERROR() << "unknown rounding_method '" << rounding << "'";
            };
            value = load(clampIndex(toIndex(round(cy)), in[2]), clampIndex(toIndex(round(cx)), in[3]));
        } else if (method == "linear") {
            auto clampF = [&](Expr c, int64_t n) { return te::min(te::max(c, cf(0.0)), cf(double(n - 1))); };
            Expr y = crop ? cy : clampF(cy, in[2]);
            Expr xx = crop ? cx : clampF(cx, in[3]);
            Expr y0f = te::floor(y), x0f = te::floor(xx);
            Expr y0 = clampIndex(toIndex(y0f), in[2]), x0 = clampIndex(toIndex(x0f), in[3]);
            Expr y1 = clampIndex(toIndex(y0f) + ci(1), in[2]), x1 = clampIndex(toIndex(x0f) + ci(1), in[3]);
            Expr dy = y - y0f, dx = xx - x0f;
            Expr top = load(y0, x0) * (cf(1.0) - dx) + load(y0, x1) * dx;
            Expr bottom = load(y1, x0) * (cf(1.0) - dx) + load(y1, x1) * dx;
            value = top * (cf(1.0) - dy) + bottom * dy;
        } else {  // cubic, as ONNX Runtime: 4x4 taps, edge-clamped or excluded outside
            auto weights = [&](Expr s) {
                Expr A = cf(alpha);
                Expr s1 = s + cf(1.0), s2 = cf(1.0) - s, s3 = cf(2.0) - s;
                return std::vector<Expr>{
                    ((A * s1 - cf(5.0) * A) * s1 + cf(8.0) * A) * s1 - cf(4.0) * A,
                    ((A + cf(2.0)) * s - (A + cf(3.0))) * s * s + cf(1.0),
                    ((A + cf(2.0)) * s2 - (A + cf(3.0))) * s2 * s2 + cf(1.0),
                    ((A * s3 - cf(5.0) * A) * s3 + cf(8.0) * A) * s3 - cf(4.0) * A};
            };
            Expr yf = te::floor(cy), xf = te::floor(cx);
            auto wy = weights(cy - yf), wx = weights(cx - xf);
            Expr yi = toIndex(yf), xi = toIndex(xf);
            auto inside = [&](Expr i, int64_t n) {
                return te::select(te::logicalAnd(i >= ci(0), i < ci(n)), cf(1.0), cf(0.0));
            };
            Expr wysum = cf(0.0), wxsum = cf(0.0);
            std::vector<Expr> wyk(4), wxk(4);
            for (int k = 0; k < 4; ++k) {
                wyk[size_t(k)] = exclude ? wy[size_t(k)] * inside(yi + ci(k - 1), in[2]) : wy[size_t(k)];
                wxk[size_t(k)] = exclude ? wx[size_t(k)] * inside(xi + ci(k - 1), in[3]) : wx[size_t(k)];
                wysum = wysum + wyk[size_t(k)];
                wxsum = wxsum + wxk[size_t(k)];
            }
            Expr acc = cf(0.0);
            for (int r = 0; r < 4; ++r) {
                Expr row = cf(0.0);
                for (int c = 0; c < 4; ++c)
                    row = row + wxk[size_t(c)] * load(clampIndex(yi + ci(r - 1), in[2]), clampIndex(xi + ci(c - 1), in[3]));
                acc = acc + wyk[size_t(r)] * row;
            }
            value = exclude ? acc / (wysum * wxsum) : acc;
        }
        if (crop) {
            Expr outside = te::logicalOr(te::logicalOr(cy < cf(0.0), cy > cf(double(in[2] - 1))),
                                         te::logicalOr(cx < cf(0.0), cx > cf(double(in[3] - 1))));
            value = te::ifThenElse(outside, cf(extrapolation), value);
        }
        return value;
    }, "resize", te::ComputeOptions{topi::tag::kInjective, {}, {}});
}

// ---- registration ---------------------------------------------------------------------------

OpDef def(const char* name, OpPattern p, std::function<TensorType(const std::vector<TensorType>&, const Attrs&)> infer,
          std::function<Tensor(const std::vector<Tensor>&, const Attrs&)> lower) {
    OpDef d;
    d.name = name;
    d.pattern = p;
    d.inferType = std::move(infer);
    d.lower = std::move(lower);
    return d;
}

}  // namespace

void registerExtraOps(OpTable& t) {
    using P = OpPattern;
    std::set<std::string> existing;
    for (const auto& d : t.defs) existing.insert(d.name);
    auto add = [&](OpDef d) {
        if (!existing.count(d.name)) t.add(std::move(d));
    };
    auto unary = [&](const char* name, Tensor (*f)(const Tensor&, const std::string&), const char* stage) {
        std::string s = stage;
        add(def(name, P::ElemWise, sameAsInput, [f, s](const std::vector<Tensor>& x, const Attrs&) { return f(x[0], s); }));
    };
    unary("erf", topi::erf, "T_erf");
    unary("log", topi::log, "T_log");
    unary("abs", topi::abs, "T_abs");
    unary("floor", topi::floor, "T_floor");
    unary("ceil", topi::ceil, "T_ceil");
    unary("round", topi::round, "T_round");
    // Same stage as topi::negative (`T_negative(ax...) = (0f - x[ax...])`), built here because
    // topi::negative goes through te's unary operator- (engine/te/expr.h), which reads its argument
    // after moving from it when GCC evaluates the call's arguments right to left.
    add(def("negative", P::ElemWise, sameAsInput, [](const std::vector<Tensor>& x, const Attrs&) {
        return te::compute(x[0].shape(), te::axisNames(x[0].ndim(), "ax"), [&](const std::vector<Var>& v) {
            Expr e = x[0](std::vector<Expr>(v.begin(), v.end()));
            const te::DType t = e.dtype();
            return te::sub(te::makeConst(t, 0), std::move(e));
        }, "T_negative", te::ComputeOptions{topi::tag::kElementWise, {}, {}});
    }));
    unary("tanh", topi::tanh, "T_tanh");
    unary("exp", topi::exp, "T_exp");
    unary("sqrt", topi::sqrt, "T_sqrt");
    unary("sigmoid", topi::sigmoid, "T_sigmoid");
    add(def("nn.leaky_relu", P::ElemWise, sameAsInput, [](const std::vector<Tensor>& x, const Attrs& a) {
        return topi::leakyRelu(x[0], a.getFloat("alpha", 0.01));
    }));
    // HardSigmoid / HardSwish as one node each (TVM's frontend emits the same stages as a chain).
    add(def("hard_sigmoid", P::ElemWise, sameAsInput, [](const std::vector<Tensor>& x, const Attrs& a) {
        return topi::hardSigmoid(x[0], a.getFloat("alpha", 0.2), a.getFloat("beta", 0.5));
    }));
    add(def("hard_swish", P::ElemWise, sameAsInput,
            [](const std::vector<Tensor>& x, const Attrs&) { return topi::hardSwish(x[0]); }));
    add(def("power", P::Broadcast, inferBroadcast,
            [](const std::vector<Tensor>& x, const Attrs&) { return topi::power(x[0], x[1]); }));
    add(def("maximum", P::Broadcast, inferBroadcast,
            [](const std::vector<Tensor>& x, const Attrs&) { return topi::maximum(x[0], x[1]); }));
    add(def("minimum", P::Broadcast, inferBroadcast,
            [](const std::vector<Tensor>& x, const Attrs&) { return topi::minimum(x[0], x[1]); }));
    add(def("mean", P::CommReduce, inferReduce, lowerReduce(topi::mean)));
    add(def("sum", P::CommReduce, inferReduce, lowerReduce(topi::sum)));
    add(def("max", P::CommReduce, inferReduce, lowerReduce(topi::max)));
    add(def("min", P::CommReduce, inferReduce, lowerReduce(topi::min)));
    add(def("strided_slice", P::Injective, inferStridedSlice, lowerStridedSlice));
    add(def("take", P::Injective, inferTake, lowerTake));
    add(def("broadcast_to", P::Broadcast, inferBroadcastTo, lowerBroadcastTo));
    add(def("nn.log_softmax", P::OutEWiseFusable,
            [](const std::vector<TensorType>& in, const Attrs& a) {
                checkArity(in, 1);
                normAxis(a.getInt("axis", -1), in[0].shape.size());
                return in[0];
            },
            lowerLogSoftmax));
    add(def("where", P::Broadcast, inferWhere, lowerWhere));
    add(def("nn.mirror_pad", P::Injective, inferMirrorPad, lowerMirrorPad));
    add(def("image.resize2d", P::Injective, inferResize2d, lowerResize2d));
}

}  // namespace tb::graph
