// SPDX-License-Identifier: Apache-2.0
#include "engine/schedule/infer_bound.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "engine/support/error.h"
#include "engine/support/int_math.h"

namespace tb {

namespace {

using te::Expr;
using te::ExprKind;

// ---- symbolic affine bounds -----------------------------------------------------------------
// Bounds are affine forms over "atoms": the variable of a loop fixed at its current iteration
// (base atoms: offsets from the loop's min, ranging [0, extent-1]), or floordiv/floormod of such a
// form (derived atoms). Keeping the fixed loops symbolic makes `hi - lo` cancel exactly as te's
// simplifier does, so a tile read at i.0*8 .. i.0*8+7 has extent 8 whatever i.0 is. When loop
// variables are given, every atom also carries the expression it stands for, so a region's min
// can be emitted.

struct Atom {
    int64_t lo = 0, hi = 0;  // numeric range of the atom
    std::vector<int> deps;   // base atoms it depends on (itself for a base atom)
    Expr expr;               // what it stands for (only with loop variables)
};

struct LinForm {
    std::vector<std::pair<int, int64_t>> terms;  // (atom, coefficient), sorted by atom, no zeros
    int64_t c = 0;
    bool operator==(const LinForm&) const = default;
    bool sameTerms(const LinForm& o) const { return terms == o.terms; }
    bool isConst() const { return terms.empty(); }
};

LinForm constant(int64_t c) { return LinForm{{}, c}; }

LinForm addForms(const LinForm& a, const LinForm& b, int64_t sb = 1) {
    LinForm r;
    r.c = a.c + sb * b.c;
    if (b.terms.empty()) {
        r.terms = a.terms;
        return r;
    }
    r.terms.reserve(a.terms.size() + b.terms.size());
    size_t i = 0, j = 0;
    while (i < a.terms.size() || j < b.terms.size()) {
        if (j == b.terms.size() || (i < a.terms.size() && a.terms[i].first < b.terms[j].first)) {
            r.terms.push_back(a.terms[i++]);
        } else if (i == a.terms.size() || b.terms[j].first < a.terms[i].first) {
            r.terms.emplace_back(b.terms[j].first, sb * b.terms[j].second);
            ++j;
        } else {
            const int64_t co = a.terms[i].second + sb * b.terms[j].second;
            if (co != 0) r.terms.emplace_back(a.terms[i].first, co);
            ++i, ++j;
        }
    }
    return r;
}

LinForm scale(const LinForm& a, int64_t k) {
    if (k == 0) return constant(0);
    LinForm r = a;
    r.c *= k;
    for (auto& t : r.terms) t.second *= k;
    return r;
}

struct Interval {
    LinForm lo, hi;
    bool all = false;  // unbounded (te's "everything")
    static Interval point(LinForm f) { return Interval{f, f, false}; }
    static Interval everything() { return Interval{{}, {}, true}; }
    bool isPoint() const { return !all && lo == hi; }
};

class Atoms {
public:
    explicit Atoms(bool withExprs) : m_withExprs(withExprs) {}

