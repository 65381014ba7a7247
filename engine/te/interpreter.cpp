// SPDX-License-Identifier: Apache-2.0
#include "engine/te/interpreter.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <exception>
#include <limits>
#include <optional>
#include <sstream>
#include <thread>
#include <type_traits>
#include <unordered_set>

#include "engine/support/error.h"
#include "engine/support/int_math.h"
#include "engine/support/thread_pool.h"

namespace tb::te {

// ---- Buffer ---------------------------------------------------------------------------

Buffer Buffer::zeros(std::vector<int64_t> shape) {
    Buffer b;
    b.shape = std::move(shape);
    b.data.assign(size_t(b.numElements()), 0.0f);
    return b;
}

int64_t Buffer::numElements() const {
    int64_t n = 1;
    for (int64_t d : shape) {
        TB_CHECK(d >= 0) << "negative extent " << d << " in a buffer shape";
        n *= d;
    }
    return n;
}

namespace {

std::string shapeStr(const std::vector<int64_t>& s) {
    std::ostringstream os;
    os << '[';
    for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
    os << ']';
    return os.str();
}

int64_t flatIndex(const Buffer& b, const std::vector<int64_t>& index) {
    TB_CHECK(index.size() == b.shape.size()) << "buffer of rank " << b.shape.size() << " indexed with "
                                             << index.size() << " indices";
    int64_t off = 0;
    for (size_t d = 0; d < index.size(); ++d) {
        TB_CHECK(index[d] >= 0 && index[d] < b.shape[d]) << "index " << shapeStr(index) << " out of range for shape "
                                                          << shapeStr(b.shape);
        off = off * b.shape[d] + index[d];
    }
    TB_CHECK(size_t(off) < b.data.size()) << "buffer data holds " << b.data.size() << " elements, shape "
                                          << shapeStr(b.shape);
    return off;
}

}  // namespace

float Buffer::at(const std::vector<int64_t>& index) const { return data[size_t(flatIndex(*this, index))]; }
float& Buffer::at(const std::vector<int64_t>& index) { return data[size_t(flatIndex(*this, index))]; }

namespace {

// ---- compiled form ----------------------------------------------------------------------
//
// One op body becomes an array of Nodes referring to each other by index. Every node is either
// float-valued (evaluated as double by Eval::f) or int-valued (int64, bools as 0/1, by Eval::i).

enum class Code : uint8_t {
    // float-valued
    ConstF, LoadFlatF, LoadCheckedF, CastIToF, RoundF32, AddF, SubF, MulF, DivF, ModF, FloorDivF, FloorModF,
    MinF, MaxF, SelectF, CallF1, CallF2, ReduceF,
    // int-valued
    ConstI, VarI, AffineI, CastFToI, CastIToI, AddI, SubI, MulI, DivI, ModI, FloorDivI, FloorModI, MinI, MaxI,
    CmpF, CmpI, And, Or, Not, SelectI, AbsI, PredF, ReduceI
};

enum Fn1 : uint8_t {
    kExp, kExp2, kExp10, kLog, kLog2, kLog10, kLog1p, kSqrt, kRsqrt, kTanh, kSigmoid, kFabs, kErf, kFloor, kCeil,
    kRound, kNearbyint, kTrunc, kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kAsinh, kAcosh, kAtanh
};
enum Fn2 : uint8_t { kPow, kAtan2, kFmod, kCopysign, kHypot };
enum Pred : uint8_t { kIsNan, kIsInf, kIsFinite };

struct Node {
    Code code;
    uint8_t sub = 0;       // comparison kind, intrinsic, cast target dtype, float32 rounding flag
    int32_t a = -1, b = -1, c = -1;
    int32_t aux = -1;      // slot, affine id, checked-load id, reduce id
    int64_t i = 0;         // int constant; tensor id of a load
    double f = 0;          // float constant
};

struct Term {
    int32_t slot;
    int64_t coef;
};
struct Affine {
    int64_t c = 0;
    int32_t begin = 0, split = 0, end = 0;  // into Program::terms: [begin, split) spatial slots, [split, end) others
};

struct CheckedLoad {
    int32_t tensor;
    int32_t begin;  // into Program::dimNodes, one int node per dimension
    int32_t ndim;
};

struct AxisSlot {
    int32_t slot;
    int64_t min, extent;
};

struct ReduceInfo {
    ReduceKind kind;
    bool isFloat;
    int32_t source = -1, cond = -1, init = -1;
    int32_t axisBegin = 0, naxis = 0;  // into Program::axes
    double identityF = 0;
    int64_t identityI = 0;
};

struct TensorRef {
    Operation op;
    std::vector<int64_t> shape;
};

struct Program {
    std::vector<Node> nodes;
    std::vector<Term> terms;
    std::vector<Affine> affines;
    std::vector<CheckedLoad> checked;
    std::vector<int32_t> dimNodes;
    std::vector<AxisSlot> axes;
    std::vector<ReduceInfo> reduces;
    std::vector<TensorRef> tensors;
};

// The specialized top-level reduction: acc (+|max|min)= prod_k T_k[base_k + table_k[j] + t*stride_k].
struct FastReduce {
    ReduceKind kind = ReduceKind::Sum;
    int nf = 0;
    int32_t tensor[3] = {0, 0, 0};
    int32_t spatial[3] = {0, 0, 0};  // affine ids over the spatial slots (flattened offsets)
    std::vector<int64_t> table[3];   // offsets of every outer reduce point (row-major)
    int64_t stride[3] = {0, 0, 0};   // per step of the innermost reduce axis
    int64_t inner = 1;
    int64_t outer = 1;
    int32_t init = -1;  // float node, or -1 for the identity
    double identity = 0;
};

struct CompiledOp {
    const OperationNode* op = nullptr;
    Program prog;
    int32_t root = -1;
    bool rootFloat = true;
    int nSpatial = 0;
    int nSlots = 0;
    int64_t reducePoints = 1;
    std::optional<FastReduce> fast;
};

double identityF(ReduceKind k, DType t) {
    switch (k) {
        case ReduceKind::Sum: return 0.0;
        case ReduceKind::Max: return t == DType::Float64 ? -std::numeric_limits<double>::max()
                                                         : double(-std::numeric_limits<float>::max());
        case ReduceKind::Min: return t == DType::Float64 ? std::numeric_limits<double>::max()
                                                         : double(std::numeric_limits<float>::max());
    }
    return 0.0;
}
int64_t identityI(ReduceKind k, DType t) {
    switch (k) {
        case ReduceKind::Sum: return 0;
        case ReduceKind::Max:
            return t == DType::Int64 ? std::numeric_limits<int64_t>::min()
                   : t == DType::Bool ? 0 : int64_t(std::numeric_limits<int32_t>::min());
        case ReduceKind::Min:
            return t == DType::Int64 ? std::numeric_limits<int64_t>::max()
                   : t == DType::Bool ? 1 : int64_t(std::numeric_limits<int32_t>::max());
    }
    return 0;
}

// ---- compiler ----------------------------------------------------------------------------

struct Lin {
    int64_t c = 0;
    std::vector<std::pair<int32_t, int64_t>> terms;  // (slot, coef), merged, no zero coefs

    void add(const Lin& o, int64_t scale) {
        c += o.c * scale;
        for (auto [s, k] : o.terms) {
            auto it = std::find_if(terms.begin(), terms.end(), [&, s = s](auto& t) { return t.first == s; });
            if (it == terms.end()) terms.emplace_back(s, k * scale);
            else it->second += k * scale;
        }
        std::erase_if(terms, [](auto& t) { return t.second == 0; });
    }
};

class Compiler {
public:
    Compiler(CompiledOp& out, const OperationNode& op) : m_out(out), m_p(out.prog), m_op(op) {}

    int32_t bindSlot(const Var& v, int64_t min, int64_t extent) {
        auto it = m_slotOf.find(v.get());
        if (it != m_slotOf.end()) return it->second;  // sibling reductions may share axes
        auto s = int32_t(m_range.size());
        m_slotOf.emplace(v.get(), s);
        m_range.emplace_back(min, min + extent - 1);
        return s;
    }
    int numSlots() const { return int(m_range.size()); }
    std::pair<int64_t, int64_t> slotRange(int32_t s) const { return m_range[size_t(s)]; }

