// SPDX-License-Identifier: Apache-2.0
// ONNX converters for element-wise operators: unary/binary math, comparisons, Where, Cast,
// the variadic Sum/Mean/Max/Min and the Reduce* family; each folds at import when its inputs
// are constant (TVM python/tvm/relay/frontend/onnx.py: Elemwise, Reduce, Cast, Where).
#include "engine/graph/onnx/importer.h"

#include <algorithm>
#include <cmath>

namespace tb::graph::onnx_detail {

namespace {

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

}  // namespace

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

void unary(Importer& im, const NP& n, const std::string& relayOp, const std::function<double(double)>& f, Attrs a) {
    if (im.allConst(n))
        return im.setConst(n, 0, foldElementwise({im.in(n, 0).constant}, DType::Float32,
                                                 [&](const std::vector<double>& v) { return f(v[0]); }));
    im.setNode(n, 0, im.op(n, relayOp, {im.node(n, 0)}, std::move(a)));
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
    TB_USER_CHECK(n.input_size() > 0) << n.op_type() << " needs at least one input";
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

}  // namespace tb::graph::onnx_detail
