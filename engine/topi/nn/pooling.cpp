// SPDX-License-Identifier: Apache-2.0
#include "engine/topi/nn/pooling.h"

#include <algorithm>

#include "engine/topi/detail.h"
#include "engine/topi/nn.h"
#include "engine/topi/tags.h"

namespace tb::topi::nn {

using namespace te;
using detail::ci;

namespace {

// find_depth_height_width: positions of D/H/W in a layout such as "NCHW8c" (no split H/W/D).
std::vector<int> findAxes(const std::string& layout, const std::string& wanted, const char* op) {
    std::vector<int> pos(wanted.size(), -1);
    int idx = 0;
    for (char c : layout) {
        if (!std::isalpha(static_cast<unsigned char>(c))) continue;
        size_t w = wanted.find(c);
        if (w != std::string::npos) {
            TB_USER_CHECK(pos[w] < 0) << op << ": layout '" << layout << "' repeats '" << c << "'";
            pos[w] = idx;
        }
        TB_USER_CHECK(c != 'd' && c != 'h' && c != 'w')
            << op << ": layout '" << layout << "' splits a pooled dimension";
        ++idx;
    }
    for (size_t i = 0; i < wanted.size(); ++i)
        TB_USER_CHECK(pos[i] >= 0) << op << ": layout '" << layout << "' has no '" << wanted[i] << "' dimension";
    return pos;
}

int layoutRank(const std::string& layout) {
    return int(std::count_if(layout.begin(), layout.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); }));
}

}  // namespace

Tensor poolNd(const Tensor& x, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
              const std::vector<int64_t>& dilation, const std::vector<int64_t>& padding, PoolType type, bool ceilMode,
              const std::vector<int>& axes, bool countIncludePad) {
    const char* op = type == PoolType::Max ? "topi.nn.max_pool" : "topi.nn.avg_pool";
    TB_USER_CHECK(bool(x)) << op << ": input is not defined";
    const size_t k = kernel.size();
    TB_USER_CHECK(k > 0 && stride.size() == k && dilation.size() == k && axes.size() == k)
        << op << ": kernel, stride, dilation and axes need the same number of values";
    TB_USER_CHECK(padding.size() == 2 * k) << op << ": padding needs " << 2 * k << " values, got "
                                           << shapeToString(padding);
    detail::checkAtLeast(kernel, 1, op, "pool_size");
    detail::checkAtLeast(stride, 1, op, "strides");
    detail::checkAtLeast(dilation, 1, op, "dilation");
    detail::checkAtLeast(padding, 0, op, "padding");
    const auto& dataShape = x.shape();
    std::vector<int64_t> outShape = dataShape, padBefore(x.ndim(), 0), padAfter(x.ndim(), 0);
    std::vector<int64_t> padHead(k), padTail(k), offset(k, 0);
    std::vector<IterVar> daxis;
    bool doPad = false;
    for (size_t i = 0; i < k; ++i) {
        TB_USER_CHECK(axes[i] >= 0 && size_t(axes[i]) < x.ndim()) << op << ": pooled axis out of range";
        const size_t ii = size_t(axes[i]);
        padHead[i] = padding[i];
        padTail[i] = padding[i + k];
        if (ceilMode) {
            offset[i] = stride[i] - 1;
            padTail[i] += offset[i];
        }
        doPad = doPad || padHead[i] != 0 || padTail[i] != 0;
        daxis.push_back(reduceAxis(kernel[i], "rv" + std::to_string(i)));
        padBefore[ii] = padHead[i];
        padAfter[ii] = padTail[i];
        int64_t numerator = dataShape[ii] - (kernel[i] - 1) * dilation[i] - 1 + padHead[i] + padTail[i];
        TB_USER_CHECK(numerator >= 0) << op << ": the window does not fit the input " << shapeToString(dataShape);
        outShape[ii] = numerator / stride[i] + 1;
    }
    const auto names = axisNames(x.ndim(), "ax");
    auto windowIndex = [&](const std::vector<Var>& out) {
        std::vector<Expr> idx = detail::asExprs(out);
        for (size_t i = 0; i < k; ++i) {
            const size_t ii = size_t(axes[i]);
            idx[ii] = out[ii] * ci(stride[i]) + daxis[i].var * ci(dilation[i]);
        }
        return idx;
    };
    if (type == PoolType::Max) {
        Tensor temp = doPad ? topi::pad(x, padBefore, padAfter, minValue(x.dtype()), "pad_temp") : x;
        ComputeOptions opts{"pool_max", {{"schedule_rule", std::string("meta_schedule.pool_max")}}, {}};
        return compute(outShape, names, [&](const std::vector<Var>& v) {
            return reduceMax(temp(windowIndex(v)), daxis);
        }, "pool_max", opts);
    }
    Tensor temp = doPad ? topi::pad(x, padBefore, padAfter, ci(0), "pad_temp") : x;
    Tensor poolSum = compute(outShape, names, [&](const std::vector<Var>& v) {
        return sum(temp(windowIndex(v)), daxis);
    }, "pool_sum", ComputeOptions{"pool_sum", {}, {}});
    ComputeOptions opts{tag::kElementWise, {{"schedule_rule", std::string("meta_schedule.pool_avg")}}, {}};
    return compute(outShape, names, [&](const std::vector<Var>& v) {
        Expr numEl = ci(1);
        for (size_t i = 0; i < k; ++i) {
            const size_t ii = size_t(axes[i]);
            Expr start = v[ii] * ci(stride[i]) - ci(padHead[i]);
            Expr end = start + ci((kernel[i] - 1) * dilation[i]);
            if (countIncludePad) {
                end = min(end, ci(dataShape[ii] + padTail[i] - 1 - offset[i]));
                numEl = numEl * (div(end - start, ci(dilation[i])) + ci(1));
            } else {
                Expr jumps = div(ci(dilation[i] - 1) - start, ci(dilation[i]));
                jumps = max(jumps, ci(0));
                end = min(end, ci(dataShape[ii] - 1));
                numEl = numEl * (div(end - (start + ci(dilation[i]) * jumps), ci(dilation[i])) + ci(1));
            }
        }
        if (!countIncludePad) numEl = max(numEl, ci(1));
        return div(poolSum(detail::asExprs(v)), numEl);
    }, "pool_avg", opts);
}