    // Affine form of an integer expression in the loop variables, if it is one.
    std::optional<Lin> linearize(const Expr& e) {
        switch (e.kind()) {
            case ExprKind::IntImm: return Lin{e.as<IntImmNode>()->value, {}};
            case ExprKind::Var: return Lin{0, {{slotOf(e), 1}}};
            case ExprKind::Add:
            case ExprKind::Sub: {
                auto* n = static_cast<const BinaryNode*>(e.get());
                auto a = linearize(n->a);
                if (!a) return std::nullopt;
                auto b = linearize(n->b);
                if (!b) return std::nullopt;
                a->add(*b, e.kind() == ExprKind::Add ? 1 : -1);
                return a;
            }
            case ExprKind::Mul: {
                auto* n = static_cast<const BinaryNode*>(e.get());
                auto a = linearize(n->a);
                if (!a) return std::nullopt;
                auto b = linearize(n->b);
                if (!b) return std::nullopt;
                if (!a->terms.empty() && !b->terms.empty()) return std::nullopt;
                if (a->terms.empty()) std::swap(a, b);
                Lin r;
                r.add(*a, b->c);
                return r;
            }
            case ExprKind::Cast: {
                auto* n = e.as<CastNode>();
                if (isInt(e.dtype()) && isInt(n->value.dtype())) return linearize(n->value);
                return std::nullopt;
            }
            default:
                return std::nullopt;
        }
    }

    int32_t compileI(const Expr& e) {
        TB_CHECK(!isFloat(e.dtype())) << stage() << "float expression where an integer is needed";
        if (auto l = linearize(e)) return emitAffine(*l);
        switch (e.kind()) {
            case ExprKind::Add: case ExprKind::Sub: case ExprKind::Mul: case ExprKind::Div: case ExprKind::Mod:
            case ExprKind::FloorDiv: case ExprKind::FloorMod: case ExprKind::Min: case ExprKind::Max: {
                auto* n = static_cast<const BinaryNode*>(e.get());
                static constexpr Code codes[] = {Code::AddI, Code::SubI, Code::MulI, Code::DivI, Code::ModI,
                                                 Code::FloorDivI, Code::FloorModI, Code::MinI, Code::MaxI};
                int32_t a = compileI(n->a), b = compileI(n->b);
                return emit({codes[int(e.kind()) - int(ExprKind::Add)], 0, a, b});
            }
            case ExprKind::EQ: case ExprKind::NE: case ExprKind::LT: case ExprKind::LE: case ExprKind::GT:
            case ExprKind::GE: {
                auto* n = static_cast<const BinaryNode*>(e.get());
                if (isFloat(n->a.dtype()) || isFloat(n->b.dtype())) {
                    int32_t a = compileF(n->a), b = compileF(n->b);
                    return emit({Code::CmpF, uint8_t(e.kind()), a, b});
                }
                int32_t a = compileI(n->a), b = compileI(n->b);
                return emit({Code::CmpI, uint8_t(e.kind()), a, b});
            }
            case ExprKind::And: case ExprKind::Or: {
                auto* n = static_cast<const BinaryNode*>(e.get());
                int32_t a = compileI(n->a), b = compileI(n->b);
                return emit({e.kind() == ExprKind::And ? Code::And : Code::Or, 0, a, b});
            }
            case ExprKind::Not:
                return emit({Code::Not, 0, compileI(e.as<NotNode>()->a)});
            case ExprKind::Select: {
                auto* n = e.as<SelectNode>();
                int32_t c = compileI(n->cond), t = compileI(n->t), f = compileI(n->f);
                return emit({Code::SelectI, 0, c, t, f});
            }
            case ExprKind::Cast: {
                auto* n = e.as<CastNode>();
                if (isFloat(n->value.dtype())) return emit({Code::CastFToI, uint8_t(e.dtype()), compileF(n->value)});
                return emit({Code::CastIToI, uint8_t(e.dtype()), compileI(n->value)});
            }
            case ExprKind::Call: {
                auto* n = e.as<CallNode>();
                const std::string& op = n->op;
                if (op == "tir.if_then_else") {
                    TB_CHECK(n->args.size() == 3) << stage() << "tir.if_then_else takes 3 arguments";
                    int32_t c = compileI(n->args[0]), t = compileI(n->args[1]), f = compileI(n->args[2]);
                    return emit({Code::SelectI, 0, c, t, f});
                }
                if (op == "tir.likely") {
                    TB_CHECK(n->args.size() == 1) << stage() << "tir.likely takes 1 argument";
                    return compileI(n->args[0]);
                }
                static const std::pair<const char*, Pred> preds[] = {
                    {"tir.isnan", kIsNan}, {"tir.isinf", kIsInf}, {"tir.isfinite", kIsFinite}};
                for (auto [name, p] : preds) {
                    if (op == name) {
                        TB_CHECK(n->args.size() == 1) << stage() << op << " takes 1 argument";
                        if (!isFloat(n->args[0].dtype()))  // an integer is never nan/inf
                            return emit({Code::ConstI, 0, -1, -1, -1, -1, p == kIsFinite ? 1 : 0});
                        return emit({Code::PredF, uint8_t(p), compileF(n->args[0])});
                    }
                }
                if (op == "tir.fabs" && n->args.size() == 1) return emit({Code::AbsI, 0, compileI(n->args[0])});
                if ((op == "tir.floor" || op == "tir.ceil" || op == "tir.round" || op == "tir.trunc" ||
                     op == "tir.nearbyint") && n->args.size() == 1)
                    return compileI(n->args[0]);
                TB_CHECK(false) << stage() << "intrinsic " << op << " is not supported on " << dtypeName(e.dtype());
                return -1;
            }
            case ExprKind::Load: {
                int32_t l = compileLoad(*e.as<LoadNode>());
                return emit({Code::CastFToI, uint8_t(e.dtype()), l});
            }
            case ExprKind::Reduce:
                return compileReduce(*e.as<ReduceNode>(), false);
            default:
                TB_CHECK(false) << stage() << "cannot evaluate an integer expression of kind " << int(e.kind());
                return -1;
        }
    }

    int32_t compileF(const Expr& e) {
        if (!isFloat(e.dtype())) return emit({Code::CastIToF, 0, compileI(e)});
        switch (e.kind()) {
            case ExprKind::FloatImm: {
                Node n{Code::ConstF};
                n.f = e.as<FloatImmNode>()->value;
                return emit(n);
            }
            case ExprKind::Add: case ExprKind::Sub: case ExprKind::Mul: case ExprKind::Div: case ExprKind::Mod:
            case ExprKind::FloorDiv: case ExprKind::FloorMod: case ExprKind::Min: case ExprKind::Max: {
                auto* n = static_cast<const BinaryNode*>(e.get());
                static constexpr Code codes[] = {Code::AddF, Code::SubF, Code::MulF, Code::DivF, Code::ModF,
                                                 Code::FloorDivF, Code::FloorModF, Code::MinF, Code::MaxF};
                int32_t a = compileF(n->a), b = compileF(n->b);
                return emit({codes[int(e.kind()) - int(ExprKind::Add)], 0, a, b});
            }
            case ExprKind::Select: {
                auto* n = e.as<SelectNode>();
                int32_t c = compileI(n->cond), t = compileF(n->t), f = compileF(n->f);
                return emit({Code::SelectF, 0, c, t, f});
            }
            case ExprKind::Cast: {
                auto* n = e.as<CastNode>();
                bool toF32 = e.dtype() == DType::Float32;
                if (!isFloat(n->value.dtype())) return emit({Code::CastIToF, uint8_t(toF32), compileI(n->value)});
                int32_t v = compileF(n->value);
                return toF32 ? emit({Code::RoundF32, 0, v}) : v;
            }
            case ExprKind::Call:
                return compileCallF(*e.as<CallNode>());
            case ExprKind::Load:
                return compileLoad(*e.as<LoadNode>());
            case ExprKind::Reduce:
                return compileReduce(*e.as<ReduceNode>(), true);
            default:
                TB_CHECK(false) << stage() << "cannot evaluate a float expression of kind " << int(e.kind());
                return -1;
        }
    }

