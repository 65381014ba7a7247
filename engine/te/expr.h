// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file expr.h
/// \brief Scalar expressions of the tensor-expression language (TVM's `PrimExpr`).
///
/// An `Expr` is an immutable, shared expression tree: integer/float immediates, variables,
/// arithmetic, comparisons, logic, `Select`, `Cast`, intrinsic `Call`s (`tir.exp`,
/// `tir.if_then_else`, ...), tensor loads (TVM's `ProducerLoad`) and `Reduce`. Compute operations
/// (operation.h) are built from them. Construction goes through the free functions and operators
/// below, which fold constants exactly as TVM's `arith::TryConstFold` does (`x*1 -> x`,
/// `x + 0 -> x`, `floordiv(x, 1) -> x`, const op const -> const) and never re-associate; that is what
/// makes printed DAGs, and so workload keys, byte-identical with TVM's (REFERENCE-ZOO §4.2).
///
/// Variables have identity: two `Var`s with the same name are different variables.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tb::te {

/// Scalar element types. Indices are Int32 (as every Relay shape in the zoo); tensors are Float32.
enum class DType : uint8_t { Bool, Int32, Int64, Float32, Float64 };

/// TVM's name of a dtype: "bool", "int32", "int64", "float32", "float64".
const char* dtypeName(DType t);
inline bool isFloat(DType t) { return t == DType::Float32 || t == DType::Float64; }
inline bool isInt(DType t) { return t == DType::Int32 || t == DType::Int64; }

enum class ExprKind : uint8_t {
    IntImm, FloatImm, Var,
    Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max,    // binary arithmetic
    EQ, NE, LT, LE, GT, GE,                                   // comparisons (result Bool)
    And, Or, Not,                                             // logic
    Select, Cast, Call, Load, Reduce
};

/// True for the kinds stored in a BinaryNode (arithmetic, comparisons, And, Or).
bool isBinaryKind(ExprKind k);

struct ExprNode;
struct OperationNode;
class Tensor;

/// A handle to an immutable expression node (may be null: `Expr()` is "no expression").
class Expr {
public:
    Expr() = default;
    explicit Expr(std::shared_ptr<const ExprNode> n) : m_node(std::move(n)) {}
    /// Implicit int32 / float32 constants, as TVM converts Python numbers.
    Expr(int v);          // NOLINT(google-explicit-constructor)
    Expr(float v);        // NOLINT(google-explicit-constructor)

    const ExprNode* get() const { return m_node.get(); }
    const ExprNode* operator->() const { return m_node.get(); }
    const ExprNode& operator*() const { return *m_node; }
    explicit operator bool() const { return bool(m_node); }
    bool same(const Expr& o) const { return m_node == o.m_node; }
    const std::shared_ptr<const ExprNode>& ptr() const { return m_node; }

    ExprKind kind() const;
    DType dtype() const;
    template <class T>
    const T* as() const;

private:
    std::shared_ptr<const ExprNode> m_node;
};

struct ExprNode {
    ExprKind kind;
    DType dtype;
    ExprNode(ExprKind k, DType t) : kind(k), dtype(t) {}
    virtual ~ExprNode() = default;
};

