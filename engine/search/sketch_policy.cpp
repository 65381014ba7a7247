// SPDX-License-Identifier: Apache-2.0
#include "engine/search/sketch_policy.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>
#include <set>
#include <chrono>

#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/search/gpu_limits.h"
#include "engine/support/error.h"
#include "engine/support/thread_pool.h"

namespace tb::search {

namespace {
std::mutex g_memoMutex;

// Runs f(i) for i in [0, n) on the engine thread pool, or serially when `serial`. f(i) writes only
// slot i and draws from its own per-index generator, so the result does not depend on the threads.
void forEachIndex(int n, bool serial, const std::function<void(int)>& f) {
    if (serial) {
        for (int i = 0; i < n; ++i) f(i);
        return;
    }
    ThreadPool::global().parallelFor(n, [&](int64_t i) { f(int(i)); });
}

// Index drawn with probability proportional to max(w, 0) (TVM ComputePrefixSumProb + RandomChoose).
int choosePrefix(const std::vector<double>& prefix, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> d(0.0, 1.0);
    double x = d(rng);
    auto it = std::lower_bound(prefix.begin(), prefix.end(), x);
    return int(std::min<size_t>(size_t(it - prefix.begin()), prefix.size() - 1));
}
std::vector<double> prefixProbs(const std::vector<double>& weights) {
    std::vector<double> p(weights.size());
    double sum = 0;
    for (size_t i = 0; i < weights.size(); ++i) {
        sum += std::max(weights[i], 0.0);
        p[i] = sum;
    }
    if (sum <= 0) {
        for (size_t i = 0; i < p.size(); ++i) p[i] = double(i + 1) / double(p.size());
    } else {
        for (auto& v : p) v /= sum;
    }
    return p;
}

bool startsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
}  // namespace

double MeasureOutcome::meanCost() const {
    if (costs.empty()) return 1e10;
    return std::accumulate(costs.begin(), costs.end(), 0.0) / double(costs.size());
}

SketchPolicy::SketchPolicy(SearchTask task, std::shared_ptr<cost_model::CostModel> model, SketchPolicyParams params,
                           uint64_t seed)
    : m_task(std::move(task)), m_model(std::move(model)), m_params(std::move(params)), m_rng(seed) {
    TB_CHECK(m_task.dag) << "search task without a DAG";
    TB_CHECK(m_model) << "sketch policy without a cost model";
    m_gpu = isGpuTask(m_task);
    m_mali = isMaliTask(m_task);
    if (m_gpu) {
        TB_USER_CHECK(m_task.hardware.warpSize > 0 && m_task.hardware.maxThreadsPerBlock > 0)
            << "GPU task " << m_task.desc << " (" << m_task.target
            << ") needs hardware params with warp_size and max_threads_per_block";
    }
}

const std::vector<int>& SketchPolicy::unrollConfigs() const {
    return m_gpu ? m_params.gpuAutoUnrollConfigs : m_params.autoUnrollConfigs;
}

bool SketchPolicy::serial() const { return m_params.numThreads == 1; }

const std::vector<State>& SketchPolicy::sketches() {
    if (!m_sketchesDone) {
        m_sketches = generateSketches(m_task, m_params.sketch);
        m_sketchesDone = true;
    }
    return m_sketches;
}

// ---- random annotation (TVM InitFillTileSize, InitChangeComputeLocation, InitParallel, InitUnroll,
// InitVectorization) -------------------------------------------------------------------------

State SketchPolicy::fillTileSize(State s, std::mt19937_64& rng) {
    std::vector<Step> steps = s.transformSteps();
    bool changed = false;
    for (auto& step : steps) {
        const SplitStep* sp = step.as<SplitStep>();
        if (!sp) continue;
        bool defined = std::all_of(sp->lengths.begin(), sp->lengths.end(), [](int64_t l) { return l > 0; });
        if (defined) continue;
        TB_CHECK(sp->extent > 0) << "split of unknown extent in a sketch";
        std::vector<int64_t> pick;
        {
            std::lock_guard<std::mutex> lock(g_memoMutex);
            const auto& cands = m_memo.schemes(sp->extent, int(sp->lengths.size()), m_params.sketch.maxInnermostSplitFactor);
            TB_CHECK(!cands.empty()) << "no factorization of " << sp->extent;
            pick = cands[rng() % cands.size()];
        }
        SplitStep u = *sp;
        u.lengths = pick;
        step = Step(u);
        changed = true;
    }
    if (!changed && s.concrete()) return s;
    // Rebuild the loop structure with the concrete lengths.
    return replaySteps(*m_task.dag, steps);
}

bool SketchPolicy::changeComputeLocation(State* s, std::mt19937_64& rng) {
    if (m_params.sketch.disableChangeComputeLocation) return true;
    for (int sid = int(s->stages().size()) - 1; sid >= 0; --sid) {
        const Stage& st = s->stage(sid);
        if (st.opType == StageKind::Placeholder || st.computeAt == ComputeAtKind::Inlined) continue;
        if (isTiled(st) || needsMultiLevelTiling(m_task, *s, sid)) continue;
        auto cands = getComputeLocationCandidates(m_task, *s, sid);
        size_t choice = rng() % (cands.size() + 2);
        if (choice == 0) {
            if (!hasReduceIter(st) && s->attachMap().attachedAt(sid)) computeInline(s, *m_task.dag, sid);
        } else if (choice == 1) {
            computeRoot(s, *m_task.dag, sid);
        } else {
            auto [ts, ti] = cands[choice - 2];
            computeAt(s, *m_task.dag, sid, ts, ti);
        }
    }
    *s = inferBound(*s);
    return true;
}

void SketchPolicy::annotateParallel(State* s, int sid, int iterOffset) {
    const Stage& st = s->stage(sid);
    std::vector<int> toFuse;
    int64_t degree = 1;
    size_t iterId = size_t(iterOffset);
    for (; iterId < st.iters.size(); ++iterId) {
        const Iterator& it = st.iters[iterId];
        if (it.kind == IteratorKind::Reduction || it.annotation != IteratorAnnotation::None) break;
        toFuse.push_back(int(iterId));
        degree *= std::max<int64_t>(extentOf(it), 1);
        if (degree > int64_t(m_task.hardware.numCores) * 16) break;
        if (s->attachMap().hasAttached({sid, int(iterId)})) break;
    }
    if (degree == 1) {
        IterKey key{sid, int(iterId)};
        if (s->attachMap().hasAttached(key)) {
            std::vector<int> attached = s->attachMap().attachedStages(key);
            for (int a : attached) annotateParallel(s, a, 0);
            annotateParallel(s, sid, int(iterId) + 1);
        }
    }
    if (!toFuse.empty()) {
        if (toFuse.size() > 1) fuse(s, *m_task.dag, sid, toFuse);
        annotate(s, *m_task.dag, sid, toFuse.front(), IteratorAnnotation::Parallel);
    }
}

void SketchPolicy::initParallel(State* s) {
    for (size_t sid = 0; sid < s->stages().size(); ++sid) {
        const Stage& st = s->stage(int(sid));
        if (st.computeAt != ComputeAtKind::Root || st.opType == StageKind::Placeholder) continue;
        annotateParallel(s, int(sid), 0);
    }
}

void SketchPolicy::initUnroll(State* s, std::mt19937_64& rng) {
    for (size_t sid = 0; sid < s->stages().size(); ++sid) {
        const Stage& st = s->stage(int(sid));
        if (st.computeAt == ComputeAtKind::Inlined || st.opType == StageKind::Placeholder) continue;
        if (auto* a = st.op->attr(te::attr::kAlwaysUnrollInner)) {
            std::set<std::string> names;
            if (auto* l = std::get_if<std::vector<std::string>>(a)) names.insert(l->begin(), l->end());
            std::set<std::string> visited;
            for (int n = int(st.iters.size()) - 1; n >= 0; --n) {
                const Iterator& it = s->stage(int(sid)).iters[size_t(n)];
                // The original axis of a loop `x.2` is `x`; two loops of one axis = out of the inner tile.
                std::string orig = it.name.substr(0, it.name.find('.'));
                if (!visited.insert(orig).second) break;
                if (names.count(orig) && it.annotation == IteratorAnnotation::None)
                    annotate(s, *m_task.dag, int(sid), n, IteratorAnnotation::Unroll);
            }
        }
        if (hasReduceIter(s->stage(int(sid)))) {
            const std::vector<int>& configs = unrollConfigs();
            int v = configs[rng() % configs.size()];
            pragma(s, *m_task.dag, int(sid), 0, "auto_unroll_max_step$" + std::to_string(v));
        }
    }
}

void SketchPolicy::initVectorization(State* s, std::mt19937_64& rng) {
    for (size_t sid = 0; sid < s->stages().size(); ++sid) {
        const Stage& st = s->stage(int(sid));
        if (st.computeAt == ComputeAtKind::Inlined || st.opType == StageKind::Placeholder) continue;
        int64_t prod = 1;
        int num = 0;
        const int n = int(st.iters.size());
        while (num < n) {
            int iterId = n - 1 - num;
            if (s->attachMap().hasAttached({int(sid), iterId})) break;
            const Iterator& it = st.iters[size_t(iterId)];
            if (it.kind == IteratorKind::Reduction || it.annotation != IteratorAnnotation::None) break;
            if (isTiled(st) && num != 0) break;
            prod *= std::max<int64_t>(extentOf(it), 1);
            if (prod > m_params.sketch.maxVectorizeSize) break;
            ++num;
        }
        if (num > 1) num = 1 + int(rng() % uint64_t(num - 1));
        if (num == 1) {
            annotate(s, *m_task.dag, int(sid), n - 1, IteratorAnnotation::Vectorize);
        } else if (num > 1) {
            std::vector<int> ids;
            for (int i = n - num; i < n; ++i) ids.push_back(i);
            fuse(s, *m_task.dag, int(sid), ids);
            annotate(s, *m_task.dag, int(sid), n - num, IteratorAnnotation::Vectorize);
        }
    }
}

bool SketchPolicy::initThreadBind(State* s) {
    const te::ComputeDAG& dag = *m_task.dag;
    const HardwareParams& hw = m_task.hardware;
    // The roots of the multi-level tiled stages: the GPU sketch rules always fuse a tiled stage
    // into its consumer (or its cache-write copy), so it is attached; a tiled stage at the root
    // must come from CrossThreadReduction.
    std::set<int> tilingRoots;
    for (size_t sid = 0; sid < s->stages().size(); ++sid) {
        if (!needsMultiLevelTiling(m_task, *s, int(sid))) continue;
        const Stage& st = s->stage(int(sid));
        if (st.computeAt == ComputeAtKind::Inlined) continue;
        if (st.computeAt != ComputeAtKind::Iter) {
            if (!hasCrossThreadReduction(*s, int(sid))) return false;
            continue;
        }
        tilingRoots.insert(s->attachMap().attachedAt(int(sid))->first);
    }
    *s = inferBound(*s);
    auto fuseEndingWith = [&](int sid, size_t from, size_t count, const char* suffix) {
        std::vector<int> ids;
        const Stage& st = s->stage(sid);
        for (size_t i = from; i < from + count && i < st.iters.size(); ++i) {
            const std::string& name = st.iters[i].name;
            if (name.size() < 2 || name.compare(name.size() - 2, 2, suffix) != 0) break;
            ids.push_back(int(i));
        }
        TB_USER_CHECK(!ids.empty()) << "no " << suffix << " tile loop in " << st.op->name;
        fuse(s, dag, sid, ids);
        return ids.front();
    };
    for (int sid = int(s->stages().size()) - 1; sid >= 0; --sid) {
        const Stage& st = s->stage(sid);
        if (st.computeAt == ComputeAtKind::Inlined || st.opType == StageKind::Placeholder) continue;
        if (hasCrossThreadReduction(*s, sid)) {
            if (st.computeAt != ComputeAtKind::Root) continue;
            annotate(s, dag, sid, fuseAllOuterSpaceIterators(s, dag, sid), IteratorAnnotation::BlockX);
            continue;
        }
        if (hasAnnotatedIter(st, IteratorAnnotation::ThreadX)) continue;
        if (st.computeAt == ComputeAtKind::Root) {
            if (!tilingRoots.count(sid)) {
                // An untiled root: one thread per (fused) outer point, warp-sized blocks.
                const int fused = fuseAllOuterSpaceIterators(s, dag, sid);
                if (extentOf(s->stage(sid).iters[size_t(fused)]) <= hw.warpSize) {
                    annotate(s, dag, sid, fused, IteratorAnnotation::ThreadX);
                } else {
                    split(s, dag, sid, fused, {hw.warpSize});
                    annotate(s, dag, sid, fused, IteratorAnnotation::BlockX);
                    annotate(s, dag, sid, fused + 1, IteratorAnnotation::ThreadX);
                }
                continue;
            }
            // A tiled root: its outer three spatial tile levels are block, vthread and thread.
            const te::OperationNode* op = st.op.get();
            int64_t totalSpace = 1;
            for (const auto& ax : op->axis) totalSpace *= ax.extent;
            for (const auto& ax : op->reduceAxis) totalSpace *= ax.extent;
            const bool checkMinThreads = totalSpace > int64_t(hw.warpSize) * 2;
            const size_t nAxis = op->axis.size();
            annotate(s, dag, sid, fuseEndingWith(sid, 0, nAxis, ".0"), IteratorAnnotation::BlockX);
            const int vt = fuseEndingWith(sid, 1, nAxis, ".1");
            if (hw.maxVthreadExtent > 0 && extentOf(s->stage(sid).iters[size_t(vt)]) > hw.maxVthreadExtent) return false;
            annotate(s, dag, sid, vt, IteratorAnnotation::VThread);
            const int tx = fuseEndingWith(sid, 2, nAxis, ".2");
            if (checkMinThreads && extentOf(s->stage(sid).iters[size_t(tx)]) < hw.warpSize) return false;
            annotate(s, dag, sid, tx, IteratorAnnotation::ThreadX);
        } else if (st.computeAt == ComputeAtKind::Iter && st.op->name.size() > 7 &&
                   st.op->name.compare(st.op->name.size() - 7, 7, ".shared") == 0) {
            // Cooperative fetching: all threads of the block copy the tile, as many threads as the
            // consumer's thread tile, with a vectorized inner part (its length is mutated later).
            const std::vector<int> srcSteps = spatialSplitStepIds(*s, s->attachMap().attachedAt(sid)->first);
            std::vector<int> all(st.iters.size());
            std::iota(all.begin(), all.end(), 0);
            fuse(s, dag, sid, all);
            split(s, dag, sid, 0, {1});
            annotate(s, dag, sid, 1, IteratorAnnotation::Vectorize);
            followFusedSplit(s, dag, sid, 0, srcSteps, 1, true);
            annotate(s, dag, sid, 1, IteratorAnnotation::ThreadX);
        }
    }
    return true;
}

State SketchPolicy::randomAnnotate(const State& sketch, std::mt19937_64& rng) {
    try {
        State s = fillTileSize(sketch, rng);
        if (m_gpu) {
            // TVM's GPU init rules: InitFillTileSize, InitThreadBind, InitUnroll (+ InitVectorization on Mali).
            if (!initThreadBind(&s)) return State();
            initUnroll(&s, rng);
            if (m_mali) initVectorization(&s, rng);
            return s;
        }
        if (!changeComputeLocation(&s, rng)) return State();
        initParallel(&s);
        initUnroll(&s, rng);
        initVectorization(&s, rng);
        return s;
    } catch (const UserError&) {
        return State();  // an invalid combination (TVM: kInvalid)
    }
}

// ---- mutations (TVM MutateTileSize, MutateAutoUnroll, MutateComputeLocation, MutateParallel) --

State SketchPolicy::mutateTileSize(const State& s, std::mt19937_64& rng) {
    const int maxInner = m_params.sketch.maxInnermostSplitFactor;
    const auto& steps = s.transformSteps();
    std::vector<size_t> ids;
    for (size_t i = 0; i < steps.size(); ++i) {
        const SplitStep* sp = steps[i].as<SplitStep>();
        if (!sp || sp->extent <= 1 || sp->lengths.empty()) continue;
        if (sp->lengths.back() <= maxInner) ids.push_back(i);
    }
    if (ids.empty()) return State();
    size_t stepId = ids[rng() % ids.size()];
    const SplitStep* sp = steps[stepId].as<SplitStep>();
    std::vector<int64_t> lengths(sp->lengths.size() + 1, 1);
    int64_t prod = 1;
    for (size_t i = 0; i < sp->lengths.size(); ++i) {
        lengths[i + 1] = sp->lengths[i];
        prod *= sp->lengths[i];
    }
    lengths[0] = sp->extent / std::max<int64_t>(prod, 1);
    std::vector<size_t> perm(lengths.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (size_t i = 0; i < perm.size(); ++i) {
        size_t src = perm[i];
        int64_t len = lengths[src];
        if (len <= 1) continue;
        size_t dst = perm[(i + 1) % perm.size()];
        std::vector<int64_t> factors;
        {
            std::lock_guard<std::mutex> lock(g_memoMutex);
            factors = m_memo.factors(len);
        }
        int64_t divide;
        if (dst == lengths.size() - 1) {
            int maxIdx = int(factors.size()) - 1;
            for (; maxIdx >= 1; --maxIdx)
                if (factors[size_t(maxIdx)] * lengths[dst] <= maxInner) break;
            if (maxIdx == 0) continue;
            divide = factors[1 + rng() % uint64_t(maxIdx)];
        } else {
            divide = factors[1 + rng() % (factors.size() - 1)];
        }
        std::vector<int64_t> nl;
        for (size_t j = 1; j < lengths.size(); ++j) {
            if (j == src)
                nl.push_back(lengths[j] / divide);
            else if (j == dst)
                nl.push_back(lengths[j] * divide);
            else
                nl.push_back(lengths[j]);
        }
        SplitStep u = *sp;
        u.lengths = nl;
        std::vector<Step> newSteps = steps;
        newSteps[stepId] = Step(u);
        try {
            return replaySteps(*m_task.dag, newSteps);
        } catch (const UserError&) {
            return State();
        }
    }
    return State();
}

State SketchPolicy::mutateAutoUnroll(const State& s, std::mt19937_64& rng) {
    const auto& steps = s.transformSteps();
    std::vector<size_t> ids;
    for (size_t i = 0; i < steps.size(); ++i)
        if (auto* p = steps[i].as<PragmaStep>(); p && startsWith(p->pragmaType, "auto_unroll_max_step")) ids.push_back(i);
    if (ids.empty()) return State();
    size_t stepId = ids[rng() % ids.size()];
    PragmaStep p = *steps[stepId].as<PragmaStep>();
    const std::vector<int>& configs = unrollConfigs();
    int v = configs[rng() % configs.size()];
    p.pragmaType = "auto_unroll_max_step$" + std::to_string(v);
    State n = s;
    StateNode* node = n.copyOnWrite();
    node->transformSteps[stepId] = Step(p);
    Stage st = n.stage(p.stageId);
    st.attrs.autoUnrollMaxStep = v;
    n.setStage(p.stageId, std::move(st));
    return n;
}

State SketchPolicy::mutateComputeLocation(const State& s, std::mt19937_64& rng) {
    if (m_params.sketch.disableChangeComputeLocation) return State();
    const auto& steps = s.transformSteps();
    std::vector<size_t> ids;
    for (size_t i = 0; i < steps.size(); ++i) {
        if (!steps[i].is<ComputeAtStep>()) continue;
        int sid = targetStageIdInState(s, int(i));
        if (isTiled(s.stage(sid)) || needsMultiLevelTiling(m_task, s, sid)) continue;
        ids.push_back(i);
    }
    if (ids.empty()) return State();
    size_t stepId = ids[rng() % ids.size()];
    const ComputeAtStep* ca = steps[stepId].as<ComputeAtStep>();
    int inc = targetStageIdInState(s, int(stepId)) - ca->stageId;
    auto cands = getComputeLocationCandidates(m_task, s, ca->stageId + inc);
    if (cands.empty()) return State();
    auto [ts, ti] = cands[rng() % cands.size()];
    std::vector<Step> newSteps = steps;
    newSteps[stepId] = Step(ComputeAtStep{ca->stageId, ts - inc, ti});
    try {
        return replaySteps(*m_task.dag, newSteps);
    } catch (const UserError&) {
        return State();
    }
}

State SketchPolicy::mutateParallel(const State& s, std::mt19937_64& rng) {
    const auto& steps = s.transformSteps();
    std::vector<size_t> ids;
    for (size_t i = 1; i < steps.size(); ++i) {
        auto* an = steps[i].as<AnnotationStep>();
        if (!an || an->annotation != IteratorAnnotation::Parallel || an->iterId != 0) continue;
        auto* fu = steps[i - 1].as<FuseStep>();
        if (!fu || fu->fusedIds.empty() || fu->fusedIds[0] != 0) continue;
        ids.push_back(i);
    }
    if (ids.empty()) return State();
    size_t stepId = ids[rng() % ids.size()];
    try {
        std::vector<Step> prefix(steps.begin(), steps.begin() + long(stepId) - 1);
        State tmp = replaySteps(*m_task.dag, prefix);
        const FuseStep* fu = steps[stepId - 1].as<FuseStep>();
        int sid = fu->stageId;
        const Stage& st = tmp.stage(sid);
        size_t maxFusable = 0;
        for (; maxFusable < st.iters.size(); ++maxFusable) {
            const Iterator& it = st.iters[maxFusable];
            if (it.kind == IteratorKind::Reduction || it.annotation != IteratorAnnotation::None) break;
            if (tmp.attachMap().hasAttached({sid, int(maxFusable)})) break;
        }
        if (maxFusable == 0) return State();
        int fuseTo = int(rng() % maxFusable) + 1;
        std::vector<int> fused(static_cast<size_t>(fuseTo));
        std::iota(fused.begin(), fused.end(), 0);
        int offset = fu->fusedIds.back() - fused.back();
        if (offset == 0) return State();
        std::vector<Step> out = prefix;
        out.push_back(Step(FuseStep{sid, fused}));
        out.push_back(steps[stepId]);
        for (size_t i = stepId + 1; i < steps.size(); ++i) {
            Step step = steps[i];
            if (step.stageId() == sid) {
                if (auto* an = step.as<AnnotationStep>()) {
                    AnnotationStep a = *an;
                    if (a.iterId != 0) a.iterId += offset;
                    step = Step(a);
                } else if (auto* pr = step.as<PragmaStep>()) {
                    PragmaStep p = *pr;
                    if (p.iterId != 0) p.iterId += offset;
                    step = Step(p);
                } else {
                    return State();
                }
            }
            if (step.changesStageCount()) return State();
            out.push_back(step);
        }
        return replaySteps(*m_task.dag, out);
    } catch (const UserError&) {
        return State();
    }
}

State SketchPolicy::mutate(const State& s, std::mt19937_64& rng) {
    if (m_gpu) {
        // TVM's GPU mutation rules: MutateTileSize 0.90, MutateAutoUnroll 0.10.
        static const std::vector<double> gpuPrefix = prefixProbs({0.90, 0.10});
        return choosePrefix(gpuPrefix, rng) == 0 ? mutateTileSize(s, rng) : mutateAutoUnroll(s, rng);
    }
    static const std::vector<double> prefix = prefixProbs({0.90, 0.04, 0.05, 0.01});
    switch (choosePrefix(prefix, rng)) {
        case 0: return mutateTileSize(s, rng);
        case 1: return mutateAutoUnroll(s, rng);
        case 2: return mutateComputeLocation(s, rng);
        default: return mutateParallel(s, rng);
    }
}

// ---- population, evolution, rounds --------------------------------------------------------

std::vector<State> SketchPolicy::inferAndPrune(const std::vector<State>& states) {
    std::vector<State> out(states.size());
    forEachIndex(int(states.size()), serial(), [&](int i) {
        if (!states[size_t(i)].defined()) return;
        try {
            State s = inferBound(states[size_t(i)]);
            if (m_gpu) {
                // What VerifyGPUCode rejects in TVM's feature extraction (gpu_limits.h).
                if (verifyGpuState(s, m_task.hardware).empty()) out[size_t(i)] = std::move(s);
                return;
            }
            // Prune nested parallel loops (TVM PruneInvalidState on CPU).
            for (size_t sid = 0; sid < s.stages().size(); ++sid) {
                const Stage& st = s.stage(int(sid));
                if (st.computeAt != ComputeAtKind::Iter) continue;
                bool par = std::any_of(st.iters.begin(), st.iters.end(),
                                       [](const Iterator& it) { return it.annotation == IteratorAnnotation::Parallel; });
                if (par) return;
            }
            out[size_t(i)] = std::move(s);
        } catch (const UserError&) {
        }
    });
    return out;
}

std::vector<float> SketchPolicy::predict(const std::vector<State>& states) {
    std::vector<State> valid;
    std::vector<size_t> idx;
    for (size_t i = 0; i < states.size(); ++i)
        if (states[i].defined()) {
            valid.push_back(states[i]);
            idx.push_back(i);
        }
    std::vector<float> scores(states.size(), -std::numeric_limits<float>::infinity());
    if (valid.empty()) return scores;
    std::vector<float> v = m_model->predict(m_task, valid);
    for (size_t k = 0; k < idx.size(); ++k) scores[idx[k]] = v[k];
    return scores;
}

std::vector<State> SketchPolicy::sampleInitPopulation() {
    const auto& sk = sketches();
    TB_CHECK(!sk.empty()) << "no sketch for task " << m_task.workloadKey;
    int minPop = m_params.sampleInitMinPopulation;
    const int population = m_params.evolutionaryPopulation;
    std::vector<State> out;
    std::unordered_set<std::string> explored;
    int unchanged = 0;
    int iter = 0;
    while (int(out.size()) < minPop && iter < 64) {
        // Per-index generators derived from the policy's generator keep results independent of
        // the thread count.
        std::vector<uint64_t> seeds(static_cast<size_t>(population));
        for (auto& sd : seeds) sd = m_rng();
        std::vector<State> temp(static_cast<size_t>(population));
        forEachIndex(population, serial(), [&](int i) {
            std::mt19937_64 rng(seeds[size_t(i)]);
            const State& sketch = sk[rng() % sk.size()];
            temp[size_t(i)] = randomAnnotate(sketch, rng);
        });
        std::vector<State> cands = inferAndPrune(temp);
        std::vector<float> scores = predict(cands);
        ++unchanged;
        for (size_t i = 0; i < cands.size(); ++i) {
            if (!cands[i].defined() || scores[i] <= -1e10f) continue;
            std::string str = cands[i].toStr();
            if (explored.count(str) || m_measuredSet.count(str)) continue;
            explored.insert(std::move(str));
            out.push_back(std::move(cands[i]));
            unchanged = 0;
        }
        if (unchanged == 5) {
            if (minPop > 1) minPop /= 2;
            unchanged = 0;
        }
        ++iter;
    }
    return out;
}

std::vector<State> SketchPolicy::evolutionarySearch(const std::vector<State>& init, int outSize, std::vector<float>* outScores) {
    int numIters = m_params.evolutionaryNumIters;
    if (m_model->isRandom() && numIters > 2) numIters = 2;
    const size_t population = size_t(m_params.evolutionaryPopulation);
    // A child copied without mutation (15% of a generation) keeps its parent's score instead of
    // being bound-inferred and scored again: the model does not change within a search, so the
    // score would be the same, and such a copy cannot enter the heap (its parent is in it, or was
    // rejected or evicted below a bound that only rises). Random scores (TVM's RandomModel, a
    // random warm-up) are drawn afresh per call, as TVM does, so there every member is scored again.
    const bool reuseScores = m_model->repeatable(m_task);
    constexpr float kUnscored = std::numeric_limits<float>::quiet_NaN();
    std::vector<State> now = init, next;
    std::vector<float> known(now.size(), kUnscored), nextKnown;
    struct Item {
        State state;
        float score;
        std::string str;
    };
    auto cmp = [](const Item& a, const Item& b) { return a.score > b.score; };
    std::vector<Item> heap;
    std::unordered_set<std::string> inHeap(m_measuredSet);
    std::uniform_real_distribution<double> dis(0.0, 1.0);
    for (int k = 0; k <= numIters; ++k) {
        std::vector<size_t> fresh;
        for (size_t i = 0; i < now.size(); ++i)
            if (std::isnan(known[i])) fresh.push_back(i);
        std::vector<State> freshStates(fresh.size());
        for (size_t j = 0; j < fresh.size(); ++j) freshStates[j] = now[fresh[j]];
        freshStates = inferAndPrune(freshStates);
        const std::vector<float> freshScores = predict(freshStates);
        std::vector<std::string> strs(fresh.size());
        forEachIndex(int(fresh.size()), serial(), [&](int j) {
            if (freshStates[size_t(j)].defined()) strs[size_t(j)] = freshStates[size_t(j)].toStr();
        });
        for (size_t j = 0; j < fresh.size(); ++j) {
            now[fresh[j]] = freshStates[j];
            known[fresh[j]] = freshStates[j].defined() ? freshScores[j] : -std::numeric_limits<float>::infinity();
            if (!freshStates[j].defined() || inHeap.count(strs[j])) continue;
            if (int(heap.size()) < outSize) {
                heap.push_back({freshStates[j], freshScores[j], strs[j]});
                std::push_heap(heap.begin(), heap.end(), cmp);
                inHeap.insert(std::move(strs[j]));
            } else if (freshScores[j] > heap.front().score) {
                inHeap.erase(heap.front().str);
                inHeap.insert(strs[j]);
                std::pop_heap(heap.begin(), heap.end(), cmp);
                heap.back() = {freshStates[j], freshScores[j], std::move(strs[j])};
                std::push_heap(heap.begin(), heap.end(), cmp);
            }
        }
        // Invalid members leave the population.
        size_t w = 0;
        for (size_t i = 0; i < now.size(); ++i)
            if (now[i].defined()) {
                if (w != i) now[w] = std::move(now[i]);
                known[w++] = known[i];
            }
        now.resize(w);
        known.resize(w);
        if (now.empty()) break;
        if (k == numIters) break;
        std::vector<double> weights(known.begin(), known.end());
        std::vector<double> prefix = prefixProbs(weights);
        // Draw parents and mutation decisions serially (deterministic), mutate in parallel.
        next.clear();
        nextKnown.clear();
        int attempts = 0;
        while (next.size() < population && attempts < 8) {
            size_t want = population - next.size();
            std::vector<size_t> parents(want);
            std::vector<char> doMutate(want);
            std::vector<uint64_t> seeds(want);
            for (size_t j = 0; j < want; ++j) {
                parents[j] = size_t(choosePrefix(prefix, m_rng));
                doMutate[j] = dis(m_rng) < m_params.mutationProb;
                seeds[j] = m_rng();
            }
            std::vector<State> children(want);
            forEachIndex(int(want), serial(), [&](int j) {
                if (!doMutate[size_t(j)]) {
                    children[size_t(j)] = now[parents[size_t(j)]];
                    return;
                }
                std::mt19937_64 rng(seeds[size_t(j)]);
                children[size_t(j)] = mutate(now[parents[size_t(j)]], rng);
            });
            for (size_t j = 0; j < want; ++j) {
                if (!children[j].defined()) continue;
                next.push_back(std::move(children[j]));
                nextKnown.push_back(!doMutate[j] && reuseScores ? known[parents[j]] : kUnscored);
            }
            ++attempts;
        }
        std::swap(now, next);
        std::swap(known, nextKnown);
    }
    std::sort(heap.begin(), heap.end(), cmp);
    std::vector<State> best;
    if (outScores) outScores->clear();
    for (auto& item : heap) {
        best.push_back(item.state);
        if (outScores) outScores->push_back(item.score);
    }
    return best;
}

namespace {
double secondsSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

std::vector<PickedState> SketchPolicy::searchOneRound(int numMeasures) {
    // Seeds first: they are measured as they are, without a search.
    std::vector<PickedState> seeded;
    if (!m_seeds.empty()) {
        std::vector<State> seeds = inferAndPrune(m_seeds);
        m_seeds.clear();
        for (auto& s : seeds) {
            if (!s.defined() || int(seeded.size()) >= numMeasures) continue;
            if (!markPicked(s)) continue;
            seeded.push_back({s, 0.0f});
        }
        numMeasures -= int(seeded.size());
        m_pickedSeeds = int(seeded.size());
        if (numMeasures <= 0) return seeded;
    }
    std::vector<PickedState> searched = searchOneRoundImpl(numMeasures);
    seeded.insert(seeded.end(), searched.begin(), searched.end());
    return seeded;
}

bool SketchPolicy::markPicked(const State& s) {
    if (!m_measuredSet.insert(s.toStr()).second) return false;
    m_measuredVector.push_back(s);
    m_measuredThroughputs.push_back(0.0);  // filled after measuring
    return true;
}

void SketchPolicy::addSeedStates(std::vector<State> states) {
    for (auto& s : states)
        if (s.defined()) m_seeds.push_back(std::move(s));
}

std::vector<PickedState> SketchPolicy::searchOneRoundImpl(int numMeasures) {
    const int population = m_params.evolutionaryPopulation;
    auto t0 = std::chrono::steady_clock::now();
    int numUseMeasured = std::min(int(m_measuredVector.size()), int(m_params.sampleInitUseMeasuredRatio * population));
    int numRandom = int(m_params.epsGreedy * numMeasures);
    std::vector<State> init = sampleInitPopulation();
    m_stats.sampleSeconds = secondsSince(t0);
    m_stats.sampled = int(init.size());
    auto t1 = std::chrono::steady_clock::now();
    // Best measured states join the initial population.
    std::vector<size_t> order(m_measuredVector.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return m_measuredThroughputs[a] > m_measuredThroughputs[b]; });
    for (int i = 0; i < numUseMeasured; ++i) init.push_back(m_measuredVector[order[size_t(i)]]);
    std::vector<State> randomStates;
    if (numRandom > 0 && !init.empty()) {
        for (int i = 0; i < numRandom * 3; ++i) randomStates.push_back(init[m_rng() % init.size()]);
    }
    std::vector<float> bestScores;
    std::vector<State> best = evolutionarySearch(init, numMeasures * 2, &bestScores);
    randomStates = inferAndPrune(randomStates);
    m_stats.evolveSeconds = secondsSince(t1);
    // Eps-greedy pick (TVM PickStatesWithEpsGreedy).
    int numGood = numMeasures - numRandom;
    std::vector<PickedState> picked;
    size_t ob = 0, orr = 0;
    while (int(picked.size()) < numMeasures) {
        State s;
        float score = 0;
        bool hasBest = ob < best.size(), hasRandom = orr < randomStates.size();
        if (int(picked.size()) < numGood) {
            if (hasBest) {
                score = bestScores[ob];
                s = best[ob++];
            } else if (hasRandom) {
                s = randomStates[orr++];
            } else {
                break;
            }
        } else {
            if (hasRandom) {
                s = randomStates[orr++];
            } else if (hasBest) {
                score = bestScores[ob];
                s = best[ob++];
            } else {
                break;
            }
        }
        if (!s.defined() || !markPicked(s)) continue;
        picked.push_back({s, score});
    }
    return picked;
}

std::vector<std::pair<PickedState, MeasureOutcome>> SketchPolicy::continueSearchOneRound(int numMeasures, Measurer& measurer) {
    m_pickedSeeds = 0;
    const auto tp = std::chrono::steady_clock::now();
    m_model->prepare(m_task);  // a lazily trained model trains here (counted as training)
    const double prepareSeconds = secondsSince(tp);
    std::vector<PickedState> picked = searchOneRound(numMeasures);
    for (int retry = 0; picked.empty() && retry < m_params.retrySearchOneRoundOnEmpty; ++retry)
        picked = searchOneRound(numMeasures);
    std::vector<std::pair<PickedState, MeasureOutcome>> out;
    if (picked.empty()) return out;
    std::vector<State> states;
    for (const auto& p : picked) states.push_back(p.state);
    auto tm = std::chrono::steady_clock::now();
    // Seed states (the default schedule) are measured in a batch of their own before the rest of
    // the round: their records reach the log within a second instead of after the whole round
    // (the time to a good kernel users see), and the runner then screens and abandons the round's
    // other candidates against the seed's cost from the first one on.
    std::vector<MeasureOutcome> results;
    MeasurePhases phases;
    const size_t split = m_pickedSeeds > 0 && size_t(m_pickedSeeds) < states.size() ? size_t(m_pickedSeeds) : 0;
    for (auto [begin, end] : {std::pair<size_t, size_t>{0, split}, {split, states.size()}}) {
        if (begin == end) continue;
        std::vector<State> part(states.begin() + ptrdiff_t(begin), states.begin() + ptrdiff_t(end));
        std::vector<MeasureOutcome> r = measurer.measure(m_task, part);
        TB_CHECK(r.size() == part.size()) << "measurer returned " << r.size() << " results for " << part.size();
        for (auto& o : r) results.push_back(std::move(o));
        const MeasurePhases p = measurer.lastPhases();
        phases.lowerSeconds += p.lowerSeconds;
        phases.buildSeconds += p.buildSeconds;
        phases.runSeconds += p.runSeconds;
    }
    m_stats.measureSeconds = secondsSince(tm);
    m_stats.measurePhases = phases;
    m_stats.picked = int(states.size());
    std::vector<cost_model::MeasuredState> train;
    size_t base = m_measuredVector.size() - picked.size();
    for (size_t i = 0; i < picked.size(); ++i) {
        double c = results[i].errorNo == 0 ? results[i].meanCost() : 1e10;
        m_measuredThroughputs[base + i] = c < 1e9 ? 1.0 / c : 0.0;
        train.push_back({picked[i].state, c, results[i].errorNo == 0});
        out.emplace_back(picked[i], results[i]);
    }
    auto tt = std::chrono::steady_clock::now();
    m_model->update(m_task, train);
    m_stats.trainSeconds = prepareSeconds + secondsSince(tt);
    return out;
}

void SketchPolicy::preloadMeasured(const std::vector<State>& states, const std::vector<double>& meanCosts) {
    TB_CHECK(states.size() == meanCosts.size()) << "states and costs differ in size";
    for (size_t i = 0; i < states.size(); ++i) {
        std::string str = states[i].toStr();
        if (!m_measuredSet.insert(str).second) continue;
        m_measuredVector.push_back(states[i]);
        m_measuredThroughputs.push_back(meanCosts[i] < 1e9 ? 1.0 / meanCosts[i] : 0.0);
    }
}

}  // namespace tb::search
