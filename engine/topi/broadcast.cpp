// SPDX-License-Identifier: Apache-2.0
#include "engine/topi/broadcast.h"

#include <algorithm>

#include "engine/topi/detail.h"
#include "engine/topi/tags.h"

namespace tb::topi {

using namespace te;

std::vector<int64_t> broadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const char* op) {
    const size_t na = a.size(), nb = b.size(), n = std::max(na, nb);
    std::vector<int64_t> out(n);
    for (size_t i = 1; i <= n; ++i) {
        if (i > na) {
            out[n - i] = b[nb - i];
        } else if (i > nb) {
            out[n - i] = a[na - i];
        } else {
            int64_t x = a[na - i], y = b[nb - i];
            TB_USER_CHECK(x == y || x == 1 || y == 1)
                << op << ": shapes " << shapeToString(a) << " and " << shapeToString(b) << " cannot broadcast";
            out[n - i] = x == 1 ? y : x;
        }
    }
    return out;
}

namespace {

// InputIndexFromBroadcast: the index list of operand `t` (rank r) into an output of rank n.
std::vector<Expr> operandIndex(const std::vector<Var>& ovars, const std::vector<int64_t>& mine,
                               const std::vector<int64_t>& other) {
    const size_t n = ovars.size(), r = mine.size(), o = other.size();
    std::vector<Expr> idx;
    for (size_t i = 0; i < n; ++i) {
        size_t fromRight = n - i;  // 1-based position from the right
        if (fromRight > r) continue;  // a leading dim this operand lacks
        int64_t m = mine[r - fromRight];
        bool usesVar;
        if (fromRight > o) {
            usesVar = true;  // only this operand has the dim
        } else {
            int64_t y = other[o - fromRight];
            usesVar = (m == y) || (m != 1);  // equal extents (1 and 1 included) or the larger side
        }
        idx.push_back(usesVar ? Expr(ovars[i]) : detail::ci(0));
    }
    return idx;
}

Tensor scalarOp(const std::function<Expr(const Expr&, const Expr&)>& fn, const Tensor& a, const Expr& s,
                bool scalarFirst, const std::string& name, const char* op) {
    TB_USER_CHECK(bool(a)) << op << ": input tensor is not defined";
    TB_USER_CHECK(bool(s)) << op << ": scalar operand is not defined";
    return compute(a.shape(), axisNames(a.ndim(), "ax"), [&](const std::vector<Var>& v) {
        Expr x = a(detail::asExprs(v));
        return scalarFirst ? fn(s, x) : fn(x, s);
    }, name, ComputeOptions{tag::kElementWise, {}, {}});
}

Expr fAdd(const Expr& a, const Expr& b) { return a + b; }
Expr fSub(const Expr& a, const Expr& b) { return a - b; }
Expr fMul(const Expr& a, const Expr& b) { return a * b; }
Expr fDiv(const Expr& a, const Expr& b) { return div(a, b); }
Expr fMax(const Expr& a, const Expr& b) { return max(a, b); }
Expr fMin(const Expr& a, const Expr& b) { return min(a, b); }

}  // namespace

Tensor withBroadcast(const std::function<Expr(const Expr&, const Expr&)>& fn, const Tensor& a, const Tensor& b,
                     const std::string& name, const char* opName) {
    TB_USER_CHECK(bool(a) && bool(b)) << opName << ": input tensor is not defined";
    std::vector<int64_t> shape = broadcastShape(a.shape(), b.shape(), opName);
    return compute(shape, axisNames(shape.size(), "ax"), [&](const std::vector<Var>& v) {
        return fn(a(operandIndex(v, a.shape(), b.shape())), b(operandIndex(v, b.shape(), a.shape())));
    }, name, ComputeOptions{tag::kBroadcast, {}, {}});
}