Tensor pool2d(const Tensor& x, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
              const std::vector<int64_t>& dilation, const std::vector<int64_t>& padding, PoolType type, bool ceilMode,
              const std::string& layout, bool countIncludePad) {
    const char* op = type == PoolType::Max ? "topi.nn.max_pool2d" : "topi.nn.avg_pool2d";
    TB_USER_CHECK(bool(x)) << op << ": input is not defined";
    TB_USER_CHECK(layoutRank(layout) == int(x.ndim()))
        << op << ": layout '" << layout << "' does not describe the input " << shapeToString(x.shape());
    std::vector<int> axes = findAxes(layout, "HW", op);
    std::vector<int64_t> pad4;
    switch (padding.size()) {
        case 1: pad4 = {padding[0], padding[0], padding[0], padding[0]}; break;
        case 2: pad4 = {padding[0], padding[1], padding[0], padding[1]}; break;
        case 4: pad4 = padding; break;
        default: TB_USER_ERROR() << op << ": padding needs 1, 2 or 4 values, got " << shapeToString(padding);
    }
    return poolNd(x, detail::expandTuple(kernel, 2, op, "pool_size"), detail::expandTuple(stride, 2, op, "strides"),
                  detail::expandTuple(dilation, 2, op, "dilation"), pad4, type, ceilMode, axes, countIncludePad);
}

