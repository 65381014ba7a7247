// SPDX-License-Identifier: Apache-2.0
#include "engine/te/expr.h"

#include <cmath>
#include <limits>

#include "engine/support/error.h"
#include "engine/support/int_math.h"
#include "engine/te/operation.h"

namespace tb::te {

const char* dtypeName(DType t) {
    switch (t) {
        case DType::Bool: return "bool";
        case DType::Int32: return "int32";
        case DType::Int64: return "int64";
        case DType::Float32: return "float32";
        case DType::Float64: return "float64";
    }
    return "?";
}

bool isBinaryKind(ExprKind k) {
    switch (k) {
        case ExprKind::Add: case ExprKind::Sub: case ExprKind::Mul: case ExprKind::Div:
        case ExprKind::Mod: case ExprKind::FloorDiv: case ExprKind::FloorMod: case ExprKind::Min:
        case ExprKind::Max: case ExprKind::EQ: case ExprKind::NE: case ExprKind::LT: case ExprKind::LE:
        case ExprKind::GT: case ExprKind::GE: case ExprKind::And: case ExprKind::Or:
            return true;
        default:
            return false;
    }
}

Expr::Expr(int v) : m_node(std::make_shared<IntImmNode>(DType::Int32, v)) {}
Expr::Expr(float v) : m_node(std::make_shared<FloatImmNode>(DType::Float32, v)) {}

Var::Var(std::string name, DType t) : Expr(std::make_shared<VarNode>(std::move(name), t)) {}
const std::string& Var::name() const { return node()->name; }

Expr intImm(int64_t v, DType t) {
    if (t == DType::Bool) v = v != 0;
    return Expr(std::make_shared<IntImmNode>(t, v));
}
Expr floatImm(double v, DType t) {
    if (t == DType::Float32) v = static_cast<double>(static_cast<float>(v));
    return Expr(std::make_shared<FloatImmNode>(t, v));
}
Expr boolImm(bool v) { return intImm(v ? 1 : 0, DType::Bool); }
Expr makeConst(DType t, double v) { return isFloat(t) ? floatImm(v, t) : intImm(static_cast<int64_t>(v), t); }
Expr minValue(DType t) {
    switch (t) {
        case DType::Float32: return floatImm(-std::numeric_limits<float>::max(), t);
        case DType::Float64: return floatImm(-std::numeric_limits<double>::max(), t);
        case DType::Int32: return intImm(std::numeric_limits<int32_t>::min(), t);
        case DType::Int64: return intImm(std::numeric_limits<int64_t>::min(), t);
        case DType::Bool: return boolImm(false);
    }
    return Expr();
}
Expr maxValue(DType t) {
    switch (t) {
        case DType::Float32: return floatImm(std::numeric_limits<float>::max(), t);
        case DType::Float64: return floatImm(std::numeric_limits<double>::max(), t);
        case DType::Int32: return intImm(std::numeric_limits<int32_t>::max(), t);
        case DType::Int64: return intImm(std::numeric_limits<int64_t>::max(), t);
        case DType::Bool: return boolImm(true);
    }
    return Expr();
}

bool isConstInt(const Expr& e, int64_t v) {
    int64_t x;
    return isConstInt(e, &x) && x == v;
}
bool isConstInt(const Expr& e, int64_t* out) {
    if (!e.get() || e.kind() != ExprKind::IntImm) return false;
    if (out) *out = static_cast<const IntImmNode*>(e.get())->value;
    return true;
}
bool isConstFloat(const Expr& e, double* out) {
    if (!e.get() || e.kind() != ExprKind::FloatImm) return false;
    if (out) *out = static_cast<const FloatImmNode*>(e.get())->value;
    return true;
}

namespace {

// TVM's BinaryOpMatchTypes, restricted to what te needs: an immediate adopts the other side's type.
void matchTypes(Expr& a, Expr& b) {
    if (a.dtype() == b.dtype()) return;
    // TVM BinaryOpMatchTypes: a float operand wins (the other side is cast, which folds an
    // immediate); between integer types an immediate adopts the other side's type, else both
    // widen to int64.
    if (isFloat(a.dtype()) && !isFloat(b.dtype())) {
        b = cast(a.dtype(), b);
        return;
    }
    if (isFloat(b.dtype()) && !isFloat(a.dtype())) {
        a = cast(b.dtype(), a);
        return;
    }
    auto isImm = [](const Expr& e) { return e.kind() == ExprKind::IntImm || e.kind() == ExprKind::FloatImm; };
    if (isImm(b) && !isImm(a)) {
        b = cast(a.dtype(), b);
    } else if (isImm(a) && !isImm(b)) {
        a = cast(b.dtype(), a);
    } else if (isFloat(a.dtype()) && isFloat(b.dtype())) {
        a = cast(DType::Float64, a);
        b = cast(DType::Float64, b);
    } else if (a.dtype() == DType::Int64 || b.dtype() == DType::Int64) {
        a = cast(DType::Int64, a);
        b = cast(DType::Int64, b);
    } else {
        TB_CHECK(false) << "cannot match types " << dtypeName(a.dtype()) << " and " << dtypeName(b.dtype());
    }
}

bool isCmp(ExprKind k) {
    return k == ExprKind::EQ || k == ExprKind::NE || k == ExprKind::LT || k == ExprKind::LE || k == ExprKind::GT ||
           k == ExprKind::GE;
}

// TVM arith::TryConstFold for a binary op; returns null when nothing folds.
Expr tryConstFold(ExprKind k, const Expr& a, const Expr& b) {
    int64_t ia = 0, ib = 0;
    double fa = 0, fb = 0;
    bool ai = isConstInt(a, &ia), bi = isConstInt(b, &ib);
    bool af = isConstFloat(a, &fa), bf = isConstFloat(b, &fb);
    DType t = a.dtype();
    if (isCmp(k)) {
        if (ai && bi) {
            bool r = k == ExprKind::EQ ? ia == ib : k == ExprKind::NE ? ia != ib : k == ExprKind::LT ? ia < ib
                   : k == ExprKind::LE ? ia <= ib : k == ExprKind::GT ? ia > ib : ia >= ib;
            return boolImm(r);
        }
        if (af && bf) {
            bool r = k == ExprKind::EQ ? fa == fb : k == ExprKind::NE ? fa != fb : k == ExprKind::LT ? fa < fb
                   : k == ExprKind::LE ? fa <= fb : k == ExprKind::GT ? fa > fb : fa >= fb;
            return boolImm(r);
        }
        return Expr();
    }
    switch (k) {
        case ExprKind::Add:
            if (ai && bi) return intImm(ia + ib, t);
            if (ai && ia == 0) return b;
            if (bi && ib == 0) return a;
            if (af && bf) return floatImm(fa + fb, t);
            if (af && fa == 0) return b;
            if (bf && fb == 0) return a;
            return Expr();
        case ExprKind::Sub:
            if (ai && bi) return intImm(ia - ib, t);
            if (bi && ib == 0) return a;
            if (af && bf) return floatImm(fa - fb, t);
            if (bf && fb == 0) return a;
            return Expr();
        case ExprKind::Mul:
            if (ai && bi) return intImm(ia * ib, t);
            if (ai) {
                if (ia == 1) return b;
                if (ia == 0) return a;
            }
            if (bi) {
                if (ib == 1) return a;
                if (ib == 0) return b;
            }
            if (af && bf) return floatImm(fa * fb, t);
            if (af) {
                if (fa == 1) return b;
                if (fa == 0) return a;
            }
            if (bf) {
                if (fb == 1) return a;
                if (fb == 0) return b;
            }
            return Expr();
        case ExprKind::Div:
            if (ai && bi && ib != 0) return intImm(ia / ib, t);
            if (ai && ia == 0) return a;
            if (bi && ib == 1) return a;
            if (af && bf && fb != 0) return floatImm(fa / fb, t);
            if (af && fa == 0) return a;
            if (bf && fb == 1) return a;
            return Expr();
        case ExprKind::Mod:
            if (ai && bi && ib != 0) return intImm(ia % ib, t);
            if (ai && ia == 0) return a;
            if (bi && ib == 1) return intImm(0, t);
            return Expr();
        case ExprKind::FloorDiv:
            if (ai && bi && ib != 0) return intImm(floorDiv(ia, ib), t);
            if (ai && ia == 0) return a;
            if (bi && ib == 1) return a;
            if (af && bf && fb != 0) return floatImm(std::floor(fa / fb), t);
            if (af && fa == 0) return a;
            if (bf && fb == 1) return a;
            return Expr();
        case ExprKind::FloorMod:
            if (ai && bi && ib != 0) return intImm(floorMod(ia, ib), t);
            if (ai && ia == 0) return a;
            if (bi && ib == 1) return intImm(0, t);
            return Expr();
        case ExprKind::Min:
            if (ai && bi) return intImm(std::min(ia, ib), t);
            if (af && bf) return floatImm(std::min(fa, fb), t);
            return Expr();
        case ExprKind::Max:
            if (ai && bi) return intImm(std::max(ia, ib), t);
            if (af && bf) return floatImm(std::max(fa, fb), t);
            return Expr();
        case ExprKind::And:
            if (ai) return ia ? b : a;
            if (bi) return ib ? a : b;
            return Expr();
        case ExprKind::Or:
            if (ai) return ia ? a : b;
            if (bi) return ib ? b : a;
            return Expr();
        default:
            return Expr();
    }
}

}  // namespace

Expr binary(ExprKind k, Expr a, Expr b) {
    TB_CHECK(a.get() && b.get()) << "null operand";
    TB_CHECK(isBinaryKind(k)) << "not a binary kind";
    if (k == ExprKind::And || k == ExprKind::Or) {
        TB_CHECK(a.dtype() == DType::Bool && b.dtype() == DType::Bool) << "&& / || need bool operands";
    } else {
        matchTypes(a, b);
    }
    if (Expr f = tryConstFold(k, a, b)) return f;
    DType t = (isCmp(k) || k == ExprKind::And || k == ExprKind::Or) ? DType::Bool : a.dtype();
    return Expr(std::make_shared<BinaryNode>(k, t, std::move(a), std::move(b)));
}

Expr add(Expr a, Expr b) { return binary(ExprKind::Add, std::move(a), std::move(b)); }
Expr sub(Expr a, Expr b) { return binary(ExprKind::Sub, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return binary(ExprKind::Mul, std::move(a), std::move(b)); }
Expr div(Expr a, Expr b) { return binary(ExprKind::Div, std::move(a), std::move(b)); }
Expr truncmod(Expr a, Expr b) { return binary(ExprKind::Mod, std::move(a), std::move(b)); }
Expr floordiv(Expr a, Expr b) { return binary(ExprKind::FloorDiv, std::move(a), std::move(b)); }
Expr floormod(Expr a, Expr b) { return binary(ExprKind::FloorMod, std::move(a), std::move(b)); }
Expr min(Expr a, Expr b) { return binary(ExprKind::Min, std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return binary(ExprKind::Max, std::move(a), std::move(b)); }
Expr eq(Expr a, Expr b) { return binary(ExprKind::EQ, std::move(a), std::move(b)); }
Expr ne(Expr a, Expr b) { return binary(ExprKind::NE, std::move(a), std::move(b)); }
Expr lt(Expr a, Expr b) { return binary(ExprKind::LT, std::move(a), std::move(b)); }
Expr le(Expr a, Expr b) { return binary(ExprKind::LE, std::move(a), std::move(b)); }
Expr gt(Expr a, Expr b) { return binary(ExprKind::GT, std::move(a), std::move(b)); }
Expr ge(Expr a, Expr b) { return binary(ExprKind::GE, std::move(a), std::move(b)); }
Expr logicalAnd(Expr a, Expr b) { return binary(ExprKind::And, std::move(a), std::move(b)); }
Expr logicalOr(Expr a, Expr b) { return binary(ExprKind::Or, std::move(a), std::move(b)); }
Expr logicalNot(Expr a) {
    TB_CHECK(a.dtype() == DType::Bool) << "! needs a bool operand";
    int64_t v;
    if (isConstInt(a, &v)) return boolImm(!v);
    return Expr(std::make_shared<NotNode>(std::move(a)));
}

Expr select(Expr cond, Expr t, Expr f) {
    TB_CHECK(cond.dtype() == DType::Bool) << "select condition must be bool";
    matchTypes(t, f);
    return Expr(std::make_shared<SelectNode>(std::move(cond), std::move(t), std::move(f)));
}

Expr cast(DType t, Expr e) {
    if (e.dtype() == t) return e;
    int64_t i;
    double f;
    if (isConstInt(e, &i)) return makeConst(t, double(i));
    if (isConstFloat(e, &f)) return isFloat(t) ? floatImm(f, t) : intImm(static_cast<int64_t>(f), t);
    return Expr(std::make_shared<CastNode>(t, std::move(e)));
}

Expr call(DType t, std::string op, std::vector<Expr> args) {
    return Expr(std::make_shared<CallNode>(t, std::move(op), std::move(args)));
}
Expr ifThenElse(Expr cond, Expr t, Expr f) {
    TB_CHECK(cond.dtype() == DType::Bool) << "if_then_else condition must be bool";
    matchTypes(t, f);
    DType dt = t.dtype();
    return call(dt, "tir.if_then_else", {std::move(cond), std::move(t), std::move(f)});
}
Expr exp(Expr x) { DType t = x.dtype(); return call(t, "tir.exp", {std::move(x)}); }
Expr log(Expr x) { DType t = x.dtype(); return call(t, "tir.log", {std::move(x)}); }
Expr sqrt(Expr x) { DType t = x.dtype(); return call(t, "tir.sqrt", {std::move(x)}); }
Expr tanh(Expr x) { DType t = x.dtype(); return call(t, "tir.tanh", {std::move(x)}); }
Expr sigmoid(Expr x) { DType t = x.dtype(); return call(t, "tir.sigmoid", {std::move(x)}); }
Expr fabs(Expr x) { DType t = x.dtype(); return call(t, "tir.fabs", {std::move(x)}); }
Expr erf(Expr x) { DType t = x.dtype(); return call(t, "tir.erf", {std::move(x)}); }
Expr floor(Expr x) { DType t = x.dtype(); return call(t, "tir.floor", {std::move(x)}); }
Expr ceil(Expr x) { DType t = x.dtype(); return call(t, "tir.ceil", {std::move(x)}); }
Expr round(Expr x) { DType t = x.dtype(); return call(t, "tir.round", {std::move(x)}); }
Expr pow(Expr x, Expr y) {
    matchTypes(x, y);
    DType t = x.dtype();
    return call(t, "tir.pow", {std::move(x), std::move(y)});
}

Expr reduce(ReduceKind k, Expr source, std::vector<IterVar> axis, Expr condition, Expr init) {
    TB_CHECK(source) << "reduce of a null source";
    return Expr(std::make_shared<ReduceNode>(k, std::move(source), std::move(axis), std::move(condition), std::move(init)));
}

IterVar reduceAxis(int64_t extent, const std::string& name) {
    TB_CHECK(extent > 0) << "reduce axis " << name << " has extent " << extent;
    return IterVar{Var(name), 0, extent, IterKind::CommReduce};
}

void postOrderVisit(const Expr& e, const std::function<void(const Expr&)>& f) {
    if (!e.get()) return;
    switch (e.kind()) {
        case ExprKind::IntImm: case ExprKind::FloatImm: case ExprKind::Var:
            break;
        case ExprKind::Not:
            postOrderVisit(e.as<NotNode>()->a, f);
            break;
        case ExprKind::Select: {
            auto* n = e.as<SelectNode>();
            postOrderVisit(n->cond, f);
            postOrderVisit(n->t, f);
            postOrderVisit(n->f, f);
            break;
        }
        case ExprKind::Cast:
            postOrderVisit(e.as<CastNode>()->value, f);
            break;
        case ExprKind::Call:
            for (auto& a : e.as<CallNode>()->args) postOrderVisit(a, f);
            break;
        case ExprKind::Load:
            for (auto& a : e.as<LoadNode>()->indices) postOrderVisit(a, f);
            break;
        case ExprKind::Reduce: {
            auto* n = e.as<ReduceNode>();
            postOrderVisit(n->source, f);
            postOrderVisit(n->condition, f);
            postOrderVisit(n->init, f);
            break;
        }
        default: {
            auto* n = e.as<BinaryNode>();
            postOrderVisit(n->a, f);
            postOrderVisit(n->b, f);
        }
    }
    f(e);
}

Expr substitute(const Expr& e, const std::vector<std::pair<Var, Expr>>& map) {
    if (!e.get()) return e;
    switch (e.kind()) {
        case ExprKind::IntImm: case ExprKind::FloatImm:
            return e;
        case ExprKind::Var:
            for (auto& [v, r] : map)
                if (v.same(e)) return r;
            return e;
        case ExprKind::Not:
            return logicalNot(substitute(e.as<NotNode>()->a, map));
        case ExprKind::Select: {
            auto* n = e.as<SelectNode>();
            return select(substitute(n->cond, map), substitute(n->t, map), substitute(n->f, map));
        }
        case ExprKind::Cast:
            return cast(e.dtype(), substitute(e.as<CastNode>()->value, map));
        case ExprKind::Call: {
            auto* n = e.as<CallNode>();
            std::vector<Expr> args;
            for (auto& a : n->args) args.push_back(substitute(a, map));
            return call(n->dtype, n->op, std::move(args));
        }
        case ExprKind::Load: {
            auto* n = e.as<LoadNode>();
            std::vector<Expr> idx;
            for (auto& a : n->indices) idx.push_back(substitute(a, map));
            return Expr(std::make_shared<LoadNode>(n->dtype, n->op, n->valueIndex, std::move(idx)));
        }
        case ExprKind::Reduce: {
            auto* n = e.as<ReduceNode>();
            return reduce(n->combiner, substitute(n->source, map), n->axis, substitute(n->condition, map),
                          substitute(n->init, map));
        }
        default: {
            auto* n = e.as<BinaryNode>();
            return binary(n->kind, substitute(n->a, map), substitute(n->b, map));
        }
    }
}

}  // namespace tb::te