struct IntImmNode : ExprNode {
    int64_t value;
    IntImmNode(DType t, int64_t v) : ExprNode(ExprKind::IntImm, t), value(v) {}
};
struct FloatImmNode : ExprNode {
    double value;
    FloatImmNode(DType t, double v) : ExprNode(ExprKind::FloatImm, t), value(v) {}
};
struct VarNode : ExprNode {
    std::string name;
    VarNode(std::string n, DType t) : ExprNode(ExprKind::Var, t), name(std::move(n)) {}
};
struct BinaryNode : ExprNode {
    Expr a, b;
    BinaryNode(ExprKind k, DType t, Expr x, Expr y) : ExprNode(k, t), a(std::move(x)), b(std::move(y)) {}
};
struct NotNode : ExprNode {
    Expr a;
    explicit NotNode(Expr x) : ExprNode(ExprKind::Not, DType::Bool), a(std::move(x)) {}
};
struct SelectNode : ExprNode {
    Expr cond, t, f;
    SelectNode(Expr c, Expr x, Expr y) : ExprNode(ExprKind::Select, x.dtype()), cond(std::move(c)), t(std::move(x)), f(std::move(y)) {}
};
struct CastNode : ExprNode {
    Expr value;
    CastNode(DType t, Expr v) : ExprNode(ExprKind::Cast, t), value(std::move(v)) {}
};
/// An intrinsic call, named as TVM names the Op: "tir.exp", "tir.if_then_else", "tir.sqrt", ...
struct CallNode : ExprNode {
    std::string op;
    std::vector<Expr> args;
    CallNode(DType t, std::string o, std::vector<Expr> a) : ExprNode(ExprKind::Call, t), op(std::move(o)), args(std::move(a)) {}
};

/// A variable handle. Identity matters, not the name.
class Var : public Expr {
public:
    Var() = default;
    explicit Var(std::string name, DType t = DType::Int32);
    const std::string& name() const;
    const VarNode* node() const { return static_cast<const VarNode*>(get()); }
};

/// A loop/iteration variable with its range [min, min + extent), as TVM's IterVar.
enum class IterKind : uint8_t { DataPar = 0, CommReduce = 2 };
struct IterVar {
    Var var;
    int64_t min = 0;
    int64_t extent = 0;
    IterKind kind = IterKind::DataPar;
    const std::string& name() const { return var.name(); }
};

/// Reduction combiners used by TVM's `te.sum/max/min`.
enum class ReduceKind : uint8_t { Sum, Max, Min };

struct ReduceNode : ExprNode {
    ReduceKind combiner;
    Expr source;
    std::vector<IterVar> axis;
    Expr condition;  ///< always true unless given (null = true)
    Expr init;       ///< optional initial value (null = identity of the combiner)
    ReduceNode(ReduceKind c, Expr s, std::vector<IterVar> ax, Expr cond, Expr ini)
        : ExprNode(ExprKind::Reduce, s.dtype()), combiner(c), source(std::move(s)), axis(std::move(ax)),
          condition(std::move(cond)), init(std::move(ini)) {}
};

/// A read of one element of a tensor (TVM's ProducerLoad); `tensor` is the producing operation.
struct LoadNode : ExprNode {
    std::shared_ptr<const OperationNode> op;
    int valueIndex = 0;
    std::vector<Expr> indices;
    LoadNode(DType t, std::shared_ptr<const OperationNode> o, int vi, std::vector<Expr> idx)
        : ExprNode(ExprKind::Load, t), op(std::move(o)), valueIndex(vi), indices(std::move(idx)) {}
};

template <class T>
const T* Expr::as() const {
    return dynamic_cast<const T*>(m_node.get());
}
inline ExprKind Expr::kind() const { return m_node->kind; }
inline DType Expr::dtype() const { return m_node->dtype; }

// ---- constructors (with TVM's constant folding) -------------------------------------

Expr intImm(int64_t v, DType t = DType::Int32);
Expr floatImm(double v, DType t = DType::Float32);
Expr boolImm(bool v);
/// The constant of `t` with value v (int or float according to t).
Expr makeConst(DType t, double v);
/// Lowest / highest finite value of a float type (TVM's `min_value` / `max_value`).
Expr minValue(DType t);
Expr maxValue(DType t);

/// True when e is an IntImm (or FloatImm) of value v.
bool isConstInt(const Expr& e, int64_t v);
bool isConstInt(const Expr& e, int64_t* out = nullptr);
bool isConstFloat(const Expr& e, double* out = nullptr);

