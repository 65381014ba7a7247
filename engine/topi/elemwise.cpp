// SPDX-License-Identifier: Apache-2.0
#include "engine/topi/elemwise.h"

#include "engine/topi/broadcast.h"
#include "engine/topi/detail.h"
#include "engine/topi/tags.h"

namespace tb::topi {

using namespace te;

namespace {
Tensor unary(const Tensor& x, const std::string& name, const char* op, Expr (*fn)(Expr)) {
    TB_USER_CHECK(bool(x)) << op << ": input is not defined";
    return compute(x.shape(), axisNames(x.ndim(), "ax"), [&](const std::vector<Var>& v) {
        return fn(x(detail::asExprs(v)));
    }, name, ComputeOptions{tag::kElementWise, {}, {}});
}
}  // namespace

Tensor exp(const Tensor& x, const std::string& name) { return unary(x, name, "topi.exp", te::exp); }
Tensor erf(const Tensor& x, const std::string& name) { return unary(x, name, "topi.erf", te::erf); }
Tensor sigmoid(const Tensor& x, const std::string& name) { return unary(x, name, "topi.sigmoid", te::sigmoid); }
Tensor sqrt(const Tensor& x, const std::string& name) { return unary(x, name, "topi.sqrt", te::sqrt); }
Tensor log(const Tensor& x, const std::string& name) { return unary(x, name, "topi.log", te::log); }
Tensor floor(const Tensor& x, const std::string& name) { return unary(x, name, "topi.floor", te::floor); }
Tensor ceil(const Tensor& x, const std::string& name) { return unary(x, name, "topi.ceil", te::ceil); }
Tensor round(const Tensor& x, const std::string& name) { return unary(x, name, "topi.round", te::round); }
Tensor abs(const Tensor& x, const std::string& name) { return unary(x, name, "topi.abs", te::fabs); }
Tensor tanh(const Tensor& x, const std::string& name) { return unary(x, name, "topi.tanh", te::tanh); }

Tensor identity(const Tensor& x, const std::string& name) {
    return unary(x, name, "topi.identity", [](Expr e) { return e; });
}
Tensor negative(const Tensor& x, const std::string& name) {
    return unary(x, name, "topi.negative", [](Expr e) { return -e; });
}
Tensor rsqrt(const Tensor& x, const std::string& name) {
    TB_USER_CHECK(bool(x)) << "topi.rsqrt: input is not defined";
    return compute(x.shape(), axisNames(x.ndim(), "ax"), [&](const std::vector<Var>& v) {
        return div(makeConst(x.dtype(), 1), te::sqrt(x(detail::asExprs(v))));
    }, name, ComputeOptions{tag::kElementWise, {}, {}});
}

Tensor clip(const Tensor& x, double aMin, double aMax, const std::string& name) {
    TB_USER_CHECK(bool(x)) << "topi.clip: input is not defined";
    TB_USER_CHECK(aMin <= aMax) << "topi.clip: a_min " << aMin << " is greater than a_max " << aMax;
    return compute(x.shape(), axisNames(x.ndim(), "ax"), [&](const std::vector<Var>& v) {
        return max(min(x(detail::asExprs(v)), makeConst(x.dtype(), aMax)), makeConst(x.dtype(), aMin));
    }, name, ComputeOptions{tag::kElementWise, {}, {}});
}

Tensor cast(const Tensor& x, DType dtype, const std::string& name) {
    TB_USER_CHECK(bool(x)) << "topi.cast: input is not defined";
    return compute(x.shape(), axisNames(x.ndim(), "ax"), [&](const std::vector<Var>& v) {
        return te::cast(dtype, x(detail::asExprs(v)));
    }, name, ComputeOptions{tag::kElementWise, {}, {}});
}

Tensor scalarConst(double value, DType dtype, const std::string& name) {
    return compute({}, {}, [&](const std::vector<Var>&) { return makeConst(dtype, value); }, name,
                   ComputeOptions{tag::kBroadcast, {}, {}});
}

Tensor hardSigmoid(const Tensor& x, double alpha, double beta) {
    TB_USER_CHECK(bool(x)) << "onnx.HardSigmoid: input is not defined";
    Tensor scaled = multiply(x, makeConst(x.dtype(), alpha));
    Tensor shifted = add(scaled, makeConst(x.dtype(), beta));
    return clip(shifted, 0.0, 1.0);
}

Tensor hardSwish(const Tensor& x) {
    TB_USER_CHECK(bool(x)) << "onnx.HardSwish: input is not defined";
    return multiply(x, hardSigmoid(x, 1.0 / 6.0, 0.5));
}

}  // namespace tb::topi
