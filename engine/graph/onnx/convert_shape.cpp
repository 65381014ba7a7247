// SPDX-License-Identifier: Apache-2.0
// ONNX converters for shape and layout operators: Reshape, Flatten, Squeeze, Unsqueeze, Expand,
// Slice, Split, Gather, Concat, Transpose, Shape, Constant, ConstantOfShape and Range; shape
// arithmetic folds to constants at import (TVM python/tvm/relay/frontend/onnx.py).
#include "engine/graph/onnx/importer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tb::graph::onnx_detail {

namespace {

/// Output a reshape of input 0 (folded when constant).
void emitReshape(Importer& im, const NP& n, const Shape& to) {
    Value& x = im.in(n, 0);
    TB_USER_CHECK(product(to) == product(x.type.shape))
        << "cannot reshape " << shapeStr(x.type.shape) << " into " << shapeStr(to);
    if (x.constant) return im.setConst(n, 0, reshaped(*x.constant, to));
    im.setNode(n, 0, reshapeNode(im, n, im.node(n, 0), to, ""));
}

}  // namespace

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
    TB_USER_CHECK(parts >= 1) << "Split has no outputs";
    if (split.empty()) {
        const int64_t chunk = (xs[size_t(axis)] + parts - 1) / parts;
        for (int64_t k = 0, left = xs[size_t(axis)]; k < parts; ++k, left -= chunk) split.push_back(std::max<int64_t>(0, std::min(chunk, left)));
    }
    TB_USER_CHECK(int64_t(split.size()) == parts) << "split has " << split.size() << " sizes for " << parts << " outputs";
    int64_t total = 0;
    for (int64_t len : split) {
        TB_USER_CHECK(len >= 0 && len <= xs[size_t(axis)]) << "split size " << len << " outside [0, " << xs[size_t(axis)] << "]";
        total += len;
    }
    TB_USER_CHECK(total == xs[size_t(axis)]) << "split sizes add up to " << total << ", not to the axis length " << xs[size_t(axis)];
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
    const int64_t count = foldedCount(shape);
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
    const double steps = std::ceil((limit - start) / delta);
    TB_USER_CHECK(std::isfinite(steps) && steps <= double(kMaxFoldedElements))
        << "Range(" << start << ", " << limit << ", " << delta << ") has " << steps
        << " elements, more than the " << kMaxFoldedElements << " (2^26) a constant folded at import may have";
    const int64_t count = std::max<int64_t>(0, int64_t(steps));
    std::vector<double> v;
    for (int64_t k = 0; k < count; ++k) v.push_back(start + double(k) * delta);
    im.setConst(n, 0, makeFrom({count}, s.type.dtype, v));
}

}  // namespace tb::graph::onnx_detail
