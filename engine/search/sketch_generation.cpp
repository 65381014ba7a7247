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

struct Rule {
    virtual ~Rule() = default;
    virtual Cond condition(const SearchTask& t, const State& s, int sid) const = 0;
    virtual Successors apply(const SearchTask& t, const State& s, int sid, const SketchParams& p) const = 0;
};

struct AlwaysInline : Rule {
    Cond condition(const SearchTask& t, const State& s, int sid) const override {
        const Stage& st = s.stage(sid);
        if (st.opType == StageKind::Placeholder || isOutputOp(t, s, sid) || hasReduceIter(st)) return Cond::Skip;
        return isStrictlyInlineable(t, s, sid) ? Cond::ApplyAndSkipRest : Cond::Skip;
    }
    Successors apply(const SearchTask& t, const State& s, int sid, const SketchParams&) const override {
        State n = s;
        computeInline(&n, *t.dag, sid);
        return {{n, sid - 1}};
    }
};

struct SimplifyComputeWithConstTensor : Rule {
    Cond condition(const SearchTask&, const State& s, int sid) const override {
        const Stage& st = s.stage(sid);
        return st.op->attr(te::attr::kSimplifyConstTensorIndices) ? Cond::ApplyAndSkipRest : Cond::Skip;
    }
    Successors apply(const SearchTask& t, const State& s, int sid, const SketchParams&) const override {
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
    Cond condition(const SearchTask& t, const State& s, int sid) const override {
        return needsRfactor(t, s, sid) && !hasCacheWriteStage(s, sid) ? Cond::Apply : Cond::Skip;
    }
    Successors apply(const SearchTask& t, const State& s, int sid, const SketchParams&) const override {
        State base = s;
        // Fuse all reduction loops (TVM FuseAllReductionIterators).
        std::vector<int> reduceIds;
        int numSpace = 0;
        for (size_t i = 0; i < s.stage(sid).iters.size(); ++i) {
            if (s.stage(sid).iters[i].kind == IteratorKind::Reduction)
                reduceIds.push_back(int(i));
            else
                ++numSpace;
        }
        TB_CHECK(!reduceIds.empty()) << "rfactor without a reduce loop";
        int fusedId = reduceIds.front();
        if (reduceIds.size() > 1) fuse(&base, *t.dag, sid, reduceIds);
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
    Cond condition(const SearchTask& t, const State& s, int sid) const override {
        if (needsMultiLevelTiling(t, s, sid) && !hasSingleElementwiseMatchedConsumer(t, s, sid, nullptr))
            return Cond::Apply;
        return Cond::Skip;
    }
    Successors apply(const SearchTask& t, const State& s, int sid, const SketchParams&) const override {
        State n = s;
        cacheWrite(&n, *t.dag, sid, "local");
        return {{n, sid}};
    }
};

struct MultiLevelTilingWithFusion : Rule {
    Cond condition(const SearchTask& t, const State& s, int sid) const override {
        int target;
        if (needsMultiLevelTiling(t, s, sid) && hasSingleElementwiseMatchedConsumer(t, s, sid, &target))
            return hasCacheWriteStage(s, sid) ? Cond::ApplyAndSkipRest : Cond::Apply;
        return Cond::Skip;
    }
    Successors apply(const SearchTask& t, const State& s, int sid, const SketchParams& p) const override {
        int target = -1;
        TB_CHECK(hasSingleElementwiseMatchedConsumer(t, s, sid, &target)) << "no element-wise consumer";
        std::vector<int> splitSteps;
        State base = doMultiLevelTiling(t, s, sid, p.cpuMultiLevelTilingStructure, &splitSteps);
        Successors out;
        for (int level : {1, 2}) {
            State n = followTiling(t, base, target, splitSteps, level);
            int iter = level * int(splitSteps.size()) - 1;
            computeAt(&n, *t.dag, sid, target, iter);
            out.emplace_back(n, sid - 1);
        }
        return out;
    }
};

struct MultiLevelTiling : Rule {
    Cond condition(const SearchTask& t, const State& s, int sid) const override {
        return needsMultiLevelTiling(t, s, sid) ? Cond::ApplyAndSkipRest : Cond::Skip;
    }
    Successors apply(const SearchTask& t, const State& s, int sid, const SketchParams& p) const override {
        std::vector<int> steps;
        return {{doMultiLevelTiling(t, s, sid, p.cpuMultiLevelTilingStructure, &steps), sid - 1}};
    }
};

struct SkipStage : Rule {
    Cond condition(const SearchTask&, const State&, int) const override { return Cond::Apply; }
    Successors apply(const SearchTask&, const State& s, int sid, const SketchParams&) const override {
        return {{s, sid - 1}};
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
    static const AlwaysInline r0;
    static const SimplifyComputeWithConstTensor r1;
    static const AddRfactor r2;
    static const AddCacheWrite r3;
    static const MultiLevelTilingWithFusion r4;
    static const MultiLevelTiling r5;
    static const SkipStage r6;
    const Rule* rules[] = {&r0, &r1, &r2, &r3, &r4, &r5, &r6};

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
                Cond c = r->condition(task, state, sid);
                if (c == Cond::Skip) continue;
                for (auto& succ : r->apply(task, state, sid, params)) next.push_back(std::move(succ));
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
