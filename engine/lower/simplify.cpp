// SPDX-License-Identifier: Apache-2.0
#include "engine/lower/simplify.h"

#include <algorithm>

#include "engine/support/error.h"
#include "engine/support/int_math.h"

namespace tb::lower {

using te::DType;
using te::Expr;
using te::ExprKind;

namespace {

// Saturating checks: interval arithmetic gives up (nullopt) rather than overflow.
std::optional<int64_t> narrow(__int128 v) {
    if (v > INT64_MAX / 4 || v < INT64_MIN / 4) return std::nullopt;
    return static_cast<int64_t>(v);
}

std::optional<IntRange> makeRange(__int128 lo, __int128 hi) {
    auto a = narrow(lo), b = narrow(hi);
    if (!a || !b) return std::nullopt;
    return IntRange{*a, *b};
}

const te::BinaryNode* bin(const Expr& e) { return static_cast<const te::BinaryNode*>(e.get()); }

// Structural equality (variables by identity).
bool deepEqual(const Expr& a, const Expr& b) {
    if (a.same(b)) return true;
    if (!a || !b || a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
    switch (a.kind()) {
        case ExprKind::IntImm: return a.as<te::IntImmNode>()->value == b.as<te::IntImmNode>()->value;
        case ExprKind::FloatImm: return a.as<te::FloatImmNode>()->value == b.as<te::FloatImmNode>()->value;
        case ExprKind::Var: return false;
        case ExprKind::Not: return deepEqual(a.as<te::NotNode>()->a, b.as<te::NotNode>()->a);
        case ExprKind::Select: {
            auto *x = a.as<te::SelectNode>(), *y = b.as<te::SelectNode>();
            return deepEqual(x->cond, y->cond) && deepEqual(x->t, y->t) && deepEqual(x->f, y->f);
        }
        case ExprKind::Cast: return deepEqual(a.as<te::CastNode>()->value, b.as<te::CastNode>()->value);
        case ExprKind::Call: {
            auto *x = a.as<te::CallNode>(), *y = b.as<te::CallNode>();
            if (x->op != y->op || x->args.size() != y->args.size()) return false;
            for (size_t i = 0; i < x->args.size(); ++i)
                if (!deepEqual(x->args[i], y->args[i])) return false;
            return true;
        }
        case ExprKind::Load: {
            auto *x = a.as<te::LoadNode>(), *y = b.as<te::LoadNode>();
            if (x->op != y->op || x->valueIndex != y->valueIndex || x->indices.size() != y->indices.size()) return false;
            for (size_t i = 0; i < x->indices.size(); ++i)
                if (!deepEqual(x->indices[i], y->indices[i])) return false;
            return true;
        }
        case ExprKind::Reduce: return false;
        default: return deepEqual(bin(a)->a, bin(b)->a) && deepEqual(bin(a)->b, bin(b)->b);
    }
}

// c0 + sum(coeff * term) over integer terms that are not sums or constant multiples.
struct Linear {
    std::vector<std::pair<Expr, int64_t>> terms;
    int64_t c = 0;
    DType t = DType::Int32;

    void addTerm(const Expr& e, int64_t k) {
        if (k == 0) return;
        for (auto& [x, coeff] : terms) {
            if (deepEqual(x, e)) {
                coeff += k;
                return;
            }
        }
        terms.emplace_back(e, k);
    }
    void add(const Linear& o, int64_t k) {
        c += o.c * k;
        for (auto& [x, coeff] : o.terms) addTerm(x, coeff * k);
    }
};

// Adds k * e to l, flattening sums and constant multiples in place (no intermediate Linear).
void accumulateLinear(Linear& l, const Expr& e, int64_t k) {
    int64_t v;
    if (te::isConstInt(e, &v)) {
        l.c += v * k;
        return;
    }
    switch (e.kind()) {
        case ExprKind::Add:
            accumulateLinear(l, bin(e)->a, k);
            accumulateLinear(l, bin(e)->b, k);
            return;
        case ExprKind::Sub:
            accumulateLinear(l, bin(e)->a, k);
            accumulateLinear(l, bin(e)->b, -k);
            return;
        case ExprKind::Mul:
            if (te::isConstInt(bin(e)->b, &v)) {
                accumulateLinear(l, bin(e)->a, k * v);
                return;
            }
            if (te::isConstInt(bin(e)->a, &v)) {
                accumulateLinear(l, bin(e)->b, k * v);
                return;
            }
            break;
        default: break;
    }
    l.addTerm(e, k);
}

Linear toLinear(const Expr& e) {
    Linear l;
    l.t = e.dtype();
    l.terms.reserve(4);
    accumulateLinear(l, e, 1);
    // Terms that cancelled (x - x) are dropped, as merging sub-sums used to drop them.
    std::erase_if(l.terms, [](const auto& t) { return t.second == 0; });
    return l;
}

Expr fromLinear(const Linear& l) {
    Expr acc;
    for (auto& [x, k] : l.terms) {
        if (k == 0) continue;
        if (!acc) {
            acc = k == 1 ? x : x * te::intImm(k, l.t);
        } else if (k > 0) {
            acc = acc + (k == 1 ? x : x * te::intImm(k, l.t));
        } else {
            acc = acc - (k == -1 ? x : x * te::intImm(-k, l.t));
        }
    }
    if (!acc) return te::intImm(l.c, l.t);
    if (l.c > 0) return acc + te::intImm(l.c, l.t);
    if (l.c < 0) return acc - te::intImm(-l.c, l.t);
    return acc;
}

bool isCmp(ExprKind k) {
    return k == ExprKind::EQ || k == ExprKind::NE || k == ExprKind::LT || k == ExprKind::LE || k == ExprKind::GT ||
           k == ExprKind::GE;
}

}  // namespace

bool exprEqual(const Expr& a, const Expr& b) { return deepEqual(a, b); }

namespace {

// a + b + ... as (term, coefficient) pairs and a constant.
void linearTerms(const Expr& e, int64_t coef, std::vector<std::pair<Expr, int64_t>>& terms, int64_t& c) {
    int64_t v = 0;
    switch (e.kind()) {
        case ExprKind::IntImm: c += coef * e.as<te::IntImmNode>()->value; return;
        case ExprKind::Add: linearTerms(bin(e)->a, coef, terms, c); linearTerms(bin(e)->b, coef, terms, c); return;
        case ExprKind::Sub: linearTerms(bin(e)->a, coef, terms, c); linearTerms(bin(e)->b, -coef, terms, c); return;
        case ExprKind::Mul:
            if (te::isConstInt(bin(e)->b, &v)) return linearTerms(bin(e)->a, coef * v, terms, c);
            if (te::isConstInt(bin(e)->a, &v)) return linearTerms(bin(e)->b, coef * v, terms, c);
            break;
        default: break;
    }
    terms.emplace_back(e, coef);
}

bool divModOf(const Expr& e, ExprKind k, Expr* x, int64_t* c) {
    if (e.kind() != k || !te::isConstInt(bin(e)->b, c) || *c <= 0) return false;
    *x = bin(e)->a;
    return true;
}

}  // namespace

Expr mergeDivMod(const Expr& e) {
    if (!e || !te::isInt(e.dtype())) return e;
    std::vector<std::pair<Expr, int64_t>> terms;
    int64_t c0 = 0;
    linearTerms(e, 1, terms, c0);
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < terms.size() && !changed; ++i) {
            Expr x;
            int64_t c = 0;
            if (!divModOf(terms[i].first, ExprKind::FloorMod, &x, &c)) continue;
            const int64_t m = terms[i].second;
            for (size_t j = 0; j < terms.size() && !changed; ++j) {
                if (j == i || terms[j].second != m * c) continue;
                Expr y, inner;
                int64_t d = 0, b = 0;
                if (divModOf(terms[j].first, ExprKind::FloorDiv, &y, &d) && d == c && deepEqual(x, y)) {
                    terms[i] = {x, m};  // floordiv(x, c)*c + floormod(x, c) = x
                } else if (divModOf(terms[j].first, ExprKind::FloorMod, &inner, &b) &&
                           divModOf(inner, ExprKind::FloorDiv, &y, &d) && d == c && deepEqual(x, y)) {
                    terms[i] = {te::floormod(x, te::intImm(b * c, x.dtype())), m};  // = floormod(x, b*c)
                } else {
                    continue;
                }
                terms.erase(terms.begin() + long(j));
                changed = true;
            }
        }
    }
    Expr r = te::intImm(c0, e.dtype());
    for (const auto& [t, k] : terms) r = r + (k == 1 ? t : t * te::intImm(k, e.dtype()));
    return simplify(r);
}


