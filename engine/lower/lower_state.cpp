// SPDX-License-Identifier: Apache-2.0
#include "engine/lower/lower_state.h"

#include <algorithm>
#include <unordered_map>

#include "engine/lower/lower_dag.h"
#include "engine/lower/simplify.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/support/error.h"

namespace tb::lower {

using te::Expr;
using te::ExprKind;

namespace {

// ---- per-stage data ---------------------------------------------------------------------------

struct StageData {
    bool computed = false;  // a compute op that is not inlined
    bool attached = false;  // computed inside a loop of another stage
    bool emitted = false;
    Buffer buffer;
    bool isArg = false;
};

// The loop kind of an iterator. GPU bindings (vthread, blockIdx.*, threadIdx.*) become
// ThreadBinding loops in the GPU lowering and are a UserError for a CPU.
ForKind forKindOf(const Iterator& it, const Stage& stage, bool gpu) {
    switch (it.annotation) {
        case IteratorAnnotation::None: return ForKind::Serial;
        case IteratorAnnotation::Unroll: return ForKind::Unrolled;
        case IteratorAnnotation::Vectorize: return ForKind::Vectorized;
        case IteratorAnnotation::Parallel: return ForKind::Parallel;
        default: break;
    }
    if (gpu && isThreadBinding(it.annotation)) return ForKind::ThreadBinding;
    TB_USER_ERROR() << "lowerState: loop " << it.name << " of stage " << stage.op->name << " is annotated '"
                    << annotationString(it.annotation) << "', which the " << (gpu ? "GPU" : "CPU")
                    << " lowering does not support";
    return ForKind::Serial;
}

std::string threadTagOf(const Iterator& it) {
    return isThreadBinding(it.annotation) ? std::string(annotationString(it.annotation)) : std::string();
}

bool endsWith(const std::string& s, const char* suffix) {
    const std::string x(suffix);
    return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

// Variable -> replacement, searched linearly (a stage has a handful of axes).
using VarMap = std::vector<std::pair<const te::ExprNode*, Expr>>;

class StateLowering {
public:
    StateLowering(const te::ComputeDAG& dag, const State& state, bool gpu) : m_dag(dag), m_state(state), m_gpu(gpu) {}

    LoweredFunc run(const std::string& name);

private:
    // setup
    void prepareStages();
    void bindArguments(LoweredFunc& f);
    te::Var newLoopVar(const std::string& name);
    // bounds (schedule/infer_bound.h)
    void checkAgainstState(int id) const;
    BufferScope attachedScope(int id) const;
    // statements
    Stmt emitStage(int id);
    Stmt wrapLoop(int id, int iter, Stmt body);
    Stmt crossThreadReduce(int id, const std::vector<size_t>& crossLeaves, size_t beginLoop, const Expr& src,
                           const Expr& cond, const Expr& guard, const std::vector<Expr>& storeIdx, const Expr& init,
                           const Expr& storeGuard, const std::vector<bool>& reduceLeaf);
    Expr rewrite(const Expr& e, const VarMap& env, int depth = 0);
    Expr load(const te::LoadNode* n, std::vector<Expr> idx);
    int stageOf(const te::OperationNode* op) const {
        auto it = m_opStage.find(op);
        return it == m_opStage.end() ? -1 : it->second;
    }

    const te::ComputeDAG& m_dag;
    const State& m_state;
    const bool m_gpu;  // GPU thread bindings become ThreadBinding loops, cache stages Shared / Local
    std::vector<StageData> m_st;
    std::unordered_map<const te::OperationNode*, int> m_opStage;
    std::unordered_map<std::string, int> m_names;
    LoopVars m_loopVars;               // per stage, per iterator
    std::vector<StageBounds> m_bounds;  // per stage (schedule/infer_bound.h)
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
        d.computed = true;
        d.attached = s.computeAt == ComputeAtKind::Iter && m_state.attachMap().attachedAt(int(i)).has_value();
        for (const Iterator& it : s.iters) {
            TB_USER_CHECK(it.range.has_value())
                << "lowerState: loop " << it.name << " of stage " << s.op->name
                << " has no range; run inferBound on the state first";
            TB_USER_CHECK(it.range->extent > 0) << "lowerState: loop " << it.name << " of stage " << s.op->name
                                                << " has extent " << it.range->extent;
            forKindOf(it, s, m_gpu);  // rejects GPU bindings (CPU) and tensorize early
        }
    }
    // Loop variables, consumers first: the outer (root) nests keep the iterator names and the
    // stages computed inside them get the `_1` suffixes of repeated names.
    m_loopVars.resize(stages.size());
    for (size_t i = stages.size(); i-- > 0;) {
        if (!m_st[i].computed) continue;
        m_loopVars[i].reserve(stages[i]->iters.size());
        for (const Iterator& it : stages[i]->iters) m_loopVars[i].push_back(newLoopVar(it.name));
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

    f.weightArgs = weightArgIndices(m_dag);
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

// ---- bounds ---------------------------------------------------------------------------------------

// The state's ranges must be the ones its steps give (a state edited after inferBound is stale).
void StateLowering::checkAgainstState(int id) const {
    const Stage& s = m_state.stage(id);
    const StageBounds& b = m_bounds[size_t(id)];
    for (const Iterator& it : s.iters) {
        const int64_t min = b.min[size_t(it.var)], extent = b.extent[size_t(it.var)];
        TB_CHECK(extent == it.range->extent && min == it.range->min)
            << "lowerState: loop " << it.name << " of stage " << s.op->name << " has range (" << it.range->min << ", "
            << it.range->extent << ") in the state but (" << min << ", " << extent
            << ") by bound inference; was the state changed after inferBound?";
    }
}

// GPU storage scope of an attached stage (TVM InferStorageScope): the scope its cache step gave it
// (a `.shared` / `.local` name), else from the thread axes around its attach point: inside a
// threadIdx or vthread loop "local" (one copy per thread), inside blockIdx loops only "shared" (one
// copy per block), outside every thread loop "global".
BufferScope StateLowering::attachedScope(int id) const {
    const std::string& name = m_state.stage(id).op->name;
    if (endsWith(name, ".shared")) return BufferScope::Shared;
    if (endsWith(name, ".local")) return BufferScope::Local;
    int rank = -1;
    int cur = id;
    for (size_t guard = 0; guard <= m_state.stages().size(); ++guard) {
        auto at = m_state.attachMap().attachedAt(cur);
        if (!at || m_state.stage(cur).computeAt != ComputeAtKind::Iter) break;
        const auto [ts, ti] = *at;
        const Stage& t = m_state.stage(ts);
        for (int j = 0; j <= ti && size_t(j) < t.iters.size(); ++j) {
            const IteratorAnnotation a = t.iters[size_t(j)].annotation;
            if (!isThreadBinding(a)) continue;
            const bool block = a == IteratorAnnotation::BlockX || a == IteratorAnnotation::BlockY ||
                               a == IteratorAnnotation::BlockZ;
            rank = std::max(rank, block ? 0 : 1);
        }
        cur = ts;
    }
    return rank < 0 ? BufferScope::Global : rank == 0 ? BufferScope::Shared : BufferScope::Local;
}

// ---- statements ----------------------------------------------------------------------------------

Expr StateLowering::load(const te::LoadNode* n, std::vector<Expr> idx) {
    const int sid = stageOf(n->op.get());
    TB_CHECK(sid >= 0) << "lowerState: load of " << n->op->name << ", which is not a stage of the state";
    TB_CHECK(n->valueIndex == 0) << "lowerState: multi-output op " << n->op->name;
    const StageData& d = m_st[size_t(sid)];
    TB_CHECK(d.buffer) << "lowerState: load of " << n->op->name << ", which has no buffer";
    if (!d.isArg) {
        // An allocated buffer holds the stage's region: index relative to the region's min.
        const std::vector<Expr>& regionMin = m_bounds[size_t(sid)].rootMin;
        for (size_t k = 0; k < idx.size(); ++k) idx[k] = idx[k] - regionMin[k];
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
    // A GPU blockIdx / threadIdx loop of extent 1 stays (TVM MakeLoopNest keeps its thread_extent
    // attribute): it is a launch dimension of 1, and a kernel's outermost loop must be bound.
    const bool launchAxis = m_gpu && isThreadBinding(it.annotation) && it.annotation != IteratorAnnotation::VThread;
    if (it.range->extent == 1 && !launchAxis) return body;
    return makeFor(m_loopVars[size_t(id)][size_t(iter)], te::intImm(0), te::intImm(it.range->extent),
                   forKindOf(it, s, m_gpu), std::move(body), threadTagOf(it));
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
    const std::vector<Expr>& rootMin = m_bounds[size_t(id)].rootMin;
    const std::vector<int64_t>& ext = m_bounds[size_t(id)].extent;
    const std::vector<te::Var>& loopVar = m_loopVars[size_t(id)];
    std::vector<uint8_t> flag(nVars, 0);
    for (int r = 0; r < g.numRoots; ++r) flag[size_t(r)] = r < nSpatial ? 1 : 2;
    for (const auto& rel : g.relations) {
        if (rel.kind == IterRelation::Kind::Split) {
            flag[size_t(rel.outer)] = flag[size_t(rel.inner)] = flag[size_t(rel.parent)];
        } else {
            flag[size_t(rel.parent)] = flag[size_t(rel.outer)] | flag[size_t(rel.inner)];
        }
    }
    // Reduce loops bound to threadIdx (of extent > 1): a cross-thread reduction, lowered to an
    // allreduce across those threads (TVM LowerThreadAllreduce, see crossThreadReduce). A reduce
    // loop bound to blockIdx or vthread would race: refused.
    std::vector<size_t> crossLeaves;
    for (size_t j = 0; j < nLeaves; ++j) {
        const Iterator& it = s.iters[j];
        // (On a CPU, the loop's kind is refused like every GPU binding.)
        if (!m_gpu || !isThreadBinding(it.annotation) || !(flag[size_t(it.var)] & 2)) continue;
        const std::string tag(annotationString(it.annotation));
        TB_USER_CHECK(tag.compare(0, 10, "threadIdx.") == 0)
            << "lowerState: the reduction loop " << it.name << " of stage " << op->name << " is bound to " << tag
            << "; only threadIdx bindings of a reduction (a cross-thread reduction) are supported";
        if (it.range->extent > 1) crossLeaves.push_back(j);
    }
    // TVM PassUpBoundCheck: roots whose loops may step past the region (non-dividing splits).
    std::vector<uint8_t> unsafe(nVars, 0);
    for (auto it = g.relations.rbegin(); it != g.relations.rend(); ++it) {
        if (it->kind == IterRelation::Kind::Split) {
            unsafe[size_t(it->parent)] = unsafe[size_t(it->outer)] || unsafe[size_t(it->inner)] ||
                                         ext[size_t(it->parent)] != ext[size_t(it->outer)] * ext[size_t(it->inner)];
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
                off[size_t(it->parent)] = in + o * te::intImm(ext[size_t(it->inner)]);
            } else {
                const Expr& f = off[size_t(it->parent)];
                if (!f) continue;
                const Expr inner = te::intImm(ext[size_t(it->inner)]);
                off[size_t(it->outer)] = te::floordiv(f, inner);
                off[size_t(it->inner)] = te::floormod(f, inner);
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
            if (unsafe[size_t(r)]) add(o < te::intImm(ext[size_t(r)]));
            if (!main || r >= nSpatial) continue;
            const te::IterVar& ax = op->axis[size_t(r)];
            if (te::isConstInt(rootMin[size_t(r)], ax.min) && ext[size_t(r)] == ax.extent) continue;
            const Expr value = rootMin[size_t(r)] + o;
            add(value >= te::intImm(ax.min));
            add(value < te::intImm(ax.min + ax.extent));
        }
        return cond;
    };

    // Main nest values.
    std::vector<Expr> off(nVars);
    for (size_t j = 0; j < nLeaves; ++j)
        off[size_t(s.iters[j].var)] = s.iters[j].range->extent == 1 ? te::intImm(0) : Expr(loopVar[j]);
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
        for (size_t j = 0; j < nLeaves; ++j) {
            if (flag[size_t(s.iters[j].var)] & 2) {
                beginLoop = j;
                break;
            }
        }
        const Expr src = rewrite(red->source, env);
        const Expr cond = red->condition && !te::isConstInt(red->condition, int64_t(1)) ? rewrite(red->condition, env) : Expr();
        if (!crossLeaves.empty()) {
            std::vector<bool> reduceLeaf(nLeaves);
            for (size_t j = 0; j < nLeaves; ++j) reduceLeaf[j] = (flag[size_t(s.iters[j].var)] & 2) != 0;
            inner = crossThreadReduce(id, crossLeaves, beginLoop, src, cond, mainGuard, storeIdx,
                                      red->init ? rewrite(red->init, env) : Expr(), guards(off, false), reduceLeaf);
        } else {
            inner = makeStore(d.buffer, storeIdx, reduceCombine(red->combiner, bufferLoad(d.buffer, storeIdx), src));
            if (cond) inner = makeIf(cond, inner);
            if (mainGuard) inner = makeIf(mainGuard, inner);
        }
    }
    if (crossLeaves.empty())
        for (size_t j = nLeaves; j-- > beginLoop;) inner = wrapLoop(id, int(j), std::move(inner));

    if (red && crossLeaves.empty()) {
        // The init: common loops keep their variables, spatial loops below them are re-created.
        std::vector<Expr> ioff(nVars);
        std::vector<te::Var> initVars;
        for (size_t j = 0; j < nLeaves; ++j) {
            const int v = s.iters[j].var;
            if (s.iters[j].range->extent == 1) {
                ioff[size_t(v)] = te::intImm(0);
            } else if (j < beginLoop) {
                ioff[size_t(v)] = loopVar[j];
            } else if (flag[size_t(v)] != 2) {
                initVars.push_back(newLoopVar(s.iters[j].name + ".init"));
                ioff[size_t(v)] = initVars.back();
            }
        }
        passUpIndex(ioff);
        std::vector<Expr> initIdx;
        VarMap initEnv;
        bindRoots(ioff, initIdx, initEnv, false);
        const Expr initValue = red->init ? rewrite(red->init, initEnv) : reduceIdentity(red->combiner, red->dtype);
        Stmt init = makeStore(d.buffer, initIdx, initValue);
        if (Expr gi = guards(ioff, false)) init = makeIf(gi, init);
        size_t k = initVars.size();
        for (size_t j = nLeaves; j-- > beginLoop;) {
            const Iterator& it = s.iters[j];
            if (flag[size_t(it.var)] == 2 || it.range->extent == 1) continue;
            init = makeFor(initVars[--k], te::intImm(0), te::intImm(it.range->extent), forKindOf(it, s, m_gpu),
                           std::move(init), threadTagOf(it));
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

// TVM LowerThreadAllreduce (lower_thread_allreduce.cc, the shared-memory tree of MakeBufAllreduce)
// on the reduction part of stage `id` (its leaves from `beginLoop` on), whose reduce leaves
// `crossLeaves` are bound to threadIdx: every thread of the group (n = the product of their
// extents) folds its share of the serial reduce loops into a private accumulator, the n partial
// results meet in a Shared buffer red_buf[n] that is halved with a barrier after every step (a first
// step folds the part above the largest power of two below n, so any n works), and red_buf[0] goes
// to the stage's buffer, by thread 0 unless that buffer is Local (then every thread needs it).
//   for threadIdx (the bound reduce leaves) {
//     acc[0] = identity;  for k (the serial reduce leaves) { if (guard) acc[0] = acc[0] + src; }
//     red_buf[t] = acc[0];  barrier;
//     if (t < n - p) red_buf[t] += red_buf[t + p];  barrier;     (p: largest power of two < n)
//     for o = p/2, ..., 1: if (t < o) red_buf[t] += red_buf[t + o];  barrier;
//     if (t < 1 && storeGuard) out[idx] = init + red_buf[0];
//   }
// The barriers sit inside the thread loops but outside every guard; lowerStateGpu checks that those
// loops span their launch dimension (no thread skips a barrier). Spatial loops inside the reduction
// part must have extent 1; nothing may be attached at a bound reduce leaf (UserErrors).
Stmt StateLowering::crossThreadReduce(int id, const std::vector<size_t>& crossLeaves, size_t beginLoop, const Expr& src,
                                      const Expr& cond, const Expr& guard, const std::vector<Expr>& storeIdx,
                                      const Expr& init, const Expr& storeGuard, const std::vector<bool>& reduceLeaf) {
    const Stage& s = m_state.stage(id);
    const te::OperationNode* op = s.op.get();
    const auto* red = op->body[0].as<te::ReduceNode>();
    const StageData& d = m_st[size_t(id)];
    const std::vector<te::Var>& loopVar = m_loopVars[size_t(id)];
    auto bound = [&](size_t j) { return std::find(crossLeaves.begin(), crossLeaves.end(), j) != crossLeaves.end(); };
    for (size_t j = beginLoop; j < s.iters.size(); ++j) {
        const Iterator& it = s.iters[j];
        TB_USER_CHECK(reduceLeaf[j] || it.range->extent == 1)
            << "lowerState: the cross-thread reduction " << op->name << " has the spatial loop " << it.name
            << " inside its reduction loops, which the GPU lowering does not support";
        TB_USER_CHECK(!bound(j) || m_state.attachMap().attachedStages(IterKey(id, int(j))).empty())
            << "lowerState: a stage is attached at the thread-bound reduction loop " << it.name << " of " << op->name;
    }
    int64_t n = 1;
    Expr tid = te::intImm(0);
    for (size_t j : crossLeaves) {
        const int64_t e = s.iters[j].range->extent;
        tid = n == 1 ? Expr(loopVar[j]) : tid * te::intImm(e) + loopVar[j];
        n *= e;
    }
    const te::DType dt = op->dtype;
    const Buffer acc = makeBuffer(op->name + ".normal_reduce", {1}, BufferScope::Local, {}, dt);
    const Buffer buf = makeBuffer(op->name + ".red_buf", {n}, BufferScope::Shared, {}, dt);
    const Expr accValue = bufferLoad(acc, {te::intImm(0)});

    // This thread's share: the serial reduce loops (the others in the part are of extent 1).
    Stmt update = makeStore(acc, {te::intImm(0)}, reduceCombine(red->combiner, accValue, src));
    if (cond) update = makeIf(cond, update);
    if (guard) update = makeIf(guard, update);
    for (size_t j = s.iters.size(); j-- > beginLoop;)
        if (!bound(j) && reduceLeaf[j]) update = wrapLoop(id, int(j), std::move(update));

    std::vector<Stmt> seq{makeStore(acc, {te::intImm(0)}, reduceIdentity(red->combiner, dt)), std::move(update),
                          makeStore(buf, {tid}, accValue), makeBarrier()};
    auto step = [&](int64_t offset, const Expr& active) {
        const Expr mine = bufferLoad(buf, {tid}), other = bufferLoad(buf, {tid + te::intImm(offset)});
        seq.push_back(makeIf(active, makeStore(buf, {tid}, reduceCombine(red->combiner, mine, other))));
        seq.push_back(makeBarrier());
    };
    int64_t p = 1;
    while (p * 2 < n) p *= 2;
    step(p, tid < te::intImm(n - p));
    for (int64_t o = p / 2; o >= 1; o /= 2) step(o, tid < te::intImm(o));

    const Expr total = bufferLoad(buf, {te::intImm(0)});
    Stmt out = makeStore(d.buffer, storeIdx, init ? reduceCombine(red->combiner, init, total) : total);
    Expr outGuard = storeGuard;
    if (d.buffer->scope != BufferScope::Local) {
        const Expr head = tid < te::intImm(1);  // t == 0 (OpenCL's clang warns on `if ((t == 0))`)
        outGuard = outGuard ? te::logicalAnd(head, outGuard) : head;
    }
    seq.push_back(outGuard ? makeIf(outGuard, std::move(out)) : std::move(out));

    // red_buf is allocated inside the thread loops (the kernel's emitter declares Shared buffers at
    // kernel scope), so a reduction at the root starts with its thread loop as a kernel must.
    Stmt body = makeAllocate(buf, makeAllocate(acc, makeSeq(std::move(seq))));
    for (size_t k = crossLeaves.size(); k-- > 0;) {
        const Iterator& it = s.iters[crossLeaves[k]];
        body = makeFor(loopVar[crossLeaves[k]], te::intImm(0), te::intImm(it.range->extent), ForKind::ThreadBinding,
                       std::move(body), threadTagOf(it));
    }
    return body;
}

LoweredFunc StateLowering::run(const std::string& name) {
    TB_CHECK(m_state.defined()) << "lowerState of a null state";
    LoweredFunc f;
    f.name = name;
    prepareStages();
    bindArguments(f);

    // Bounds: the regions every stage computes, as expressions of the loop variables.
    m_bounds = inferSymbolicBounds(m_state, m_loopVars);
    for (size_t i = 0; i < m_st.size(); ++i)
        if (m_st[i].computed) checkAgainstState(int(i));

    // Buffers of the computed stages that are not arguments: exactly their regions.
    for (size_t i = 0; i < m_st.size(); ++i) {
        StageData& d = m_st[i];
        if (!d.computed || d.isArg) continue;
        const Stage& s = m_state.stage(int(i));
        std::vector<int64_t> shape;
        for (size_t k = 0; k < s.op->axis.size(); ++k) shape.push_back(m_bounds[i].extent[k]);
        if (shape.empty()) shape = {1};
        const BufferScope scope = !d.attached ? BufferScope::Global : m_gpu ? attachedScope(int(i)) : BufferScope::Local;
        d.buffer = makeBuffer(s.op->name, std::move(shape), scope, {}, s.op->dtype);
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
    return StateLowering(dag, state, false).run(name);
}

LoweredFunc lowerStateThreaded(const te::ComputeDAG& dag, const State& state, const std::string& name) {
    TB_CHECK(state.defined()) << "lowerStateThreaded of a null state";
    return StateLowering(dag, state, true).run(name);
}

}  // namespace tb::lower
