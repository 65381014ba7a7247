// SPDX-License-Identifier: Apache-2.0
#include "engine/lower/lower_state.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>

#include "engine/lower/simplify.h"
#include "engine/schedule/transform_step.h"
#include "engine/support/error.h"

namespace tb::lower {

using te::Expr;
using te::ExprKind;

namespace {

// ---- symbolic affine bounds -------------------------------------------------------------------
// The same algebra as schedule/infer_bound.cpp (whose extents we must reproduce exactly), with one
// addition: every atom carries the expression it stands for, so a region's min can be emitted.
// Base atoms are lowered loop variables (offsets from their loop's min, ranging [0, extent-1]);
// derived atoms are floordiv / floormod of an affine form.

struct Atom {
    int64_t lo = 0, hi = 0;
    std::vector<int> deps;  // base atoms it depends on
    Expr expr;
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
        return derived(f, floorDiv(numMin(f), c), floorDiv(numMax(f), c), te::floordiv(toExpr(f), te::intImm(c)));
    }
    LinForm modPoint(const LinForm& f, int64_t c) {
        if (divisible(f, c)) return constant(floorMod(f.c, c));
        return derived(f, 0, c - 1, te::floormod(toExpr(f), te::intImm(c)));
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
    Expr toExpr(const LinForm& f) const {
        Expr acc;
        for (auto [a, k] : f.terms) {
            const Expr& x = m_atoms[size_t(a)].expr;
            Expr t = k == 1 ? x : x * te::intImm(k);
            acc = acc ? acc + t : t;
        }
        if (!acc) return te::intImm(f.c);
        return f.c == 0 ? acc : acc + te::intImm(f.c);
    }

private:
    LinForm derived(const LinForm& f, int64_t lo, int64_t hi, Expr e) {
        Atom a{lo, hi, {}, std::move(e)};
        for (auto [id, k] : f.terms) {
            const auto& d = m_atoms[size_t(id)].deps;
            a.deps.insert(a.deps.end(), d.begin(), d.end());
        }
        m_atoms.push_back(std::move(a));
        return LinForm{{{int(m_atoms.size()) - 1, 1}}, 0};
    }
    std::vector<Atom> m_atoms;
};

struct SymRange {
    LinForm min;
    int64_t extent = 0;
};

// ---- per-stage data ---------------------------------------------------------------------------

struct StageData {
    bool computed = false;  // a compute op that is not inlined
    bool attached = false;  // computed inside a loop of another stage
    bool inferred = false;
    bool emitted = false;
    std::vector<SymRange> range;    // per IterVarGraph var
    std::vector<int> baseAtom;      // per IterVarGraph var, -1 until used
    std::vector<int> leafOf;        // per IterVarGraph var: iterator index, -1 for non-leaves
    std::vector<te::Var> loopVar;   // per iterator
    std::vector<const te::OperationNode*> reads;  // ops read, through inlined stages
    Buffer buffer;
    bool isArg = false;
    std::vector<Expr> regionMin;    // allocated buffers: min of the region per spatial dim
};

ForKind forKindOf(const Iterator& it, const Stage& stage) {
    switch (it.annotation) {
        case IteratorAnnotation::None: return ForKind::Serial;
        case IteratorAnnotation::Unroll: return ForKind::Unrolled;
        case IteratorAnnotation::Vectorize: return ForKind::Vectorized;
        case IteratorAnnotation::Parallel: return ForKind::Parallel;
        default: break;
    }
    TB_USER_ERROR() << "lowerState: loop " << it.name << " of stage " << stage.op->name << " is annotated '"
                    << annotationString(it.annotation) << "', which the CPU lowering does not support";
    return ForKind::Serial;
}

Expr identityOf(te::ReduceKind k, te::DType t) {
    switch (k) {
        case te::ReduceKind::Sum: return te::makeConst(t, 0);
        case te::ReduceKind::Max: return te::minValue(t);
        case te::ReduceKind::Min: return te::maxValue(t);
    }
    return Expr();
}

Expr combine(te::ReduceKind k, Expr acc, Expr v) {
    switch (k) {
        case te::ReduceKind::Sum: return acc + v;
        case te::ReduceKind::Max: return te::max(acc, v);
        case te::ReduceKind::Min: return te::min(acc, v);
    }
    return Expr();
}

// Variable -> replacement, searched linearly (a stage has a handful of axes).
using VarMap = std::vector<std::pair<const te::ExprNode*, Expr>>;

class StateLowering {
public:
    StateLowering(const te::ComputeDAG& dag, const State& state) : m_dag(dag), m_state(state) {}