    int32_t compileCallF(const CallNode& n) {
        const std::string& op = n.op;
        if (op == "tir.if_then_else") {
            TB_CHECK(n.args.size() == 3) << stage() << "tir.if_then_else takes 3 arguments";
            int32_t c = compileI(n.args[0]), t = compileF(n.args[1]), f = compileF(n.args[2]);
            return emit({Code::SelectF, 0, c, t, f});
        }
        static const std::pair<const char*, Fn1> unary[] = {
            {"tir.exp", kExp}, {"tir.exp2", kExp2}, {"tir.exp10", kExp10}, {"tir.log", kLog}, {"tir.log2", kLog2},
            {"tir.log10", kLog10}, {"tir.log1p", kLog1p}, {"tir.sqrt", kSqrt}, {"tir.rsqrt", kRsqrt},
            {"tir.tanh", kTanh}, {"tir.sigmoid", kSigmoid}, {"tir.fabs", kFabs}, {"tir.erf", kErf},
            {"tir.floor", kFloor}, {"tir.ceil", kCeil}, {"tir.round", kRound}, {"tir.nearbyint", kNearbyint},
            {"tir.trunc", kTrunc}, {"tir.sin", kSin}, {"tir.cos", kCos}, {"tir.tan", kTan}, {"tir.asin", kAsin},
            {"tir.acos", kAcos}, {"tir.atan", kAtan}, {"tir.sinh", kSinh}, {"tir.cosh", kCosh},
            {"tir.asinh", kAsinh}, {"tir.acosh", kAcosh}, {"tir.atanh", kAtanh}};
        for (auto [name, fn] : unary) {
            if (op == name) {
                TB_CHECK(n.args.size() == 1) << stage() << op << " takes 1 argument";
                return emit({Code::CallF1, uint8_t(fn), compileF(n.args[0])});
            }
        }
        static const std::pair<const char*, Fn2> binary[] = {
            {"tir.pow", kPow}, {"tir.atan2", kAtan2}, {"tir.fmod", kFmod}, {"tir.copysign", kCopysign},
            {"tir.hypot", kHypot}};
        for (auto [name, fn] : binary) {
            if (op == name) {
                TB_CHECK(n.args.size() == 2) << stage() << op << " takes 2 arguments";
                int32_t a = compileF(n.args[0]), b = compileF(n.args[1]);
                return emit({Code::CallF2, uint8_t(fn), a, b});
            }
        }
        if (op == "tir.likely") return compileF(n.args.at(0));
        TB_CHECK(false) << stage() << "intrinsic " << op << " is not supported by the interpreter";
        return -1;
    }

    int32_t compileLoad(const LoadNode& l) {
        TB_CHECK(l.valueIndex == 0 && l.op->body.size() <= 1)
            << stage() << "multi-output operation " << l.op->name << " is not supported";
        int32_t tid = tensorId(l.op);
        const auto& shape = l.op->shape;
        TB_CHECK(l.indices.size() == shape.size()) << stage() << "load of " << l.op->name << " with "
                                                   << l.indices.size() << " indices, rank " << shape.size();
        // Flattened affine offset when every index is affine and in bounds over the whole box.
        Lin flat;
        bool ok = true;
        for (size_t d = 0; d < shape.size() && ok; ++d) {
            auto lin = linearize(l.indices[d]);
            if (!lin || !inBounds(*lin, shape[d])) {
                ok = false;
                break;
            }
            Lin scaled;
            scaled.add(flat, shape[d]);
            scaled.add(*lin, 1);
            flat = std::move(scaled);
        }
        if (ok) {
            Node n{Code::LoadFlatF};
            n.i = tid;
            n.aux = addAffine(flat);
            return emit(n);
        }
        CheckedLoad cl{tid, int32_t(m_p.dimNodes.size()), int32_t(shape.size())};
        std::vector<int32_t> dims;
        for (const auto& idx : l.indices) dims.push_back(compileI(idx));
        m_p.dimNodes.insert(m_p.dimNodes.end(), dims.begin(), dims.end());
        m_p.checked.push_back(cl);
        Node n{Code::LoadCheckedF};
        n.i = tid;
        n.aux = int32_t(m_p.checked.size() - 1);
        return emit(n);
    }

    int32_t compileReduce(const ReduceNode& r, bool wantFloat) {
        bool isF = isFloat(r.dtype);
        ReduceInfo info;
        info.kind = r.combiner;
        info.isFloat = isF;
        info.identityF = identityF(r.combiner, r.dtype);
        info.identityI = identityI(r.combiner, r.dtype);
        // init is evaluated before the axes are bound.
        if (r.init) info.init = isF ? compileF(r.init) : compileI(r.init);
        std::vector<AxisSlot> axes;
        for (const auto& ax : r.axis) axes.push_back({bindSlot(ax.var, ax.min, ax.extent), ax.min, ax.extent});
        info.axisBegin = int32_t(m_p.axes.size());
        info.naxis = int32_t(axes.size());
        m_p.axes.insert(m_p.axes.end(), axes.begin(), axes.end());
        info.source = isF ? compileF(r.source) : compileI(r.source);
        if (r.condition) info.cond = compileI(r.condition);
        m_p.reduces.push_back(info);
        Node n{isF ? Code::ReduceF : Code::ReduceI};
        n.aux = int32_t(m_p.reduces.size() - 1);
        int32_t id = emit(n);
        if (wantFloat && !isF) return emit({Code::CastIToF, 0, id});
        return id;
    }

    bool inBounds(const Lin& lin, int64_t extent) const {
        int64_t lo = lin.c, hi = lin.c;
        for (auto [s, k] : lin.terms) {
            auto [mn, mx] = m_range[size_t(s)];
            lo += k > 0 ? k * mn : k * mx;
            hi += k > 0 ? k * mx : k * mn;
        }
        return lo >= 0 && hi < extent;
    }

    int32_t addAffine(const Lin& l) {
        Affine a;
        a.c = l.c;
        a.begin = int32_t(m_p.terms.size());
        auto terms = l.terms;
        std::sort(terms.begin(), terms.end());  // spatial slots (0..nSpatial-1) first
        for (auto [s, k] : terms) m_p.terms.push_back({s, k});
        a.end = int32_t(m_p.terms.size());
        a.split = a.begin;
        while (a.split < a.end && m_p.terms[size_t(a.split)].slot < m_out.nSpatial) ++a.split;
        m_p.affines.push_back(a);
        return int32_t(m_p.affines.size() - 1);
    }

    int32_t tensorId(const Operation& op) {
        for (size_t i = 0; i < m_p.tensors.size(); ++i)
            if (m_p.tensors[i].op == op) return int32_t(i);
        m_p.tensors.push_back({op, op->shape});
        return int32_t(m_p.tensors.size() - 1);
    }

    std::string stage() const { return "stage '" + m_op.name + "': "; }

private:
    int32_t slotOf(const Expr& v) {
        auto it = m_slotOf.find(v.get());
        TB_CHECK(it != m_slotOf.end()) << stage() << "variable '" << v.as<VarNode>()->name
                                       << "' is neither an axis nor an enclosing reduce axis";
        return it->second;
    }
    int32_t emitAffine(const Lin& l) {
        if (l.terms.empty()) return emit({Code::ConstI, 0, -1, -1, -1, -1, l.c});
        if (l.c == 0 && l.terms.size() == 1 && l.terms[0].second == 1)
            return emit({Code::VarI, 0, -1, -1, -1, l.terms[0].first});
        Node n{Code::AffineI};
        n.aux = addAffine(l);
        return emit(n);
    }
    int32_t emit(const Node& n) {
        m_p.nodes.push_back(n);
        return int32_t(m_p.nodes.size() - 1);
    }