class SimplifyImpl {
public:
    explicit SimplifyImpl(const Analyzer& a) : m_a(a) {}

    std::optional<IntRange> bound(const Expr& e) const {
        if (!e || !te::isInt(e.dtype())) {
            if (e && e.dtype() == DType::Bool) {
                int64_t v;
                if (te::isConstInt(e, &v)) return IntRange{v, v};
                return IntRange{0, 1};
            }
            return std::nullopt;
        }
        int64_t v;
        if (te::isConstInt(e, &v)) return IntRange{v, v};
        switch (e.kind()) {
            case ExprKind::Var: {
                auto it = m_a.m_bounds.find(e.get());
                if (it == m_a.m_bounds.end()) return std::nullopt;
                return it->second;
            }
            case ExprKind::Add: case ExprKind::Sub: case ExprKind::Mul: {
                auto a = bound(bin(e)->a), b = bound(bin(e)->b);
                if (!a || !b) return std::nullopt;
                if (e.kind() == ExprKind::Add) return makeRange(__int128(a->min) + b->min, __int128(a->max) + b->max);
                if (e.kind() == ExprKind::Sub) return makeRange(__int128(a->min) - b->max, __int128(a->max) - b->min);
                __int128 p[4] = {__int128(a->min) * b->min, __int128(a->min) * b->max, __int128(a->max) * b->min,
                                 __int128(a->max) * b->max};
                return makeRange(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
            }
            case ExprKind::FloorDiv: case ExprKind::Div: {
                int64_t c;
                if (!te::isConstInt(bin(e)->b, &c) || c <= 0) return std::nullopt;
                auto a = bound(bin(e)->a);
                if (!a) return std::nullopt;
                if (e.kind() == ExprKind::Div && a->min < 0) return std::nullopt;
                return IntRange{floorDiv(a->min, c), floorDiv(a->max, c)};
            }
            case ExprKind::FloorMod: case ExprKind::Mod: {
                int64_t c;
                if (!te::isConstInt(bin(e)->b, &c) || c <= 0) return std::nullopt;
                auto a = bound(bin(e)->a);
                if (e.kind() == ExprKind::Mod && (!a || a->min < 0)) return std::nullopt;
                if (a && floorDiv(a->min, c) == floorDiv(a->max, c)) return IntRange{floorMod(a->min, c), floorMod(a->max, c)};
                return IntRange{0, c - 1};
            }
            case ExprKind::Min: case ExprKind::Max: {
                auto a = bound(bin(e)->a), b = bound(bin(e)->b);
                if (!a || !b) return std::nullopt;
                if (e.kind() == ExprKind::Min) return IntRange{std::min(a->min, b->min), std::min(a->max, b->max)};
                return IntRange{std::max(a->min, b->min), std::max(a->max, b->max)};
            }
            case ExprKind::Select: {
                auto* s = e.as<te::SelectNode>();
                auto a = bound(s->t), b = bound(s->f);
                if (!a || !b) return std::nullopt;
                return IntRange{std::min(a->min, b->min), std::max(a->max, b->max)};
            }
            case ExprKind::Cast: return bound(e.as<te::CastNode>()->value);
            default: return std::nullopt;
        }
    }

    std::optional<IntRange> boundLinear(const Linear& l) const {
        __int128 lo = l.c, hi = l.c;
        for (auto& [x, k] : l.terms) {
            auto r = bound(x);
            if (!r) return std::nullopt;
            __int128 a = __int128(r->min) * k, b = __int128(r->max) * k;
            lo += std::min(a, b);
            hi += std::max(a, b);
        }
        return makeRange(lo, hi);
    }

    // floordiv/floormod (or truncating div/mod when the dividend is proven non-negative) by c > 0.
    Expr divMod(ExprKind k, const Expr& a, int64_t c, const Expr& original) const {
        const bool trunc = k == ExprKind::Div || k == ExprKind::Mod;
        const bool isDiv = k == ExprKind::Div || k == ExprKind::FloorDiv;
        Linear l = toLinear(a);
        if (trunc) {
            auto r = boundLinear(l);
            if (!r || r->min < 0) return original;
        }
        // Split L = c*Q + R.
        Linear q, rest;
        q.t = rest.t = l.t;
        q.c = floorDiv(l.c, c);
        rest.c = floorMod(l.c, c);
        for (auto& [x, coeff] : l.terms) {
            if (coeff % c == 0)
                q.addTerm(x, coeff / c);
            else
                rest.addTerm(x, coeff);
        }
        auto rr = boundLinear(rest);
        if (rr && rr->min >= 0 && rr->max < c) return isDiv ? fromLinear(q) : fromLinear(rest);
        if (rr && !trunc && floorDiv(rr->min, c) == floorDiv(rr->max, c)) {
            // R lies in one block [m*c, (m+1)*c): floordiv(L, c) = Q + m.
            Linear qq = q;
            qq.c += floorDiv(rr->min, c);
            if (isDiv) return fromLinear(qq);
            Linear r2 = rest;
            r2.c -= floorDiv(rr->min, c) * c;
            return fromLinear(r2);
        }
        if (!isDiv) {
            // floormod(c*Q + R, c) = floormod(R, c) (floor semantics only; R's sign may vary).
            if (trunc) return original;
            return te::binary(k, fromLinear(rest), te::intImm(c, l.t));
        }
        return original;
    }

    Expr simplify(const Expr& e) const {
        if (!e) return e;
        switch (e.kind()) {
            case ExprKind::IntImm: case ExprKind::FloatImm: return e;
            case ExprKind::Var: {
                auto r = bound(e);
                if (r && r->min == r->max) return te::intImm(r->min, e.dtype());
                return e;
            }
            case ExprKind::Not: return te::logicalNot(simplify(e.as<te::NotNode>()->a));
            case ExprKind::Select: {
                auto* s = e.as<te::SelectNode>();
                Expr c = simplify(s->cond);
                int64_t v;
                if (te::isConstInt(c, &v)) return simplify(v ? s->t : s->f);
                return te::select(c, simplify(s->t), simplify(s->f));
            }
            case ExprKind::Cast: return te::cast(e.dtype(), simplify(e.as<te::CastNode>()->value));
            case ExprKind::Call: {
                auto* n = e.as<te::CallNode>();
                if (n->op == "tir.if_then_else" && n->args.size() == 3) {
                    Expr c = simplify(n->args[0]);
                    int64_t v;
                    if (te::isConstInt(c, &v)) return simplify(v ? n->args[1] : n->args[2]);
                    return te::call(n->dtype, n->op, {c, simplify(n->args[1]), simplify(n->args[2])});
                }
                std::vector<Expr> args;
                for (auto& x : n->args) args.push_back(simplify(x));
                return te::call(n->dtype, n->op, std::move(args));
            }
            case ExprKind::Load: {
                auto* n = e.as<te::LoadNode>();
                std::vector<Expr> idx;
                for (auto& x : n->indices) idx.push_back(simplify(x));
                return Expr(std::make_shared<te::LoadNode>(n->dtype, n->op, n->valueIndex, std::move(idx)));
            }
            case ExprKind::Reduce: {
                auto* n = e.as<te::ReduceNode>();
                return te::reduce(n->combiner, simplify(n->source), n->axis, simplify(n->condition), simplify(n->init));
            }
            default: break;
        }
        const ExprKind k = e.kind();
        Expr a = simplify(bin(e)->a), b = simplify(bin(e)->b);
        Expr r = te::binary(k, a, b);
        if (r.kind() != k || !te::isInt(a.dtype()) || !te::isInt(b.dtype())) return r;
        // Integer rules on the rebuilt node.
        int64_t c;
        switch (k) {
            case ExprKind::Add: case ExprKind::Sub: case ExprKind::Mul:
                return fromLinear(toLinear(r));
            case ExprKind::FloorDiv: case ExprKind::FloorMod: case ExprKind::Div: case ExprKind::Mod:
                if (te::isConstInt(b, &c) && c > 0) {
                    // floordiv(floordiv(x, c1), c2) = floordiv(x, c1*c2)
                    int64_t c1;
                    if (k == ExprKind::FloorDiv && a.kind() == ExprKind::FloorDiv && te::isConstInt(bin(a)->b, &c1) && c1 > 0)
                        return divMod(k, bin(a)->a, c1 * c, te::floordiv(bin(a)->a, te::intImm(c1 * c, a.dtype())));
                    return divMod(k, a, c, r);
                }
                return r;
            case ExprKind::Min: case ExprKind::Max: {
                Linear d = toLinear(a);
                d.add(toLinear(b), -1);
                auto rd = boundLinear(d);  // range of a - b
                if (rd && rd->max <= 0) return k == ExprKind::Min ? a : b;
                if (rd && rd->min >= 0) return k == ExprKind::Min ? b : a;
                return r;
            }
            default: break;
        }
        if (isCmp(k)) {
            Linear d = toLinear(a);
            d.add(toLinear(b), -1);
            auto rd = boundLinear(d);
            if (!rd) return r;
            std::optional<bool> res;
            switch (k) {
                case ExprKind::LT: if (rd->max < 0) res = true; else if (rd->min >= 0) res = false; break;
                case ExprKind::LE: if (rd->max <= 0) res = true; else if (rd->min > 0) res = false; break;
                case ExprKind::GT: if (rd->min > 0) res = true; else if (rd->max <= 0) res = false; break;
                case ExprKind::GE: if (rd->min >= 0) res = true; else if (rd->max < 0) res = false; break;
                case ExprKind::EQ: if (rd->min == 0 && rd->max == 0) res = true; else if (rd->min > 0 || rd->max < 0) res = false; break;
                case ExprKind::NE: if (rd->min == 0 && rd->max == 0) res = false; else if (rd->min > 0 || rd->max < 0) res = true; break;
                default: break;
            }
            if (res) return te::boolImm(*res);
        }
        return r;
    }

private:
    const Analyzer& m_a;
};

void Analyzer::bind(const te::Var& v, IntRange range) { m_bounds[v.get()] = range; }
void Analyzer::bindLoop(const te::Var& v, int64_t min, int64_t extent) {
    TB_CHECK(extent >= 1) << "loop " << v.name() << " of extent " << extent;
    m_bounds[v.get()] = IntRange{min, min + extent - 1};
}
void Analyzer::unbind(const te::Var& v) { m_bounds.erase(v.get()); }
Expr Analyzer::simplify(const Expr& e) const { return SimplifyImpl(*this).simplify(e); }
std::optional<IntRange> Analyzer::bound(const Expr& e) const { return SimplifyImpl(*this).bound(simplify(e)); }
bool Analyzer::canProve(const Expr& cond) const {
    int64_t v;
    return te::isConstInt(simplify(cond), &v) && v != 0;
}

Expr simplify(const Expr& e) { return Analyzer().simplify(e); }

namespace {

Stmt simplifyStmt(const Stmt& s, Analyzer& an) {
    if (!s) return s;
    switch (s->kind) {
        case StmtKind::For: {
            auto* f = as<ForNode>(s);
            Expr mn = an.simplify(f->min), ext = an.simplify(f->extent);
            int64_t e;
            if (te::isConstInt(ext, &e) && e <= 0) return makeNop();
            // A blockIdx / threadIdx loop of extent 1 stays (a launch dimension of 1, TVM's
            // thread_extent 1); its variable is still replaced by its min.
            const bool launchAxis = f->forKind == ForKind::ThreadBinding && f->threadTag != "vthread";
            if (te::isConstInt(ext, &e) && e == 1) {
                Stmt body = simplifyStmt(substitute(f->body, {{f->var, mn}}), an);
                if (!launchAxis || isNop(body)) return body;
                return remakeFor(f, mn, ext, f->forKind, body);
            }
            auto rm = an.bound(mn), re = an.bound(ext);
            if (rm && re) an.bind(f->var, IntRange{rm->min, rm->max + re->max - 1});
            Stmt body = simplifyStmt(f->body, an);
            an.unbind(f->var);
            if (isNop(body)) return makeNop();
            return remakeFor(f, mn, ext, f->forKind, body);
        }
        case StmtKind::Allocate: {
            auto* a = as<AllocateNode>(s);
            Stmt body = simplifyStmt(a->body, an);
            if (isNop(body)) return makeNop();
            return makeAllocate(a->buffer, body);
        }
        case StmtKind::BufferStore: {
            auto* st = as<BufferStoreNode>(s);
            std::vector<Expr> idx;
            for (auto& x : st->indices) idx.push_back(an.simplify(x));
            Expr value = an.simplify(st->value);
            // `b[i] = b[i]` does nothing: what `b[i] = b[i] + x*0f` folds to once an unrolled copy
            // makes a constant-matrix factor zero (winograd's data_pack / inverse).
            if (value.kind() == ExprKind::Load) {
                auto* ld = value.as<te::LoadNode>();
                bool same = ld->op == st->buffer->key && ld->indices.size() == idx.size();
                for (size_t i = 0; same && i < idx.size(); ++i) same = deepEqual(ld->indices[i], idx[i]);
                if (same) return makeNop();
            }
            return makeStore(st->buffer, std::move(idx), std::move(value));
        }
        case StmtKind::IfThenElse: {
            auto* i = as<IfThenElseNode>(s);
            Expr c = an.simplify(i->condition);
            int64_t v;
            if (te::isConstInt(c, &v)) {
                Stmt b = v ? i->thenCase : i->elseCase;
                return b ? simplifyStmt(b, an) : makeNop();
            }
            Stmt t = simplifyStmt(i->thenCase, an);
            Stmt el = i->elseCase ? simplifyStmt(i->elseCase, an) : nullptr;
            if (el && isNop(el)) el = nullptr;
            if (isNop(t) && !el) return makeNop();
            return makeIf(c, t, el);
        }
        case StmtKind::Seq: {
            std::vector<Stmt> v;
            for (auto& c : as<SeqNode>(s)->seq) {
                Stmt x = simplifyStmt(c, an);
                if (!isNop(x)) v.push_back(x);
            }
            if (v.empty()) return makeNop();
            return makeSeq(std::move(v));
        }
        case StmtKind::Attr: {
            auto* a = as<AttrNode>(s);
            Stmt body = simplifyStmt(a->body, an);
            if (isNop(body)) return makeNop();
            return makeAttr(a->key, a->value, body);
        }
        case StmtKind::Barrier: case StmtKind::Prefetch: return s;
    }
    return s;
}

struct Unrolled {
    Stmt s;
    int64_t steps;  // statements executed; -1 = not a constant
};

Unrolled unroll(const Stmt& s, int64_t maxStep) {
    if (!s) return {s, 0};
    switch (s->kind) {
        case StmtKind::For: {
            auto* f = as<ForNode>(s);
            Unrolled body = unroll(f->body, maxStep);
            int64_t ext;
            if (!te::isConstInt(f->extent, &ext) || body.steps < 0) return {remakeFor(f, f->min, f->extent, f->forKind, body.s), -1};
            // TVM vectorizes before unrolling: a vectorized loop is one step of its body; a GPU
            // thread loop (TVM's thread_extent attribute, not a loop) is one step as well.
            const bool oneStep = f->forKind == ForKind::Vectorized || f->forKind == ForKind::ThreadBinding;
            const int64_t steps = (oneStep ? 1 : ext) * body.steps;
            ForKind kind = f->forKind;
            if (kind == ForKind::Serial && maxStep > 0 && steps <= maxStep) kind = ForKind::Unrolled;
            return {remakeFor(f, f->min, f->extent, kind, body.s), steps};
        }
        case StmtKind::Allocate: {
            auto* a = as<AllocateNode>(s);
            Unrolled body = unroll(a->body, maxStep);
            return {makeAllocate(a->buffer, body.s), body.steps};
        }
        case StmtKind::BufferStore: return {s, 1};
        case StmtKind::IfThenElse: {
            auto* i = as<IfThenElseNode>(s);
            Unrolled t = unroll(i->thenCase, maxStep), e = unroll(i->elseCase, maxStep);
            int64_t steps = (t.steps < 0 || e.steps < 0) ? -1 : std::max(t.steps, e.steps);
            return {makeIf(i->condition, t.s, e.s), steps};
        }
        case StmtKind::Seq: {
            std::vector<Stmt> v;
            int64_t steps = 0;
            for (auto& c : as<SeqNode>(s)->seq) {
                Unrolled u = unroll(c, maxStep);
                v.push_back(u.s);
                steps = (steps < 0 || u.steps < 0) ? -1 : steps + u.steps;
            }
            return {std::make_shared<SeqNode>(std::move(v)), steps};
        }
        case StmtKind::Attr: {
            auto* a = as<AttrNode>(s);
            Unrolled body = unroll(a->body, a->key == attr::kAutoUnrollMaxStep ? a->value : maxStep);
            return {makeAttr(a->key, a->value, body.s), body.steps};
        }
        case StmtKind::Barrier: case StmtKind::Prefetch: return {s, 1};
    }
    return {s, -1};
}

struct Expanded {
    Stmt s;
    int64_t stores;  // BufferStore statements in s (as written, not as executed)
};

Expanded expand(const Stmt& s, int64_t maxStores) {
    if (!s) return {s, 0};
    switch (s->kind) {
        case StmtKind::For: {
            auto* f = as<ForNode>(s);
            Expanded body = expand(f->body, maxStores);
            int64_t ext;
            if (f->forKind == ForKind::Unrolled && te::isConstInt(f->extent, &ext) && ext >= 0 &&
                ext * std::max<int64_t>(body.stores, 1) <= maxStores) {
                std::vector<Stmt> copies;
                copies.reserve(size_t(ext));
                for (int64_t k = 0; k < ext; ++k) copies.push_back(substitute(body.s, {{f->var, f->min + te::intImm(k)}}));
                return {makeSeq(std::move(copies)), ext * body.stores};
            }
            return {remakeFor(f, f->min, f->extent, f->forKind, body.s), body.stores};
        }
        case StmtKind::Allocate: {
            auto* a = as<AllocateNode>(s);
            Expanded body = expand(a->body, maxStores);
            return {makeAllocate(a->buffer, body.s), body.stores};
        }
        case StmtKind::BufferStore: return {s, 1};
        case StmtKind::IfThenElse: {
            auto* i = as<IfThenElseNode>(s);
            Expanded t = expand(i->thenCase, maxStores), e = expand(i->elseCase, maxStores);
            return {makeIf(i->condition, t.s, e.s), t.stores + e.stores};
        }
        case StmtKind::Seq: {
            std::vector<Stmt> v;
            int64_t stores = 0;
            for (auto& c : as<SeqNode>(s)->seq) {
                Expanded x = expand(c, maxStores);
                v.push_back(x.s);
                stores += x.stores;
            }
            return {makeSeq(std::move(v)), stores};
        }
        case StmtKind::Attr: {
            auto* a = as<AttrNode>(s);
            Expanded body = expand(a->body, maxStores);
            return {makeAttr(a->key, a->value, body.s), body.stores};
        }
        case StmtKind::Barrier: case StmtKind::Prefetch: return {s, 0};
    }
    return {s, 0};
}

// Loads of `buf` in e: how many, and whether all are at exactly `idx`.
void countLoads(const Expr& e, const te::Operation& buf, const std::vector<Expr>& idx, int& n, bool& allAtIdx) {
    te::postOrderVisit(e, [&](const Expr& x) {
        if (x.kind() != ExprKind::Load) return;
        auto* ld = x.as<te::LoadNode>();
        if (ld->op != buf) return;
        ++n;
        bool same = ld->indices.size() == idx.size();
        for (size_t i = 0; same && i < idx.size(); ++i) same = deepEqual(ld->indices[i], idx[i]);
        allAtIdx = allAtIdx && same;
    });
}

// Replace the load of `buf` in e (there is exactly one) by `value`.
Expr replaceLoad(const Expr& e, const te::Operation& buf, const Expr& value) {
    if (!e) return e;
    switch (e.kind()) {
        case ExprKind::Load:
            if (e.as<te::LoadNode>()->op == buf) return value;
            return e;
        case ExprKind::IntImm: case ExprKind::FloatImm: case ExprKind::Var: return e;
        case ExprKind::Not: return te::logicalNot(replaceLoad(e.as<te::NotNode>()->a, buf, value));
        case ExprKind::Select: {
            auto* n = e.as<te::SelectNode>();
            return te::select(replaceLoad(n->cond, buf, value), replaceLoad(n->t, buf, value), replaceLoad(n->f, buf, value));
        }
        case ExprKind::Cast: return te::cast(e.dtype(), replaceLoad(e.as<te::CastNode>()->value, buf, value));
        case ExprKind::Call: {
            auto* n = e.as<te::CallNode>();
            std::vector<Expr> args;
            for (auto& a : n->args) args.push_back(replaceLoad(a, buf, value));
            return te::call(n->dtype, n->op, std::move(args));
        }
        case ExprKind::Reduce: return e;  // never in lowered IR
        default: return te::binary(e.kind(), replaceLoad(bin(e)->a, buf, value), replaceLoad(bin(e)->b, buf, value));
    }
}

// Store forwarding between adjacent statements of a Seq: `b[I] = v1; b[I] = f(b[I])` becomes
// `b[I] = f(v1)` when f reads b exactly once, at I (an unrolled reduction into one element).
// Evaluation order and float operations are unchanged, so results are bitwise identical.
constexpr int kMaxForwardChain = 256;  // bounds expression depth (recursive passes, codegen)

Stmt forwardStores(const Stmt& s) {
    if (!s) return s;
    switch (s->kind) {
        case StmtKind::For: {
            auto* f = as<ForNode>(s);
            return remakeFor(f, f->min, f->extent, f->forKind, forwardStores(f->body));
        }
        case StmtKind::Allocate: {
            auto* a = as<AllocateNode>(s);
            return makeAllocate(a->buffer, forwardStores(a->body));
        }
        case StmtKind::BufferStore: return s;
        case StmtKind::IfThenElse: {
            auto* i = as<IfThenElseNode>(s);
            return makeIf(i->condition, forwardStores(i->thenCase), i->elseCase ? forwardStores(i->elseCase) : nullptr);
        }
        case StmtKind::Attr: {
            auto* a = as<AttrNode>(s);
            return makeAttr(a->key, a->value, forwardStores(a->body));
        }
        case StmtKind::Barrier: case StmtKind::Prefetch: return s;
        case StmtKind::Seq: {
            std::vector<Stmt> out;
            int chain = 0;
            for (auto& c0 : as<SeqNode>(s)->seq) {
                Stmt c = forwardStores(c0);
                if (!out.empty() && c->kind == StmtKind::BufferStore && out.back()->kind == StmtKind::BufferStore &&
                    chain < kMaxForwardChain) {
                    auto *prev = as<BufferStoreNode>(out.back()), *cur = as<BufferStoreNode>(c);
                    bool same = prev->buffer == cur->buffer && prev->indices.size() == cur->indices.size();
                    for (size_t i = 0; same && i < cur->indices.size(); ++i) same = deepEqual(prev->indices[i], cur->indices[i]);
                    int n = 0;
                    bool atIdx = true;
                    if (same) countLoads(cur->value, cur->buffer->key, cur->indices, n, atIdx);
                    if (same && n <= 1 && atIdx) {
                        Expr v = n == 0 ? cur->value : replaceLoad(cur->value, cur->buffer->key, prev->value);
                        out.back() = makeStore(cur->buffer, cur->indices, v);
                        ++chain;
                        continue;
                    }
                }
                out.push_back(c);
                chain = 0;
            }
            return makeSeq(std::move(out));
        }
    }
    return s;
}

}  // namespace

Stmt expandUnrolled(const Stmt& s, int64_t maxStores) { return forwardStores(simplify(expand(s, maxStores).s)); }

Stmt simplify(const Stmt& s, const Analyzer& analyzer) {
    Analyzer an = analyzer;
    Stmt r = simplifyStmt(s, an);
    return r ? r : makeNop();
}

LoweredFunc simplify(const LoweredFunc& f) {
    LoweredFunc r = f;
    r.body = simplify(f.body);
    return r;
}

Stmt unrollLoops(const Stmt& s) { return unroll(s, 0).s; }

}  // namespace tb::lower
