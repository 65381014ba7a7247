// SPDX-License-Identifier: Apache-2.0
#include "engine/topi/nn/softmax.h"

#include "engine/topi/detail.h"

namespace tb::topi::nn {

using namespace te;

namespace {
struct Parts {
    int axis;
    std::vector<int64_t> shape, reduced;
};
Parts parts(const Tensor& x, int axis, const char* op) {
    TB_USER_CHECK(bool(x)) << op << ": input is not defined";
    TB_USER_CHECK(x.ndim() >= 1) << op << ": input must have at least one dimension";
    Parts p;
    p.axis = detail::normalizeAxis(axis, x.ndim(), op);
    p.shape = x.shape();
    for (size_t i = 0; i < p.shape.size(); ++i)
        if (int(i) != p.axis) p.reduced.push_back(p.shape[i]);
    return p;
}
std::vector<Expr> insertReduce(const std::vector<Var>& idx, const Var& k, int axis) {
    std::vector<Expr> out(idx.begin(), idx.begin() + axis);
    out.push_back(k);
    out.insert(out.end(), idx.begin() + axis, idx.end());
    return out;
}
std::vector<Expr> nonReduce(const std::vector<Var>& idx, int axis) {
    std::vector<Expr> out;
    for (size_t i = 0; i < idx.size(); ++i)
        if (int(i) != axis) out.push_back(idx[i]);
    return out;
}
}  // namespace

Tensor softmax(const Tensor& x, int axisArg) {
    Parts p = parts(x, axisArg, "topi.nn.softmax");
    const int axis = p.axis;
    IterVar k1 = reduceAxis(p.shape[size_t(axis)], "k"), k2 = reduceAxis(p.shape[size_t(axis)], "k");
    ComputeOptions opts{"softmax_output", {}, {}};
    Tensor maxElem = compute(p.reduced, axisNames(p.reduced.size(), "i"), [&](const std::vector<Var>& v) {
        return reduceMax(x(insertReduce(v, k1.var, axis)), {k1});
    }, "T_softmax_maxelem", opts);
    Tensor expT = compute(p.shape, axisNames(p.shape.size(), "i"), [&](const std::vector<Var>& v) {
        return te::exp(x(detail::asExprs(v)) - maxElem(nonReduce(v, axis)));
    }, "T_softmax_exp", opts);
    Tensor expSum = compute(p.reduced, axisNames(p.reduced.size(), "i"), [&](const std::vector<Var>& v) {
        return sum(expT(insertReduce(v, k2.var, axis)), {k2});
    }, "T_softmax_expsum", opts);
    ComputeOptions normOpts = opts;
    normOpts.attrs["axis"] = int64_t(axis);
    return compute(p.shape, axisNames(p.shape.size(), "i"), [&](const std::vector<Var>& v) {
        return div(expT(detail::asExprs(v)), expSum(nonReduce(v, axis)));
    }, "T_softmax_norm", normOpts);
}

Tensor logSoftmax(const Tensor& x, int axisArg) {
    Parts p = parts(x, axisArg, "topi.nn.log_softmax");
    const int axis = p.axis;
    IterVar k1 = reduceAxis(p.shape[size_t(axis)], "k"), k2 = reduceAxis(p.shape[size_t(axis)], "k");
    ComputeOptions opts{"log_softmax_output", {}, {}};
    Tensor maxElem = compute(p.reduced, axisNames(p.reduced.size(), "i"), [&](const std::vector<Var>& v) {
        return reduceMax(x(insertReduce(v, k1.var, axis)), {k1});
    }, "T_softmax_maxelem", opts);
    Tensor expSum = compute(p.reduced, axisNames(p.reduced.size(), "i"), [&](const std::vector<Var>& v) {
        return sum(te::exp(x(insertReduce(v, k2.var, axis)) - maxElem(detail::asExprs(v))), {k2});
    }, "compute", opts);
    ComputeOptions outOpts = opts;
    outOpts.attrs["axis"] = int64_t(axis);
    return compute(p.shape, axisNames(p.shape.size(), "i"), [&](const std::vector<Var>& v) {
        std::vector<Expr> nr = nonReduce(v, axis);
        return x(detail::asExprs(v)) - maxElem(nr) - te::log(expSum(nr));
    }, "compute", outOpts);
}

}  // namespace tb::topi::nn