    CompiledOp& m_out;
    Program& m_p;
    const OperationNode& m_op;
    std::unordered_map<const ExprNode*, int32_t> m_slotOf;
    std::vector<std::pair<int64_t, int64_t>> m_range;  // [min, max] of each slot
};

// Left-deep product of loads: Mul(Mul(L1, L2), L3) -> {L1, L2, L3}; false otherwise.
bool productOfLoads(const Expr& e, std::vector<const LoadNode*>& out) {
    if (e.kind() == ExprKind::Load) {
        out.push_back(e.as<LoadNode>());
        return true;
    }
    if (e.kind() != ExprKind::Mul || !isFloat(e.dtype())) return false;
    auto* n = static_cast<const BinaryNode*>(e.get());
    if (n->b.kind() != ExprKind::Load) return false;
    if (!productOfLoads(n->a, out)) return false;
    out.push_back(n->b.as<LoadNode>());
    return true;
}

// Set up the product-of-loads loop for a top-level Reduce, when it applies.
std::optional<FastReduce> tryFastReduce(Compiler& cc, CompiledOp& c, const ReduceNode& r) {
    if (!isFloat(r.dtype) || r.condition || r.axis.empty()) return std::nullopt;
    std::vector<const LoadNode*> loads;
    if (!productOfLoads(r.source, loads) || loads.empty() || loads.size() > 3) return std::nullopt;
    std::vector<int32_t> redSlots;
    for (const auto& ax : r.axis) redSlots.push_back(cc.bindSlot(ax.var, ax.min, ax.extent));
    FastReduce fr;
    fr.kind = r.combiner;
    fr.nf = int(loads.size());
    fr.identity = identityF(r.combiner, r.dtype);
    fr.inner = r.axis.back().extent;
    const size_t nOuter = r.axis.size() - 1;
    for (size_t k = 0; k < nOuter; ++k) fr.outer *= r.axis[k].extent;
    if (fr.outer > (int64_t(1) << 22)) return std::nullopt;
    for (int k = 0; k < fr.nf; ++k) {
        const LoadNode& l = *loads[size_t(k)];
        if (!isFloat(l.dtype) || l.valueIndex != 0 || l.op->body.size() > 1) return std::nullopt;
        Lin flat;
        for (size_t d = 0; d < l.indices.size(); ++d) {
            auto lin = cc.linearize(l.indices[d]);
            if (!lin || !cc.inBounds(*lin, l.op->shape[d])) return std::nullopt;  // general path reports it
            Lin scaled;
            scaled.add(flat, l.op->shape[d]);
            scaled.add(*lin, 1);
            flat = std::move(scaled);
        }
        // Split into spatial and reduce parts.
        Lin spatial;
        spatial.c = flat.c;
        std::vector<int64_t> redCoef(r.axis.size(), 0);
        for (auto [s, coef] : flat.terms) {
            auto it = std::find(redSlots.begin(), redSlots.end(), s);
            if (it != redSlots.end()) redCoef[size_t(it - redSlots.begin())] += coef;
            else if (s < c.nSpatial) spatial.terms.emplace_back(s, coef);
            else return std::nullopt;
        }
        fr.tensor[k] = cc.tensorId(l.op);
        fr.spatial[k] = cc.addAffine(spatial);
        fr.stride[k] = redCoef.back();
        const int64_t innerBase = redCoef.back() * r.axis.back().min;
        auto& table = fr.table[k];
        table.resize(size_t(fr.outer));
        std::vector<int64_t> idx(nOuter, 0);
        for (int64_t j = 0; j < fr.outer; ++j) {
            int64_t off = innerBase;
            for (size_t a = 0; a < nOuter; ++a) off += redCoef[a] * (r.axis[a].min + idx[a]);
            table[size_t(j)] = off;
            for (size_t a = nOuter; a-- > 0;) {
                if (++idx[a] < r.axis[a].extent) break;
                idx[a] = 0;
            }
        }
    }
    if (r.init) fr.init = cc.compileF(r.init);
    return fr;
}

CompiledOp compileOp(const OperationNode& op, const EvalOptions& options) {
    TB_CHECK(op.isCompute()) << "compileOp on placeholder " << op.name;
    TB_CHECK(op.body.size() == 1) << "stage '" << op.name << "': multi-output compute ops are not supported";
    CompiledOp c;
    c.op = &op;
    c.nSpatial = int(op.axis.size());
    Compiler cc(c, op);
    for (const auto& ax : op.axis) cc.bindSlot(ax.var, ax.min, ax.extent);
    const Expr& body = op.body[0];
    if (auto* r = body.as<ReduceNode>()) {
        for (const auto& ax : r->axis) c.reducePoints *= ax.extent;
        if (options.specialize) c.fast = tryFastReduce(cc, c, *r);
    }
    if (!c.fast) {
        c.rootFloat = isFloat(body.dtype());
        c.root = c.rootFloat ? cc.compileF(body) : cc.compileI(body);
    }
    c.nSlots = cc.numSlots();
    return c;
}

// ---- evaluation --------------------------------------------------------------------------
//
// Nodes are evaluated for a batch of up to kLanes consecutive output points at once, so the
// dispatch cost of the node array is paid per batch, not per point. A LaneSet lists the points
// (lanes) a node must be evaluated for: Select, if_then_else, && and || narrow it for their lazy
// operands, a Reduce condition for its source. Each node owns a kLanes-wide scratch row and
// returns a pointer to it, valid at the lanes it was asked for.

constexpr int kLanes = 128;

struct LaneSet {
    const int32_t* idx;  // active lanes, ascending
    int n;
    bool dense;          // idx[k] == k for every k (all of 0..n-1)
};

template <class Fn>
inline void forLanes(const LaneSet& ls, Fn&& fn) {
    if (ls.dense) {
        for (int l = 0; l < ls.n; ++l) fn(l);
    } else {
        for (int k = 0; k < ls.n; ++k) fn(ls.idx[k]);
    }
}

bool isFloatCode(Code c) { return c <= Code::ReduceF; }

double callF1(uint8_t fn, double x) {
    switch (Fn1(fn)) {
        case kExp: return std::exp(x);
        case kExp2: return std::exp2(x);
        case kExp10: return std::pow(10.0, x);
        case kLog: return std::log(x);
        case kLog2: return std::log2(x);
        case kLog10: return std::log10(x);
        case kLog1p: return std::log1p(x);
        case kSqrt: return std::sqrt(x);
        case kRsqrt: return 1.0 / std::sqrt(x);
        case kTanh: return std::tanh(x);
        case kSigmoid: return 1.0 / (1.0 + std::exp(-x));
        case kFabs: return std::fabs(x);
        case kErf: return std::erf(x);
        case kFloor: return std::floor(x);
        case kCeil: return std::ceil(x);
        case kRound: return std::round(x);
        case kNearbyint: return std::nearbyint(x);
        case kTrunc: return std::trunc(x);
        case kSin: return std::sin(x);
        case kCos: return std::cos(x);
        case kTan: return std::tan(x);
        case kAsin: return std::asin(x);
        case kAcos: return std::acos(x);
        case kAtan: return std::atan(x);
        case kSinh: return std::sinh(x);
        case kCosh: return std::cosh(x);
        case kAsinh: return std::asinh(x);
        case kAcosh: return std::acosh(x);
        case kAtanh: return std::atanh(x);
    }
    return 0;
}

double callF2(uint8_t fn, double x, double y) {
    switch (Fn2(fn)) {
        case kPow: return std::pow(x, y);
        case kAtan2: return std::atan2(x, y);
        case kFmod: return std::fmod(x, y);
        case kCopysign: return std::copysign(x, y);
        case kHypot: return std::hypot(x, y);
    }
    return 0;
}

template <class T, class Out>
void compareLanes(uint8_t kind, const T* x, const T* y, Out* o, const LaneSet& ls) {
    switch (ExprKind(kind)) {
        case ExprKind::EQ: forLanes(ls, [&](int l) { o[l] = x[l] == y[l]; }); break;
        case ExprKind::NE: forLanes(ls, [&](int l) { o[l] = x[l] != y[l]; }); break;
        case ExprKind::LT: forLanes(ls, [&](int l) { o[l] = x[l] < y[l]; }); break;
        case ExprKind::LE: forLanes(ls, [&](int l) { o[l] = x[l] <= y[l]; }); break;
        case ExprKind::GT: forLanes(ls, [&](int l) { o[l] = x[l] > y[l]; }); break;
        case ExprKind::GE: forLanes(ls, [&](int l) { o[l] = x[l] >= y[l]; }); break;
        default: TB_CHECK(false) << "not a comparison";
    }
}

// G output points at once: G independent accumulators hide the add latency, while each point
// still sees exactly the scalar sequence of operations (so the results do not depend on G).
template <int NF, ReduceKind K, int G>
void fastReduce(const FastReduce& fr, const float* const (*base)[3], double* acc) {
    const int64_t n = fr.inner;
    int64_t s[NF];
    for (int k = 0; k < NF; ++k) s[k] = fr.stride[k];
    double a[G];
    for (int g = 0; g < G; ++g) a[g] = acc[g];
    for (int64_t j = 0; j < fr.outer; ++j) {
        const float* q[G][NF];
        for (int g = 0; g < G; ++g)
            for (int k = 0; k < NF; ++k) q[g][k] = base[g][k] + fr.table[k][size_t(j)];
        for (int64_t t = 0; t < n; ++t) {
            for (int g = 0; g < G; ++g) {
                double v = double(q[g][0][t * s[0]]);
                if constexpr (NF >= 2) v = v * double(q[g][1][t * s[1]]);
                if constexpr (NF >= 3) v = v * double(q[g][2][t * s[2]]);
                if constexpr (K == ReduceKind::Sum) a[g] = a[g] + v;
                else if constexpr (K == ReduceKind::Max) a[g] = a[g] > v ? a[g] : v;
                else a[g] = a[g] < v ? a[g] : v;
            }
        }
    }
    for (int g = 0; g < G; ++g) acc[g] = a[g];
}

constexpr int kFastGroup = 4;
using FastFn = void (*)(const FastReduce&, const float* const (*)[3], double*);

// [0] processes kFastGroup points, [1] one point.
std::pair<FastFn, FastFn> pickFast(const FastReduce& fr) {
#define TB_FAST(NF, K) {fastReduce<NF, K, kFastGroup>, fastReduce<NF, K, 1>}
    static const std::pair<FastFn, FastFn> table[3][3] = {
        {TB_FAST(1, ReduceKind::Sum), TB_FAST(1, ReduceKind::Max), TB_FAST(1, ReduceKind::Min)},
        {TB_FAST(2, ReduceKind::Sum), TB_FAST(2, ReduceKind::Max), TB_FAST(2, ReduceKind::Min)},
        {TB_FAST(3, ReduceKind::Sum), TB_FAST(3, ReduceKind::Max), TB_FAST(3, ReduceKind::Min)}};
#undef TB_FAST
    return table[fr.nf - 1][int(fr.kind)];
}

// Evaluates one compiled op, batch by batch. One per thread.
class BatchEval {
public:
    BatchEval(const CompiledOp& c, const float* const* bufs)
        : m_c(c), m_p(c.prog), m_bufs(bufs), m_nSpatial(c.nSpatial) {
        const auto& nodes = m_p.nodes;
        m_off.resize(nodes.size());
        size_t nf = 0, ni = 0;
        for (size_t k = 0; k < nodes.size(); ++k) m_off[k] = isFloatCode(nodes[k].code) ? nf++ * kLanes : ni++ * kLanes;
        m_fs.assign(nf * kLanes, 0.0);
        m_is.assign(ni * kLanes, 0);
        m_lists.assign(nodes.size() * 2 * kLanes, 0);
        m_laneSlot.assign(size_t(std::max(1, m_nSpatial)) * kLanes, 0);
        m_s.assign(size_t(std::max(1, c.nSlots)), 0);
        m_tmp.assign(kLanes, 0);
        m_iota.resize(kLanes);
        for (int l = 0; l < kLanes; ++l) m_iota[size_t(l)] = l;
        for (size_t k = 0; k < nodes.size(); ++k) {  // constants are filled once
            if (nodes[k].code == Code::ConstF) std::fill_n(m_fs.data() + m_off[k], kLanes, nodes[k].f);
            if (nodes[k].code == Code::ConstI) std::fill_n(m_is.data() + m_off[k], kLanes, nodes[k].i);
        }
        if (c.fast) {
            for (auto& o : m_fastOff) o.assign(kLanes, 0);
            m_fastFn = pickFast(*c.fast);
        }
    }

