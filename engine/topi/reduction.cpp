// SPDX-License-Identifier: Apache-2.0
#include "engine/topi/reduction.h"

#include <algorithm>

#include "engine/topi/broadcast.h"
#include "engine/topi/detail.h"
#include "engine/topi/tags.h"

namespace tb::topi {

using namespace te;

namespace {

std::vector<int> realAxis(size_t ndim, const std::optional<std::vector<int>>& axis, const char* op) {
    std::vector<int> r;
    if (!axis) {
        for (size_t i = 0; i < ndim; ++i) r.push_back(int(i));
        return r;
    }
    for (int a : *axis) r.push_back(detail::normalizeAxis(a, ndim, op));
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    return r;
}

// topi::CommReduce / DoCommReduce.
Tensor commReduce(const Tensor& data, const std::optional<std::vector<int>>& axis, bool keepdims, ReduceKind kind,
                  const char* op) {
    TB_USER_CHECK(bool(data)) << op << ": input is not defined";
    TB_USER_CHECK(data.ndim() > 0) << op << ": cannot reduce a 0-d tensor";
    const std::vector<int> axes = realAxis(data.ndim(), axis, op);
    auto reduced = [&](size_t i) { return std::find(axes.begin(), axes.end(), int(i)) != axes.end(); };
    std::vector<int64_t> target;
    for (size_t i = 0; i < data.ndim(); ++i) {
        if (!reduced(i))
            target.push_back(data.shape()[i]);
        else if (keepdims)
            target.push_back(1);
    }
    std::vector<IterVar> rAxes;
    for (int i : axes) rAxes.push_back(reduceAxis(data.shape()[size_t(i)], "k" + std::to_string(i)));
    return compute(target, axisNames(target.size(), "ax"), [&](const std::vector<Var>& v) {
        std::vector<Expr> evalRange;
        size_t arg = 0, red = 0;
        for (size_t i = 0; i < data.ndim(); ++i) {
            if (reduced(i)) {
                evalRange.push_back(rAxes[red++].var);
                if (keepdims) ++arg;
                continue;
            }
            evalRange.push_back(v[arg++]);
        }
        return reduce(kind, data(evalRange), rAxes);
    }, data.name() + "_red", ComputeOptions{tag::kCommReduce, {}, {}});
}

}  // namespace

Tensor sum(const Tensor& data, const std::optional<std::vector<int>>& axis, bool keepdims) {
    return commReduce(data, axis, keepdims, ReduceKind::Sum, "topi.sum");
}
Tensor max(const Tensor& data, const std::optional<std::vector<int>>& axis, bool keepdims) {
    return commReduce(data, axis, keepdims, ReduceKind::Max, "topi.max");
}
Tensor min(const Tensor& data, const std::optional<std::vector<int>>& axis, bool keepdims) {
    return commReduce(data, axis, keepdims, ReduceKind::Min, "topi.min");
}

Tensor mean(const Tensor& data, const std::optional<std::vector<int>>& axis, bool keepdims) {
    Tensor s = commReduce(data, axis, keepdims, ReduceKind::Sum, "relay.mean");
    int64_t count = 1;
    for (int i : realAxis(data.ndim(), axis, "relay.mean")) count *= data.shape()[size_t(i)];
    return divide(s, makeConst(data.dtype(), double(count)));
}

}  // namespace tb::topi