    int base(int64_t extent, Expr var) {
        m_atoms.push_back(Atom{0, std::max<int64_t>(extent - 1, 0), {int(m_atoms.size())}, std::move(var)});
        return int(m_atoms.size()) - 1;
    }
    int64_t numMin(const LinForm& f) const {
        int64_t r = f.c;
        for (auto [a, k] : f.terms) r += k > 0 ? k * m_atoms[size_t(a)].lo : k * m_atoms[size_t(a)].hi;
        return r;
    }
    int64_t numMax(const LinForm& f) const {
        int64_t r = f.c;
        for (auto [a, k] : f.terms) r += k > 0 ? k * m_atoms[size_t(a)].hi : k * m_atoms[size_t(a)].lo;
        return r;
    }
    bool divisible(const LinForm& f, int64_t c) const {
        return std::all_of(f.terms.begin(), f.terms.end(), [&](auto& t) { return t.second % c == 0; });
    }
    // floordiv(f, c) for a single value f.
    LinForm divPoint(const LinForm& f, int64_t c) {
        if (divisible(f, c)) {
            LinForm r{{}, floorDiv(f.c, c)};
            for (auto [a, k] : f.terms) r.terms.emplace_back(a, k / c);
            return r;
        }
        return derived(f, floorDiv(numMin(f), c), floorDiv(numMax(f), c), c, true);
    }
    LinForm modPoint(const LinForm& f, int64_t c) {
        if (divisible(f, c)) return constant(floorMod(f.c, c));
        return derived(f, 0, c - 1, c, false);
    }
    // Bound of f with every atom that depends on a relaxed base atom replaced by its numeric range.
    LinForm relax(const LinForm& f, const std::vector<int>& relaxed, bool lower) const {
        if (relaxed.empty()) return f;
        LinForm r{{}, f.c};
        for (auto [a, k] : f.terms) {
            const auto& deps = m_atoms[size_t(a)].deps;
            const bool rel = std::any_of(deps.begin(), deps.end(), [&](int d) {
                return std::find(relaxed.begin(), relaxed.end(), d) != relaxed.end();
            });
            if (!rel) {
                r.terms.emplace_back(a, k);
            } else {
                const Atom& at = m_atoms[size_t(a)];
                r.c += (lower == (k > 0)) ? k * at.lo : k * at.hi;
            }
        }
        return r;
    }
    // The expression of f (only with loop variables).
    Expr toExpr(const LinForm& f) const {
        Expr acc;
        for (auto [a, k] : f.terms) {
            const Expr& x = m_atoms[size_t(a)].expr;
            TB_CHECK(x) << "infer_bound: an expression of a bound was asked for without loop variables";
            Expr t = k == 1 ? x : x * te::intImm(k);
            acc = acc ? acc + t : t;
        }
        if (!acc) return te::intImm(f.c);
        return f.c == 0 ? acc : acc + te::intImm(f.c);
    }

private:
    // A new atom for floordiv / floormod(f, c) with the given numeric range.
    LinForm derived(const LinForm& f, int64_t lo, int64_t hi, int64_t c, bool div) {
        Atom a{lo, hi, {}, {}};
        for (auto [id, k] : f.terms) {
            const auto& d = m_atoms[size_t(id)].deps;
            a.deps.insert(a.deps.end(), d.begin(), d.end());
        }
        if (m_withExprs) a.expr = div ? te::floordiv(toExpr(f), te::intImm(c)) : te::floormod(toExpr(f), te::intImm(c));
        m_atoms.push_back(std::move(a));
        return LinForm{{{int(m_atoms.size()) - 1, 1}}, 0};
    }

    bool m_withExprs;
    std::vector<Atom> m_atoms;
};

// ---- per-stage data -------------------------------------------------------------------------

struct SymRange {
    LinForm min;
    int64_t extent = 0;
};

struct StageInfo {
    bool computed = false;  // a compute op that is not inlined
    bool done = false;
    std::vector<SymRange> range;                  // per IterVarGraph var
    std::vector<int> baseAtom;                    // per IterVarGraph var, -1 until used
    std::vector<int> leafOf;                      // per IterVarGraph var: iterator index, -1 for non-leaves
    std::vector<const te::OperationNode*> reads;  // ops read, through inlined stages
};

enum StorageRank { kGlobal = 0, kShared = 1, kWarp = 2, kLocal = 3 };

int threadRank(IteratorAnnotation a) {
    switch (a) {
        case IteratorAnnotation::BlockX: case IteratorAnnotation::BlockY: case IteratorAnnotation::BlockZ:
            return 0;
        default:
            return 1;  // threadIdx.* and vthread
    }
}

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

class BoundInference {
public:
    // `loopVars` null: numeric mins only (inferBound).
    BoundInference(const State& state, const LoopVars* loopVars)
        : m_state(state), m_loopVars(loopVars), m_info(state.stages().size()), m_atoms(loopVars != nullptr) {
        const auto& stages = state.stages();
        m_opStage.reserve(stages.size());
        for (size_t i = 0; i < stages.size(); ++i) m_opStage[stages[i]->op.get()] = int(i);
        TB_CHECK(!loopVars || loopVars->size() == stages.size())
            << "infer_bound: " << loopVars->size() << " loop-variable lists for " << stages.size() << " stages";
        for (size_t i = 0; i < stages.size(); ++i) {
            const Stage& s = *stages[i];
            if (s.opType != StageKind::Compute || s.computeAt == ComputeAtKind::Inlined) continue;
            StageInfo& d = m_info[i];
            TB_CHECK(s.graph) << "infer_bound: stage " << s.op->name << " has no iter-var graph";
            TB_CHECK(!loopVars || (*loopVars)[i].size() == s.iters.size())
                << "infer_bound: stage " << s.op->name << " has " << s.iters.size() << " loops but "
                << (*loopVars)[i].size() << " loop variables";
            d.computed = true;
            d.leafOf.assign(s.graph->vars.size(), -1);
            d.baseAtom.assign(s.graph->vars.size(), -1);
            for (size_t j = 0; j < s.iters.size(); ++j) {
                const int v = s.iters[j].var;
                TB_CHECK(v >= 0 && size_t(v) < s.graph->vars.size())
                    << "infer_bound: loop " << s.iters[j].name << " of " << s.op->name << " has no iter var";
                d.leafOf[size_t(v)] = int(j);
            }
            gatherReads(s.op.get(), d.reads, 0);
        }
    }

