// SPDX-License-Identifier: Apache-2.0
#include "engine/search/search_utils.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <limits>

#include "engine/record/target_info.h"
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
int cacheRead(State* s, const te::ComputeDAG& dag, int stageId, const std::string& scope, const std::vector<int>& readers) {
    addStep(s, Step(CacheReadStep{stageId, scope, readers}), dag);
    return stageId + 1;
}
void followFusedSplit(State* s, const te::ComputeDAG& dag, int stageId, int iterId, const std::vector<int>& srcSteps,
                      int level, bool factorOrNparts) {
    addStep(s, Step(FollowFusedSplitStep{stageId, iterId, srcSteps, level, factorOrNparts}), dag);
}

// ---- GPU ------------------------------------------------------------------------------------

bool isGpuTask(const SearchTask& task) {
    const std::string kind = record::parseTargetInfo(task.target).kind;
    return kind == "cuda" || kind == "opencl" || kind == "vulkan" || kind == "metal" || kind == "rocm" ||
           kind == "opengl";
}

bool isMaliTask(const SearchTask& task) {
    return isGpuTask(task) && record::parseTargetInfo(task.target).device == "mali";
}

namespace {
std::set<int> stagesOf(const State& state, const std::set<const te::OperationNode*>& ops) {
    std::set<int> out;
    for (const auto* op : ops) out.insert(state.stageId(op));
    out.erase(-1);
    return out;
}
}  // namespace

std::set<int> getProducers(const SearchTask& task, const State& state, int stageId) {
    const te::ComputeDAG& dag = currentDag(task, state);
    std::set<const te::OperationNode*> inlined, producers;
    for (const auto& st : state.stages())
        if (st->computeAt == ComputeAtKind::Inlined) inlined.insert(st->op.get());
    std::function<void(const te::Operation&)> collect = [&](const te::Operation& op) {
        for (const auto& [producer, _] : dag.access(op).readFrom) {
            if (inlined.count(producer.get()))
                collect(producer);
            else
                producers.insert(producer.get());
        }
    };
    collect(state.stage(stageId).op);
    return stagesOf(state, producers);
}

std::set<int> getDirectProducers(const SearchTask& task, const State& state, int stageId) {
    std::set<const te::OperationNode*> producers;
    for (const auto& [producer, _] : currentDag(task, state).access(state.stage(stageId).op).readFrom)
        producers.insert(producer.get());
    return stagesOf(state, producers);
}

namespace {
// TVM IsConstShiftEqual: expr is `var`, `var + c`, `c + var` or `var - c`.
bool isConstShiftOf(const te::Var& var, const te::Expr& e) {
    using K = te::ExprKind;
    auto isVar = [&](const te::Expr& x) { return x.kind() == K::Var && x.get() == var.get(); };
    auto isImm = [](const te::Expr& x) { return x.kind() == K::IntImm; };
    if (isVar(e)) return true;
    if (e.kind() == K::Add) {
        auto* b = e.as<te::BinaryNode>();
        return (isVar(b->a) && isImm(b->b)) || (isVar(b->b) && isImm(b->a));
    }
    if (e.kind() == K::Sub) {
        auto* b = e.as<te::BinaryNode>();
        return isVar(b->a) && isImm(b->b);
    }
    return false;
}

// Number of leading axes `consumer` reads `producer` at (TVM AccessAnalyzer
// num_common_outer_iterators): equal extents and every access a constant shift of the axis.
int commonOuterOf(const te::ComputeDAG& dag, const te::Operation& producer, const te::Operation& consumer) {
    const auto& reads = dag.access(consumer).readFrom;
    auto it = std::find_if(reads.begin(), reads.end(), [&](const auto& r) { return r.first.get() == producer.get(); });
    if (it == reads.end()) return 0;
    const size_t n = std::min(consumer->shape.size(), producer->shape.size());
    size_t k = 0;
    for (; k < n; ++k) {
        if (consumer->shape[k] != producer->shape[k] || k >= consumer->axis.size()) break;
        bool shift = std::all_of(it->second.begin(), it->second.end(), [&](const std::vector<te::Expr>& idx) {
            return k < idx.size() && isConstShiftOf(consumer->axis[k].var, idx[k]);
        });
        if (!shift) break;
    }
    return int(k);
}
}  // namespace

int numCommonOuterIterators(const SearchTask& task, const State& state, int stageId, int targetStageId) {
    const te::ComputeDAG& dag = currentDag(task, state);
    const te::Operation& target = state.stage(targetStageId).op;
    int ret = std::numeric_limits<int>::max();
    bool meet = false;
    std::function<void(const te::Operation&, int)> traverse = [&](const te::Operation& cur, int num) {
        if (cur.get() == target.get()) {
            ret = std::min(ret, num);
            meet = true;
            return;
        }
        for (const auto& [consumer, _] : dag.access(cur).readBy)
            traverse(consumer, std::min(num, commonOuterOf(dag, cur, consumer)));
    };
    const te::Operation& op = state.stage(stageId).op;
    traverse(op, int(op->shape.size()));
    return meet ? ret : 0;
}