    /// Evaluate output points [start, start + n) (n <= kLanes) whose first multi-index is `first`
    /// (axis values); `first` is advanced past the batch. Results go to out[start..].
    void run(std::vector<int64_t>& first, int64_t start, int n, float* out) {
        setLanes(first, n);
        LaneSet all{m_iota.data(), n, true};
        float* o = out + start;
        if (m_c.fast) {
            const FastReduce& fr = *m_c.fast;
            for (int k = 0; k < fr.nf; ++k) affineLanes(fr.spatial[k], all, m_fastOff[size_t(k)].data());
            double acc[kLanes];
            const double* init = fr.init >= 0 ? f(fr.init, all) : nullptr;
            for (int l = 0; l < n; ++l) acc[l] = init ? init[l] : fr.identity;
            const float* base[kLanes][3] = {};
            for (int l = 0; l < n; ++l)
                for (int k = 0; k < fr.nf; ++k) base[l][k] = m_bufs[fr.tensor[k]] + m_fastOff[size_t(k)][size_t(l)];
            int l = 0;
            for (; l + kFastGroup <= n; l += kFastGroup) m_fastFn.first(fr, base + l, acc + l);
            for (; l < n; ++l) m_fastFn.second(fr, base + l, acc + l);
            for (l = 0; l < n; ++l) o[l] = float(acc[l]);
        } else if (m_c.rootFloat) {
            const double* v = f(m_c.root, all);
            for (int l = 0; l < n; ++l) o[l] = float(v[l]);
        } else {
            const int64_t* v = i(m_c.root, all);
            for (int l = 0; l < n; ++l) o[l] = float(v[l]);
        }
    }

private:
    double* outF(int32_t id) { return m_fs.data() + m_off[size_t(id)]; }
    int64_t* outI(int32_t id) { return m_is.data() + m_off[size_t(id)]; }
    int32_t* list(int32_t id, int which) { return m_lists.data() + (size_t(id) * 2 + size_t(which)) * kLanes; }
    const int64_t* lane(int32_t slot) const { return m_laneSlot.data() + size_t(slot) * kLanes; }

    // Fill the per-lane spatial coordinates for n consecutive points starting at `first`, as runs
    // along the innermost axis; advance `first` past them.
    void setLanes(std::vector<int64_t>& first, int n) {
        const auto& axes = m_c.op->axis;
        m_runs.clear();
        if (m_nSpatial == 0) {
            m_runs.push_back({0, n});
            return;
        }
        const int last = m_nSpatial - 1;
        const int64_t lastEnd = axes[size_t(last)].min + axes[size_t(last)].extent;
        for (int l = 0; l < n;) {
            const int len = int(std::min<int64_t>(n - l, lastEnd - first[size_t(last)]));
            const int r = int(m_runs.size());
            m_runs.push_back({l, len});
            for (int d = 0; d < m_nSpatial; ++d) {
                m_runIdx[size_t(r) * size_t(m_nSpatial) + size_t(d)] = first[size_t(d)];
                int64_t* dst = m_laneSlot.data() + size_t(d) * kLanes + size_t(l);
                if (d < last) std::fill_n(dst, len, first[size_t(d)]);
                else for (int j = 0; j < len; ++j) dst[j] = first[size_t(d)] + j;
            }
            l += len;
            first[size_t(last)] += len;
            for (int d = last; d > 0 && first[size_t(d)] >= axes[size_t(d)].min + axes[size_t(d)].extent; --d) {
                first[size_t(d)] = axes[size_t(d)].min;
                ++first[size_t(d - 1)];
            }
        }
    }

    // o[l] = affine value at lane l.
    void affineLanes(int32_t id, const LaneSet& ls, int64_t* o) const {
        const Affine& a = m_p.affines[size_t(id)];
        int64_t u = a.c;
        for (int32_t t = a.split; t < a.end; ++t) u += m_p.terms[size_t(t)].coef * m_s[size_t(m_p.terms[size_t(t)].slot)];
        if (ls.dense) {
            // Arithmetic progressions along each run of the innermost axis.
            int64_t kLast = 0;
            if (a.split > a.begin && m_p.terms[size_t(a.split - 1)].slot == m_nSpatial - 1)
                kLast = m_p.terms[size_t(a.split - 1)].coef;
            for (size_t r = 0; r < m_runs.size(); ++r) {
                const int64_t* idx = m_runIdx.data() + r * size_t(m_nSpatial);
                int64_t v = u;
                for (int32_t t = a.begin; t < a.split; ++t) v += m_p.terms[size_t(t)].coef * idx[m_p.terms[size_t(t)].slot];
                const auto [l0, len] = m_runs[r];
                for (int j = 0; j < len; ++j) o[l0 + j] = v + kLast * j;
            }
            return;
        }
        forLanes(ls, [&](int l) { o[l] = u; });
        for (int32_t t = a.begin; t < a.split; ++t) {
            const int64_t k = m_p.terms[size_t(t)].coef;
            const int64_t* v = lane(m_p.terms[size_t(t)].slot);
            forLanes(ls, [&](int l) { o[l] += k * v[l]; });
        }
    }

