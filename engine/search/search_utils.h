// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file search_utils.h
/// \brief Queries about a loop State that the sketch, annotation and mutation rules share (TVM
/// auto_scheduler/search_policy/utils.h): which stages need multi-level tiling, consumers through
/// inlined stages, element-wise matching, rfactor need, compute-location candidates, and the
/// memoized factorizations used to sample tile sizes; and the GPU queries of the GPU sketch and
/// thread-binding rules (target kind, producers, cross-thread reduction, split-step lookup).

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

// ---- GPU (TVM utils.h: IsGPUTask, HasCrossThreadReduction, GetSpatialSplitStepIds, ...) -------

/// TVM IsGPUTask: the task's target kind (first word of its target string, parsed by
/// record::parseTargetInfo) is cuda, opencl, vulkan, metal, rocm or opengl. A local predicate until
/// the codegen target layer offers one; it reads only `task.target`.
bool isGpuTask(const SearchTask& task);
/// A GPU task whose target has `-device=mali` (TVM: `target->GetAttr("device") == "mali"`): the
/// CPU sketch rule list with the GPU init rules plus InitVectorization.
bool isMaliTask(const SearchTask& task);
/// Producers of a stage, looking through inlined stages (TVM GetProducers).
std::set<int> getProducers(const SearchTask& task, const State& state, int stageId);
/// Producers the stage's op reads directly (TVM GetDirectProducers).
std::set<int> getDirectProducers(const SearchTask& task, const State& state, int stageId);
/// TVM GetNumCommonOuterIterator: along every read path from the stage's op to the target's op,
/// the number of leading output axes of equal extent that each consumer reads as its own axis plus
/// a constant; the minimum over the paths, 0 when the target is not reached.
int numCommonOuterIterators(const SearchTask& task, const State& state, int stageId, int targetStageId);
/// A stage, or a stage attached to one of its loops, binds a reduce loop to threadIdx.x (TVM
/// HasCrossThreadReduction).
bool hasCrossThreadReduction(const State& state, int stageId);
bool hasAnnotatedIter(const Stage& stage, IteratorAnnotation a);
/// TVM GetLastReduceIteratorInOutermostReduceTile: index of the reduce loop that closes the
/// outermost reduce tile (where GPU shared-memory cache reads are computed). Throws InternalError
/// when the stage has no reduce loop.
int lastReduceIterInOutermostReduceTile(const Stage& stage);
/// Ids of the SP steps that split the spatial axes of the stage (TVM GetSpatialSplitStepIds:
/// newest first, skipping as many splits as the op has splittable reduce axes), stage ids
/// followed back through later CHR/CHW/RF steps.
std::vector<int> spatialSplitStepIds(const State& state, int stageId);
/// Ids of all SP steps of the stage, newest first (TVM GetSplitStepIds).
std::vector<int> splitStepIds(const State& state, int stageId);
/// Fuses every reduce loop of a stage (TVM FuseAllReductionIterators); returns the index of the
/// fused loop and the number of spatial loops in `numSpace`. The reduce loops must be consecutive.
int fuseAllReductionIterators(State* s, const te::ComputeDAG& dag, int stageId, int* numSpace = nullptr);
/// Fuses the outer unannotated spatial loops up to the first reduce loop, annotated loop or
/// attach point (TVM FuseAllOuterSpaceIterators); returns the index of the fused loop (0). Throws
/// UserError when there is no such loop.
int fuseAllOuterSpaceIterators(State* s, const te::ComputeDAG& dag, int stageId);

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
/// CHR: returns the id of the added `<op>.<scope>` stage (stageId + 1).
int cacheRead(State* s, const te::ComputeDAG& dag, int stageId, const std::string& scope, const std::vector<int>& readers);
void followFusedSplit(State* s, const te::ComputeDAG& dag, int stageId, int iterId, const std::vector<int>& srcSteps,
                      int level, bool factorOrNparts);

/// Index of the iterator named `name` in a stage, -1 if absent.
int iterIndex(const Stage& stage, const std::string& name);

}  // namespace tb::search