    LoweredFunc run(const std::string& name);

private:
    // setup
    void prepareStages();
    void bindArguments(LoweredFunc& f);
    te::Var newLoopVar(const std::string& name);
    // bounds (te InferBound, as infer_bound.cpp)
    std::vector<std::pair<int, int>> attachPath(int id) const;
    int baseAtom(int stageId, int var);
    bool matches(const Interval& iv, const SymRange& r) const;
    static Interval full(const SymRange& r) { return Interval{r.min, addForms(r.min, constant(r.extent - 1)), false}; }
    void passUp(int stageId, std::vector<std::optional<Interval>>& up);
    LinForm divLower(const LinForm& f, int64_t c) {
        return m_atoms.divisible(f, c) ? m_atoms.divPoint(f, c) : constant(floorDiv(m_atoms.numMin(f), c));
    }
    LinForm divUpper(const LinForm& f, int64_t c) {
        return m_atoms.divisible(f, c) ? m_atoms.divPoint(f, c) : constant(floorDiv(m_atoms.numMax(f), c));
    }
    static Interval numeric(int64_t lo, int64_t hi) { return Interval{constant(lo), constant(hi), false}; }
    using Env = std::vector<std::pair<const te::ExprNode*, Interval>>;
    Interval eval(const Expr& e, const Env& env);
    Interval unionNumeric(const Interval& a, const Interval& b) const;
    void collectReads(const Expr& e, const Env& env, const te::OperationNode* target,
                      std::vector<std::vector<Interval>>& out);
    void gatherReads(const te::OperationNode* op, std::vector<const te::OperationNode*>& out, int depth) const;
    void inferStage(int id);
    void checkAgainstState(int id) const;
    // statements
    Stmt emitStage(int id);
    Stmt wrapLoop(int id, int iter, Stmt body);
    Expr rewrite(const Expr& e, const VarMap& env, int depth = 0);
    Expr load(const te::LoadNode* n, std::vector<Expr> idx);
    int stageOf(const te::OperationNode* op) const {
        auto it = m_opStage.find(op);
        return it == m_opStage.end() ? -1 : it->second;
    }