bool hasAnnotatedIter(const Stage& stage, IteratorAnnotation a) {
    return std::any_of(stage.iters.begin(), stage.iters.end(), [a](const Iterator& it) { return it.annotation == a; });
}

bool hasCrossThreadReduction(const State& state, int stageId) {
    auto check = [](const Stage& st) {
        return std::any_of(st.iters.begin(), st.iters.end(), [](const Iterator& it) {
            return it.annotation == IteratorAnnotation::ThreadX && it.kind == IteratorKind::Reduction;
        });
    };
    if (check(state.stage(stageId))) return true;
    for (size_t i = 0; i < state.stage(stageId).iters.size(); ++i) {
        if (!state.attachMap().hasAttached({stageId, int(i)})) continue;
        for (int a : state.attachMap().attachedStages({stageId, int(i)}))
            if (check(state.stage(a))) return true;
    }
    return false;
}

namespace {
std::set<std::string> noSplitAtInner(const te::OperationNode* op) {
    std::set<std::string> out;
    if (auto* v = op->attr(te::attr::kNoSplitAtInner))
        if (auto* list = std::get_if<std::vector<std::string>>(v)) out.insert(list->begin(), list->end());
    return out;
}

size_t splittableReduceAxes(const te::OperationNode* op) {
    std::set<std::string> noSplit = noSplitAtInner(op);
    size_t n = 0;
    for (const auto& ax : op->reduceAxis)
        if (!noSplit.count(ax.name())) ++n;
    return n;
}
}  // namespace

int lastReduceIterInOutermostReduceTile(const Stage& stage) {
    TB_CHECK(stage.op->isCompute()) << "reduce tile of a placeholder";
    const size_t nReduce = splittableReduceAxes(stage.op.get());
    std::set<std::string> names;
    for (size_t i = 0; i < stage.iters.size(); ++i) {
        const Iterator& it = stage.iters[i];
        if (it.kind != IteratorKind::Reduction) continue;
        if (nReduce == 0) return int(i);
        for (auto& n : originalIteratorNames(it.name)) names.insert(n);
        if (names.size() == nReduce) return int(i);
    }
    TB_CHECK(false) << "stage " << stage.op->name << " has no outermost reduce tile";
    return -1;
}

namespace {
// SP steps of a stage, newest first, following the stage id back through stage-inserting steps.
std::vector<int> splitStepsNewestFirst(const State& state, int stageId) {
    std::vector<int> out;
    const auto& steps = state.transformSteps();
    for (int i = int(steps.size()) - 1; i >= 0; --i) {
        if (steps[size_t(i)].changesStageCount()) {
            if (stageId > steps[size_t(i)].stageId()) --stageId;
        } else if (auto* sp = steps[size_t(i)].as<SplitStep>(); sp && sp->stageId == stageId) {
            out.push_back(i);
        }
    }
    return out;
}
}  // namespace

std::vector<int> spatialSplitStepIds(const State& state, int stageId) {
    size_t reduceLeft = splittableReduceAxes(state.stage(stageId).op.get());
    std::vector<int> out;
    for (int id : splitStepsNewestFirst(state, stageId)) {
        // Splits of reduce axes come after those of spatial axes (TVM's assumption).
        if (reduceLeft) {
            --reduceLeft;
        } else {
            out.push_back(id);
        }
    }
    return out;
}

std::vector<int> splitStepIds(const State& state, int stageId) { return splitStepsNewestFirst(state, stageId); }

int fuseAllReductionIterators(State* s, const te::ComputeDAG& dag, int stageId, int* numSpace) {
    std::vector<int> reduceIds;
    int space = 0;
    const Stage& st = s->stage(stageId);
    for (size_t i = 0; i < st.iters.size(); ++i) {
        if (st.iters[i].kind == IteratorKind::Reduction)
            reduceIds.push_back(int(i));
        else if (st.iters[i].kind == IteratorKind::Spatial)
            ++space;
    }
    TB_CHECK(!reduceIds.empty()) << "stage " << st.op->name << " has no reduce loop to fuse";
    if (numSpace) *numSpace = space;
    if (reduceIds.size() > 1) fuse(s, dag, stageId, reduceIds);
    return reduceIds.front();
}

int fuseAllOuterSpaceIterators(State* s, const te::ComputeDAG& dag, int stageId) {
    std::vector<int> ids;
    const Stage& st = s->stage(stageId);
    for (size_t i = 0; i < st.iters.size(); ++i) {
        const Iterator& it = st.iters[i];
        if (it.kind == IteratorKind::Reduction || it.annotation != IteratorAnnotation::None) break;
        if (i > 0 && s->attachMap().hasAttached({stageId, int(i) - 1})) break;  // TVM checks iter_id - 1
        ids.push_back(int(i));
    }
    TB_USER_CHECK(!ids.empty()) << "stage " << st.op->name << " has no outer spatial loop to bind";
    if (ids.size() > 1) fuse(s, dag, stageId, ids);
    return ids.front();
}

int iterIndex(const Stage& stage, const std::string& name) {
    for (size_t i = 0; i < stage.iters.size(); ++i)
        if (stage.iters[i].name == name) return int(i);
    return -1;
}

}  // namespace tb::search
