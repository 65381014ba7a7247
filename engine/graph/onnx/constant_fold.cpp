// SPDX-License-Identifier: Apache-2.0
// Constant tensors of the ONNX importer: builders, broadcasting, element-wise folding and the
// Gather/Transpose/Slice index helpers (see constant_fold.h).
#include "engine/graph/onnx/constant_fold.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "engine/support/error.h"

namespace tb::graph::onnx_detail {

std::string shapeStr(const Shape& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

int64_t product(const Shape& s, size_t from, size_t to) {
    int64_t n = 1;
    for (size_t i = from; i < std::min(to, s.size()); ++i)
        TB_USER_CHECK(!__builtin_mul_overflow(n, s[i], &n)) << "shape " << shapeStr(s) << " has more than 2^63 elements";
    return n;
}

int64_t foldedCount(const Shape& s) {
    for (int64_t d : s) TB_USER_CHECK(d >= 0) << "constant of shape " << shapeStr(s) << ": negative extent " << d;
    const int64_t n = product(s);
    TB_USER_CHECK(n <= kMaxFoldedElements)
        << "a constant of shape " << shapeStr(s) << " (" << n << " elements) would be built at import, more than the "
        << kMaxFoldedElements << " elements (2^26) a folded constant may have";
    return n;
}

bool isFloatData(const ConstantData& c) { return te::isFloat(c.type.dtype); }
double valueAt(const ConstantData& c, size_t k) { return isFloatData(c) ? double(c.f[k]) : double(c.i[k]); }

CPtr makeInts(Shape shape, std::vector<int64_t> v, DType t) {
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
/// `v` truncated towards zero as an int64; UserError when it is NaN or outside int64's range (a
/// float cast to an integer type, or a folded integer op that overflowed, in a hostile model).
static int64_t toInt64Checked(double v) {
    // +-2^63 are exact in double; every double in [-2^63, 2^63) truncates into int64's range.
    TB_USER_CHECK(std::isfinite(v) && v >= -9223372036854775808.0 && v < 9223372036854775808.0)
        << "constant folding: value " << v << " does not fit in int64";
    return int64_t(std::trunc(v));
}
/// A constant of `shape` and dtype `t` from doubles (ints truncated towards zero).
CPtr makeFrom(Shape shape, DType t, const std::vector<double>& v) {
    if (te::isFloat(t)) return makeFloats(std::move(shape), std::vector<float>(v.begin(), v.end()));
    std::vector<int64_t> iv(v.size());
    for (size_t k = 0; k < v.size(); ++k) iv[k] = t == DType::Bool ? (v[k] != 0) : toInt64Checked(v[k]);
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
    for (float f : c.f) out.push_back(toInt64Checked(f));
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
    std::vector<size_t> idx(size_t(foldedCount(out)));
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
    std::vector<double> res(size_t(foldedCount(out)));
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
    const int64_t total = foldedCount(out);
    idx.reserve(size_t(total));
    Shape pos(n, 0);
    for (int64_t k = 0; k < total; ++k) {
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
    for (int64_t k = 0, total = foldedCount(s.outShape); k < total; ++k) {
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

}  // namespace tb::graph::onnx_detail