    const te::ComputeDAG& m_dag;
    const State& m_state;
    std::vector<StageData> m_st;
    std::unordered_map<const te::OperationNode*, int> m_opStage;
    std::unordered_map<std::string, int> m_names;
    Atoms m_atoms;
    std::vector<Buffer> m_rootAllocs;
};

// ---- setup ------------------------------------------------------------------------------------

te::Var StateLowering::newLoopVar(const std::string& name) {
    // Names are made unique: the kernel cache hashes the printed IR, which must not be ambiguous.
    int& n = m_names[name];
    te::Var v(n == 0 ? name : name + "_" + std::to_string(n));
    ++n;
    return v;
}

void StateLowering::prepareStages() {
    const auto& stages = m_state.stages();
    m_st.resize(stages.size());
    m_opStage.reserve(stages.size());
    for (size_t i = 0; i < stages.size(); ++i) m_opStage[stages[i]->op.get()] = int(i);
    for (size_t i = 0; i < stages.size(); ++i) {
        const Stage& s = *stages[i];
        StageData& d = m_st[i];
        if (s.opType != StageKind::Compute || s.computeAt == ComputeAtKind::Inlined) continue;
        TB_CHECK(s.op->body.size() == 1) << "lowerState: multi-output compute op " << s.op->name;
        TB_CHECK(s.graph) << "lowerState: stage " << s.op->name << " has no iter-var graph";
        d.computed = true;
        d.attached = s.computeAt == ComputeAtKind::Iter && m_state.attachMap().attachedAt(int(i)).has_value();
        d.leafOf.assign(s.graph->vars.size(), -1);
        d.baseAtom.assign(s.graph->vars.size(), -1);
        for (size_t j = 0; j < s.iters.size(); ++j) {
            const Iterator& it = s.iters[j];
            TB_USER_CHECK(it.range.has_value())
                << "lowerState: loop " << it.name << " of stage " << s.op->name
                << " has no range; run inferBound on the state first";
            TB_USER_CHECK(it.range->extent > 0) << "lowerState: loop " << it.name << " of stage " << s.op->name
                                                << " has extent " << it.range->extent;
            TB_CHECK(it.var >= 0 && size_t(it.var) < s.graph->vars.size())
                << "lowerState: loop " << it.name << " of " << s.op->name << " has no iter var";
            forKindOf(it, s);  // rejects GPU bindings early
            d.leafOf[size_t(it.var)] = int(j);
        }
        gatherReads(s.op.get(), d.reads, 0);
    }
    // Loop variables, consumers first: the outer (root) nests keep the iterator names and the
    // stages computed inside them get the `_1` suffixes of repeated names.
    for (size_t i = stages.size(); i-- > 0;) {
        if (!m_st[i].computed) continue;
        for (const Iterator& it : stages[i]->iters) m_st[i].loopVar.push_back(newLoopVar(it.name));
    }
}

void StateLowering::gatherReads(const te::OperationNode* op, std::vector<const te::OperationNode*>& out,
                                int depth) const {
    TB_USER_CHECK(depth < 256) << "lowerState: inline chain too deep at " << op->name;
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

// Which stage writes each io tensor: follow the stage insertions of CHR/CHW/RF from the DAG's ops,
// so an output rewritten by cache_write or rfactor (TVM's stage->origin_op) still gets its argument.
void StateLowering::bindArguments(LoweredFunc& f) {
    std::vector<const te::OperationNode*> origin;
    origin.reserve(m_state.stages().size());
    for (const auto& op : m_dag.ops()) origin.push_back(op.get());
    for (const Step& step : m_state.transformSteps()) {
        if (!step.changesStageCount()) continue;
        const int sid = step.stageId();
        TB_USER_CHECK(sid >= 0 && size_t(sid) < origin.size())
            << "lowerState: step " << stepToString(step) << " does not fit the DAG's stages";
        const size_t at = step.is<CacheReadStep>() ? size_t(sid) + 1 : size_t(sid);
        origin.insert(origin.begin() + long(at), nullptr);
    }
    TB_USER_CHECK(origin.size() == m_state.stages().size())
        << "lowerState: the state has " << m_state.stages().size() << " stages but its steps applied to the DAG give "
        << origin.size() << "; the state was not made from this DAG";

    std::unordered_map<const te::OperationNode*, Buffer> argOf;
    for (const auto& t : m_dag.tensors()) {
        std::vector<int64_t> shape = t.shape();
        if (shape.empty()) shape = {1};
        Buffer b = makeBuffer(t.name(), std::move(shape), BufferScope::Global, {}, t.dtype());
        argOf[t.op().get()] = b;
        f.args.push_back(b);
    }
    for (size_t i = 0; i < m_st.size(); ++i) {
        const Stage& s = m_state.stage(int(i));
        if (s.opType == StageKind::Placeholder) {
            TB_USER_CHECK(origin[i] == s.op.get())
                << "lowerState: placeholder " << s.op->name << " is not an input of the DAG; the state was not made from it";
        }
        if (!origin[i]) continue;
        auto it = argOf.find(origin[i]);
        if (it == argOf.end()) continue;
        TB_USER_CHECK(s.opType == StageKind::Placeholder || m_st[i].computed)
            << "lowerState: the output stage " << s.op->name << " is inlined";
        m_st[i].buffer = it->second;
        m_st[i].isArg = true;
    }
}

// ---- bound inference ----------------------------------------------------------------------------

std::vector<std::pair<int, int>> StateLowering::attachPath(int id) const {
    std::vector<std::pair<int, int>> path;
    int cur = id;
    for (size_t guard = 0;; ++guard) {
        const Stage& s = m_state.stage(cur);
        if (s.computeAt != ComputeAtKind::Iter) break;
        auto at = m_state.attachMap().attachedAt(cur);
        if (!at) break;
        TB_USER_CHECK(guard <= m_state.stages().size()) << "lowerState: compute_at cycle at stage " << s.op->name;
        const auto [ts, ti] = *at;
        TB_USER_CHECK(ts >= 0 && size_t(ts) < m_state.stages().size())
            << "lowerState: " << s.op->name << " is attached to stage " << ts << ", which does not exist";
        const Stage& target = m_state.stage(ts);
        TB_USER_CHECK(target.opType == StageKind::Compute && target.computeAt != ComputeAtKind::Inlined)
            << "lowerState: " << s.op->name << " is attached to " << target.op->name << ", which is not computed";
        TB_USER_CHECK(ti >= 0 && size_t(ti) < target.iters.size())
            << "lowerState: " << s.op->name << " is attached at loop " << ti << " of " << target.op->name
            << ", which has " << target.iters.size() << " loops";
        for (int j = ti; j >= 0; --j) path.emplace_back(ts, target.iters[size_t(j)].var);
        cur = ts;
    }
    return path;
}

int StateLowering::baseAtom(int stageId, int var) {
    StageData& d = m_st[size_t(stageId)];
    int& a = d.baseAtom[size_t(var)];
    if (a >= 0) return a;
    const int leaf = d.leafOf[size_t(var)];
    TB_CHECK(leaf >= 0) << "lowerState: a fixed loop of " << m_state.stage(stageId).op->name << " is not a leaf";
    a = m_atoms.base(d.range[size_t(var)].extent, d.loopVar[size_t(leaf)]);
    return a;
}

bool StateLowering::matches(const Interval& iv, const SymRange& r) const {
    if (iv.all) return true;
    return iv.lo == r.min && iv.hi == addForms(r.min, constant(r.extent - 1));
}

// te PassUpDomain over a consumer's relations.
void StateLowering::passUp(int stageId, std::vector<std::optional<Interval>>& up) {
    const IterVarGraph& g = *m_state.stage(stageId).graph;
    const auto& rng = m_st[size_t(stageId)].range;
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

Interval StateLowering::unionNumeric(const Interval& a, const Interval& b) const {
    if (a.all || b.all) return Interval::everything();
    return numeric(std::min(m_atoms.numMin(a.lo), m_atoms.numMin(b.lo)),
                   std::max(m_atoms.numMax(a.hi), m_atoms.numMax(b.hi)));
}

Interval StateLowering::eval(const Expr& e, const Env& env) {
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

// The index ranges of every load of `target` in a consumer body, looking through inlined
// producers (te PropBoundToInputs after InjectInline), clipped to the shape when they cover it.
void StateLowering::collectReads(const Expr& e, const Env& env, const te::OperationNode* target,
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
                if (iv.all || (m_atoms.numMax(iv.lo) <= 0 && m_atoms.numMin(iv.hi) >= shapeMax)) iv = numeric(0, shapeMax);
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

void StateLowering::inferStage(int id) {
    const Stage& stage = m_state.stage(id);
    const te::OperationNode* op = stage.op.get();
    const IterVarGraph& g = *stage.graph;
    StageData& info = m_st[size_t(id)];
    info.range.assign(g.vars.size(), SymRange{});
    const int nSpatial = int(op->axis.size());

    for (int r = 0; r < g.numRoots; ++r) {
        const te::IterVar& ax = r < nSpatial ? op->axis[size_t(r)] : op->reduceAxis[size_t(r - nSpatial)];
        info.range[size_t(r)] = SymRange{constant(ax.min), ax.extent};
    }
    std::vector<int> consumers;
    for (int c = int(m_st.size()) - 1; c > id; --c) {
        const StageData& cd = m_st[size_t(c)];
        if (cd.computed && std::find(cd.reads.begin(), cd.reads.end(), op) != cd.reads.end()) consumers.push_back(c);
    }
    if (!consumers.empty()) {
        const auto path = attachPath(id);
        auto onPath = [&](int s, int v) {
            return std::find(path.begin(), path.end(), std::make_pair(s, v)) != path.end();
        };
        std::vector<std::vector<Interval>> all;
        for (int c : consumers) {
            const Stage& cs = m_state.stage(c);
            const StageData& ci = m_st[size_t(c)];
            TB_CHECK(ci.inferred) << "lowerState: consumer " << cs.op->name << " not bounded before " << op->name;
            std::vector<std::optional<Interval>> up(cs.graph->vars.size());
            bool found = false;
            for (size_t j = cs.iters.size(); j-- > 0;) {
                const Iterator& it = cs.iters[j];
                if (onPath(c, it.var)) found = true;
                const SymRange& vr = ci.range[size_t(it.var)];
                if (vr.extent == 1) {
                    up[size_t(it.var)] = Interval::point(vr.min);
                } else if (found) {
                    up[size_t(it.var)] = Interval::point(addForms(vr.min, LinForm{{{baseAtom(c, it.var), 1}}, 0}));
                } else {
                    up[size_t(it.var)] = full(vr);
                }
            }
            std::vector<int> relaxed;
            for (auto [s, v] : attachPath(c)) {
                if (onPath(s, v)) found = true;
                if (!found && m_st[size_t(s)].baseAtom[size_t(v)] >= 0) relaxed.push_back(m_st[size_t(s)].baseAtom[size_t(v)]);
            }
            TB_USER_CHECK(found || path.empty())
                << "lowerState: invalid schedule: " << op->name
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

    // te PassDownDomain (no thread-bound loops exist here).
    for (const auto& r : g.relations) {
        if (r.kind == IterRelation::Kind::Split) {
            TB_USER_CHECK(r.factor > 0) << "lowerState: stage " << op->name
                                        << " has a split with an undefined length (the state is not concrete)";
            const int64_t p = info.range[size_t(r.parent)].extent;
            const int64_t tight = p == 0 ? r.factor : std::min(p, r.factor);
            if (!r.nparts) {
                info.range[size_t(r.inner)] = SymRange{constant(0), tight};
                info.range[size_t(r.outer)] = SymRange{constant(0), ceilDiv(p, r.factor)};
            } else {
                info.range[size_t(r.outer)] = SymRange{constant(0), tight};
                info.range[size_t(r.inner)] = SymRange{constant(0), ceilDiv(p, r.factor)};
            }
        } else {
            info.range[size_t(r.parent)] =
                SymRange{constant(0), info.range[size_t(r.outer)].extent * info.range[size_t(r.inner)].extent};
        }
    }
    info.inferred = true;
    checkAgainstState(id);
}

void StateLowering::checkAgainstState(int id) const {
    const Stage& s = m_state.stage(id);
    const StageData& d = m_st[size_t(id)];
    for (const Iterator& it : s.iters) {
        const SymRange& r = d.range[size_t(it.var)];
        TB_CHECK(r.extent == it.range->extent && m_atoms.numMin(r.min) == it.range->min)
            << "lowerState: loop " << it.name << " of stage " << s.op->name << " has range (" << it.range->min << ", "
            << it.range->extent << ") in the state but (" << m_atoms.numMin(r.min) << ", " << r.extent
            << ") by bound inference; was the state changed after inferBound?";
    }
}

// ---- statements ----------------------------------------------------------------------------------

Expr StateLowering::load(const te::LoadNode* n, std::vector<Expr> idx) {
    const int sid = stageOf(n->op.get());
    TB_CHECK(sid >= 0) << "lowerState: load of " << n->op->name << ", which is not a stage of the state";
    TB_CHECK(n->valueIndex == 0) << "lowerState: multi-output op " << n->op->name;
    const StageData& d = m_st[size_t(sid)];
    TB_CHECK(d.buffer) << "lowerState: load of " << n->op->name << ", which has no buffer";
    if (!d.isArg) {
        for (size_t k = 0; k < idx.size(); ++k) idx[k] = idx[k] - d.regionMin[k];
    } else if (idx.empty()) {
        idx.push_back(te::intImm(0));
    }
    return bufferLoad(d.buffer, std::move(idx));
}

// A stage body with its axis variables replaced, inlined stages substituted, loads bound to
// buffers (relative to their regions) and `tir.likely` dropped.
Expr StateLowering::rewrite(const Expr& e, const VarMap& env, int depth) {
    if (!e.get()) return e;
    switch (e.kind()) {
        case ExprKind::IntImm: case ExprKind::FloatImm: return e;
        case ExprKind::Var:
            for (const auto& [v, r] : env)
                if (v == e.get()) return r;
            return e;
        case ExprKind::Not: return te::logicalNot(rewrite(e.as<te::NotNode>()->a, env, depth));
        case ExprKind::Select: {
            auto* n = e.as<te::SelectNode>();
            return te::select(rewrite(n->cond, env, depth), rewrite(n->t, env, depth), rewrite(n->f, env, depth));
        }
        case ExprKind::Cast: return te::cast(e.dtype(), rewrite(e.as<te::CastNode>()->value, env, depth));
        case ExprKind::Call: {
            auto* n = e.as<te::CallNode>();
            if (n->op == "tir.likely" && n->args.size() == 1) return rewrite(n->args[0], env, depth);
            std::vector<Expr> args;
            args.reserve(n->args.size());
            for (const auto& a : n->args) args.push_back(rewrite(a, env, depth));
            return te::call(n->dtype, n->op, std::move(args));
        }
        case ExprKind::Load: {
            auto* n = static_cast<const te::LoadNode*>(e.get());
            std::vector<Expr> idx;
            idx.reserve(n->indices.size());
            for (const auto& a : n->indices) idx.push_back(rewrite(a, env, depth));
            const int sid = stageOf(n->op.get());
            if (sid >= 0 && m_state.stage(sid).computeAt == ComputeAtKind::Inlined && n->op->isCompute()) {
                const te::OperationNode* q = n->op.get();
                TB_USER_CHECK(depth < 256) << "lowerState: inline chain too deep at " << q->name;
                TB_USER_CHECK(q->body.size() == 1 && q->body[0].kind() != ExprKind::Reduce)
                    << "lowerState: the inlined stage " << q->name << " is a reduction";
                VarMap inner;
                inner.reserve(q->axis.size());
                for (size_t d = 0; d < q->axis.size() && d < idx.size(); ++d) inner.emplace_back(q->axis[d].var.get(), idx[d]);
                return rewrite(q->body[0], inner, depth + 1);
            }
            return load(n, std::move(idx));
        }
        case ExprKind::Reduce:
            TB_USER_ERROR() << "lowerState: a reduction nested inside an expression is not supported";
            return e;
        default: {
            auto* n = static_cast<const te::BinaryNode*>(e.get());
            return te::binary(n->kind, rewrite(n->a, env, depth), rewrite(n->b, env, depth));
        }
    }
}

Stmt StateLowering::wrapLoop(int id, int iter, Stmt body) {
    const Stage& s = m_state.stage(id);
    const Iterator& it = s.iters[size_t(iter)];
    const auto& attached = m_state.attachMap().attachedStages(IterKey(id, iter));
    if (!attached.empty()) {
        std::vector<int> order(attached.begin(), attached.end());
        std::sort(order.begin(), order.end());
        std::vector<Stmt> seq;
        seq.reserve(order.size() + 1);
        for (int a : order) seq.push_back(emitStage(a));
        seq.push_back(std::move(body));
        body = makeSeq(std::move(seq));
        for (size_t k = order.size(); k-- > 0;) {
            const StageData& ad = m_st[size_t(order[k])];
            if (!ad.isArg) body = makeAllocate(ad.buffer, std::move(body));
        }
    }
    // A loop of extent 1 is not emitted: its variable is 0 in every index (TVM binds it to its min).
    if (it.range->extent == 1) return body;
    return makeFor(m_st[size_t(id)].loopVar[size_t(iter)], it.range->extent, forKindOf(it, s), std::move(body));
}

Stmt StateLowering::emitStage(int id) {
    const Stage& s = m_state.stage(id);
    StageData& d = m_st[size_t(id)];
    TB_USER_CHECK(d.computed) << "lowerState: stage " << s.op->name << " is attached somewhere but not computed";
    TB_USER_CHECK(!d.emitted) << "lowerState: stage " << s.op->name << " is emitted twice (attach cycle?)";
    d.emitted = true;
    const te::OperationNode* op = s.op.get();
    const IterVarGraph& g = *s.graph;
    const size_t nVars = g.vars.size(), nLeaves = s.iters.size();
    const int nSpatial = int(op->axis.size());
    const Expr& body = op->body[0];
    const auto* red = body.kind() == ExprKind::Reduce ? body.as<te::ReduceNode>() : nullptr;

    // Region min of every root (absolute), and the leaf flags of TVM's PassDownBitMaskOr (1 =
    // derived from a spatial axis, 2 = from a reduce axis).
    std::vector<Expr> rootMin(size_t(g.numRoots));
    for (int r = 0; r < g.numRoots; ++r) rootMin[size_t(r)] = m_atoms.toExpr(d.range[size_t(r)].min);
    std::vector<uint8_t> flag(nVars, 0);
    for (int r = 0; r < g.numRoots; ++r) flag[size_t(r)] = r < nSpatial ? 1 : 2;
    for (const auto& rel : g.relations) {
        if (rel.kind == IterRelation::Kind::Split) {
            flag[size_t(rel.outer)] = flag[size_t(rel.inner)] = flag[size_t(rel.parent)];
        } else {
            flag[size_t(rel.parent)] = flag[size_t(rel.outer)] | flag[size_t(rel.inner)];
        }
    }
    // TVM PassUpBoundCheck: roots whose loops may step past the region (non-dividing splits).
    std::vector<uint8_t> unsafe(nVars, 0);
    for (auto it = g.relations.rbegin(); it != g.relations.rend(); ++it) {
        if (it->kind == IterRelation::Kind::Split) {
            unsafe[size_t(it->parent)] = unsafe[size_t(it->outer)] || unsafe[size_t(it->inner)] ||
                                         d.range[size_t(it->parent)].extent !=
                                             d.range[size_t(it->outer)].extent * d.range[size_t(it->inner)].extent;
        } else {
            unsafe[size_t(it->outer)] = unsafe[size_t(it->inner)] = unsafe[size_t(it->parent)];
        }
    }

    // Offsets of every var from its region's min, from the given leaf values (TVM PassUpIndex).
    auto passUpIndex = [&](std::vector<Expr>& off) {
        for (auto it = g.relations.rbegin(); it != g.relations.rend(); ++it) {
            if (it->kind == IterRelation::Kind::Split) {
                const Expr& o = off[size_t(it->outer)];
                const Expr& in = off[size_t(it->inner)];
                if (!o || !in || off[size_t(it->parent)]) continue;
                off[size_t(it->parent)] = in + o * te::intImm(d.range[size_t(it->inner)].extent);
            } else {
                const Expr& f = off[size_t(it->parent)];
                if (!f) continue;
                const Expr ext = te::intImm(d.range[size_t(it->inner)].extent);
                off[size_t(it->outer)] = te::floordiv(f, ext);
                off[size_t(it->inner)] = te::floormod(f, ext);
            }
        }
    };
    // Store indices and the axis-variable map for one set of root offsets.
    auto bindRoots = [&](const std::vector<Expr>& off, std::vector<Expr>& storeIdx, VarMap& env, bool withReduce) {
        for (int r = 0; r < g.numRoots; ++r) {
            if (r >= nSpatial && !withReduce) break;
            const Expr& o = off[size_t(r)];
            TB_CHECK(o) << "lowerState: axis " << g.vars[size_t(r)].teName << " of " << op->name << " has no loop";
            const Expr value = rootMin[size_t(r)] + o;
            const te::IterVar& ax = r < nSpatial ? op->axis[size_t(r)] : op->reduceAxis[size_t(r - nSpatial)];
            env.emplace_back(ax.var.get(), value);
            if (r < nSpatial) storeIdx.push_back(d.isArg ? value : o);
        }
        if (storeIdx.empty()) storeIdx.push_back(te::intImm(0));
    };
    // TVM MakeBoundCheck: split tails (roots in `unsafe`), and, for the main nest, points outside
    // the op's domain when the stage computes a region other than its domain.
    auto guards = [&](const std::vector<Expr>& off, bool main) {
        Expr cond;
        auto add = [&](Expr c) { cond = cond ? te::logicalAnd(cond, c) : c; };
        for (int r = 0; r < g.numRoots; ++r) {
            if (r >= nSpatial && !main) break;
            const Expr& o = off[size_t(r)];
            if (unsafe[size_t(r)]) add(o < te::intImm(d.range[size_t(r)].extent));
            if (!main || r >= nSpatial) continue;
            const te::IterVar& ax = op->axis[size_t(r)];
            const SymRange& rr = d.range[size_t(r)];
            if (rr.min.isConst() && rr.min.c == ax.min && rr.extent == ax.extent) continue;
            const Expr value = rootMin[size_t(r)] + o;
            add(value >= te::intImm(ax.min));
            add(value < te::intImm(ax.min + ax.extent));
        }
        return cond;
    };

    // Main nest values.
    std::vector<Expr> off(nVars);
    for (size_t j = 0; j < nLeaves; ++j)
        off[size_t(s.iters[j].var)] = s.iters[j].range->extent == 1 ? te::intImm(0) : Expr(d.loopVar[j]);
    passUpIndex(off);
    std::vector<Expr> storeIdx;
    VarMap env;
    storeIdx.reserve(size_t(nSpatial));
    env.reserve(size_t(g.numRoots));
    bindRoots(off, storeIdx, env, true);
    const Expr mainGuard = guards(off, true);

    size_t beginLoop = nLeaves;  // first loop of the reduction part
    Stmt inner;
    if (!red) {
        inner = makeStore(d.buffer, storeIdx, rewrite(body, env));
        if (mainGuard) inner = makeIf(mainGuard, inner);
    } else {
        const Expr src = rewrite(red->source, env);
        inner = makeStore(d.buffer, storeIdx, combine(red->combiner, bufferLoad(d.buffer, storeIdx), src));
        if (red->condition && !te::isConstInt(red->condition, int64_t(1))) inner = makeIf(rewrite(red->condition, env), inner);
        if (mainGuard) inner = makeIf(mainGuard, inner);
        for (size_t j = 0; j < nLeaves; ++j) {
            if (flag[size_t(s.iters[j].var)] & 2) {
                beginLoop = j;
                break;
            }
        }
    }
    for (size_t j = nLeaves; j-- > beginLoop;) inner = wrapLoop(id, int(j), std::move(inner));

    if (red) {
        // The init: common loops keep their variables, spatial loops below them are re-created.
        std::vector<Expr> ioff(nVars);
        std::vector<te::Var> initVars;
        for (size_t j = 0; j < nLeaves; ++j) {
            const int v = s.iters[j].var;
            if (s.iters[j].range->extent == 1) {
                ioff[size_t(v)] = te::intImm(0);
            } else if (j < beginLoop) {
                ioff[size_t(v)] = d.loopVar[j];
            } else if (flag[size_t(v)] != 2) {
                initVars.push_back(newLoopVar(s.iters[j].name + ".init"));
                ioff[size_t(v)] = initVars.back();
            }
        }
        passUpIndex(ioff);
        std::vector<Expr> initIdx;
        VarMap initEnv;
        bindRoots(ioff, initIdx, initEnv, false);
        const Expr initValue = red->init ? rewrite(red->init, initEnv) : identityOf(red->combiner, red->dtype);
        Stmt init = makeStore(d.buffer, initIdx, initValue);
        if (Expr gi = guards(ioff, false)) init = makeIf(gi, init);
        size_t k = initVars.size();
        for (size_t j = nLeaves; j-- > beginLoop;) {
            const Iterator& it = s.iters[j];
            if (flag[size_t(it.var)] == 2 || it.range->extent == 1) continue;
            init = makeFor(initVars[--k], it.range->extent, forKindOf(it, s), std::move(init));
        }
        inner = makeSeq({std::move(init), std::move(inner)});
    }
    for (size_t j = beginLoop; j-- > 0;) inner = wrapLoop(id, int(j), std::move(inner));

    if (s.attrs.autoUnrollMaxStep > 0) {
        inner = makeAttr(attr::kAutoUnrollMaxStep, s.attrs.autoUnrollMaxStep,
                         makeAttr(attr::kUnrollExplicit, 1, std::move(inner)));
    }
    return inner;
}

LoweredFunc StateLowering::run(const std::string& name) {
    TB_CHECK(m_state.defined()) << "lowerState of a null state";
    LoweredFunc f;
    f.name = name;
    prepareStages();
    bindArguments(f);

    // Bounds, consumers first (stage order is topological).
    for (size_t i = m_st.size(); i-- > 0;)
        if (m_st[i].computed) inferStage(int(i));

    // Buffers of the computed stages that are not arguments: exactly their regions.
    for (size_t i = 0; i < m_st.size(); ++i) {
        StageData& d = m_st[i];
        if (!d.computed || d.isArg) continue;
        const Stage& s = m_state.stage(int(i));
        std::vector<int64_t> shape;
        for (size_t k = 0; k < s.op->axis.size(); ++k) {
            shape.push_back(d.range[k].extent);
            d.regionMin.push_back(m_atoms.toExpr(d.range[k].min));
        }
        if (shape.empty()) shape = {1};
        d.buffer = makeBuffer(s.op->name, std::move(shape), d.attached ? BufferScope::Local : BufferScope::Global, {},
                              s.op->dtype);
        if (!d.attached) m_rootAllocs.push_back(d.buffer);
    }

    std::vector<Stmt> nests;
    for (size_t i = 0; i < m_st.size(); ++i)
        if (m_st[i].computed && !m_st[i].attached) nests.push_back(emitStage(int(i)));
    for (size_t i = 0; i < m_st.size(); ++i) {
        TB_USER_CHECK(!m_st[i].computed || m_st[i].emitted)
            << "lowerState: stage " << m_state.stage(int(i)).op->name << " is attached in a compute_at cycle";
    }
    Stmt body = makeSeq(std::move(nests));
    for (size_t i = m_rootAllocs.size(); i-- > 0;) body = makeAllocate(m_rootAllocs[i], std::move(body));
    f.body = std::move(body);
    return simplify(f);
}

}  // namespace

LoweredFunc lowerState(const te::ComputeDAG& dag, const State& state, const std::string& name) {
    TB_CHECK(state.defined()) << "lowerState of a null state";
    return StateLowering(dag, state).run(name);
}

}  // namespace tb::lower