    // Bounds of every computed stage, consumers first (stage order is topological).
    void run() {
        for (size_t i = m_info.size(); i-- > 0;)
            if (m_info[i].computed) inferStage(int(i));
    }

    State withRanges() const {
        State out = m_state;
        for (size_t i = 0; i < m_info.size(); ++i) {
            if (!m_info[i].computed) continue;
            Stage ns = m_state.stage(int(i));
            for (auto& it : ns.iters) {
                const SymRange& r = m_info[i].range[size_t(it.var)];
                it.range = Range{m_atoms.numMin(r.min), r.extent};
            }
            out.setStage(int(i), std::move(ns));
        }
        return out;
    }

    std::vector<StageBounds> bounds() const {
        std::vector<StageBounds> out(m_info.size());
        for (size_t i = 0; i < m_info.size(); ++i) {
            const StageInfo& d = m_info[i];
            if (!d.computed) continue;
            StageBounds& b = out[i];
            b.extent.reserve(d.range.size());
            b.min.reserve(d.range.size());
            for (const SymRange& r : d.range) {
                b.extent.push_back(r.extent);
                b.min.push_back(m_atoms.numMin(r.min));
            }
            if (!m_loopVars) continue;
            const int nRoots = m_state.stage(int(i)).graph->numRoots;
            b.rootMin.reserve(size_t(nRoots));
            for (int r = 0; r < nRoots; ++r) b.rootMin.push_back(m_atoms.toExpr(d.range[size_t(r)].min));
        }
        return out;
    }

private:
    // (stage, var) of every loop enclosing stage id, innermost first (te CreateAttachPath).
    std::vector<std::pair<int, int>> attachPath(int id) const {
        std::vector<std::pair<int, int>> path;
        int cur = id;
        for (size_t guard = 0;; ++guard) {
            const Stage& s = m_state.stage(cur);
            if (s.computeAt != ComputeAtKind::Iter) break;
            auto at = m_state.attachMap().attachedAt(cur);
            if (!at) break;
            TB_USER_CHECK(guard <= m_state.stages().size()) << "infer_bound: compute_at cycle at stage " << s.op->name;
            const auto [ts, ti] = *at;
            TB_USER_CHECK(ts >= 0 && size_t(ts) < m_state.stages().size())
                << "infer_bound: " << s.op->name << " is attached to stage " << ts << ", which does not exist";
            const Stage& target = m_state.stage(ts);
            TB_USER_CHECK(target.opType == StageKind::Compute && target.computeAt != ComputeAtKind::Inlined)
                << "infer_bound: " << s.op->name << " is attached to " << target.op->name << ", which is not computed";
            TB_USER_CHECK(ti >= 0 && size_t(ti) < target.iters.size())
                << "infer_bound: " << s.op->name << " is attached at loop " << ti << " of " << target.op->name
                << ", which has " << target.iters.size() << " loops";
            for (int j = ti; j >= 0; --j) path.emplace_back(ts, target.iters[size_t(j)].var);
            cur = ts;
        }
        return path;
    }

