// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file transform_step.h
/// \brief Transform steps: the schedule primitives that edit a loop State, their JSON record
/// encoding, and replay (TVM `auto_scheduler` transform_step.h/.cc).
///
/// A schedule is a list of steps; each names its stage (and loops) by index into the state as it
/// is when the step applies. Steps are immutable values shared between states (`Step` is a shared
/// pointer to one of the structs below). Each has TVM's record form, one JSON array:
///
/// | prefix | struct | fields after the prefix |
/// |---|---|---|
/// | AN | AnnotationStep | stage_id, iter_id, annotation (int, IteratorAnnotation) |
/// | FU | FuseStep | stage_id, [fused iter ids] (consecutive) |
/// | PR | PragmaStep | stage_id, iter_id, "pragma" (`auto_unroll_max_step$N`, `debug_skip_region`) |
/// | RE | ReorderStep | stage_id, [iter ids in the new order] |
/// | SP | SplitStep | stage_id, iter_id, extent (0 = unknown), [lengths], inner_to_outer (0/1) |
/// | FSP | FollowSplitStep | stage_id, iter_id, src_step_id, n_split |
/// | FFSP | FollowFusedSplitStep | stage_id, iter_id, [src_step_ids], level, factor_or_nparts (0/1) |
/// | SA | StorageAlignStep | stage_id, iter_id, factor, offset |
/// | CA | ComputeAtStep | stage_id, target_stage_id, target_iter_id |
/// | CI | ComputeInlineStep | stage_id |
/// | CR | ComputeRootStep | stage_id |
/// | CHR | CacheReadStep | stage_id, "scope", [reader stage ids] |
/// | CHW | CacheWriteStep | stage_id, "scope" |
/// | RF | RfactorStep | stage_id, iter_id, factor_iter_id |
///
/// Naming (TVM exact): a split of `i` gives `i.0` (outermost) ... `i.n`; a fuse concatenates the
/// names, each followed by `@` (`i.0@j.0@`); CHW inserts stage `<op>.<scope>` before the op (its
/// loops are the op's axes renamed `<axis>_c`, then the reduce axes); CHR inserts `<op>.<scope>`
/// after the read op (loops `ax0, ax1, ...`); RF inserts `<op>.rf` before the op, whose stage is
/// rebuilt as `<op>.repl` with loops `ax0, ...` and one reduce loop `<factored loop>_v`. CHR, CHW
/// and RF create new te operations, rewrite their consumers and shift the ids of later stages.
///
/// How to add a new step: add its struct to `StepData`, give it `kRecordPrefix`, encode/decode in
/// transform_step.cpp (`stepToJson`, `stepFromJson`), apply it in `applyStep`, and add a record
/// round-trip and a functional case to tests/engine/tst_schedule.cpp.

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/schedule/loop_state.h"

namespace tb {

/// AN: annotate loop iter_id of a stage (unroll, vectorize, parallel, thread binding ...).
struct AnnotationStep {
    static constexpr const char* kRecordPrefix = "AN";
    int stageId = 0, iterId = 0;
    IteratorAnnotation annotation = IteratorAnnotation::None;
    bool operator==(const AnnotationStep&) const = default;
};
/// FU: fuse consecutive loops into one (`a@b@`), extent = product.
struct FuseStep {
    static constexpr const char* kRecordPrefix = "FU";
    int stageId = 0;
    std::vector<int> fusedIds;
    bool operator==(const FuseStep&) const = default;
};
/// PR: a pragma; `auto_unroll_max_step$N` sets the stage attribute, `debug_skip_region` detaches.
struct PragmaStep {
    static constexpr const char* kRecordPrefix = "PR";
    int stageId = 0, iterId = 0;
    std::string pragmaType;
    bool operator==(const PragmaStep&) const = default;
};
/// RE: reorder all loops of a stage; afterIds[k] = old index of the loop that goes to position k.
struct ReorderStep {
    static constexpr const char* kRecordPrefix = "RE";
    int stageId = 0;
    std::vector<int> afterIds;
    bool operator==(const ReorderStep&) const = default;
};
/// SP: split a loop into lengths.size()+1 loops. innerToOuter: lengths[k] is the extent of loop
/// `.k+1` and `.0` gets ceil(extent / prod(lengths)); otherwise lengths are nparts, outermost first.
/// A length of 0 means "not yet chosen" (a sketch); such a state is not concrete.
struct SplitStep {
    static constexpr const char* kRecordPrefix = "SP";
    int stageId = 0, iterId = 0;
    int64_t extent = 0;  ///< extent of the split loop when the step was made; 0 = unknown
    std::vector<int64_t> lengths;
    bool innerToOuter = true;
    bool operator==(const SplitStep&) const = default;
};
/// FSP: split like SP step srcStepId, into nSplit loops: its first nSplit-1 lengths, the rest
/// multiplied into the last one.
struct FollowSplitStep {
    static constexpr const char* kRecordPrefix = "FSP";
    int stageId = 0, iterId = 0, srcStepId = 0, nSplit = 0;
    bool operator==(const FollowSplitStep&) const = default;
};
/// FFSP: split by one length = product over the SP steps srcStepIds of lengths[level];
/// factorOrNparts: true = that length is the inner factor, false = the number of outer parts.
struct FollowFusedSplitStep {
    static constexpr const char* kRecordPrefix = "FFSP";
    int stageId = 0, iterId = 0;
    std::vector<int> srcStepIds;
    int level = 0;
    bool factorOrNparts = true;
    bool operator==(const FollowFusedSplitStep&) const = default;
};
/// SA: storage_align(loop, factor, offset); the state records the offset as a stage attribute.
struct StorageAlignStep {
    static constexpr const char* kRecordPrefix = "SA";
    int stageId = 0, iterId = 0, factor = 0, offset = 0;
    bool operator==(const StorageAlignStep&) const = default;
};
/// CA: compute stage at loop targetIterId of stage targetStageId; its loop ranges become unknown.
struct ComputeAtStep {
    static constexpr const char* kRecordPrefix = "CA";
    int stageId = 0, targetStageId = 0, targetIterId = 0;
    bool operator==(const ComputeAtStep&) const = default;
};
/// CI: inline the stage into its consumers (fails if stages are attached to it).
struct ComputeInlineStep {
    static constexpr const char* kRecordPrefix = "CI";
    int stageId = 0;
    bool operator==(const ComputeInlineStep&) const = default;
};
/// CR: compute the stage at the root; its loop ranges become unknown.
struct ComputeRootStep {
    static constexpr const char* kRecordPrefix = "CR";
    int stageId = 0;
    bool operator==(const ComputeRootStep&) const = default;
};
/// CHR: add stage `<op>.<scope>` after stage stageId that the readers read instead of it.
struct CacheReadStep {
    static constexpr const char* kRecordPrefix = "CHR";
    int stageId = 0;
    std::string scopeName;
    std::vector<int> readerStageIds;
    bool operator==(const CacheReadStep&) const = default;
};
/// CHW: add stage `<op>.<scope>` before stage stageId that computes it; the op then copies it.
struct CacheWriteStep {
    static constexpr const char* kRecordPrefix = "CHW";
    int stageId = 0;
    std::string scopeName;
    bool operator==(const CacheWriteStep&) const = default;
};
/// RF: rfactor the reduction on reduce loop iterId; the factored loop becomes spatial axis
/// factorIterId of the new `<op>.rf` stage.
struct RfactorStep {
    static constexpr const char* kRecordPrefix = "RF";
    int stageId = 0, iterId = 0, factorIterId = 0;
    bool operator==(const RfactorStep&) const = default;
};

using StepData = std::variant<AnnotationStep, FuseStep, PragmaStep, ReorderStep, SplitStep, FollowSplitStep,
                              FollowFusedSplitStep, StorageAlignStep, ComputeAtStep, ComputeInlineStep,
                              ComputeRootStep, CacheReadStep, CacheWriteStep, RfactorStep>;

/// An immutable, shared transform step.
class Step {
public:
    Step() = default;
    template <class T, class = std::enable_if_t<!std::is_same_v<std::decay_t<T>, Step>>>
    Step(T step) : m_data(std::make_shared<const StepData>(std::move(step))) {}  // NOLINT