    // Lanes of `ls` where c[l] is true (which = 0) or false (which = 1), in a list owned by node id.
    LaneSet split(int32_t id, int which, const int64_t* c, const LaneSet& ls, bool want) {
        int32_t* dst = list(id, which);
        int m = 0;
        forLanes(ls, [&](int l) {
            dst[m] = l;
            m += (c[l] != 0) == want;
        });
        return {dst, m, ls.dense && m == ls.n};
    }

    template <class T>
    const T* eval(int32_t id, const LaneSet& ls) {
        if constexpr (std::is_same_v<T, double>) return f(id, ls);
        else return i(id, ls);
    }

#define TB_BIN(OUT, EVAL, EXPR)                                  \
    {                                                            \
        const auto* x = EVAL(n.a, ls);                           \
        const auto* y = EVAL(n.b, ls);                           \
        forLanes(ls, [&](int l) { OUT[l] = EXPR; });             \
        return OUT;                                              \
    }

    const double* f(int32_t id, const LaneSet& ls) {
        const Node& n = m_p.nodes[size_t(id)];
        double* o = outF(id);
        switch (n.code) {
            case Code::ConstF: return o;
            case Code::LoadFlatF: {
                const float* buf = m_bufs[n.i];
                int64_t* off = m_tmp.data();
                affineLanes(n.aux, ls, off);
                forLanes(ls, [&](int l) { o[l] = double(buf[off[l]]); });
                return o;
            }
            case Code::LoadCheckedF: return loadChecked(n, ls, o);
            case Code::CastIToF: {
                const int64_t* x = i(n.a, ls);
                if (n.sub) forLanes(ls, [&](int l) { o[l] = double(float(x[l])); });
                else forLanes(ls, [&](int l) { o[l] = double(x[l]); });
                return o;
            }
            case Code::RoundF32: {
                const double* x = f(n.a, ls);
                forLanes(ls, [&](int l) { o[l] = double(float(x[l])); });
                return o;
            }
            case Code::AddF: TB_BIN(o, f, x[l] + y[l])
            case Code::SubF: TB_BIN(o, f, x[l] - y[l])
            case Code::MulF: TB_BIN(o, f, x[l] * y[l])
            case Code::DivF: TB_BIN(o, f, x[l] / y[l])
            case Code::ModF: TB_BIN(o, f, std::fmod(x[l], y[l]))
            case Code::FloorDivF: TB_BIN(o, f, std::floor(x[l] / y[l]))
            case Code::FloorModF: TB_BIN(o, f, x[l] - std::floor(x[l] / y[l]) * y[l])
            case Code::MinF: TB_BIN(o, f, x[l] < y[l] ? x[l] : y[l])
            case Code::MaxF: TB_BIN(o, f, x[l] > y[l] ? x[l] : y[l])
            case Code::SelectF: {
                const int64_t* c = i(n.a, ls);
                LaneSet t = split(id, 0, c, ls, true), e = split(id, 1, c, ls, false);
                const double* tv = t.n ? f(n.b, t) : nullptr;
                const double* ev = e.n ? f(n.c, e) : nullptr;
                forLanes(ls, [&](int l) { o[l] = c[l] ? tv[l] : ev[l]; });
                return o;
            }
            case Code::CallF1: {
                const double* x = f(n.a, ls);
                switch (Fn1(n.sub)) {  // the common ones get their own loop
                    case kExp: forLanes(ls, [&](int l) { o[l] = std::exp(x[l]); }); break;
                    case kSigmoid: forLanes(ls, [&](int l) { o[l] = 1.0 / (1.0 + std::exp(-x[l])); }); break;
                    case kTanh: forLanes(ls, [&](int l) { o[l] = std::tanh(x[l]); }); break;
                    case kSqrt: forLanes(ls, [&](int l) { o[l] = std::sqrt(x[l]); }); break;
                    default: forLanes(ls, [&](int l) { o[l] = callF1(n.sub, x[l]); }); break;
                }
                return o;
            }
            case Code::CallF2: TB_BIN(o, f, callF2(n.sub, x[l], y[l]))
            case Code::ReduceF: {
                reduce<double>(m_p.reduces[size_t(n.aux)], ls, o);
                return o;
            }
            default: break;
        }
        TB_CHECK(false) << "interpreter: node " << id << " is not float-valued";
        return nullptr;
    }

    const int64_t* i(int32_t id, const LaneSet& ls) {
        const Node& n = m_p.nodes[size_t(id)];
        int64_t* o = outI(id);
        switch (n.code) {
            case Code::ConstI: return o;
            case Code::VarI: {
                if (n.aux < m_nSpatial) return lane(n.aux);
                const int64_t v = m_s[size_t(n.aux)];
                forLanes(ls, [&](int l) { o[l] = v; });
                return o;
            }
            case Code::AffineI: affineLanes(n.aux, ls, o); return o;
            case Code::CastFToI: {
                const double* x = f(n.a, ls);
                const DType t = DType(n.sub);
                if (t == DType::Bool) {
                    forLanes(ls, [&](int l) { o[l] = x[l] != 0; });
                    return o;
                }
                const double lo = t == DType::Int32 ? -2147483648.0 : -9223372036854775808.0;
                const double hi = t == DType::Int32 ? 2147483648.0 : 9223372036854775808.0;
                bool bad = false;
                forLanes(ls, [&](int l) {
                    double tr = std::trunc(x[l]);
                    bool ok = tr >= lo && tr < hi;  // false for NaN
                    bad |= !ok;
                    o[l] = ok ? int64_t(tr) : 0;
                });
                if (bad) {
                    forLanes(ls, [&](int l) {
                        double tr = std::trunc(x[l]);
                        if (!(tr >= lo && tr < hi)) castError(x[l], t, l);
                    });
                }
                return o;
            }
            case Code::CastIToI: {
                const int64_t* x = i(n.a, ls);
                switch (DType(n.sub)) {
                    case DType::Bool: forLanes(ls, [&](int l) { o[l] = x[l] != 0; }); break;
                    case DType::Int32: forLanes(ls, [&](int l) { o[l] = int64_t(int32_t(x[l])); }); break;
                    default: forLanes(ls, [&](int l) { o[l] = x[l]; }); break;
                }
                return o;
            }
            case Code::AddI: TB_BIN(o, i, x[l] + y[l])
            case Code::SubI: TB_BIN(o, i, x[l] - y[l])
            case Code::MulI: TB_BIN(o, i, x[l] * y[l])
            case Code::DivI: case Code::ModI: case Code::FloorDivI: case Code::FloorModI: {
                const int64_t* x = i(n.a, ls);
                const int64_t* y = i(n.b, ls);
                forLanes(ls, [&](int l) {
                    if (y[l] == 0) divisionError(l);
                });
                switch (n.code) {
                    case Code::DivI: forLanes(ls, [&](int l) { o[l] = x[l] / y[l]; }); break;
                    case Code::ModI: forLanes(ls, [&](int l) { o[l] = x[l] % y[l]; }); break;
                    case Code::FloorDivI: forLanes(ls, [&](int l) { o[l] = floorDiv(x[l], y[l]); }); break;
                    default: forLanes(ls, [&](int l) { o[l] = floorMod(x[l], y[l]); }); break;
                }
                return o;
            }
            case Code::MinI: TB_BIN(o, i, x[l] < y[l] ? x[l] : y[l])
            case Code::MaxI: TB_BIN(o, i, x[l] > y[l] ? x[l] : y[l])
            case Code::CmpF: {
                const double* x = f(n.a, ls);
                const double* y = f(n.b, ls);
                compareLanes(n.sub, x, y, o, ls);
                return o;
            }
            case Code::CmpI: {
                const int64_t* x = i(n.a, ls);
                const int64_t* y = i(n.b, ls);
                compareLanes(n.sub, x, y, o, ls);
                return o;
            }
            case Code::And: case Code::Or: {
                const bool isAnd = n.code == Code::And;
                const int64_t* x = i(n.a, ls);
                LaneSet rest = split(id, 0, x, ls, isAnd);  // lanes whose result depends on b
                const int64_t* y = rest.n ? i(n.b, rest) : nullptr;
                if (isAnd) forLanes(ls, [&](int l) { o[l] = x[l] ? y[l] != 0 : 0; });
                else forLanes(ls, [&](int l) { o[l] = x[l] ? 1 : y[l] != 0; });
                return o;
            }
            case Code::Not: {
                const int64_t* x = i(n.a, ls);
                forLanes(ls, [&](int l) { o[l] = !x[l]; });
                return o;
            }
            case Code::SelectI: {
                const int64_t* c = i(n.a, ls);
                LaneSet t = split(id, 0, c, ls, true), e = split(id, 1, c, ls, false);
                const int64_t* tv = t.n ? i(n.b, t) : nullptr;
                const int64_t* ev = e.n ? i(n.c, e) : nullptr;
                forLanes(ls, [&](int l) { o[l] = c[l] ? tv[l] : ev[l]; });
                return o;
            }
            case Code::AbsI: {
                const int64_t* x = i(n.a, ls);
                forLanes(ls, [&](int l) { o[l] = x[l] < 0 ? -x[l] : x[l]; });
                return o;
            }
            case Code::PredF: {
                const double* x = f(n.a, ls);
                const uint8_t p = n.sub;
                forLanes(ls, [&](int l) {
                    o[l] = p == kIsNan ? std::isnan(x[l]) : p == kIsInf ? std::isinf(x[l]) : std::isfinite(x[l]);
                });
                return o;
            }
            case Code::ReduceI: {
                reduce<int64_t>(m_p.reduces[size_t(n.aux)], ls, o);
                return o;
            }
            default: break;
        }
        TB_CHECK(false) << "interpreter: node " << id << " is not integer-valued";
        return nullptr;
    }
#undef TB_BIN

