// SPDX-License-Identifier: Apache-2.0
#include "engine/search/sketch_generation.h"

#include <cctype>
#include <set>

#include "engine/schedule/transform_step.h"
#include "engine/search/search_utils.h"
#include "engine/support/error.h"

namespace tb::search {

namespace {

enum class Cond { Skip, Apply, ApplyAndSkipRest };
using Successors = std::vector<std::pair<State, int>>;

std::set<std::string> iterNameSet(const te::OperationNode* op, const char* key) {
    std::set<std::string> out;
    if (auto* v = op->attr(key))
        if (auto* list = std::get_if<std::vector<std::string>>(v)) out.insert(list->begin(), list->end());
    return out;
}

// What every rule reads: the task, the parameters, and whether the task is a GPU task (TVM
// IsGPUTask, which also holds for Mali although Mali uses the CPU rule list).
struct Ctx {
    const SearchTask& t;
    const SketchParams& p;
    bool gpu;
    const std::string& structure() const { return gpu ? p.gpuMultiLevelTilingStructure : p.cpuMultiLevelTilingStructure; }
};

struct Rule {
    virtual ~Rule() = default;
    virtual Cond condition(const Ctx& c, const State& s, int sid) const = 0;
    virtual Successors apply(const Ctx& c, const State& s, int sid) const = 0;
};

// TVM ShouldAlwaysBeInlined: GPU inlines every inlineable op, the CPU only strictly inlineable ones.
bool shouldAlwaysBeInlined(const Ctx& c, const State& s, int sid) {
    const Stage& st = s.stage(sid);
    if (st.opType == StageKind::Placeholder || isOutputOp(c.t, s, sid) || hasReduceIter(st)) return false;
    return c.gpu || isStrictlyInlineable(c.t, s, sid);
}

struct AlwaysInline : Rule {
    Cond condition(const Ctx& c, const State& s, int sid) const override {
        return shouldAlwaysBeInlined(c, s, sid) ? Cond::ApplyAndSkipRest : Cond::Skip;
    }
    Successors apply(const Ctx& c, const State& s, int sid) const override {
        const SearchTask& t = c.t;
        State n = s;
        computeInline(&n, *t.dag, sid);
        return {{n, sid - 1}};
    }
};

struct SimplifyComputeWithConstTensor : Rule {
    Cond condition(const Ctx&, const State& s, int sid) const override {
        const Stage& st = s.stage(sid);
        return st.op->attr(te::attr::kSimplifyConstTensorIndices) ? Cond::ApplyAndSkipRest : Cond::Skip;
    }
    Successors apply(const Ctx& c, const State& s, int sid) const override {
        const SearchTask& t = c.t;
        std::set<std::string> constIdx = iterNameSet(s.stage(sid).op.get(), te::attr::kSimplifyConstTensorIndices);
        State n = s;
        const size_t tileLevel = 2;
        std::vector<std::vector<std::string>> tiled;  // names of the split results, per loop
        std::vector<std::string> unrolled;
        std::vector<std::string> names;
        for (const auto& it : s.stage(sid).iters) names.push_back(it.name);
        for (const auto& name : names) {
            int idx = iterIndex(n.stage(sid), name);
            if (constIdx.count(name)) {
                annotate(&n, *t.dag, sid, idx, IteratorAnnotation::Unroll);
                unrolled.push_back(name);
            } else {
                TB_CHECK(n.stage(sid).iters[size_t(idx)].kind == IteratorKind::Spatial)
                    << "const-tensor stage " << n.stage(sid).op->name << " has a non-spatial loop " << name;
                split(&n, *t.dag, sid, idx, std::vector<int64_t>(tileLevel - 1, 0));
                std::vector<std::string> parts;
                for (size_t k = 0; k < tileLevel; ++k) parts.push_back(n.stage(sid).iters[size_t(idx) + k].name);
                tiled.push_back(parts);
            }
        }
        std::vector<int> order;
        for (size_t lvl = 0; lvl < tileLevel; ++lvl)
            for (const auto& parts : tiled) order.push_back(iterIndex(n.stage(sid), parts[lvl]));
        for (const auto& u : unrolled) order.push_back(iterIndex(n.stage(sid), u));
        reorder(&n, *t.dag, sid, order);
        return {{n, sid - 1}};
    }
};

struct AddRfactor : Rule {
    Cond condition(const Ctx& c, const State& s, int sid) const override {
        return needsRfactor(c.t, s, sid) && !hasCacheWriteStage(s, sid) ? Cond::Apply : Cond::Skip;
    }
    Successors apply(const Ctx& c, const State& s, int sid) const override {
        const SearchTask& t = c.t;
        State base = s;
        int numSpace = 0;
        const int fusedId = fuseAllReductionIterators(&base, *t.dag, sid, &numSpace);
        split(&base, *t.dag, sid, fusedId, {1});
        Successors out;
        for (int part = 0; part < 2; ++part) {
            State n = base;
            rfactor(&n, *t.dag, sid, fusedId + part, numSpace);
            int rstage = sid;  // the .rf stage is inserted before the op
            if (part == 1) {
                // Move the factor axis innermost for vectorization.
                std::vector<int> order;
                size_t cnt = n.stage(rstage).iters.size();
                for (size_t i = 0; i < cnt; ++i)
                    if (int(i) != numSpace) order.push_back(int(i));
                order.push_back(numSpace);
                reorder(&n, *t.dag, rstage, order);
            }
            out.emplace_back(n, rstage - 1);
        }
        return out;
    }
};

struct AddCacheWrite : Rule {
    Cond condition(const Ctx& c, const State& s, int sid) const override {
        if (needsMultiLevelTiling(c.t, s, sid) && !hasSingleElementwiseMatchedConsumer(c.t, s, sid, nullptr))
            return c.gpu ? Cond::ApplyAndSkipRest : Cond::Apply;
        return Cond::Skip;
    }
    Successors apply(const Ctx& c, const State& s, int sid) const override {
        State n = s;
        cacheWrite(&n, *c.t.dag, sid, "local");
        return {{n, sid}};
    }
};

struct MultiLevelTilingWithFusion : Rule {
    Cond condition(const Ctx& c, const State& s, int sid) const override {
        int target;
        if (needsMultiLevelTiling(c.t, s, sid) && hasSingleElementwiseMatchedConsumer(c.t, s, sid, &target))
            return hasCacheWriteStage(s, sid) || c.gpu ? Cond::ApplyAndSkipRest : Cond::Apply;
        return Cond::Skip;
    }
    Successors apply(const Ctx& c, const State& s, int sid) const override {
        const SearchTask& t = c.t;
        int target = -1;
        TB_CHECK(hasSingleElementwiseMatchedConsumer(t, s, sid, &target)) << "no element-wise consumer";
        std::vector<int> splitSteps;
        const std::string& structure = c.structure();
        State base = doMultiLevelTiling(t, s, sid, structure, &splitSteps);
        Successors out;
        // The CPU fuses at the first or second spatial level, the GPU at the third (the thread tile).
        for (int level : c.gpu ? std::vector<int>{3} : std::vector<int>{1, 2}) {
            if (std::tolower(static_cast<unsigned char>(structure[size_t(level - 1)])) != 's') continue;
            State n = followTiling(t, base, target, splitSteps, level);
            int iter = level * int(splitSteps.size()) - 1;
            computeAt(&n, *t.dag, sid, target, iter);
            out.emplace_back(n, sid - 1);
        }
        return out;
    }
};

struct MultiLevelTiling : Rule {
    Cond condition(const Ctx& c, const State& s, int sid) const override {
        return needsMultiLevelTiling(c.t, s, sid) ? Cond::ApplyAndSkipRest : Cond::Skip;
    }
    Successors apply(const Ctx& c, const State& s, int sid) const override {
        std::vector<int> steps;
        return {{doMultiLevelTiling(c.t, s, sid, c.structure(), &steps), sid - 1}};
    }
};

struct SkipStage : Rule {
    Cond condition(const Ctx&, const State&, int) const override { return Cond::Apply; }
    Successors apply(const Ctx&, const State& s, int sid) const override { return {{s, sid - 1}}; }
};

// ---- GPU-only rules (TVM RuleAddCacheRead, RuleSpecialComputeLocationGPU,
// RuleCrossThreadReduction) -------------------------------------------------------------------

// A producer read directly by a consumer that needs multi-level tiling (and does no cross-thread
// reduction) is staged in shared memory for every consumer, computed at the loop that closes the
// consumer's outermost reduce tile; the rules then continue on the same stage.
struct AddCacheRead : Rule {
    Cond condition(const Ctx& c, const State& s, int sid) const override {
        const std::set<int> consumers = getConsumers(c.t, s, sid);
        if (consumers.empty()) return Cond::Skip;
        const int target = *consumers.begin();
        if (!needsMultiLevelTiling(c.t, s, target) || hasCrossThreadReduction(s, target)) return Cond::Skip;
        return getDirectProducers(c.t, s, target).count(sid) ? Cond::ApplyAndSkipRest : Cond::Skip;
    }
    Successors apply(const Ctx& c, const State& s, int sid) const override {
        State n = s;
        int offset = 0;
        for (int consumer : getConsumers(c.t, s, sid)) {
            int target = consumer + offset;
            const int added = cacheRead(&n, *c.t.dag, sid, "shared", {target});
            ++offset;
            ++target;
            computeAt(&n, *c.t.dag, added, target, lastReduceIterInOutermostReduceTile(n.stage(target)));
        }
        return {{n, sid}};
    }
};

// An inlineable producer of a const-tensor stage (winograd) is computed inside the consumer's
// last outer loop before its unrolled loops instead of being inlined.
struct SpecialComputeLocationGPU : Rule {
    Cond condition(const Ctx& c, const State& s, int sid) const override {
        if (getProducers(c.t, s, sid).empty() || !shouldAlwaysBeInlined(c, s, sid)) return Cond::Skip;
        const std::set<int> consumers = getConsumers(c.t, s, sid);
        if (consumers.size() == 1 && s.stage(*consumers.begin()).op->attr(te::attr::kSimplifyConstTensorIndices))
            return Cond::ApplyAndSkipRest;
        return Cond::Skip;
    }
    Successors apply(const Ctx& c, const State& s, int sid) const override {
        State n = s;
        const int target = *getConsumers(c.t, s, sid).begin();
        const Stage& ts = s.stage(target);
        for (size_t i = 0; i < ts.iters.size(); ++i) {
            if (ts.iters[i].annotation != IteratorAnnotation::Unroll) continue;
            TB_CHECK(i > 0) << "const-tensor stage " << ts.op->name << " starts with an unrolled loop";
            computeAt(&n, *c.t.dag, sid, target, int(i) - 1);
            break;
        }
        return {{n, sid - 1}};
    }
};

// Reductions with little spatial parallelism reduce across the threads of a block: the reduce
// loops are fused and split by the warp size, the inner part bound to threadIdx.x (TVM lowers it
// to an allreduce, no rfactor stage); when the single consumer is simple and shares outer loops,
// the reduction is computed inside it, splitting like the consumer's thread split.
struct CrossThreadReduction : Rule {
    Cond condition(const Ctx& c, const State& s, int sid) const override {
        if (hasCacheWriteStage(s, sid)) return Cond::Skip;
        const Stage& st = s.stage(sid);
        if (st.opType != StageKind::Compute) return Cond::Skip;
        int64_t space = 1, reduce = 1;
        for (const auto& it : st.iters) {
            if (it.kind == IteratorKind::Spatial) space *= extentOf(it);
            else if (it.kind == IteratorKind::Reduction) reduce *= extentOf(it);
        }
        if (needsMultiLevelTiling(c.t, s, sid)) {
            if (space > c.t.hardware.maxThreadsPerBlock) return Cond::Skip;
            return space < reduce ? Cond::Apply : Cond::Skip;
        }
        if (reduce > 1) return reduce > c.t.hardware.warpSize ? Cond::Apply : Cond::Skip;
        return Cond::Skip;
    }
    Successors apply(const Ctx& c, const State& s, int sid) const override {
        const te::ComputeDAG& dag = *c.t.dag;
        const int warp = c.t.hardware.warpSize;
        State n = s;
        const int fused = fuseAllReductionIterators(&n, dag, sid);
        const int target = getSingleConsumerId(c.t, n, sid);
        int common = -1;
        bool fusible = false;
        if (target >= 0) {
            common = numCommonOuterIterators(c.t, n, sid, target);
            fusible = common > 0 && !needsMultiLevelTiling(c.t, s, target);
        }
        if (!fusible) {
            split(&n, dag, sid, fused, {warp});
            annotate(&n, dag, sid, fused + 1, IteratorAnnotation::ThreadX);
            return {{n, sid - 1}};
        }
        std::vector<int> splits = splitStepIds(n, target);
        if (splits.empty()) {
            // A simple consumer without reduce loops: split its innermost loop by the warp size.
            TB_CHECK(!hasReduceIter(s.stage(target))) << "cross-thread reduction into a reduction";
            const int last = int(n.stage(target).iters.size()) - 1;
            split(&n, dag, target, last, {warp});
            annotate(&n, dag, target, last + 1, IteratorAnnotation::ThreadX);
            splits.push_back(int(n.transformSteps().size()) - 2);
        }
        TB_CHECK(splits.size() == 1) << "cross-thread reduction consumer " << n.stage(target).op->name
                                     << " has " << splits.size() << " splits";
        followSplit(&n, dag, sid, fused, splits[0], 1);
        annotate(&n, dag, sid, fused + 1, IteratorAnnotation::ThreadX);
        computeAt(&n, dag, sid, target, common - 1);
        return {{n, sid - 1}};
    }
};

}  // namespace

State doMultiLevelTiling(const SearchTask& t, const State& state, int sid, const std::string& structure,
                         std::vector<int>* spatialSplitSteps) {
    size_t nSpace = 0, nReduce = 0;
    for (char c : structure) {
        char l = char(std::tolower(static_cast<unsigned char>(c)));
        TB_CHECK(l == 's' || l == 'r') << "invalid multi-level tiling structure " << structure;
        (l == 's' ? nSpace : nReduce)++;
    }
    std::vector<std::vector<std::string>> spaceLevels(nSpace), reduceLevels(nReduce);
    std::vector<std::string> spaceInner, reduceInner;
    spatialSplitSteps->clear();
    State n = state;
    std::set<std::string> noSplit = iterNameSet(state.stage(sid).op.get(), te::attr::kNoSplitAtInner);
    std::vector<std::string> names;
    for (const auto& it : state.stage(sid).iters) names.push_back(it.name);
    for (const auto& name : names) {
        int idx = iterIndex(n.stage(sid), name);
        IteratorKind kind = n.stage(sid).iters[size_t(idx)].kind;
        TB_CHECK(kind == IteratorKind::Spatial || kind == IteratorKind::Reduction) << "invalid iterator kind";
        bool spatial = kind == IteratorKind::Spatial;
        if (noSplit.count(name)) {
            (spatial ? spaceInner : reduceInner).push_back(name);
            continue;
        }
        auto& levels = spatial ? spaceLevels : reduceLevels;
        size_t parts = spatial ? nSpace : nReduce;
        TB_CHECK(parts >= 1) << "structure " << structure << " has no level for a loop of this kind";
        if (parts == 1) {
            levels[0].push_back(name);
            continue;
        }
        split(&n, *t.dag, sid, idx, std::vector<int64_t>(parts - 1, 0));
        if (spatial) spatialSplitSteps->push_back(int(n.transformSteps().size()) - 1);
        for (size_t k = 0; k < parts; ++k) levels[k].push_back(n.stage(sid).iters[size_t(idx) + k].name);
    }
    if (!spaceInner.empty()) spaceLevels.back().insert(spaceLevels.back().begin(), spaceInner.begin(), spaceInner.end());
    if (!reduceInner.empty())
        reduceLevels.back().insert(reduceLevels.back().begin(), reduceInner.begin(), reduceInner.end());
    std::vector<int> order;
    size_t sc = 0, rc = 0;
    for (char c : structure) {
        auto& lvl = std::tolower(static_cast<unsigned char>(c)) == 's' ? spaceLevels[sc++] : reduceLevels[rc++];
        for (const auto& name : lvl) order.push_back(iterIndex(n.stage(sid), name));
    }
    reorder(&n, *t.dag, sid, order);
    return n;
}

State followTiling(const SearchTask& t, const State& state, int sid, const std::vector<int>& splitSteps, int nSplit) {
    TB_CHECK(nSplit >= 1 && nSplit <= 3) << "invalid split parts " << nSplit;
    State n = state;
    std::set<std::string> noSplit = iterNameSet(state.stage(sid).op.get(), te::attr::kNoSplitAtInner);
    std::vector<std::vector<std::string>> levels(size_t(nSplit) + 1);
    std::vector<std::string> names;
    for (const auto& it : state.stage(sid).iters) names.push_back(it.name);
    size_t ct = 0;
    for (const auto& name : names) {
        int idx = iterIndex(n.stage(sid), name);
        if (noSplit.count(name)) {
            levels[size_t(nSplit)].push_back(name);
            continue;
        }
        TB_CHECK(ct < splitSteps.size()) << "consumer " << n.stage(sid).op->name << " has more loops than the producer's splits";
        followSplit(&n, *t.dag, sid, idx, splitSteps[ct], nSplit);
        for (int k = 0; k <= nSplit; ++k) levels[size_t(k)].push_back(n.stage(sid).iters[size_t(idx + k)].name);
        ++ct;
    }
    TB_CHECK(ct == splitSteps.size()) << "consumer loops do not match the producer's splits";
    std::vector<int> order;
    for (const auto& lvl : levels)
        for (const auto& name : lvl) order.push_back(iterIndex(n.stage(sid), name));
    reorder(&n, *t.dag, sid, order);
    return n;
}

std::vector<State> generateSketches(const SearchTask& task, const SketchParams& params) {
    static const AlwaysInline alwaysInline;
    static const SimplifyComputeWithConstTensor constTensor;
    static const AddRfactor rfactorRule;
    static const AddCacheWrite cacheWriteRule;
    static const MultiLevelTilingWithFusion tilingWithFusion;
    static const MultiLevelTiling tiling;
    static const SkipStage skip;
    static const AddCacheRead cacheReadRule;
    static const SpecialComputeLocationGPU specialLocation;
    static const CrossThreadReduction crossThread;
    // TVM SketchPolicy's constructor: the CPU list (also for Mali GPUs), else the GPU list.
    static const std::vector<const Rule*> cpuRules{&alwaysInline, &constTensor, &rfactorRule, &cacheWriteRule,
                                                   &tilingWithFusion, &tiling, &skip};
    static const std::vector<const Rule*> gpuRules{&cacheReadRule, &specialLocation, &alwaysInline, &constTensor,
                                                   &crossThread, &cacheWriteRule, &tilingWithFusion, &tiling, &skip};
    const bool gpu = isGpuTask(task);
    const std::vector<const Rule*>& rules = gpu && !isMaliTask(task) ? gpuRules : cpuRules;
    const Ctx ctx{task, params, gpu};

    State init(*task.dag);
    std::vector<std::pair<State, int>> now{{init, int(init.stages().size()) - 1}}, next;
    std::vector<State> out;
    while (!now.empty()) {
        next.clear();
        for (const auto& [state, sid] : now) {
            if (sid < 0) {
                out.push_back(state);
                continue;
            }
            for (const Rule* r : rules) {
                Cond c = r->condition(ctx, state, sid);
                if (c == Cond::Skip) continue;
                for (auto& succ : r->apply(ctx, state, sid)) next.push_back(std::move(succ));
                if (c == Cond::ApplyAndSkipRest) break;
            }
        }
        std::swap(now, next);
    }
    // The split before an RF gets an undefined length so that it is sampled later (TVM's hack:
    // replaying an undefined split before rfactor would fail, so it is split by 1 first).
    for (auto& s : out) {
        const auto& steps = s.transformSteps();
        for (size_t i = 1; i < steps.size(); ++i) {
            if (!steps[i].is<RfactorStep>()) continue;
            const SplitStep* sp = steps[i - 1].as<SplitStep>();
            TB_CHECK(sp) << "rfactor not preceded by a split";
            SplitStep u = *sp;
            u.lengths.assign(u.lengths.size(), 0);
            StateNode* node = s.copyOnWrite();
            node->transformSteps[i - 1] = Step(u);
            node->concrete = false;
        }
    }
    return out;
}

}  // namespace tb::search