/// Binary constructor with TVM's TryConstFold rules for `k` (and dtype matching of immediates).
Expr binary(ExprKind k, Expr a, Expr b);
Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
Expr div(Expr a, Expr b);          ///< TVM `a / b` on floats; truncdiv on ints
Expr truncmod(Expr a, Expr b);
Expr floordiv(Expr a, Expr b);
Expr floormod(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr le(Expr a, Expr b);
Expr gt(Expr a, Expr b);
Expr ge(Expr a, Expr b);
Expr logicalAnd(Expr a, Expr b);
Expr logicalOr(Expr a, Expr b);
Expr logicalNot(Expr a);
/// A raw `tir::Select` node: never folded (TVM prints `select((bool)1, ...)` in adaptive pools).
Expr select(Expr cond, Expr t, Expr f);
/// Cast to t; a no-op when e already has type t; constants are folded.
Expr cast(DType t, Expr e);
/// An intrinsic call. `op` is TVM's Op name ("tir.exp"); dtype is the result type.
Expr call(DType t, std::string op, std::vector<Expr> args);
/// `tir.if_then_else(cond, t, f)` (a Call, so simple-mode prints `Op(tir.if_then_else)`).
Expr ifThenElse(Expr cond, Expr t, Expr f);
Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr tanh(Expr x);
Expr sigmoid(Expr x);
Expr fabs(Expr x);
Expr pow(Expr x, Expr y);
Expr erf(Expr x);
Expr floor(Expr x);
Expr ceil(Expr x);
Expr round(Expr x);

/// A reduction expression over `axis` (TVM `te.sum(source, axis)` etc.).
Expr reduce(ReduceKind k, Expr source, std::vector<IterVar> axis, Expr condition = Expr(), Expr init = Expr());
inline Expr sum(Expr s, std::vector<IterVar> axis) { return reduce(ReduceKind::Sum, std::move(s), std::move(axis)); }
inline Expr reduceMax(Expr s, std::vector<IterVar> axis) { return reduce(ReduceKind::Max, std::move(s), std::move(axis)); }
inline Expr reduceMin(Expr s, std::vector<IterVar> axis) { return reduce(ReduceKind::Min, std::move(s), std::move(axis)); }

/// A reduction axis named `name` with range [0, extent) (TVM `te.reduce_axis((0, extent), name)`).
IterVar reduceAxis(int64_t extent, const std::string& name);

inline Expr operator+(Expr a, Expr b) { return add(std::move(a), std::move(b)); }
inline Expr operator-(Expr a, Expr b) { return sub(std::move(a), std::move(b)); }
inline Expr operator*(Expr a, Expr b) { return mul(std::move(a), std::move(b)); }
inline Expr operator/(Expr a, Expr b) { return div(std::move(a), std::move(b)); }
inline Expr operator-(Expr a) {
    const DType t = a.dtype();  // read before the move: argument evaluation order is unspecified
    return sub(isFloat(t) ? makeConst(t, 0) : intImm(0, t), std::move(a));
}
// No operator&&, || or !: they would hijack `if (!expr)` and lose short-circuiting. Use
// logicalAnd / logicalOr / logicalNot.
inline Expr operator<(Expr a, Expr b) { return lt(std::move(a), std::move(b)); }
inline Expr operator<=(Expr a, Expr b) { return le(std::move(a), std::move(b)); }
inline Expr operator>(Expr a, Expr b) { return gt(std::move(a), std::move(b)); }
inline Expr operator>=(Expr a, Expr b) { return ge(std::move(a), std::move(b)); }

/// Visit every node of e in post order (children left to right, then the node), as TVM's
/// PostOrderVisit. Reduce visits source, condition, init; Load visits its indices.
void postOrderVisit(const Expr& e, const std::function<void(const Expr&)>& f);

/// Replace variables (by identity) with expressions; rebuilds with constant folding.
Expr substitute(const Expr& e, const std::vector<std::pair<Var, Expr>>& map);

}  // namespace tb::te
