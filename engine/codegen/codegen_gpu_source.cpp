// SPDX-License-Identifier: Apache-2.0
#include "engine/codegen/codegen_gpu_source.h"

#include <cmath>
#include <numeric>
#include <cstdio>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "engine/lower/simplify.h"
#include "engine/support/error.h"

namespace tb::codegen {

namespace {

using lower::Buffer;
using lower::BufferScope;
using lower::ForKind;
using lower::Stmt;
using lower::StmtKind;
using te::DType;
using te::Expr;
using te::ExprKind;

// ---- the two languages ----------------------------------------------------------------------------

struct Lang {
    bool cuda;
    const char* helperPrefix;    // qualifiers of the helper functions
    const char* globalPtr;       // kernel parameter qualifier
    const char* restrictKw;
    const char* sharedDecl;      // qualifier of a Shared array
    const char* barrier;
    const char* int64;
};

const Lang kOpenCL{false, "static inline", "__global ", "restrict", "__local", "barrier(CLK_LOCAL_MEM_FENCE);", "long"};
const Lang kCuda{true, "__device__ inline", "", "__restrict__", "__shared__ __align__(16)", "__syncthreads();", "long long"};

std::string helpers(const Lang& l) {
    const std::string p = l.helperPrefix, i64 = l.int64;
    std::string s;
    for (const auto& [suffix, t] : {std::pair<std::string, std::string>{"", "int"}, {"64", i64}}) {
        s += p + " " + t + " tb_floordiv" + suffix + "(" + t + " a, " + t + " b) { " + t +
             " q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }\n";
        s += p + " " + t + " tb_floormod" + suffix + "(" + t + " a, " + t + " b) { " + t +
             " r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n";
        s += p + " " + t + " tb_min" + suffix + "(" + t + " a, " + t + " b) { return a < b ? a : b; }\n";
        s += p + " " + t + " tb_max" + suffix + "(" + t + " a, " + t + " b) { return a > b ? a : b; }\n";
    }
    return s;
}

const char* typeName(DType t, const Lang& l) {
    switch (t) {
        case DType::Bool: return "bool";
        case DType::Int32: return "int";
        case DType::Int64: return l.int64;
        case DType::Float32: return "float";
        case DType::Float64: return "double";
    }
    return "?";
}

// Float intrinsics: tir name -> (OpenCL, CUDA float32, CUDA float64).
struct Intrinsic {
    const char* opencl;
    const char* cudaF;
    const char* cudaD;
};
const std::unordered_map<std::string, Intrinsic>& intrinsics() {
    static const std::unordered_map<std::string, Intrinsic> m = {
        {"tir.exp", {"exp", "expf", "exp"}},        {"tir.exp2", {"exp2", "exp2f", "exp2"}},
        {"tir.exp10", {"exp10", "exp10f", "exp10"}}, {"tir.log", {"log", "logf", "log"}},
        {"tir.log2", {"log2", "log2f", "log2"}},    {"tir.log10", {"log10", "log10f", "log10"}},
        {"tir.log1p", {"log1p", "log1pf", "log1p"}}, {"tir.sqrt", {"sqrt", "sqrtf", "sqrt"}},
        {"tir.rsqrt", {"rsqrt", "rsqrtf", "rsqrt"}}, {"tir.tanh", {"tanh", "tanhf", "tanh"}},
        {"tir.fabs", {"fabs", "fabsf", "fabs"}},    {"tir.erf", {"erf", "erff", "erf"}},
        {"tir.floor", {"floor", "floorf", "floor"}}, {"tir.ceil", {"ceil", "ceilf", "ceil"}},
        {"tir.round", {"round", "roundf", "round"}}, {"tir.nearbyint", {"rint", "rintf", "rint"}},
        {"tir.trunc", {"trunc", "truncf", "trunc"}}, {"tir.sin", {"sin", "sinf", "sin"}},
        {"tir.cos", {"cos", "cosf", "cos"}},        {"tir.tan", {"tan", "tanf", "tan"}},
        {"tir.asin", {"asin", "asinf", "asin"}},    {"tir.acos", {"acos", "acosf", "acos"}},
        {"tir.atan", {"atan", "atanf", "atan"}},    {"tir.sinh", {"sinh", "sinhf", "sinh"}},
        {"tir.cosh", {"cosh", "coshf", "cosh"}},    {"tir.asinh", {"asinh", "asinhf", "asinh"}},
        {"tir.acosh", {"acosh", "acoshf", "acosh"}}, {"tir.atanh", {"atanh", "atanhf", "atanh"}},
        {"tir.pow", {"pow", "powf", "pow"}},        {"tir.atan2", {"atan2", "atan2f", "atan2"}},
        {"tir.fmod", {"fmod", "fmodf", "fmod"}},    {"tir.copysign", {"copysign", "copysignf", "copysign"}},
        {"tir.hypot", {"hypot", "hypotf", "hypot"}}, {"tir.isnan", {"isnan", "isnan", "isnan"}},
        {"tir.isinf", {"isinf", "isinf", "isinf"}}, {"tir.isfinite", {"isfinite", "isfinite", "isfinite"}},
    };
    return m;
}

// A C identifier for an IR name; keywords and built-in names of either language get a `_`.
std::string sanitize(const std::string& name) {
    static const std::set<std::string> reserved = {
        "kernel", "__kernel", "global", "local", "constant", "private", "read_only", "write_only", "read_write",
        "int", "float", "double", "long", "short", "char", "bool", "half", "void", "unsigned", "signed", "const",
        "for", "if", "else", "while", "do", "return", "break", "continue", "switch", "case", "default", "goto",
        "sizeof", "static", "inline", "restrict", "volatile", "register", "extern", "struct", "union", "enum",
        "typedef", "auto", "true", "false", "new", "delete", "class", "template", "this", "operator", "namespace",
        "using", "virtual", "public", "private", "protected", "friend", "try", "catch", "throw", "asm", "min", "max",
        "exp", "log", "sqrt", "fabs", "floor", "ceil", "pow", "threadIdx", "blockIdx", "blockDim", "gridDim",
        "warpSize", "barrier", "vload2", "vload4", "vstore4", "uchar", "uint", "ulong", "ushort", "size_t"};
    std::string r;
    for (char c : name) r += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0]))) r = "v_" + r;
    if (reserved.count(r) || r.compare(0, 3, "tb_") == 0) r += "_";
    return r;
}