    const double* loadChecked(const Node& n, const LaneSet& ls, double* o) {
        const CheckedLoad& cl = m_p.checked[size_t(n.aux)];
        const auto& shape = m_p.tensors[size_t(cl.tensor)].shape;
        const int64_t** dims = m_dimPtrs.data() + cl.begin;  // evaluate every index before using m_tmp
        for (int32_t d = 0; d < cl.ndim; ++d) dims[d] = i(m_p.dimNodes[size_t(cl.begin + d)], ls);
        int64_t* off = m_tmp.data();
        bool bad = false;
        forLanes(ls, [&](int l) { off[l] = 0; });
        for (int32_t d = 0; d < cl.ndim; ++d) {
            const int64_t ext = shape[size_t(d)];
            const int64_t* x = dims[d];
            forLanes(ls, [&](int l) {
                bad |= x[l] < 0 || x[l] >= ext;
                off[l] = off[l] * ext + x[l];
            });
        }
        if (bad) {
            forLanes(ls, [&](int l) {
                for (int32_t d = 0; d < cl.ndim; ++d)
                    if (dims[d][l] < 0 || dims[d][l] >= shape[size_t(d)]) outOfBounds(cl, dims, l);
            });
        }
        const float* buf = m_bufs[n.i];
        forLanes(ls, [&](int l) { o[l] = double(buf[off[l]]); });
        return o;
    }

    template <class T>
    void reduce(const ReduceInfo& r, const LaneSet& ls, T* acc) {
        if (r.init >= 0) {
            const T* iv = eval<T>(r.init, ls);
            forLanes(ls, [&](int l) { acc[l] = iv[l]; });
        } else {
            const T id = std::is_same_v<T, double> ? T(r.identityF) : T(r.identityI);
            forLanes(ls, [&](int l) { acc[l] = id; });
        }
        const AxisSlot* ax = m_p.axes.data() + r.axisBegin;
        const int na = r.naxis;
        for (int k = 0; k < na; ++k) m_s[size_t(ax[k].slot)] = ax[k].min;
        while (true) {
            LaneSet active = ls;
            if (r.cond >= 0) {
                const int64_t* c = i(r.cond, ls);
                active = split(r.cond, 0, c, ls, true);  // the condition node's own list row
            }
            if (active.n) {
                const T* v = eval<T>(r.source, active);
                switch (r.kind) {
                    case ReduceKind::Sum: forLanes(active, [&](int l) { acc[l] = acc[l] + v[l]; }); break;
                    case ReduceKind::Max: forLanes(active, [&](int l) { acc[l] = acc[l] > v[l] ? acc[l] : v[l]; }); break;
                    case ReduceKind::Min: forLanes(active, [&](int l) { acc[l] = acc[l] < v[l] ? acc[l] : v[l]; }); break;
                }
            }
            int k = na - 1;
            for (; k >= 0; --k) {
                int64_t& s = m_s[size_t(ax[k].slot)];
                if (++s < ax[k].min + ax[k].extent) break;
                s = ax[k].min;
            }
            if (k < 0) break;
        }
    }

    std::string point(int l) const {
        std::ostringstream os;
        os << '(';
        for (int s = 0; s < m_c.nSlots; ++s)
            os << (s ? ", " : "") << (s < m_nSpatial ? lane(s)[l] : m_s[size_t(s)]);
        os << ')';
        return os.str();
    }

    [[noreturn, gnu::cold, gnu::noinline]] void outOfBounds(const CheckedLoad& cl, const int64_t* const* dims, int l) {
        const TensorRef& t = m_p.tensors[size_t(cl.tensor)];
        std::ostringstream idx;
        idx << t.op->name << '[';
        for (int32_t d = 0; d < cl.ndim; ++d) idx << (d ? ", " : "") << dims[d][l];
        idx << ']';
        ::tb::detail::Thrower<::tb::InternalError>(__FILE__, __LINE__, "load in bounds")
            << "stage '" << m_c.op->name << "': out-of-bounds load " << idx.str() << " from tensor '" << t.op->name
            << "' of shape " << shapeStr(t.shape) << " at point " << point(l);
        std::abort();  // unreachable: the Thrower throws
    }
    [[noreturn, gnu::cold, gnu::noinline]] void divisionError(int l) {
        ::tb::detail::Thrower<::tb::InternalError>(__FILE__, __LINE__, "divisor != 0")
            << "stage '" << m_c.op->name << "': integer division by zero at point " << point(l);
        std::abort();
    }
    [[noreturn, gnu::cold, gnu::noinline]] void castError(double v, DType t, int l) {
        ::tb::detail::Thrower<::tb::InternalError>(__FILE__, __LINE__, "cast in range")
            << "stage '" << m_c.op->name << "': cast of " << v << " to " << dtypeName(t)
            << " is out of range at point " << point(l);
        std::abort();
    }