    bool defined() const { return bool(m_data); }
    const StepData& data() const { return *m_data; }
    template <class T>
    const T* as() const { return std::get_if<T>(m_data.get()); }
    template <class T>
    bool is() const { return std::holds_alternative<T>(*m_data); }
    /// The stage the step works on (every step has one).
    int stageId() const;
    /// The record prefix ("SP", "CA", ...).
    const char* prefix() const;
    /// True for CHR, CHW and RF (they insert stages and rebuild operations).
    bool changesStageCount() const;
    bool operator==(const Step& o) const { return *m_data == *o.m_data; }
    bool operator!=(const Step& o) const { return !(*this == o); }

private:
    std::shared_ptr<const StepData> m_data;
};

// ---- records ---------------------------------------------------------------------------

/// The JSON array of a step, as TVM's WriteToRecord writes it (e.g. `["SP", 2, 0, 1024, [2, 1, 4], 1]`).
/// Throws InternalError for a split with an undefined length (TVM ICHECK).
nlohmann::json stepToJson(const Step& step);
/// Decode one step. Throws tb::UserError naming the step (its JSON text) when the prefix is
/// unknown, a field is missing or has the wrong type, or there are extra fields.
Step stepFromJson(const nlohmann::json& record);
/// Decode a step list (the second element of a record's state). Errors name the step index.
std::vector<Step> stepsFromJson(const nlohmann::json& records);
nlohmann::json stepsToJson(const std::vector<Step>& steps);
/// The compact JSON text of a step, with TVM's `, ` separators (`["CA", 2, 4, 3]`).
std::string stepToString(const Step& step);

// ---- applying --------------------------------------------------------------------------

/// Apply one step to a state whose transformSteps already contain it (TVM StepApplyToState).
/// `dag` is the task's original DAG (needed by CHR/CHW/RF). Throws tb::UserError when the step
/// does not fit the state (ids out of range, fusing non-consecutive or attached loops, compute_at
/// into itself, inlining a stage others are attached to, rfactor of a spatial loop, ...).
void applyStep(State* state, const Step& step, const te::ComputeDAG& dag);

/// Append a step to the state's history and apply it (TVM's State::split/fuse/... helpers).
void addStep(State* state, const Step& step, const te::ComputeDAG& dag);

/// Replay a step list on dag's initial state (TVM ComputeDAG::ReplayAndGetDAG / the state half of
/// ApplySteps). Throws tb::UserError naming the failing step's index and record.
State replaySteps(const te::ComputeDAG& dag, const std::vector<Step>& steps);

/// The lengths a FollowSplitStep resolves to, from the SP step it follows (TVM
/// ExtractSplitLengths). Throws tb::UserError if srcStepId is not an earlier SP step.
std::vector<int64_t> followSplitLengths(const FollowSplitStep& step, const std::vector<Step>& history);
/// The single length a FollowFusedSplitStep resolves to (TVM ExtractSplitLength); 0 if undefined.
int64_t followFusedSplitLength(const FollowFusedSplitStep& step, const std::vector<Step>& history);

}  // namespace tb