// ---- one kernel -------------------------------------------------------------------------------------

class KernelEmitter {
public:
    KernelEmitter(const Lang& lang, const lower::GpuKernel& k, const std::vector<Buffer>& buffers)
        : m_l(lang), m_k(k), m_buffers(buffers) {}

    std::string run() {
        std::ostringstream head;
        int64_t threads = m_k.block[0] * m_k.block[1] * m_k.block[2];
        head << (m_l.cuda ? "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(threads) + ") "
                          : std::string("__kernel void "))
             << m_k.name << "(";
        for (size_t i = 0; i < m_k.params.size(); ++i) {
            const Buffer& b = m_buffers[size_t(m_k.params[i])];
            head << (i ? ", " : "") << m_l.globalPtr << typeName(b->dtype, m_l) << "* " << m_l.restrictKw << " "
                 << bufferName(b);
        }
        head << ") {\n";
        m_indent = 1;
        // Shared buffers: one declaration at kernel scope (OpenCL requires it for __local).
        lower::preOrderVisit(m_k.body, [&](const Stmt& s) {
            if (s->kind != StmtKind::Allocate) return;
            const Buffer& b = lower::as<lower::AllocateNode>(s)->buffer;
            if (b->scope != BufferScope::Shared) return;
            line() << m_l.sharedDecl << " " << typeName(b->dtype, m_l) << " " << bufferName(b) << "["
                   << b->spanElements() << "];\n";
        });
        emit(m_k.body);
        return head.str() + m_os.str() + "}\n";
    }

