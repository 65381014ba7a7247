// SPDX-License-Identifier: Apache-2.0
#include "engine/topi/nn/pad.h"

#include "engine/topi/detail.h"
#include "engine/topi/tags.h"

namespace tb::topi::nn {

using namespace te;
using detail::ci;

Tensor pad(const Tensor& data, const std::vector<int64_t>& padBefore, std::vector<int64_t> padAfter, double padValue,
           const std::string& name, const std::map<std::string, AttrValue>& attrs) {
    const char* op = "topi.nn.pad";
    TB_USER_CHECK(bool(data)) << op << ": input 'data' is not defined";
    const size_t n = data.ndim();
    if (padAfter.empty()) padAfter = padBefore;
    TB_USER_CHECK(padBefore.size() == n) << op << ": input dimension and pad_before mismatch: " << n << " vs "
                                         << padBefore.size();
    TB_USER_CHECK(padAfter.size() == n) << op << ": input dimension and pad_after mismatch: " << n << " vs "
                                        << padAfter.size();
    detail::checkAtLeast(padBefore, 0, op, "pad_before");
    detail::checkAtLeast(padAfter, 0, op, "pad_after");
    std::vector<int64_t> outShape;
    for (size_t i = 0; i < n; ++i) outShape.push_back(data.shape()[i] + padBefore[i] + padAfter[i]);
    const DType dt = data.dtype();
    ComputeOptions opts;
    opts.tag = tag::kPad;
    opts.attrs = attrs;
    return compute(outShape, axisNames(n, "i"), [&](const std::vector<Var>& idx) {
        std::vector<Expr> notZero, indexTuple;
        for (size_t i = 0; i < n; ++i) {
            if (padBefore[i] == 0 && padAfter[i] == 0) {
                indexTuple.push_back(idx[i]);
            } else {
                indexTuple.push_back(idx[i] - ci(padBefore[i]));
                notZero.push_back(idx[i] >= ci(padBefore[i]));
                notZero.push_back(idx[i] < ci(data.shape()[i] + padBefore[i]));
            }
        }
        if (notZero.empty()) return data(indexTuple);
        Expr cond = notZero[0];  // tvm.tir.all: left fold
        for (size_t k = 1; k < notZero.size(); ++k) cond = logicalAnd(cond, notZero[k]);
        return ifThenElse(cond, data(indexTuple), makeConst(dt, padValue));
    }, name, opts);
}

Tensor dilate(const Tensor& data, const std::vector<int64_t>& strides, double dilationValue, const std::string& name) {
    const char* op = "topi.nn.dilate";
    TB_USER_CHECK(bool(data)) << op << ": input 'data' is not defined";
    const size_t n = data.ndim();
    TB_USER_CHECK(strides.size() == n) << op << ": data dimension and strides size mismatch: " << n << " vs "
                                       << strides.size();
    detail::checkAtLeast(strides, 1, op, "strides");
    std::vector<int64_t> outShape;
    for (size_t i = 0; i < n; ++i) outShape.push_back((data.shape()[i] - 1) * strides[i] + 1);
    const DType dt = data.dtype();
    return compute(outShape, axisNames(n, "i"), [&](const std::vector<Var>& idx) {
        std::vector<Expr> notZero, indexTuple;
        for (size_t i = 0; i < n; ++i) {
            if (strides[i] != 1) {
                indexTuple.push_back(floordiv(idx[i], ci(strides[i])));
                notZero.push_back(eq(floormod(idx[i], ci(strides[i])), ci(0)));
            } else {
                indexTuple.push_back(idx[i]);
            }
        }
        if (notZero.empty()) return data(indexTuple);
        Expr cond = notZero[0];
        for (size_t k = 1; k < notZero.size(); ++k) cond = logicalAnd(cond, notZero[k]);
        return ifThenElse(cond, data(indexTuple), makeConst(dt, dilationValue));
    }, name, ComputeOptions{tag::kDilate, {}, {}});
}

}  // namespace tb::topi::nn
