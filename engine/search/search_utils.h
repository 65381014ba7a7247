// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file search_utils.h
/// \brief Queries about a loop State that the sketch, annotation and mutation rules share (TVM
/// auto_scheduler/search_policy/utils.h): which stages need multi-level tiling, consumers through
/// inlined stages, element-wise matching, rfactor need, compute-location candidates, and the
/// memoized factorizations used to sample tile sizes.

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/schedule/transform_step.h"
#include "engine/search/search_task.h"

namespace tb::search {

/// The DAG whose ops the state's stages hold (the state's rebuilt DAG after CHR/CHW/RF, else the task's).
const te::ComputeDAG& currentDag(const SearchTask& task, const State& state);

bool needsMultiLevelTiling(const SearchTask& task, const State& state, int stageId);
bool isStrictlyInlineable(const SearchTask& task, const State& state, int stageId);
bool isOutputOp(const SearchTask& task, const State& state, int stageId);
bool hasReduceIter(const Stage& stage);
/// A stage whose loop count differs from its op's axes + reduce axes (TVM IsTiled).
bool isTiled(const Stage& stage);
/// Extent of an iterator, -1 when its range is undefined.
int64_t extentOf(const Iterator& it);

/// Consumers of a stage, looking through inlined stages (TVM GetConsumers).
std::set<int> getConsumers(const SearchTask& task, const State& state, int stageId);
/// TVM HasSingleElementwiseMatchedConsumer: exactly one consumer, element-wise matched, not both
/// reductions, consumer not a `.shared` stage.
bool hasSingleElementwiseMatchedConsumer(const SearchTask& task, const State& state, int stageId, int* target);
/// The stage is a `.local` cache-write stage (or is preceded by its own cache-write stage).
bool hasCacheWriteStage(const State& state, int stageId);
bool hasRfactorStage(const State& state, int stageId);
/// TVM NeedsRfactor (REFERENCE-TVM §1.3).
bool needsRfactor(const SearchTask& task, const State& state, int stageId);
/// TVM GetSingleConsumerId: the one consumer, or the common root of all consumers, or -1.
int getSingleConsumerId(const SearchTask& task, const State& state, int stageId);
/// TVM GetComputeLocationCandidates: (stage, iter) pairs a non-tiled stage may be computed at.
std::vector<std::pair<int, int>> getComputeLocationCandidates(const SearchTask& task, const State& state, int stageId);
/// Stage id that step `stepId`'s stage has in the final state (later CHR/CHW/RF shift ids).
int targetStageIdInState(const State& state, int stepId);

/// Factorizations of extents into n ordered lengths with the innermost <= maxInnermost (TVM
/// SplitFactorizationMemo). Each scheme has n entries: the lengths of loops `.1` .. `.n`; loop `.0`
/// takes the rest, so the product of a scheme divides the extent.
class SplitFactorizationMemo {
public:
    const std::vector<std::vector<int64_t>>& schemes(int64_t extent, int nLengths, int maxInnermost);
    /// Divisors of n in ascending order (1 and n included).
    const std::vector<int64_t>& factors(int64_t n);

private:
    std::map<std::tuple<int64_t, int, int>, std::vector<std::vector<int64_t>>> m_schemes;
    std::map<int64_t, std::vector<int64_t>> m_factors;
};

// ---- state editing (append a step and apply it) --------------------------------------------

/// Split loop iterId of a stage into lengths.size()+1 loops (0 = undefined length).
void split(State* s, const te::ComputeDAG& dag, int stageId, int iterId, const std::vector<int64_t>& lengths);
void followSplit(State* s, const te::ComputeDAG& dag, int stageId, int iterId, int srcStep, int nSplit);
void reorder(State* s, const te::ComputeDAG& dag, int stageId, const std::vector<int>& order);
void fuse(State* s, const te::ComputeDAG& dag, int stageId, const std::vector<int>& ids);
void annotate(State* s, const te::ComputeDAG& dag, int stageId, int iterId, IteratorAnnotation a);
void pragma(State* s, const te::ComputeDAG& dag, int stageId, int iterId, const std::string& p);
void computeAt(State* s, const te::ComputeDAG& dag, int stageId, int targetStage, int targetIter);
void computeInline(State* s, const te::ComputeDAG& dag, int stageId);
void computeRoot(State* s, const te::ComputeDAG& dag, int stageId);
void cacheWrite(State* s, const te::ComputeDAG& dag, int stageId, const std::string& scope);
void rfactor(State* s, const te::ComputeDAG& dag, int stageId, int iterId, int factorIterId);

/// Index of the iterator named `name` in a stage, -1 if absent.
int iterIndex(const Stage& stage, const std::string& name);

}  // namespace tb::search