    const CompiledOp& m_c;
    const Program& m_p;
    const float* const* m_bufs;
    const int m_nSpatial;
    std::vector<size_t> m_off;         // node -> offset of its scratch row in m_fs or m_is
    std::vector<double> m_fs;
    std::vector<int64_t> m_is;
    std::vector<int32_t> m_lists;      // two lane lists per node
    std::vector<int64_t> m_laneSlot;   // spatial axis values per lane
    std::vector<int64_t> m_s;          // values of the reduce-axis slots (uniform over lanes)
    std::vector<int64_t> m_tmp;        // load offsets, consumed right after being computed
    std::vector<int32_t> m_iota;
    std::vector<const int64_t*> m_dimPtrs = std::vector<const int64_t*>(m_p.dimNodes.size() + 1);
    std::vector<std::pair<int, int>> m_runs;  // (first lane, length) of each innermost-axis run
    std::vector<int64_t> m_runIdx = std::vector<int64_t>(size_t(std::max(1, m_nSpatial)) * kLanes);
    std::vector<int64_t> m_fastOff[3];
    std::pair<FastFn, FastFn> m_fastFn{nullptr, nullptr};
};

// Evaluate output points [begin, end) (row-major linear indices) of one compiled op.
void runChunk(const CompiledOp& c, const float* const* bufs, float* out, int64_t begin, int64_t end, int chunk,
              const std::atomic<int>& firstFailed) {
    const auto& axes = c.op->axis;
    std::vector<int64_t> first(size_t(std::max(c.nSpatial, 1)), 0);
    int64_t rem = begin;
    for (int d = c.nSpatial - 1; d >= 0; --d) {
        first[size_t(d)] = axes[size_t(d)].min + rem % axes[size_t(d)].extent;
        rem /= axes[size_t(d)].extent;
    }
    BatchEval ev(c, bufs);
    for (int64_t start = begin; start < end; start += kLanes) {
        if (firstFailed.load(std::memory_order_relaxed) < chunk) return;
        ev.run(first, start, int(std::min<int64_t>(kLanes, end - start)), out);
    }
}

int threadCount(const EvalOptions& o) {
    if (o.numThreads > 0) return o.numThreads;
    unsigned hw = std::thread::hardware_concurrency();
    return int(std::clamp(hw, 1u, 2u));
}

// Compute one op into a fresh buffer; `lookup` gives the buffer of each op it reads.
template <class Lookup>
Buffer computeOp(const OperationNode& op, Lookup&& lookup, const EvalOptions& options) {
    CompiledOp c = compileOp(op, options);
    std::vector<const float*> bufs;
    for (const auto& t : c.prog.tensors) {
        const Buffer* b = lookup(t.op.get());
        TB_CHECK(b) << "stage '" << op.name << "' reads '" << t.op->name << "', which has not been evaluated";
        TB_CHECK(b->shape == t.shape && int64_t(b->data.size()) == b->numElements())
            << "stage '" << op.name << "': buffer of '" << t.op->name << "' has shape " << shapeStr(b->shape);
        bufs.push_back(b->data.data());
    }
    Buffer out = Buffer::zeros(op.shape);
    const int64_t points = out.numElements();
    const int64_t work = points * std::max<int64_t>(1, c.reducePoints);
    int nt = threadCount(options);
    if (work < options.parallelThreshold || points < nt) nt = 1;
    std::atomic<int> firstFailed{INT_MAX};
    std::vector<std::exception_ptr> errors(static_cast<size_t>(nt));
    auto run = [&](int k) {
        int64_t b = points * k / nt, e = points * (k + 1) / nt;
        try {
            runChunk(c, bufs.data(), out.data.data(), b, e, k, firstFailed);
        } catch (...) {
            errors[size_t(k)] = std::current_exception();
            int cur = firstFailed.load();
            while (k < cur && !firstFailed.compare_exchange_weak(cur, k)) {}
        }
    };
    if (nt == 1) {
        run(0);
    } else {
        // Chunks are contiguous in row-major order and a chunk stops early only when an earlier one
        // failed, so the error rethrown below is the one of the earliest failing chunk, whichever
        // pool thread runs which chunk in which order (run() catches everything itself).
        ThreadPool::global().parallelFor(nt, [&](int64_t k) { run(int(k)); });
    }
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
    return out;
}

void checkBuffer(const Buffer& b, const OperationNode& op, const char* what) {
    int64_t n = 1;
    bool validShape = true;
    for (int64_t d : b.shape) {
        if (d < 0) validShape = false;
        else n *= d;
    }
    TB_USER_CHECK(validShape && b.shape == op.shape)
        << what << " '" << op.name << "' expects shape " << shapeStr(op.shape) << ", got " << shapeStr(b.shape);
    TB_USER_CHECK(int64_t(b.data.size()) == n) << what << " '" << op.name << "' of shape " << shapeStr(b.shape)
                                               << " needs " << n << " values, got " << b.data.size();
}

}  // namespace

// ---- entry points ----------------------------------------------------------------------------

std::vector<Buffer> evaluate(const ComputeDAG& dag, const std::vector<Buffer>& inputs, const EvalOptions& options) {
    const std::vector<Tensor> ins = dag.inputs();
    const std::vector<Tensor> outs = dag.outputs();
    TB_USER_CHECK(inputs.size() == ins.size())
        << "the compute DAG takes " << ins.size() << " inputs, got " << inputs.size();
    std::unordered_map<const OperationNode*, const Buffer*> avail;
    for (size_t k = 0; k < ins.size(); ++k) {
        checkBuffer(inputs[k], *ins[k].op(), "input");
        avail[ins[k].op().get()] = &inputs[k];
    }
    const auto& ops = dag.ops();
    // Last stage reading each op, to free intermediates early.
    std::unordered_map<const OperationNode*, size_t> lastUse;
    for (size_t s = 0; s < ops.size(); ++s)
        for (const auto& t : ops[s]->inputTensors()) lastUse[t.op().get()] = s;
    std::unordered_set<const OperationNode*> isOutput;
    for (const auto& t : outs) isOutput.insert(t.op().get());

    std::unordered_map<const OperationNode*, Buffer> owned;
    auto lookup = [&](const OperationNode* op) -> const Buffer* {
        auto it = avail.find(op);
        return it == avail.end() ? nullptr : it->second;
    };
    for (size_t s = 0; s < ops.size(); ++s) {
        const OperationNode* op = ops[s].get();
        if (op->isPlaceholder()) {
            TB_CHECK(avail.count(op)) << "placeholder '" << op->name << "' is not an input of the DAG";
            continue;
        }
        Buffer b = computeOp(*op, lookup, options);
        Buffer& slot = owned[op] = std::move(b);
        avail[op] = &slot;
        for (const auto& t : op->inputTensors()) {
            const OperationNode* in = t.op().get();
            auto lu = lastUse.find(in);
            if (lu != lastUse.end() && lu->second == s && !isOutput.count(in) && owned.count(in)) {
                avail.erase(in);
                owned.erase(in);
            }
        }
    }
    std::vector<Buffer> result;
    std::unordered_map<const OperationNode*, size_t> firstIndex;  // an op listed twice is copied
    for (const auto& t : outs) {
        const OperationNode* op = t.op().get();
        if (auto it = firstIndex.find(op); it != firstIndex.end()) {
            result.push_back(result[it->second]);
            continue;
        }
        firstIndex.emplace(op, result.size());
        if (auto it = owned.find(op); it != owned.end()) {
            result.push_back(std::move(it->second));
        } else {
            const Buffer* b = lookup(op);
            TB_CHECK(b) << "output '" << t.name() << "' was not evaluated";
            result.push_back(*b);
        }
    }
    return result;
}

BufferMap evaluateTensors(const std::vector<Tensor>& outputs, const BufferMap& given, const EvalOptions& options) {
    for (const auto& [op, b] : given) {
        TB_CHECK(op) << "null operation in the given buffers";
        checkBuffer(b, *op, "buffer of");
    }
    // Post-order DFS (inputs in first-load order, as TVM's stage order), stopping at given ops.
    std::vector<Operation> order;
    std::unordered_set<const OperationNode*> seen;
    struct Frame {
        Operation op;
        std::vector<Tensor> inputs;
        size_t next = 0;
    };
    std::vector<Frame> stack;
    auto visit = [&](const Operation& op) {
        if (!seen.insert(op.get()).second) return;
        if (given.count(op)) return;
        TB_USER_CHECK(!op->isPlaceholder()) << "no buffer given for placeholder '" << op->name << "'";
        stack.push_back({op, op->inputTensors()});
    };
    for (const auto& t : outputs) {
        TB_CHECK(t) << "null output tensor";
        visit(t.op());
        while (!stack.empty()) {
            Frame& f = stack.back();
            if (f.next < f.inputs.size()) {
                Operation in = f.inputs[f.next++].op();
                visit(in);  // may reallocate `stack`; `f` is not used after this
            } else {
                order.push_back(f.op);
                stack.pop_back();
            }
        }
    }
    BufferMap result;
    auto lookup = [&](const OperationNode* op) -> const Buffer* {
        for (const BufferMap* m : {&given, static_cast<const BufferMap*>(&result)}) {
            // Keyed by shared_ptr: find by raw pointer through a non-owning alias.
            auto it = m->find(Operation(Operation{}, op));
            if (it != m->end()) return &it->second;
        }
        return nullptr;
    };
    for (const auto& op : order) result.emplace(op, computeOp(*op, lookup, options));
    return result;
}

}  // namespace tb::te