    IteratorAnnotation annotationOf(int stageId, int var) const {
        const int leaf = m_info[size_t(stageId)].leafOf[size_t(var)];
        return leaf < 0 ? IteratorAnnotation::None : m_state.stage(stageId).iters[size_t(leaf)].annotation;
    }

    int storageRank(int id, const std::vector<std::pair<int, int>>& path) const {
        const std::string& name = m_state.stage(id).op->name;
        if (endsWith(name, ".shared")) return kShared;
        if (endsWith(name, ".local")) return kLocal;
        if (endsWith(name, ".warp")) return kWarp;
        if (endsWith(name, ".global")) return kGlobal;
        int maxRank = -1;
        for (auto [s, v] : path) {
            const IteratorAnnotation a = annotationOf(s, v);
            if (isThreadBinding(a)) maxRank = std::max(maxRank, threadRank(a));
        }
        return maxRank < 0 ? kGlobal : maxRank == 0 ? kShared : kLocal;
    }

    // Whether a consumer loop ranges fully over the region the producer computes (te NeedRelax):
    // loops inside the attach point, and thread loops the producer's storage is not private to.
    static bool needRelax(IteratorAnnotation a, bool found, int scope) {
        if (!isThreadBinding(a)) return !found;
        if (scope == kWarp && a == IteratorAnnotation::ThreadX) return true;
        return scope <= threadRank(a);
    }

    int baseAtom(int stageId, int var) {
        StageInfo& d = m_info[size_t(stageId)];
        int& a = d.baseAtom[size_t(var)];
        if (a >= 0) return a;
        const int leaf = d.leafOf[size_t(var)];
        TB_CHECK(leaf >= 0) << "infer_bound: a fixed loop of " << m_state.stage(stageId).op->name << " is not a leaf";
        a = m_atoms.base(d.range[size_t(var)].extent,
                         m_loopVars ? Expr((*m_loopVars)[size_t(stageId)][size_t(leaf)]) : Expr());
        return a;
    }

    bool matches(const Interval& iv, const SymRange& r) const {
        if (iv.all) return true;
        return iv.lo == r.min && iv.hi == addForms(r.min, constant(r.extent - 1));
    }
    static Interval full(const SymRange& r) { return Interval{r.min, addForms(r.min, constant(r.extent - 1)), false}; }

    // te PassUpDomain over a consumer's relations.
    void passUp(int stageId, std::vector<std::optional<Interval>>& up) {
        const IterVarGraph& g = *m_state.stage(stageId).graph;
        const auto& rng = m_info[size_t(stageId)].range;
        for (auto it = g.relations.rbegin(); it != g.relations.rend(); ++it) {
            const IterRelation& r = *it;
            if (r.kind == IterRelation::Kind::Split) {
                auto& o = up[size_t(r.outer)];
                auto& in = up[size_t(r.inner)];
                if (!o || !in) continue;
                if (matches(*o, rng[size_t(r.outer)]) && matches(*in, rng[size_t(r.inner)])) {
                    up[size_t(r.parent)] = full(rng[size_t(r.parent)]);
                    continue;
                }
                if (o->all || in->all) {
                    up[size_t(r.parent)] = Interval::everything();
                    continue;
                }
                const int64_t factor = rng[size_t(r.inner)].extent;
                const LinForm& pmin = rng[size_t(r.parent)].min;
                up[size_t(r.parent)] = Interval{addForms(addForms(scale(o->lo, factor), in->lo), pmin),
                                                addForms(addForms(scale(o->hi, factor), in->hi), pmin), false};
            } else {
                auto& f = up[size_t(r.parent)];
                if (!f) continue;
                const SymRange& ro = rng[size_t(r.outer)];
                const SymRange& ri = rng[size_t(r.inner)];
                if (matches(*f, rng[size_t(r.parent)])) {
                    up[size_t(r.outer)] = full(ro);
                    up[size_t(r.inner)] = full(ri);
                } else if (f->isPoint()) {
                    up[size_t(r.outer)] = Interval::point(addForms(m_atoms.divPoint(f->lo, ri.extent), ro.min));
                    up[size_t(r.inner)] = Interval::point(addForms(m_atoms.modPoint(f->lo, ri.extent), ri.min));
                } else {
                    up[size_t(r.outer)] = Interval{addForms(ro.min, divLower(f->lo, ri.extent)),
                                                   addForms(ro.min, divUpper(f->hi, ri.extent)), false};
                    up[size_t(r.inner)] = full(ri);
                }
            }
        }
    }