Tensor adaptivePool(const Tensor& x, const std::vector<int64_t>& outputSize, PoolType type, const std::string& layout,
                    const AdaptivePoolNames& names) {
    const char* op = type == PoolType::Max ? "topi.nn.adaptive_max_pool" : "topi.nn.adaptive_avg_pool";
    TB_USER_CHECK(bool(x)) << op << ": input is not defined";
    TB_USER_CHECK(layoutRank(layout) == int(x.ndim()))
        << op << ": layout '" << layout << "' does not describe the input " << shapeToString(x.shape());
    const std::string wanted = outputSize.size() == 3 ? "DHW" : outputSize.size() == 2 ? "HW" : "W";
    TB_USER_CHECK(outputSize.size() >= 1 && outputSize.size() <= 3)
        << op << ": output_size needs 1 to 3 values, got " << shapeToString(outputSize);
    const std::vector<int> axes = findAxes(layout, wanted, op);
    const size_t nDim = axes.size();
    std::vector<int64_t> outShape = x.shape(), inSize;
    for (size_t i = 0; i < nDim; ++i) {
        const int64_t in = x.shape()[size_t(axes[i])], out = outputSize[i];
        TB_USER_CHECK(out >= 1 && in % out == 0)
            << op << ": output size " << out << " must divide the input extent " << in
            << " (non-uniform adaptive windows are not supported)";
        inSize.push_back(in);
        outShape[size_t(axes[i])] = out;
    }
    // start_index / end_index with TVM's folding; end is a raw Select (printed unfolded).
    auto startIndex = [&](const Expr& o, size_t i) { return floordiv(o * ci(inSize[i]), ci(outputSize[i])); };
    auto endIndex = [&](const Expr& o, size_t i) {
        Expr tmp = floordiv((o + ci(1)) * ci(inSize[i]), ci(outputSize[i]));
        return select(eq(floormod((o + ci(1)) * ci(inSize[i]), ci(outputSize[i])), ci(0)), tmp, tmp + ci(1));
    };
    const auto axisN = axisNames(x.ndim(), "ax");
    // Each compute makes its own reduce axes (get_iter_vars is called per stage).
    auto reduceAxes = [&]() {
        std::vector<IterVar> r;
        for (size_t i = 0; i < nDim; ++i) r.push_back(reduceAxis(inSize[i] / outputSize[i], "rv" + std::to_string(i)));
        return r;
    };
    auto windowIndex = [&](const std::vector<Var>& v, const std::vector<IterVar>& r) {
        std::vector<Expr> idx = detail::asExprs(v);
        for (size_t i = 0; i < nDim; ++i) idx[size_t(axes[i])] = startIndex(v[size_t(axes[i])], i) + r[i].var;
        return idx;
    };
    if (type == PoolType::Max) {
        ComputeOptions opts{"adaptive_pool_max", {{"schedule_rule", std::string("meta_schedule.adaptive_pool_max")}}, {}};
        return compute(outShape, axisN, [&](const std::vector<Var>& v) {
            auto r = reduceAxes();
            return reduceMax(x(windowIndex(v, r)), r);
        }, names.max, opts);
    }
    Tensor poolSum = compute(outShape, axisN, [&](const std::vector<Var>& v) {
        auto r = reduceAxes();
        return sum(x(windowIndex(v, r)), r);
    }, names.sum, ComputeOptions{"adaptive_pool_sum", {}, {}});
    ComputeOptions opts{tag::kElementWise, {{"schedule_rule", std::string("meta_schedule.adaptive_pool_avg")}}, {}};
    return compute(outShape, axisN, [&](const std::vector<Var>& v) {
        Expr divisor = te::cast(x.dtype(), ci(1));
        for (size_t i = 0; i < nDim; ++i) {
            const Expr& o = v[size_t(axes[i])];
            divisor = divisor * te::cast(x.dtype(), endIndex(o, i) - startIndex(o, i));
        }
        return div(poolSum(detail::asExprs(v)), divisor);
    }, names.avg, opts);
}

Tensor globalPool(const Tensor& x, PoolType type, const std::string& layout, const AdaptivePoolNames& names) {
    return adaptivePool(x, {1, 1}, type, layout, names);
}

}  // namespace tb::topi::nn
