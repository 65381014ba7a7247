// SPDX-License-Identifier: Apache-2.0
// ONNX converters for neural-network operators: Conv, ConvTranspose, Gemm/MatMul, pooling,
// BatchNormalization, Softmax/LogSoftmax, Clip, HardSigmoid/HardSwish, Resize/Upsample and Pad
// (TVM python/tvm/relay/frontend/onnx.py: Conv, ConvTranspose, Gemm, MatMul, Pool, ...).
#include "engine/graph/onnx/importer.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tb::graph::onnx_detail {

namespace {

NodeId clipNode(Importer& im, const NP& n, NodeId x, double lo, double hi, const std::string& suffix) {
    Attrs a;
    a.set("a_min", lo);
    a.set("a_max", hi);
    return im.op(n, "clip", {x}, a, suffix);
}

/// A per-spatial-axis attribute of a 2-D window op (strides, dilations, output_padding): exactly two
/// values, each at least `minValue`; a UserError naming the attribute otherwise.
Shape attrPair(Importer& im, const NP& n, const char* name, const Shape& def, int64_t minValue) {
    Shape v = im.attrInts(n, name, def);
    TB_USER_CHECK(v.size() == 2) << "attribute '" << name << "' must have 2 values for a 2-D window, got " << v.size();
    for (int64_t x : v) TB_USER_CHECK(x >= minValue) << "attribute '" << name << "' must be >= " << minValue << ", got " << x;
    return v;
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

}  // namespace

void convertConv(Importer& im, const NP& n) {
    const Shape& xs = im.shape(n, 0);
    const Shape& ws = im.shape(n, 1);
    requireRank4(xs, "convolution");
    TB_USER_CHECK(ws.size() == 4) << "weight must be 4-D OIHW, got " << shapeStr(ws);
    const int64_t groups = im.attrInt(n, "group", 1);
    Shape strides = attrPair(im, n, "strides", {1, 1}, 1);
    Shape dil = attrPair(im, n, "dilations", {1, 1}, 1);
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
    Shape strides = attrPair(im, n, "strides", {1, 1}, 1);
    Shape dil = attrPair(im, n, "dilations", {1, 1}, 1);
    Shape opad = attrPair(im, n, "output_padding", {0, 0}, 0);
    Shape kernel = {ws[2], ws[3]};
    std::vector<int64_t> pads = im.attrInts(n, "pads", {0, 0, 0, 0});
    TB_USER_CHECK(pads.size() == 4) << "expects 4 pads for a 2-D window, got " << pads.size();
    Shape outShape = im.attrInts(n, "output_shape");
    TB_USER_CHECK(outShape.empty() || outShape.size() >= 2)
        << "attribute 'output_shape' must give at least the 2 spatial sizes, got " << outShape.size();
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
    Shape kernel = attrPair(im, n, "kernel_shape", {}, 1);
    Shape strides = attrPair(im, n, "strides", {1, 1}, 1);
    Shape dil = attrPair(im, n, "dilations", {1, 1}, 1);
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

}  // namespace tb::graph::onnx_detail