    LinForm divLower(const LinForm& f, int64_t c) {
        return m_atoms.divisible(f, c) ? m_atoms.divPoint(f, c) : constant(floorDiv(m_atoms.numMin(f), c));
    }
    LinForm divUpper(const LinForm& f, int64_t c) {
        return m_atoms.divisible(f, c) ? m_atoms.divPoint(f, c) : constant(floorDiv(m_atoms.numMax(f), c));
    }
    static Interval numeric(int64_t lo, int64_t hi) { return Interval{constant(lo), constant(hi), false}; }

    // Variable -> interval, searched linearly (a stage has a handful of axes).
    using Env = std::vector<std::pair<const te::ExprNode*, Interval>>;

    Interval eval(const Expr& e, const Env& env) {
        switch (e.kind()) {
            case ExprKind::IntImm: {
                const int64_t v = e.as<te::IntImmNode>()->value;
                return numeric(v, v);
            }
            case ExprKind::Var: {
                for (const auto& [v, iv] : env)
                    if (v == e.get()) return iv;
                return Interval::everything();
            }
            case ExprKind::Cast: return eval(e.as<te::CastNode>()->value, env);
            case ExprKind::Add: case ExprKind::Sub: {
                auto* b = static_cast<const te::BinaryNode*>(e.get());
                Interval x = eval(b->a, env), y = eval(b->b, env);
                if (x.all || y.all) return Interval::everything();
                if (e.kind() == ExprKind::Add) return Interval{addForms(x.lo, y.lo), addForms(x.hi, y.hi), false};
                return Interval{addForms(x.lo, y.hi, -1), addForms(x.hi, y.lo, -1), false};
            }
            case ExprKind::Mul: {
                auto* b = static_cast<const te::BinaryNode*>(e.get());
                Interval x = eval(b->a, env), y = eval(b->b, env);
                if (x.all || y.all) return Interval::everything();
                if (y.isPoint() && y.lo.isConst()) std::swap(x, y);
                if (x.isPoint() && x.lo.isConst()) {
                    const int64_t k = x.lo.c;
                    return k >= 0 ? Interval{scale(y.lo, k), scale(y.hi, k), false}
                                  : Interval{scale(y.hi, k), scale(y.lo, k), false};
                }
                const int64_t a[2] = {m_atoms.numMin(x.lo), m_atoms.numMax(x.hi)};
                const int64_t c[2] = {m_atoms.numMin(y.lo), m_atoms.numMax(y.hi)};
                const int64_t p[4] = {a[0] * c[0], a[0] * c[1], a[1] * c[0], a[1] * c[1]};
                return numeric(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
            }
            case ExprKind::Div: case ExprKind::FloorDiv: {
                auto* b = static_cast<const te::BinaryNode*>(e.get());
                Interval x = eval(b->a, env), y = eval(b->b, env);
                if (x.all || !y.isPoint() || !y.lo.isConst() || y.lo.c <= 0) return Interval::everything();
                const int64_t c = y.lo.c;
                if (x.isPoint()) return Interval::point(m_atoms.divPoint(x.lo, c));
                return Interval{divLower(x.lo, c), divUpper(x.hi, c), false};
            }
            case ExprKind::Mod: case ExprKind::FloorMod: {
                auto* b = static_cast<const te::BinaryNode*>(e.get());
                Interval x = eval(b->a, env), y = eval(b->b, env);
                if (!y.isPoint() || !y.lo.isConst() || y.lo.c <= 0) return Interval::everything();
                const int64_t c = y.lo.c;
                if (x.all) return numeric(0, c - 1);
                if (x.isPoint()) return Interval::point(m_atoms.modPoint(x.lo, c));
                if (x.lo.sameTerms(x.hi) && m_atoms.divisible(x.lo, c) && floorDiv(x.lo.c, c) == floorDiv(x.hi.c, c))
                    return numeric(floorMod(x.lo.c, c), floorMod(x.hi.c, c));
                return numeric(0, c - 1);
            }
            case ExprKind::Min: case ExprKind::Max: {
                auto* b = static_cast<const te::BinaryNode*>(e.get());
                Interval x = eval(b->a, env), y = eval(b->b, env);
                if (x.all || y.all) return Interval::everything();
                const int64_t xl = m_atoms.numMin(x.lo), xh = m_atoms.numMax(x.hi);
                const int64_t yl = m_atoms.numMin(y.lo), yh = m_atoms.numMax(y.hi);
                if (e.kind() == ExprKind::Min) return numeric(std::min(xl, yl), std::min(xh, yh));
                return numeric(std::max(xl, yl), std::max(xh, yh));
            }
            case ExprKind::Select: {
                auto* s = e.as<te::SelectNode>();
                return unionNumeric(eval(s->t, env), eval(s->f, env));
            }
            case ExprKind::Call: {
                auto* c = e.as<te::CallNode>();
                if (c->op == "tir.if_then_else" && c->args.size() == 3)
                    return unionNumeric(eval(c->args[1], env), eval(c->args[2], env));
                return Interval::everything();
            }
            default: return Interval::everything();
        }
    }

    Interval unionNumeric(const Interval& a, const Interval& b) const {
        if (a.all || b.all) return Interval::everything();
        return numeric(std::min(m_atoms.numMin(a.lo), m_atoms.numMin(b.lo)),
                       std::max(m_atoms.numMax(a.hi), m_atoms.numMax(b.hi)));
    }

    int stageOf(const te::OperationNode* op) const {
        auto it = m_opStage.find(op);
        return it == m_opStage.end() ? -1 : it->second;
    }

    // The index ranges of every load of `target` in a consumer body, looking through inlined
    // producers (te PropBoundToInputs after InjectInline), clipped to the shape when they cover it.
    void collectReads(const Expr& e, const Env& env, const te::OperationNode* target,
                      std::vector<std::vector<Interval>>& out) {
        if (!e.get()) return;
        te::postOrderVisit(e, [&](const Expr& x) {
            if (x.kind() != ExprKind::Load) return;
            auto* l = static_cast<const te::LoadNode*>(x.get());
            if (l->op.get() == target) {
                std::vector<Interval> dims;
                dims.reserve(l->indices.size());
                for (size_t d = 0; d < l->indices.size(); ++d) {
                    Interval iv = eval(l->indices[d], env);
                    const int64_t shapeMax = target->shape[d] - 1;
                    if (iv.all || (m_atoms.numMax(iv.lo) <= 0 && m_atoms.numMin(iv.hi) >= shapeMax))
                        iv = numeric(0, shapeMax);
                    dims.push_back(std::move(iv));
                }
                out.push_back(std::move(dims));
                return;
            }
            const int sid = stageOf(l->op.get());
            if (sid < 0) return;
            const Stage& q = m_state.stage(sid);
            if (q.computeAt != ComputeAtKind::Inlined || !q.op->isCompute()) return;
            Env inner;
            for (size_t d = 0; d < l->indices.size() && d < q.op->axis.size(); ++d)
                inner.emplace_back(q.op->axis[d].var.get(), eval(l->indices[d], env));
            for (const auto& b : q.op->body) collectReads(b, inner, target, out);
        });
    }

    // The ops a stage reads once inlined producers are substituted (te InjectInline + feed graph).
    void gatherReads(const te::OperationNode* op, std::vector<const te::OperationNode*>& out, int depth) const {
        TB_USER_CHECK(depth < 256) << "infer_bound: inline chain too deep at " << op->name;
        for (const auto& t : op->inputTensors()) {
            const te::OperationNode* p = t.op().get();
            if (std::find(out.begin(), out.end(), p) != out.end()) continue;
            out.push_back(p);
            const int sid = stageOf(p);
            if (sid < 0) continue;
            const Stage& q = m_state.stage(sid);
            if (q.computeAt == ComputeAtKind::Inlined && q.op->isCompute()) gatherReads(q.op.get(), out, depth + 1);
        }
    }

    void inferStage(int id) {
        const Stage& stage = m_state.stage(id);
        const te::OperationNode* op = stage.op.get();
        const IterVarGraph& g = *stage.graph;
        StageInfo& info = m_info[size_t(id)];
        info.range.assign(g.vars.size(), SymRange{});
        const int nSpatial = int(op->axis.size());

        // Root domains.
        for (int r = 0; r < g.numRoots; ++r) {
            const te::IterVar& ax = r < nSpatial ? op->axis[size_t(r)] : op->reduceAxis[size_t(r - nSpatial)];
            info.range[size_t(r)] = SymRange{constant(ax.min), ax.extent};
        }
        std::vector<int> consumers;
        for (int c = int(m_info.size()) - 1; c > id; --c) {
            const StageInfo& cd = m_info[size_t(c)];
            if (cd.computed && std::find(cd.reads.begin(), cd.reads.end(), op) != cd.reads.end()) consumers.push_back(c);
        }
        if (!consumers.empty()) {
            const auto path = attachPath(id);
            auto onPath = [&](int s, int v) {
                return std::find(path.begin(), path.end(), std::make_pair(s, v)) != path.end();
            };
            const int scope = storageRank(id, path);
            std::vector<std::vector<Interval>> all;  // per access site, per dim
            for (int c : consumers) {
                const Stage& cs = m_state.stage(c);
                const StageInfo& ci = m_info[size_t(c)];
                TB_CHECK(ci.done) << "infer_bound: consumer " << cs.op->name << " not inferred before " << op->name;
                std::vector<std::optional<Interval>> up(cs.graph->vars.size());
                bool found = false;
                for (size_t j = cs.iters.size(); j-- > 0;) {
                    const Iterator& it = cs.iters[j];
                    if (onPath(c, it.var)) found = true;
                    const SymRange& vr = ci.range[size_t(it.var)];
                    if (vr.extent == 1) {
                        up[size_t(it.var)] = Interval::point(vr.min);
                    } else if (!needRelax(it.annotation, found, scope)) {
                        up[size_t(it.var)] = Interval::point(addForms(vr.min, LinForm{{{baseAtom(c, it.var), 1}}, 0}));
                    } else {
                        up[size_t(it.var)] = full(vr);
                    }
                }
                std::vector<int> relaxed;
                for (auto [s, v] : attachPath(c)) {
                    if (onPath(s, v)) found = true;
                    const int a = m_info[size_t(s)].baseAtom[size_t(v)];
                    if (a >= 0 && needRelax(annotationOf(s, v), found, scope)) relaxed.push_back(a);
                }
                TB_USER_CHECK(found || path.empty())
                    << "infer_bound: invalid schedule: " << op->name
                    << " is not computed inside the loop nest of its consumer " << cs.op->name;
                passUp(c, up);
                Env env;
                const te::OperationNode* cop = cs.op.get();
                const int cSpatial = int(cop->axis.size());
                env.reserve(size_t(cs.graph->numRoots));
                for (int r = 0; r < cs.graph->numRoots; ++r) {
                    const te::IterVar& ax = r < cSpatial ? cop->axis[size_t(r)] : cop->reduceAxis[size_t(r - cSpatial)];
                    Interval iv = up[size_t(r)] && !up[size_t(r)]->all ? *up[size_t(r)] : full(ci.range[size_t(r)]);
                    iv.lo = m_atoms.relax(iv.lo, relaxed, true);
                    iv.hi = m_atoms.relax(iv.hi, relaxed, false);
                    env.emplace_back(ax.var.get(), std::move(iv));
                }
                for (const auto& b : cop->body) collectReads(b, env, op, all);
            }
            for (int d = 0; d < nSpatial; ++d) {
                std::optional<Interval> u;
                for (const auto& acc : all) {
                    const Interval& iv = acc[size_t(d)];
                    if (!u) {
                        u = iv;
                        continue;
                    }
                    if (u->lo.sameTerms(iv.lo)) u->lo.c = std::min(u->lo.c, iv.lo.c);
                    else u->lo = constant(std::min(m_atoms.numMin(u->lo), m_atoms.numMin(iv.lo)));
                    if (u->hi.sameTerms(iv.hi)) u->hi.c = std::max(u->hi.c, iv.hi.c);
                    else u->hi = constant(std::max(m_atoms.numMax(u->hi), m_atoms.numMax(iv.hi)));
                }
                if (!u) continue;  // never read: keep the full domain
                const int64_t ext = m_atoms.numMax(addForms(u->hi, u->lo, -1)) + 1;
                info.range[size_t(d)] = SymRange{u->lo, std::max<int64_t>(ext, 1)};
            }
        }

        // Leaves bound to threads are not tightened (te's dominating_thread).
        std::vector<char> thread;
        for (const auto& it : stage.iters) {
            if (!isThreadBinding(it.annotation)) continue;
            thread.resize(g.vars.size(), 0);
            thread[size_t(it.var)] = 1;
        }
        if (!thread.empty()) {
            for (auto it = g.relations.rbegin(); it != g.relations.rend(); ++it) {
                if (it->kind == IterRelation::Kind::Split) {
                    if (thread[size_t(it->outer)] || thread[size_t(it->inner)]) thread[size_t(it->parent)] = 1;
                } else if (thread[size_t(it->parent)]) {
                    thread[size_t(it->outer)] = thread[size_t(it->inner)] = 1;
                }
            }
        }
        // te PassDownDomain.
        for (const auto& r : g.relations) {
            if (r.kind == IterRelation::Kind::Split) {
                TB_USER_CHECK(r.factor > 0) << "infer_bound: stage " << op->name
                                            << " has a split with an undefined length (the state is not concrete)";
                const int64_t p = info.range[size_t(r.parent)].extent;
                auto tight = [&](int v) {
                    return (!thread.empty() && thread[size_t(v)]) || p == 0 ? r.factor : std::min(p, r.factor);
                };
                if (!r.nparts) {
                    info.range[size_t(r.inner)] = SymRange{constant(0), tight(r.inner)};
                    info.range[size_t(r.outer)] = SymRange{constant(0), ceilDiv(p, r.factor)};
                } else {
                    info.range[size_t(r.outer)] = SymRange{constant(0), tight(r.outer)};
                    info.range[size_t(r.inner)] = SymRange{constant(0), ceilDiv(p, r.factor)};
                }
            } else {
                info.range[size_t(r.parent)] =
                    SymRange{constant(0), info.range[size_t(r.outer)].extent * info.range[size_t(r.inner)].extent};
            }
        }
        info.done = true;
    }

    const State& m_state;
    const LoopVars* m_loopVars;
    std::vector<StageInfo> m_info;
    std::unordered_map<const te::OperationNode*, int> m_opStage;
    Atoms m_atoms;
};

}  // namespace

State inferBound(const State& state) {
    TB_CHECK(state.defined()) << "inferBound of a null state";
    TB_USER_CHECK(state.concrete()) << "infer_bound: only a concrete state (every split length known) has bounds";
    BoundInference b(state, nullptr);
    b.run();
    return b.withRanges();
}

std::vector<StageBounds> inferSymbolicBounds(const State& state, const LoopVars& loopVars) {
    TB_CHECK(state.defined()) << "inferSymbolicBounds of a null state";
    BoundInference b(state, &loopVars);
    b.run();
    return b.bounds();
}

}  // namespace tb