private:
    std::ostream& line() {
        m_os << std::string(size_t(m_indent) * 2, ' ');
        return m_os;
    }

    std::string unique(const std::string& base) {
        std::string n = sanitize(base);
        if (!m_used.insert(n).second) {
            for (int k = 1;; ++k) {
                std::string c = n + "_" + std::to_string(k);
                if (m_used.insert(c).second) return c;
            }
        }
        return n;
    }
    const std::string& bufferName(const Buffer& b) {
        auto it = m_bufNames.find(b->key.get());
        if (it != m_bufNames.end()) return it->second;
        m_bufDtype[b->key.get()] = b;
        return m_bufNames[b->key.get()] = unique(b->name);
    }
    const std::string& varName(const Expr& v) {
        auto it = m_varNames.find(v.get());
        TB_CHECK(it != m_varNames.end()) << "codegen_gpu: variable " << v.as<te::VarNode>()->name << " is not bound";
        return it->second;
    }
    std::string bindVar(const te::Var& v, const Expr& min, const Expr& extent) {
        std::string n = unique(v.name());
        m_varNames[v.get()] = n;
        auto rm = m_an.bound(min), re = m_an.bound(extent);
        if (rm && re && re->max >= 1) m_an.bind(v, lower::IntRange{rm->min, rm->max + re->max - 1});
        return n;
    }

    // ---- expressions -----------------------------------------------------------------------------

    std::string floatConst(double v, DType t) {
        const bool f32 = t == DType::Float32;
        if (std::isnan(v)) return m_l.cuda ? (f32 ? "__int_as_float(0x7fc00000)" : "__longlong_as_double(0x7ff8000000000000LL)") : "NAN";
        if (std::isinf(v)) {
            std::string inf = m_l.cuda ? (f32 ? "__int_as_float(0x7f800000)" : "__longlong_as_double(0x7ff0000000000000LL)")
                                       : (f32 ? "INFINITY" : "((double)INFINITY)");
            return v < 0 ? "(-" + inf + ")" : inf;
        }
        char buf[64];
        std::snprintf(buf, sizeof buf, f32 ? "%.9g" : "%.17g", v);
        std::string s = buf;
        if (s.find_first_of(".e") == std::string::npos) s += ".0";
        if (f32) s += "f";
        return v < 0 ? "(" + s + ")" : s;
    }

    bool nonNegative(const Expr& e) const {
        auto r = m_an.bound(e);
        return r && r->min >= 0;
    }

    std::string bin(const char* op, const Expr& a, const Expr& b) { return "(" + expr(a) + " " + op + " " + expr(b) + ")"; }
    std::string call(const std::string& f, const Expr& a, const Expr& b) { return f + "(" + expr(a) + ", " + expr(b) + ")"; }

    std::string expr(const Expr& e) {
        TB_CHECK(e) << "codegen_gpu: null expression";
        const DType t = e.dtype();
        const bool isF = te::isFloat(t);
        const std::string sfx = t == DType::Int64 ? "64" : "";
        switch (e.kind()) {
            case ExprKind::IntImm: {
                const int64_t v = e.as<te::IntImmNode>()->value;
                if (t == DType::Bool) return v ? "true" : "false";
                std::string s = std::to_string(v) + (t == DType::Int64 ? (m_l.cuda ? "LL" : "L") : "");
                return v < 0 ? "(" + s + ")" : s;
            }
            case ExprKind::FloatImm: return floatConst(e.as<te::FloatImmNode>()->value, t);
            case ExprKind::Var: return varName(e);
            case ExprKind::Add: return bin("+", bop(e)->a, bop(e)->b);
            case ExprKind::Sub: return bin("-", bop(e)->a, bop(e)->b);
            case ExprKind::Mul: return bin("*", bop(e)->a, bop(e)->b);
            case ExprKind::Div: return bin("/", bop(e)->a, bop(e)->b);
            case ExprKind::Mod:
                return isF ? call(fname("fmod", t), bop(e)->a, bop(e)->b) : bin("%", bop(e)->a, bop(e)->b);
            case ExprKind::FloorDiv:
                if (isF) return fname("floor", t) + "(" + bin("/", bop(e)->a, bop(e)->b) + ")";
                if (nonNegative(bop(e)->a) && nonNegative(bop(e)->b)) return bin("/", bop(e)->a, bop(e)->b);
                return call("tb_floordiv" + sfx, bop(e)->a, bop(e)->b);
            case ExprKind::FloorMod:
                if (isF) {
                    const std::string a = expr(bop(e)->a), b = expr(bop(e)->b);
                    return "(" + a + " - " + fname("floor", t) + "(" + a + " / " + b + ") * " + b + ")";
                }
                if (nonNegative(bop(e)->a) && nonNegative(bop(e)->b)) return bin("%", bop(e)->a, bop(e)->b);
                return call("tb_floormod" + sfx, bop(e)->a, bop(e)->b);
            case ExprKind::Min: return call(isF ? fname("fmin", t) : "tb_min" + sfx, bop(e)->a, bop(e)->b);
            case ExprKind::Max: return call(isF ? fname("fmax", t) : "tb_max" + sfx, bop(e)->a, bop(e)->b);
            case ExprKind::EQ: return bin("==", bop(e)->a, bop(e)->b);
            case ExprKind::NE: return bin("!=", bop(e)->a, bop(e)->b);
            case ExprKind::LT: return bin("<", bop(e)->a, bop(e)->b);
            case ExprKind::LE: return bin("<=", bop(e)->a, bop(e)->b);
            case ExprKind::GT: return bin(">", bop(e)->a, bop(e)->b);
            case ExprKind::GE: return bin(">=", bop(e)->a, bop(e)->b);
            case ExprKind::And: return bin("&&", bop(e)->a, bop(e)->b);
            case ExprKind::Or: return bin("||", bop(e)->a, bop(e)->b);
            case ExprKind::Not: return "(!" + expr(e.as<te::NotNode>()->a) + ")";
            case ExprKind::Select: {
                auto* s = e.as<te::SelectNode>();
                return "(" + expr(s->cond) + " ? " + expr(s->t) + " : " + expr(s->f) + ")";
            }
            case ExprKind::Cast:
                return "((" + std::string(typeName(t, m_l)) + ")(" + expr(e.as<te::CastNode>()->value) + "))";
            case ExprKind::Call: return callExpr(e.as<te::CallNode>());
            case ExprKind::Load: {
                auto* l = e.as<te::LoadNode>();
                auto it = m_bufNames.find(l->op.get());
                TB_CHECK(it != m_bufNames.end()) << "codegen_gpu: load of " << l->op->name << ", which is not in scope";
                return it->second + "[" + expr(flat(m_bufDtype.at(l->op.get()), l->indices)) + "]";
            }
            case ExprKind::Reduce: break;
        }
        TB_CHECK(false) << "codegen_gpu: unexpected expression kind in lowered IR";
        return {};
    }

    static const te::BinaryNode* bop(const Expr& e) { return static_cast<const te::BinaryNode*>(e.get()); }

    // A float built-in by its generic (OpenCL) name: CUDA's float32 versions end in 'f'.
    std::string fname(const std::string& base, DType t) const { return m_l.cuda && t == DType::Float32 ? base + "f" : base; }

    std::string callExpr(const te::CallNode* c) {
        if (c->op == "tir.likely" && c->args.size() == 1) return expr(c->args[0]);
        if (c->op == "tir.if_then_else" && c->args.size() == 3)
            return "(" + expr(c->args[0]) + " ? " + expr(c->args[1]) + " : " + expr(c->args[2]) + ")";
        if (c->op == "tir.sigmoid" && c->args.size() == 1) {
            const std::string one = floatConst(1.0, c->dtype);
            return "(" + one + " / (" + one + " + " + fname("exp", c->dtype) + "(-" + expr(c->args[0]) + ")))";
        }
        const auto& m = intrinsics();
        auto it = m.find(c->op);
        TB_USER_CHECK(it != m.end()) << "codegen_gpu: the intrinsic " << c->op << " has no OpenCL C / CUDA C form";
        const DType at = c->args.empty() ? c->dtype : c->args[0].dtype();
        std::string f = !m_l.cuda ? it->second.opencl : at == DType::Float32 ? it->second.cudaF : it->second.cudaD;
        std::string s = f + "(";
        for (size_t i = 0; i < c->args.size(); ++i) s += (i ? ", " : "") + expr(c->args[i]);
        s += ")";
        if (c->op == "tir.isnan" || c->op == "tir.isinf" || c->op == "tir.isfinite") s = "((bool)" + s + ")";
        return s;
    }

    // The element offset, with fused-loop index splits undone (a dense fetch becomes linear).
    Expr flat(const Buffer& b, const std::vector<Expr>& idx) const {
        return m_an.simplify(lower::mergeDivMod(m_an.simplify(lower::flatIndex(b, idx))));
    }

    // ---- vector statements -----------------------------------------------------------------------

    // A k such that e is a multiple of k for every value of its variables (TVM's ModularSet,
    // coefficient only): constants, products, sums (gcd) and floormod by a constant.
    static int64_t knownMultiple(const Expr& e) {
        int64_t v = 0;
        switch (e.kind()) {
            case ExprKind::IntImm:
                v = e.as<te::IntImmNode>()->value;
                return v == 0 ? int64_t(1) << 40 : std::abs(v);
            case ExprKind::Add: case ExprKind::Sub: return std::gcd(knownMultiple(bop(e)->a), knownMultiple(bop(e)->b));
            case ExprKind::Mul: return std::min(knownMultiple(bop(e)->a) * knownMultiple(bop(e)->b), int64_t(1) << 40);
            case ExprKind::FloorMod:
                if (te::isConstInt(bop(e)->b, &v) && v > 0) return std::gcd(knownMultiple(bop(e)->a), v);
                return 1;
            default: return 1;
        }
    }

    // TVM's vectorizer on a ramp: floordiv / floormod(Y + lane, c) with Y a multiple of n and c a
    // multiple of n become floordiv(Y, c) / floormod(Y, c) + lane (lane < n stays within c's block).
    Expr splitLane(const Expr& e, const te::Var& lane, int64_t n) const {
        if (!lower::usesVar(e, lane)) return e;
        switch (e.kind()) {
            case ExprKind::Add: case ExprKind::Sub: case ExprKind::Mul: case ExprKind::Min: case ExprKind::Max:
                return te::binary(e.kind(), splitLane(bop(e)->a, lane, n), splitLane(bop(e)->b, lane, n));
            case ExprKind::FloorDiv: case ExprKind::FloorMod: {
                int64_t c = 0;
                const Expr x = splitLane(bop(e)->a, lane, n);
                if (!te::isConstInt(bop(e)->b, &c) || c <= 0 || c % n != 0) return te::binary(e.kind(), x, bop(e)->b);
                const Expr y = m_an.simplify(te::substitute(x, {{lane, te::intImm(0)}}));
                const Expr d = m_an.simplify(x - y);
                if (!d.same(lane) || knownMultiple(y) % n != 0) return te::binary(e.kind(), x, bop(e)->b);
                return e.kind() == ExprKind::FloorDiv ? te::floordiv(y, bop(e)->b) : te::floormod(y, bop(e)->b) + lane;
            }
            default: return e;
        }
    }

    // flat(lane) == base + lane for lane in [0, n): the base, else nullopt.
    std::optional<Expr> contiguousBase(const Expr& flatIdx0, const te::Var& lane, int64_t n) const {
        const Expr flatIdx = m_an.simplify(splitLane(flatIdx0, lane, n));
        const Expr base = m_an.simplify(te::substitute(flatIdx, {{lane, te::intImm(0)}}));
        for (int64_t k = 1; k < n; ++k) {
            const Expr d = m_an.simplify(te::substitute(flatIdx, {{lane, te::intImm(k)}}) - base);
            if (!te::isConstInt(d, k)) return std::nullopt;
        }
        return base;
    }

    // OpenCL: a floatN expression of e over the lanes, or nullopt.
    std::optional<std::string> vecExpr(const Expr& e, const te::Var& lane, int64_t n) {
        const std::string vt = "float" + std::to_string(n);
        if (e.dtype() != DType::Float32) return std::nullopt;
        if (!lower::usesVar(e, lane)) return "((" + vt + ")(" + expr(e) + "))";
        switch (e.kind()) {
            case ExprKind::Load: {
                auto* l = e.as<te::LoadNode>();
                auto it = m_bufNames.find(l->op.get());
                if (it == m_bufNames.end()) return std::nullopt;
                auto base = contiguousBase(flat(m_bufDtype.at(l->op.get()), l->indices), lane, n);
                if (!base) return std::nullopt;
                return "vload" + std::to_string(n) + "(0, " + it->second + " + " + expr(*base) + ")";
            }
            case ExprKind::Add: case ExprKind::Sub: case ExprKind::Mul: case ExprKind::Div:
            case ExprKind::Min: case ExprKind::Max: {
                auto a = vecExpr(bop(e)->a, lane, n), b = vecExpr(bop(e)->b, lane, n);
                if (!a || !b) return std::nullopt;
                switch (e.kind()) {
                    case ExprKind::Add: return "(" + *a + " + " + *b + ")";
                    case ExprKind::Sub: return "(" + *a + " - " + *b + ")";
                    case ExprKind::Mul: return "(" + *a + " * " + *b + ")";
                    case ExprKind::Div: return "(" + *a + " / " + *b + ")";
                    case ExprKind::Min: return "fmin(" + *a + ", " + *b + ")";
                    default: return "fmax(" + *a + ", " + *b + ")";
                }
            }
            default: return std::nullopt;
        }
    }

    static bool provenMultiple(const Expr& e, int64_t n) { return knownMultiple(e) % n == 0; }

    // A vectorized loop as one vector statement; false when it must run as scalars.
    bool tryVector(const lower::ForNode* f) {
        int64_t n = 0;
        if (!te::isConstInt(f->extent, &n) || !te::isConstInt(f->min, int64_t(0))) return false;
        if (f->body->kind != StmtKind::BufferStore) return false;
        auto* st = lower::as<lower::BufferStoreNode>(f->body);
        if (st->buffer->dtype != DType::Float32) return false;
        const te::Var& lane = f->var;
        auto dst = contiguousBase(flat(st->buffer, st->indices), lane, n);
        if (!dst) return false;
        const std::string& name = bufferName(st->buffer);
        if (!m_l.cuda) {
            if (n != 2 && n != 3 && n != 4 && n != 8 && n != 16) return false;
            auto v = vecExpr(st->value, lane, n);
            if (!v) {
                // A gather: the lanes' values one by one into a vector, stored at once.
                std::string g = "((float" + std::to_string(n) + ")(";
                for (int64_t k = 0; k < n; ++k)
                    g += (k ? ", " : "") + expr(m_an.simplify(te::substitute(st->value, {{lane, te::intImm(k)}})));
                v = g + "))";
            }
            line() << "vstore" << n << "(" << *v << ", 0, " << name << " + " << expr(*dst) << ");\n";
            return true;
        }
        // CUDA: aligned copies only.
        if ((n != 2 && n != 4) || st->value.kind() != ExprKind::Load || !provenMultiple(*dst, n)) return false;
        auto* l = st->value.as<te::LoadNode>();
        auto it = m_bufNames.find(l->op.get());
        if (it == m_bufNames.end() || l->dtype != DType::Float32) return false;
        auto src = contiguousBase(flat(m_bufDtype.at(l->op.get()), l->indices), lane, n);
        if (!src || !provenMultiple(*src, n)) return false;
        const std::string vt = "float" + std::to_string(n);
        line() << "*(" << vt << "*)(" << name << " + " << expr(*dst) << ") = *(" << vt << "*)(" << it->second << " + "
               << expr(*src) << ");\n";
        return true;
    }

    // ---- statements ------------------------------------------------------------------------------

    void emitLoop(const lower::ForNode* f, bool unroll) {
        const std::string v = bindVar(f->var, f->min, f->extent);
        const std::string mn = expr(f->min);
        if (unroll) line() << "#pragma unroll\n";
        line() << "for (int " << v << " = " << mn << "; " << v << " < "
               << (te::isConstInt(f->min, int64_t(0)) ? expr(f->extent) : "(" + mn + " + " + expr(f->extent) + ")") << "; ++"
               << v << ") {\n";
        ++m_indent;
        emit(f->body);
        --m_indent;
        line() << "}\n";
        m_an.unbind(f->var);
    }

    void emitThread(const lower::ForNode* f) {
        const lower::ThreadAxis ax = lower::threadAxisOf(f->threadTag);
        if (ax.dim < 0) return emitLoop(f, false);  // vthread: a serial loop run by every thread
        const int64_t launch = ax.block ? m_k.grid[size_t(ax.dim)] : m_k.block[size_t(ax.dim)];
        int64_t ext = 0;
        TB_CHECK(te::isConstInt(f->extent, &ext) && te::isConstInt(f->min, int64_t(0)))
            << "codegen_gpu: thread loop " << f->var.name() << " without constant range";
        TB_CHECK(ext <= launch) << "codegen_gpu: " << f->threadTag << " loop of extent " << ext << " > launch " << launch;
        const std::string v = bindVar(f->var, f->min, f->extent);
        const char* d = "xyz" + ax.dim;
        std::string idx;
        if (m_l.cuda) idx = std::string("(int)") + (ax.block ? "blockIdx." : "threadIdx.") + *d;
        else idx = std::string("(int)") + (ax.block ? "get_group_id(" : "get_local_id(") + std::to_string(ax.dim) + ")";
        line() << "{\n";
        ++m_indent;
        line() << "int " << v << " = " << idx << ";\n";
        if (ext < launch) {
            line() << "if (" << v << " < " << ext << ") {\n";
            ++m_indent;
        }
        emit(f->body);
        if (ext < launch) {
            --m_indent;
            line() << "}\n";
        }
        --m_indent;
        line() << "}\n";
        m_an.unbind(f->var);
    }

    void emit(const Stmt& s) {
        if (!s) return;
        switch (s->kind) {
            case StmtKind::For: {
                auto* f = lower::as<lower::ForNode>(s);
                switch (f->forKind) {
                    case ForKind::ThreadBinding: return emitThread(f);
                    case ForKind::Unrolled: return emitLoop(f, true);
                    case ForKind::Vectorized:  // tryVector writes nothing when it fails
                        if (tryVector(f)) return;
                        return emitLoop(f, true);
                    case ForKind::Serial: case ForKind::Parallel: return emitLoop(f, false);
                }
                return;
            }
            case StmtKind::Allocate: {
                auto* a = lower::as<lower::AllocateNode>(s);
                const Buffer& b = a->buffer;
                if (b->scope == BufferScope::Local) {
                    line() << "{\n";
                    ++m_indent;
                    line() << (m_l.cuda ? "__align__(16) " : "") << typeName(b->dtype, m_l) << " " << bufferName(b) << "["
                           << b->spanElements() << "];\n";
                    emit(a->body);
                    --m_indent;
                    line() << "}\n";
                    return;
                }
                TB_CHECK(b->scope == BufferScope::Shared)
                    << "codegen_gpu: global buffer " << b->name << " allocated inside a kernel";
                return emit(a->body);  // declared at kernel scope
            }
            case StmtKind::BufferStore: {
                auto* st = lower::as<lower::BufferStoreNode>(s);
                const std::string& name = bufferName(st->buffer);
                line() << name << "[" << expr(flat(st->buffer, st->indices)) << "] = " << expr(st->value) << ";\n";
                return;
            }
            case StmtKind::IfThenElse: {
                auto* i = lower::as<lower::IfThenElseNode>(s);
                line() << "if (" << expr(i->condition) << ") {\n";
                ++m_indent;
                emit(i->thenCase);
                --m_indent;
                if (i->elseCase && !lower::isNop(i->elseCase)) {
                    line() << "} else {\n";
                    ++m_indent;
                    emit(i->elseCase);
                    --m_indent;
                }
                line() << "}\n";
                return;
            }
            case StmtKind::Seq:
                for (const Stmt& c : lower::as<lower::SeqNode>(s)->seq) emit(c);
                return;
            case StmtKind::Attr: return emit(lower::as<lower::AttrNode>(s)->body);
            case StmtKind::Barrier: line() << m_l.barrier << "\n"; return;
            case StmtKind::Prefetch: return;  // a CPU cache hint; GPU kernels have none
        }
    }

    const Lang& m_l;
    const lower::GpuKernel& m_k;
    const std::vector<Buffer>& m_buffers;
    std::ostringstream m_os;
    int m_indent = 0;
    lower::Analyzer m_an;
    std::set<std::string> m_used;
    std::unordered_map<const te::ExprNode*, std::string> m_varNames;
    std::unordered_map<const te::OperationNode*, std::string> m_bufNames;
    std::unordered_map<const te::OperationNode*, Buffer> m_bufDtype;
};

}  // namespace