Tensor add(const Tensor& a, const Tensor& b, const std::string& name) { return withBroadcast(fAdd, a, b, name, "topi.add"); }
Tensor subtract(const Tensor& a, const Tensor& b, const std::string& name) {
    return withBroadcast(fSub, a, b, name, "topi.subtract");
}
Tensor multiply(const Tensor& a, const Tensor& b, const std::string& name) {
    return withBroadcast(fMul, a, b, name, "topi.multiply");
}
Tensor divide(const Tensor& a, const Tensor& b, const std::string& name) {
    return withBroadcast(fDiv, a, b, name, "topi.divide");
}
Tensor floorDivide(const Tensor& a, const Tensor& b, const std::string& name) {
    // TOPI_DEFINE_BCAST_OP(floor_divide): floordiv for ints, floor(a / b) for floats.
    return withBroadcast([](const Expr& x, const Expr& y) {
        return isFloat(x.dtype()) ? floor(div(x, y)) : floordiv(x, y);
    }, a, b, name, "topi.floor_divide");
}
Tensor floorMod(const Tensor& a, const Tensor& b, const std::string& name) {
    return withBroadcast([](const Expr& x, const Expr& y) {
        return isFloat(x.dtype()) ? x - floor(div(x, y)) * y : floormod(x, y);
    }, a, b, name, "topi.floor_mod");
}
Tensor maximum(const Tensor& a, const Tensor& b, const std::string& name) {
    return withBroadcast(fMax, a, b, name, "topi.maximum");
}
Tensor minimum(const Tensor& a, const Tensor& b, const std::string& name) {
    return withBroadcast(fMin, a, b, name, "topi.minimum");
}
Tensor power(const Tensor& a, const Tensor& b, const std::string& name) {
    return withBroadcast([](const Expr& x, const Expr& y) { return pow(x, y); }, a, b, name, "topi.power");
}
Tensor greater(const Tensor& a, const Tensor& b, const std::string& name) {
    return withBroadcast([](const Expr& x, const Expr& y) { return x > y; }, a, b, name, "topi.greater");
}
Tensor less(const Tensor& a, const Tensor& b, const std::string& name) {
    return withBroadcast([](const Expr& x, const Expr& y) { return x < y; }, a, b, name, "topi.less");
}
Tensor equal(const Tensor& a, const Tensor& b, const std::string& name) {
    return withBroadcast([](const Expr& x, const Expr& y) { return eq(x, y); }, a, b, name, "topi.equal");
}
Tensor notEqual(const Tensor& a, const Tensor& b, const std::string& name) {
    return withBroadcast([](const Expr& x, const Expr& y) { return ne(x, y); }, a, b, name, "topi.not_equal");
}
Tensor greaterEqual(const Tensor& a, const Tensor& b, const std::string& name) {
    return withBroadcast([](const Expr& x, const Expr& y) { return x >= y; }, a, b, name, "topi.greater_equal");
}
Tensor lessEqual(const Tensor& a, const Tensor& b, const std::string& name) {
    return withBroadcast([](const Expr& x, const Expr& y) { return x <= y; }, a, b, name, "topi.less_equal");
}

Tensor add(const Tensor& a, const Expr& s, const std::string& name) { return scalarOp(fAdd, a, s, false, name, "topi.add"); }
Tensor subtract(const Tensor& a, const Expr& s, const std::string& name) {
    return scalarOp(fSub, a, s, false, name, "topi.subtract");
}
Tensor multiply(const Tensor& a, const Expr& s, const std::string& name) {
    return scalarOp(fMul, a, s, false, name, "topi.multiply");
}
Tensor divide(const Tensor& a, const Expr& s, const std::string& name) {
    return scalarOp(fDiv, a, s, false, name, "topi.divide");
}
Tensor maximum(const Tensor& a, const Expr& s, const std::string& name) {
    return scalarOp(fMax, a, s, false, name, "topi.maximum");
}
Tensor minimum(const Tensor& a, const Expr& s, const std::string& name) {
    return scalarOp(fMin, a, s, false, name, "topi.minimum");
}
Tensor add(const Expr& s, const Tensor& a, const std::string& name) { return scalarOp(fAdd, a, s, true, name, "topi.add"); }
Tensor subtract(const Expr& s, const Tensor& a, const std::string& name) {
    return scalarOp(fSub, a, s, true, name, "topi.subtract");
}
Tensor multiply(const Expr& s, const Tensor& a, const std::string& name) {
    return scalarOp(fMul, a, s, true, name, "topi.multiply");
}
Tensor divide(const Expr& s, const Tensor& a, const std::string& name) {
    return scalarOp(fDiv, a, s, true, name, "topi.divide");
}

}  // namespace tb::topi
