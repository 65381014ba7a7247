// SPDX-License-Identifier: Apache-2.0
#include "engine/search/search_utils.h"

#include <algorithm>
#include <functional>

#include "engine/support/error.h"

namespace tb::search {

const te::ComputeDAG& currentDag(const SearchTask& task, const State& state) {
    if (state->currentComputeDag) return *state->currentComputeDag;
    return *task.dag;
}

bool needsMultiLevelTiling(const SearchTask& task, const State& state, int stageId) {
    const Stage& st = state.stage(stageId);
    if (st.opType != StageKind::Compute) return false;
    return currentDag(task, state).access(st.op).needsMultiLevelTiling;
}
bool isStrictlyInlineable(const SearchTask& task, const State& state, int stageId) {
    const Stage& st = state.stage(stageId);
    if (st.opType != StageKind::Compute) return false;
    return currentDag(task, state).access(st.op).isStrictlyInlineable;
}
bool isOutputOp(const SearchTask& task, const State& state, int stageId) {
    return currentDag(task, state).access(state.stage(stageId).op).isOutput;
}
bool hasReduceIter(const Stage& stage) {
    return std::any_of(stage.iters.begin(), stage.iters.end(),
                       [](const Iterator& it) { return it.kind != IteratorKind::Spatial; });
}
bool isTiled(const Stage& stage) {
    if (!stage.op || !stage.op->isCompute()) return false;
    return stage.iters.size() != stage.op->axis.size() + stage.op->reduceAxis.size();
}
int64_t extentOf(const Iterator& it) { return it.range ? it.range->extent : -1; }

std::set<int> getConsumers(const SearchTask& task, const State& state, int stageId) {
    const te::ComputeDAG& dag = currentDag(task, state);
    std::set<const te::OperationNode*> inlined;
    for (const auto& st : state.stages())
        if (st->computeAt == ComputeAtKind::Inlined) inlined.insert(st->op.get());
    std::set<int> ret;
    std::function<void(const te::Operation&)> collect = [&](const te::Operation& op) {
        for (const auto& [consumer, _] : dag.access(op).readBy) {
            if (inlined.count(consumer.get()))
                collect(consumer);
            else
                ret.insert(state.stageId(consumer.get()));
        }
    };
    collect(state.stage(stageId).op);
    ret.erase(-1);
    return ret;
}

namespace {
bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

bool hasSingleElementwiseMatchedConsumer(const SearchTask& task, const State& state, int stageId, int* target) {
    std::set<int> consumers = getConsumers(task, state, stageId);
    if (consumers.size() != 1) return false;
    int t = *consumers.begin();
    if (target) *target = t;
    const te::ComputeDAG& dag = currentDag(task, state);
    if (!dag.elementWiseMatch(state.stage(stageId).op, state.stage(t).op)) return false;
    if (hasReduceIter(state.stage(stageId)) && hasReduceIter(state.stage(t))) return false;
    if (endsWith(state.stage(t).op->name, ".shared")) return false;
    return true;
}

bool hasCacheWriteStage(const State& state, int stageId) {
    const std::string& name = state.stage(stageId).op->name;
    if (endsWith(name, ".local")) return true;
    return stageId > 0 && state.stage(stageId - 1).op->name == name + ".local";
}

bool hasRfactorStage(const State& state, int stageId) {
    const std::string& name = state.stage(stageId).op->name;
    return stageId > 0 && state.stage(stageId - 1).op->name == name + ".rf";
}

bool needsRfactor(const SearchTask& task, const State& state, int stageId) {
    const Stage& st = state.stage(stageId);
    if (st.opType != StageKind::Compute) return false;
    int64_t space = 1, reduce = 1;
    for (const auto& it : st.iters) {
        int64_t e = std::max<int64_t>(extentOf(it), 1);
        (it.kind == IteratorKind::Spatial ? space : reduce) *= e;
    }
    if (needsMultiLevelTiling(task, state, stageId)) {
        return !(space > reduce || space > int64_t(task.hardware.numCores) * 16);
    }
    if (reduce > 1) return reduce > task.hardware.numCores;
    return false;
}

int getSingleConsumerId(const SearchTask& task, const State& state, int stageId) {
    std::set<int> consumers = getConsumers(task, state, stageId);
    if (consumers.empty()) return -1;
    if (consumers.size() == 1) return *consumers.begin();
    int common = -1;
    for (int c : consumers) {
        int root = -1;
        const Stage& cs = state.stage(c);
        if (cs.computeAt == ComputeAtKind::Root) {
            root = c;
        } else if (cs.computeAt == ComputeAtKind::Iter) {
            root = state.attachMap().attachedAt(c)->first;
        } else {
            return -1;
        }
        if (common == -1)
            common = root;
        else if (common != root)
            return -1;
    }
    return common;
}

std::vector<std::pair<int, int>> getComputeLocationCandidates(const SearchTask& task, const State& state, int stageId) {
    int target = getSingleConsumerId(task, state, stageId);
    if (target < 0) return {};
    const Stage& ts = state.stage(target);
    std::vector<std::pair<int, int>> out;
    bool targetAtOther = ts.computeAt == ComputeAtKind::Iter;
    bool targetTiled = isTiled(ts);
    bool visitedReduce = false;
    for (size_t i = 0; i < ts.iters.size(); ++i) {
        const Iterator& it = ts.iters[i];
        if (it.kind == IteratorKind::Reduction) {
            visitedReduce = true;
            if (!targetTiled) break;
        } else if (it.kind == IteratorKind::Spatial) {
            if (visitedReduce) break;
        }
        if (it.annotation == IteratorAnnotation::Unroll) break;
        if (extentOf(it) == 1) continue;
        if (targetAtOther && it.kind == IteratorKind::Spatial && endsWith(it.name, ".0")) continue;
        out.emplace_back(target, int(i));
        if (state.attachMap().hasAttached({target, int(i)})) break;
    }
    if (targetAtOther) {
        int tt = state.attachMap().attachedAt(target)->first;
        const Stage& tts = state.stage(tt);
        for (size_t i = 0; i < tts.iters.size(); ++i) {
            const Iterator& it = tts.iters[i];
            if (it.kind == IteratorKind::Reduction || state.attachMap().hasAttached({tt, int(i)})) break;
            if (it.annotation == IteratorAnnotation::Unroll) break;
            if (extentOf(it) == 1) continue;
            out.emplace_back(tt, int(i));
        }
    }
    return out;
}

int targetStageIdInState(const State& state, int stepId) {
    const auto& steps = state.transformSteps();
    int sid = steps[size_t(stepId)].stageId();
    int inc = 0;
    for (size_t i = size_t(stepId) + 1; i < steps.size(); ++i)
        if (steps[i].changesStageCount() && steps[i].stageId() <= sid) ++inc;
    return sid + inc;
}

const std::vector<int64_t>& SplitFactorizationMemo::factors(int64_t n) {
    auto it = m_factors.find(n);
    if (it != m_factors.end()) return it->second;
    std::vector<int64_t> f;
    for (int64_t d = 1; d * d <= n; ++d) {
        if (n % d == 0) {
            f.push_back(d);
            if (d * d != n) f.push_back(n / d);
        }
    }
    std::sort(f.begin(), f.end());
    return m_factors.emplace(n, std::move(f)).first->second;
}

const std::vector<std::vector<int64_t>>& SplitFactorizationMemo::schemes(int64_t extent, int nLengths, int maxInnermost) {
    auto key = std::make_tuple(extent, nLengths, maxInnermost);
    auto it = m_schemes.find(key);
    if (it != m_schemes.end()) return it->second;
    std::vector<std::vector<int64_t>> out;
    std::vector<int64_t> cur(size_t(nLengths), 1);
    // DFS over divisors: position k (0 = loop .1) takes a divisor of what remains.
    std::function<void(int, int64_t)> dfs = [&](int k, int64_t remaining) {
        if (k == nLengths) {
            out.push_back(cur);
            return;
        }
        for (int64_t f : factors(remaining)) {
            if (k == nLengths - 1 && f > maxInnermost) break;
            cur[size_t(k)] = f;
            dfs(k + 1, remaining / f);
        }
    };
    dfs(0, extent);
    return m_schemes.emplace(key, std::move(out)).first->second;
}

void split(State* s, const te::ComputeDAG& dag, int stageId, int iterId, const std::vector<int64_t>& lengths) {
    SplitStep st;
    st.stageId = stageId;
    st.iterId = iterId;
    st.extent = std::max<int64_t>(extentOf(s->stage(stageId).iters[size_t(iterId)]), 0);
    st.lengths = lengths;
    st.innerToOuter = true;
    addStep(s, Step(st), dag);
}
void followSplit(State* s, const te::ComputeDAG& dag, int stageId, int iterId, int srcStep, int nSplit) {
    addStep(s, Step(FollowSplitStep{stageId, iterId, srcStep, nSplit}), dag);
}
void reorder(State* s, const te::ComputeDAG& dag, int stageId, const std::vector<int>& order) {
    addStep(s, Step(ReorderStep{stageId, order}), dag);
}
void fuse(State* s, const te::ComputeDAG& dag, int stageId, const std::vector<int>& ids) {
    addStep(s, Step(FuseStep{stageId, ids}), dag);
}
void annotate(State* s, const te::ComputeDAG& dag, int stageId, int iterId, IteratorAnnotation a) {
    addStep(s, Step(AnnotationStep{stageId, iterId, a}), dag);
}
void pragma(State* s, const te::ComputeDAG& dag, int stageId, int iterId, const std::string& p) {
    addStep(s, Step(PragmaStep{stageId, iterId, p}), dag);
}
void computeAt(State* s, const te::ComputeDAG& dag, int stageId, int targetStage, int targetIter) {
    addStep(s, Step(ComputeAtStep{stageId, targetStage, targetIter}), dag);
}
void computeInline(State* s, const te::ComputeDAG& dag, int stageId) {
    addStep(s, Step(ComputeInlineStep{stageId}), dag);
}
void computeRoot(State* s, const te::ComputeDAG& dag, int stageId) { addStep(s, Step(ComputeRootStep{stageId}), dag); }
void cacheWrite(State* s, const te::ComputeDAG& dag, int stageId, const std::string& scope) {
    addStep(s, Step(CacheWriteStep{stageId, scope}), dag);
}
void rfactor(State* s, const te::ComputeDAG& dag, int stageId, int iterId, int factorIterId) {
    addStep(s, Step(RfactorStep{stageId, iterId, factorIterId}), dag);
}

int iterIndex(const Stage& stage, const std::string& name) {
    for (size_t i = 0; i < stage.iters.size(); ++i)
        if (stage.iters[i].name == name) return int(i);
    return -1;
}

}  // namespace tb::search