std::string gpuSourcePrelude(GpuLanguage language) { return helpers(language == GpuLanguage::CUDA ? kCuda : kOpenCL); }

std::string emitGpuSource(const lower::GpuLoweredFunc& f, GpuLanguage language) {
    const Lang& l = language == GpuLanguage::CUDA ? kCuda : kOpenCL;
    std::string src = std::string("// ") + f.name + ": " + (l.cuda ? "CUDA C" : "OpenCL C") +
                      " generated by TuneBench (engine/codegen/codegen_gpu_source.cpp)\n";
    src += helpers(l);
    const auto buffers = f.buffers();
    for (const lower::GpuKernel& k : f.kernels) src += "\n" + KernelEmitter(l, k, buffers).run();
    return src;
}

GpuModule makeGpuModule(const lower::GpuLoweredFunc& f, GpuLanguage language) {
    GpuModule m;
    m.language = language;
    m.source = emitGpuSource(f, language);
    for (const lower::GpuKernel& k : f.kernels) {
        GpuLaunch l;
        l.entry = k.name;
        l.grid = k.grid;
        l.block = k.block;
        l.args = k.params;
        l.sharedBytes = k.sharedBytes;
        m.launches.push_back(std::move(l));
    }
    for (const Buffer& b : f.buffers()) m.bufferElements.push_back(b->spanElements());
    m.numArgs = int(f.args.size());
    return m;
}

GpuModule buildGpuModule(const te::ComputeDAG& dag, const State& state, GpuLanguage language, const std::string& name) {
    return makeGpuModule(lower::lowerStateGpu(dag, state, name), language);
}

}  // namespace tb::codegen
