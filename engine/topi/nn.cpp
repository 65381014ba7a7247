// SPDX-License-Identifier: Apache-2.0
#include "engine/topi/nn.h"

#include "engine/topi/broadcast.h"
#include "engine/topi/detail.h"
#include "engine/topi/tags.h"
#include "engine/topi/transform.h"

namespace tb::topi {

using namespace te;
using detail::ci;

Tensor relu(const Tensor& x, const std::string& name) {
    TB_USER_CHECK(bool(x)) << "topi.nn.relu: input is not defined";
    return compute(x.shape(), axisNames(x.ndim(), "ax"), [&](const std::vector<Var>& v) {
        return max(x(detail::asExprs(v)), makeConst(x.dtype(), 0));
    }, name, ComputeOptions{tag::kElementWise, {}, {}});
}

Tensor leakyRelu(const Tensor& x, double alpha, const std::string& name) {
    TB_USER_CHECK(bool(x)) << "topi.nn.leaky_relu: input is not defined";
    return compute(x.shape(), axisNames(x.ndim(), "ax"), [&](const std::vector<Var>& v) {
        Expr value = x(detail::asExprs(v));
        return select(value > ci(0), value, value * makeConst(value.dtype(), alpha));
    }, name, ComputeOptions{tag::kElementWise, {}, {}});
}

Tensor prelu(const Tensor& x, const Tensor& slope, int axis, const std::string& name) {
    const char* op = "topi.nn.prelu";
    TB_USER_CHECK(bool(x)) << op << ": input 'x' is not defined";
    detail::checkRank(slope, 1, op, "slope");
    int ax = detail::normalizeAxis(axis, x.ndim(), op);
    TB_USER_CHECK(slope.shape()[0] == x.shape()[size_t(ax)])
        << op << ": slope has " << slope.shape()[0] << " elements but x has " << x.shape()[size_t(ax)]
        << " along axis " << ax;
    return compute(x.shape(), axisNames(x.ndim(), "ax"), [&](const std::vector<Var>& v) {
        Expr value = x(detail::asExprs(v));
        return select(value > ci(0), value, value * slope(v[size_t(ax)]));
    }, name, ComputeOptions{tag::kBroadcast, {}, {}});
}

Tensor pad(const Tensor& t, const std::vector<int64_t>& padBefore, std::vector<int64_t> padAfter,
           const Expr& padValue, const std::string& name) {
    const char* op = "topi.pad";
    TB_USER_CHECK(bool(t)) << op << ": input is not defined";
    TB_USER_CHECK(!padBefore.empty() && padBefore.size() <= t.ndim())
        << op << ": pad_before needs 1 to " << t.ndim() << " values, got " << padBefore.size();
    for (size_t i = padAfter.size(); i < padBefore.size(); ++i) padAfter.push_back(padBefore[i]);
    TB_USER_CHECK(padAfter.size() == padBefore.size())
        << op << ": pad_after has " << padAfter.size() << " values, pad_before " << padBefore.size();
    detail::checkAtLeast(padBefore, 0, op, "pad_before");
    detail::checkAtLeast(padAfter, 0, op, "pad_after");
    std::vector<int64_t> outShape = t.shape();
    for (size_t i = 0; i < padBefore.size(); ++i) outShape[i] += padBefore[i] + padAfter[i];
    Expr value = padValue ? cast(t.dtype(), padValue) : makeConst(t.dtype(), 0);
    return compute(outShape, axisNames(t.ndim(), "ax"), [&](const std::vector<Var>& v) {
        std::vector<Expr> indices, sel;
        for (size_t i = 0; i < t.ndim(); ++i) {
            if (i >= padBefore.size()) {
                indices.push_back(v[i]);
                continue;
            }
            if (padBefore[i] != 0) {
                sel.push_back(v[i] >= ci(padBefore[i]));
                indices.push_back(v[i] - ci(padBefore[i]));
            } else {
                indices.push_back(v[i]);
            }
            if (padAfter[i] != 0) sel.push_back(v[i] < ci(padBefore[i] + t.shape()[i]));
        }
        if (sel.empty()) return t(indices);
        Expr cond = boolImm(true);  // foldl(logical_and, const_true(1), sel)
        for (const auto& s : sel) cond = logicalAnd(cond, s);
        return ifThenElse(cond, t(indices), value);
    }, name, ComputeOptions{tag::kElementWise, {}, {}});
}

namespace nn {
Tensor biasAdd(const Tensor& data, const Tensor& bias, int axis) {
    const char* op = "relay.nn.bias_add";
    TB_USER_CHECK(bool(data)) << op << ": input 'data' is not defined";
    detail::checkRank(bias, 1, op, "bias");
    int ax = detail::normalizeAxis(axis, data.ndim(), op);
    TB_USER_CHECK(bias.shape()[0] == data.shape()[size_t(ax)])
        << op << ": bias has " << bias.shape()[0] << " elements but data has " << data.shape()[size_t(ax)]
        << " along axis " << ax;
    int newAxes = int(data.ndim()) - ax - 1;
    return topi::add(data, newAxes > 0 ? expandDims(bias, 1, newAxes) : bias);
}
}  // namespace nn

}  // namespace tb::topi
