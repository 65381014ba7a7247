// SPDX-License-Identifier: Apache-2.0
#include "engine/schedule/infer_bound.h"

#include <algorithm>
#include <map>
#include <set>

#include "engine/support/error.h"

namespace tb {

namespace {

// ---- symbolic affine bounds -----------------------------------------------------------------
// Bounds are affine forms over "atoms": the variable of a loop fixed at its current iteration
// (base atoms), or floordiv/floormod of such a form (derived atoms). Keeping the fixed loops
// symbolic makes `hi - lo` cancel exactly as te's simplifier does, so a tile read at i.0*8 .. i.0*8+7
// has extent 8 whatever i.0 is.

struct Atom {
    int64_t lo = 0, hi = 0;   // numeric range of the atom
    std::vector<int> deps;    // base atoms it depends on (itself for a base atom)
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
    size_t i = 0, j = 0;
    while (i < a.terms.size() || j < b.terms.size()) {
        if (j == b.terms.size() || (i < a.terms.size() && a.terms[i].first < b.terms[j].first)) {
            r.terms.push_back(a.terms[i++]);
        } else if (i == a.terms.size() || b.terms[j].first < a.terms[i].first) {
            r.terms.emplace_back(b.terms[j].first, sb * b.terms[j].second);
            ++j;
        } else {
            int64_t co = a.terms[i].second + sb * b.terms[j].second;
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

int64_t floorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t floorMod(int64_t a, int64_t b) { return a - floorDiv(a, b) * b; }
int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct Interval {
    LinForm lo, hi;
    bool all = false;  // unbounded (te's "everything")
    static Interval point(LinForm f) { return Interval{f, f, false}; }
    static Interval everything() { return Interval{{}, {}, true}; }
    bool isPoint() const { return !all && lo == hi; }
};

class Atoms {
public:
    int base(int64_t extent) {
        m_atoms.push_back(Atom{0, std::max<int64_t>(extent - 1, 0), {int(m_atoms.size())}});
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
    // A new atom for op(f, c) with the given numeric range.
    LinForm derived(const LinForm& f, int64_t lo, int64_t hi) {
        Atom a{lo, hi, {}};
        for (auto [id, k] : f.terms) {
            const auto& d = m_atoms[size_t(id)].deps;
            a.deps.insert(a.deps.end(), d.begin(), d.end());
        }
        m_atoms.push_back(std::move(a));
        return LinForm{{{int(m_atoms.size()) - 1, 1}}, 0};
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
        return derived(f, floorDiv(numMin(f), c), floorDiv(numMax(f), c));
    }
    LinForm modPoint(const LinForm& f, int64_t c) {
        if (divisible(f, c)) return constant(floorMod(f.c, c));
        return derived(f, 0, c - 1);
    }
    // Bound of f with every atom depending on a relaxed base atom replaced by its numeric range.
    LinForm relax(const LinForm& f, const std::set<int>& relaxed, bool lower) const {
        if (relaxed.empty()) return f;
        LinForm r{{}, f.c};
        for (auto [a, k] : f.terms) {
            const auto& deps = m_atoms[size_t(a)].deps;
            bool rel = std::any_of(deps.begin(), deps.end(), [&](int d) { return relaxed.count(d) != 0; });
            if (!rel) {
                r.terms.emplace_back(a, k);
            } else {
                const Atom& at = m_atoms[size_t(a)];
                r.c += (lower == (k > 0)) ? k * at.lo : k * at.hi;
            }
        }
        return r;
    }

private:
    std::vector<Atom> m_atoms;
};

// ---- per-stage data -------------------------------------------------------------------------

struct SymRange {
    LinForm min;
    int64_t extent = 0;
};

struct StageInfo {
    bool done = false;
    std::vector<SymRange> range;                   // per IterVarGraph var
    std::map<int, int> baseAtom;                   // var -> base atom (lazily)
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
    explicit BoundInference(const State& state) : m_state(state), m_info(state.stages().size()) {
        for (size_t i = 0; i < state.stages().size(); ++i)
            m_opStage[state.stages()[i]->op.get()] = int(i);
        m_reads.resize(state.stages().size());
        for (size_t i = 0; i < state.stages().size(); ++i) {
            const Stage& s = *state.stages()[i];
            if (s.opType == StageKind::Compute && s.computeAt != ComputeAtKind::Inlined)
                gatherReads(s.op.get(), m_reads[i]);
        }
    }

    State run() {
        const int n = int(m_state.stages().size());
        for (int i = n - 1; i >= 0; --i) {
            const Stage& s = m_state.stage(i);
            if (s.opType != StageKind::Compute || s.computeAt == ComputeAtKind::Inlined) continue;
            inferStage(i);
        }
        State out = m_state;
        for (int i = 0; i < n; ++i) {
            const Stage& s = m_state.stage(i);
            if (s.opType != StageKind::Compute || s.computeAt == ComputeAtKind::Inlined) continue;
            Stage ns = s;
            for (auto& it : ns.iters) {
                const SymRange& r = m_info[size_t(i)].range[size_t(it.var)];
                it.range = Range{m_atoms.numMin(r.min), r.extent};
            }
            out.setStage(i, std::move(ns));
        }
        return out;
    }

private:
    // (stage, var) of every loop enclosing stage id, innermost first (te CreateAttachPath).
    std::vector<std::pair<int, int>> attachPath(int id) const {
        std::vector<std::pair<int, int>> path;
        std::set<int> seen;
        int cur = id;
        while (true) {
            const Stage& s = m_state.stage(cur);
            if (s.computeAt != ComputeAtKind::Iter) break;
            auto at = m_state.attachMap().attachedAt(cur);
            if (!at) break;
            TB_USER_CHECK(seen.insert(cur).second) << "infer_bound: compute_at cycle at stage " << s.op->name;
            const auto [ts, ti] = *at;
            TB_USER_CHECK(ts >= 0 && size_t(ts) < m_state.stages().size()) << "infer_bound: bad attach stage";
            const Stage& target = m_state.stage(ts);
            TB_USER_CHECK(ti >= 0 && size_t(ti) < target.iters.size())
                << "infer_bound: " << s.op->name << " is attached at loop " << ti << " of " << target.op->name
                << ", which has " << target.iters.size() << " loops";
            TB_USER_CHECK(target.computeAt != ComputeAtKind::Inlined)
                << "infer_bound: " << s.op->name << " is attached to the inlined stage " << target.op->name;
            for (int j = ti; j >= 0; --j) path.emplace_back(ts, target.iters[size_t(j)].var);
            cur = ts;
        }
        return path;
    }

    const Iterator* leafOf(int stageId, int var) const {
        for (const auto& it : m_state.stage(stageId).iters)
            if (it.var == var) return &it;
        return nullptr;
    }

    int storageRank(int id, const std::vector<std::pair<int, int>>& path) const {
        const std::string& name = m_state.stage(id).op->name;
        if (endsWith(name, ".shared")) return kShared;
        if (endsWith(name, ".local")) return kLocal;
        if (endsWith(name, ".warp")) return kWarp;
        if (endsWith(name, ".global")) return kGlobal;
        int maxRank = -1;
        for (auto [s, v] : path) {
            const Iterator* it = leafOf(s, v);
            if (it && isThreadBinding(it->annotation)) maxRank = std::max(maxRank, threadRank(it->annotation));
        }
        return maxRank < 0 ? kGlobal : maxRank == 0 ? kShared : kLocal;
    }

    static bool needRelax(IteratorAnnotation a, bool found, int scope) {
        if (!isThreadBinding(a)) return !found;
        if (scope == kWarp && a == IteratorAnnotation::ThreadX) return true;
        return scope <= threadRank(a);
    }

    int baseAtom(int stageId, int var) {
        auto& m = m_info[size_t(stageId)].baseAtom;
        auto it = m.find(var);
        if (it != m.end()) return it->second;
        int a = m_atoms.base(m_info[size_t(stageId)].range[size_t(var)].extent);
        m[var] = a;
        return a;
    }

    bool matches(const Interval& iv, const SymRange& r) const {
        if (iv.all) return true;
        return iv.lo == r.min && iv.hi == addForms(r.min, constant(r.extent - 1));
    }
    static Interval full(const SymRange& r) { return Interval{r.min, addForms(r.min, constant(r.extent - 1)), false}; }

    // te PassUpDomain over the consumer's relations.
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
                const int64_t factor = rng[size_t(r.inner)].extent;
                const LinForm& pmin = rng[size_t(r.parent)].min;
                if (o->all || in->all) {
                    up[size_t(r.parent)] = Interval::everything();
                    continue;
                }
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
    Interval numeric(int64_t lo, int64_t hi) const { return Interval{constant(lo), constant(hi), false}; }

    using Env = std::map<const te::ExprNode*, Interval>;

    Interval eval(const te::Expr& e, const Env& env) {
        using te::ExprKind;
        switch (e.kind()) {
            case ExprKind::IntImm: {
                int64_t v = e.as<te::IntImmNode>()->value;
                return numeric(v, v);
            }
            case ExprKind::Var: {
                auto it = env.find(e.get());
                return it == env.end() ? Interval::everything() : it->second;
            }
            case ExprKind::Cast:
                return eval(e.as<te::CastNode>()->value, env);
            case ExprKind::Add: case ExprKind::Sub: {
                auto* b = e.as<te::BinaryNode>();
                Interval x = eval(b->a, env), y = eval(b->b, env);
                if (x.all || y.all) return Interval::everything();
                if (e.kind() == ExprKind::Add) return Interval{addForms(x.lo, y.lo), addForms(x.hi, y.hi), false};
                return Interval{addForms(x.lo, y.hi, -1), addForms(x.hi, y.lo, -1), false};
            }
            case ExprKind::Mul: {
                auto* b = e.as<te::BinaryNode>();
                Interval x = eval(b->a, env), y = eval(b->b, env);
                if (x.all || y.all) return Interval::everything();
                if (y.isPoint() && y.lo.isConst()) std::swap(x, y);
                if (x.isPoint() && x.lo.isConst()) {
                    int64_t k = x.lo.c;
                    return k >= 0 ? Interval{scale(y.lo, k), scale(y.hi, k), false}
                                  : Interval{scale(y.hi, k), scale(y.lo, k), false};
                }
                int64_t a[2] = {m_atoms.numMin(x.lo), m_atoms.numMax(x.hi)};
                int64_t c[2] = {m_atoms.numMin(y.lo), m_atoms.numMax(y.hi)};
                int64_t p[4] = {a[0] * c[0], a[0] * c[1], a[1] * c[0], a[1] * c[1]};
                return numeric(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
            }
            case ExprKind::Div: case ExprKind::FloorDiv: {
                auto* b = e.as<te::BinaryNode>();
                Interval x = eval(b->a, env), y = eval(b->b, env);
                if (x.all || !y.isPoint() || !y.lo.isConst() || y.lo.c <= 0) return Interval::everything();
                const int64_t c = y.lo.c;
                if (x.isPoint()) return Interval::point(m_atoms.divPoint(x.lo, c));
                return Interval{divLower(x.lo, c), divUpper(x.hi, c), false};
            }
            case ExprKind::Mod: case ExprKind::FloorMod: {
                auto* b = e.as<te::BinaryNode>();
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
                auto* b = e.as<te::BinaryNode>();
                Interval x = eval(b->a, env), y = eval(b->b, env);
                if (x.all || y.all) return Interval::everything();
                int64_t xl = m_atoms.numMin(x.lo), xh = m_atoms.numMax(x.hi);
                int64_t yl = m_atoms.numMin(y.lo), yh = m_atoms.numMax(y.hi);
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
            default:
                return Interval::everything();
        }
    }

    Interval unionNumeric(const Interval& a, const Interval& b) const {
        if (a.all || b.all) return Interval::everything();
        return numeric(std::min(m_atoms.numMin(a.lo), m_atoms.numMin(b.lo)),
                       std::max(m_atoms.numMax(a.hi), m_atoms.numMax(b.hi)));
    }

    // Walk a consumer body, expanding inlined producers, collecting the index ranges of loads of
    // `target` (te PropBoundToInputs after InjectInline), clipped to the shape as te does.
    void collectReads(const te::Expr& e, const Env& env, const te::OperationNode* target,
                      std::vector<std::vector<Interval>>& out) {
        if (!e.get()) return;
        te::postOrderVisit(e, [&](const te::Expr& x) {
            auto* l = x.as<te::LoadNode>();
            if (!l) return;
            if (l->op.get() == target) {
                std::vector<Interval> dims;
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
            auto sit = m_opStage.find(l->op.get());
            if (sit == m_opStage.end()) return;
            const Stage& q = m_state.stage(sit->second);
            if (q.computeAt != ComputeAtKind::Inlined || !q.op->isCompute()) return;
            Env inner;
            for (size_t d = 0; d < l->indices.size() && d < q.op->axis.size(); ++d)
                inner[q.op->axis[d].var.get()] = eval(l->indices[d], env);
            for (const auto& b : q.op->body) collectReads(b, inner, target, out);
        });
    }

    // The ops a stage reads once inlined producers are substituted (te InjectInline + feed graph).
    void gatherReads(const te::OperationNode* op, std::set<const te::OperationNode*>& out, int depth = 0) const {
        TB_USER_CHECK(depth < 256) << "infer_bound: inline chain too deep at " << op->name;
        for (const auto& t : op->inputTensors()) {
            if (!out.insert(t.op().get()).second) continue;
            auto it = m_opStage.find(t.op().get());
            if (it == m_opStage.end()) continue;
            const Stage& q = m_state.stage(it->second);
            if (q.computeAt == ComputeAtKind::Inlined) gatherReads(q.op.get(), out, depth + 1);
        }
    }

    void inferStage(int id) {
        const Stage& stage = m_state.stage(id);
        const te::OperationNode* op = stage.op.get();
        const IterVarGraph& g = *stage.graph;
        StageInfo& info = m_info[size_t(id)];
        info.range.assign(g.vars.size(), SymRange{});
        const int nSpatial = int(op->axis.size());

        std::vector<int> consumers;
        for (int c = int(m_state.stages().size()) - 1; c > id; --c) {
            const Stage& cs = m_state.stage(c);
            if (cs.opType != StageKind::Compute || cs.computeAt == ComputeAtKind::Inlined) continue;
            if (m_reads[size_t(c)].count(op)) consumers.push_back(c);
        }

        // Root domains.
        for (int r = 0; r < g.numRoots; ++r) {
            const te::IterVar& ax = r < nSpatial ? op->axis[size_t(r)] : op->reduceAxis[size_t(r - nSpatial)];
            info.range[size_t(r)] = SymRange{constant(ax.min), ax.extent};
        }
        if (!consumers.empty()) {
            const auto path = attachPath(id);
            std::set<std::pair<int, int>> stageAttach(path.begin(), path.end());
            const int scope = storageRank(id, path);
            std::vector<std::vector<std::vector<Interval>>> reads;  // per consumer access site
            std::vector<std::vector<Interval>> all;
            for (int c : consumers) {
                const Stage& cs = m_state.stage(c);
                const StageInfo& ci = m_info[size_t(c)];
                TB_CHECK(ci.done) << "consumer " << cs.op->name << " not inferred before " << op->name;
                std::vector<std::optional<Interval>> up(cs.graph->vars.size());
                bool found = false;
                for (size_t j = cs.iters.size(); j-- > 0;) {
                    const Iterator& it = cs.iters[j];
                    if (stageAttach.count({c, it.var})) found = true;
                    const SymRange& vr = ci.range[size_t(it.var)];
                    if (vr.extent == 1) {
                        up[size_t(it.var)] = Interval::point(vr.min);
                    } else if (!needRelax(it.annotation, found, scope)) {
                        LinForm p = addForms(vr.min, LinForm{{{baseAtom(c, it.var), 1}}, 0});
                        up[size_t(it.var)] = Interval::point(p);
                    } else {
                        up[size_t(it.var)] = full(vr);
                    }
                }
                std::set<int> relaxed;
                for (auto [s, v] : attachPath(c)) {
                    if (stageAttach.count({s, v})) found = true;
                    const Iterator* it = leafOf(s, v);
                    if (needRelax(it ? it->annotation : IteratorAnnotation::None, found, scope)) {
                        auto& m = m_info[size_t(s)].baseAtom;
                        if (auto a = m.find(v); a != m.end()) relaxed.insert(a->second);
                    }
                }
                TB_USER_CHECK(found || stageAttach.empty())
                    << "infer_bound: invalid schedule: " << op->name
                    << " is not computed inside the loop nest of its consumer " << cs.op->name;
                passUp(c, up);
                Env env;
                const te::OperationNode* cop = cs.op.get();
                const int cSpatial = int(cop->axis.size());
                for (int r = 0; r < cs.graph->numRoots; ++r) {
                    const te::IterVar& ax = r < cSpatial ? cop->axis[size_t(r)] : cop->reduceAxis[size_t(r - cSpatial)];
                    Interval iv = up[size_t(r)] && !up[size_t(r)]->all ? *up[size_t(r)] : full(ci.range[size_t(r)]);
                    iv.lo = m_atoms.relax(iv.lo, relaxed, true);
                    iv.hi = m_atoms.relax(iv.hi, relaxed, false);
                    env[ax.var.get()] = iv;
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
        std::vector<char> thread(g.vars.size(), 0);
        for (const auto& it : stage.iters)
            if (isThreadBinding(it.annotation)) thread[size_t(it.var)] = 1;
        for (auto it = g.relations.rbegin(); it != g.relations.rend(); ++it) {
            if (it->kind == IterRelation::Kind::Split) {
                if (thread[size_t(it->outer)] || thread[size_t(it->inner)]) thread[size_t(it->parent)] = 1;
            } else if (thread[size_t(it->parent)]) {
                thread[size_t(it->outer)] = thread[size_t(it->inner)] = 1;
            }
        }
        // te PassDownDomain.
        for (const auto& r : g.relations) {
            if (r.kind == IterRelation::Kind::Split) {
                TB_USER_CHECK(r.factor > 0) << "infer_bound: stage " << op->name
                                            << " has a split with an undefined length (the state is not concrete)";
                const int64_t p = info.range[size_t(r.parent)].extent;
                auto tight = [&](int v) { return thread[size_t(v)] || p == 0 ? r.factor : std::min(p, r.factor); };
                if (!r.nparts) {
                    info.range[size_t(r.inner)] = SymRange{constant(0), tight(r.inner)};
                    info.range[size_t(r.outer)] = SymRange{constant(0), ceilDiv(p, r.factor)};
                } else {
                    info.range[size_t(r.outer)] = SymRange{constant(0), tight(r.outer)};
                    info.range[size_t(r.inner)] = SymRange{constant(0), ceilDiv(p, r.factor)};
                }
            } else {
                info.range[size_t(r.parent)] = SymRange{
                    constant(0), info.range[size_t(r.outer)].extent * info.range[size_t(r.inner)].extent};
            }
        }
        info.done = true;
    }

    const State& m_state;
    std::vector<StageInfo> m_info;
    std::map<const te::OperationNode*, int> m_opStage;
    std::vector<std::set<const te::OperationNode*>> m_reads;
    Atoms m_atoms;
};

}  // namespace

State inferBound(const State& state) {
    TB_CHECK(state.defined()) << "inferBound of a null state";
    TB_USER_CHECK(state.concrete()) << "infer_bound: only a concrete state (every split length known) has bounds";
    return BoundInference(state).run();
}

}  // namespace tb
