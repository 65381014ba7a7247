// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file loop_state.h
/// \brief The auto-scheduler's loop state: a light-weight, copy-on-write description of the loop
/// nest of every stage of a compute DAG (TVM `auto_scheduler::State`, loop_state.h/.cc).
///
/// The search never builds real loop IR while it explores: it edits a `State` with transform steps
/// (transform_step.h) and compares states by their printed loop nest (`State::toStr`). A State
/// holds one `Stage` per operation (in the DAG's stage order), each with its `Iterator`s (the loops,
/// outermost first), its compute location and two attributes; the `AttachMap` records which stage
/// is computed at which loop of another stage; and the list of steps that produced it, which is the
/// whole program: replaying the steps on the DAG's initial state rebuilds the state
/// (`replaySteps`, transform_step.h), and a log line stores only the steps.
///
/// Beyond TVM's fields every stage keeps an `IterVarGraph`: the te-schedule view of its loops
/// (root axes, and the split/fuse relations that derive every loop from them, with te's variable
/// names). TVM keeps that in a parallel `te::Schedule`; we keep it in the state so bound inference
/// (infer_bound.h) and lowering can map every loop back to the original axes without replaying.
///
/// Cost: a State is one shared pointer. Copies share everything; the first mutation of a shared
/// state clones the node (a vector of stage pointers, the step pointers and the attach map);
/// stages, steps and iterator graphs are immutable and shared between states.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/te/compute_dag.h"

namespace tb {

class Step;

/// Kind of a stage (TVM StageKind).
enum class StageKind : uint8_t { Placeholder = 0, Compute = 1 };

/// Where a stage is computed (TVM ComputeAtKind): at the root, inlined into its consumers, or at a
/// loop of another stage (see AttachMap).
enum class ComputeAtKind : uint8_t { Root = 0, Inlined = 1, Iter = 2 };

/// What an iterator iterates over (TVM IteratorKind). A fused iterator of spatial and reduction
/// iterators is Mixed; Special is only the initial value of a fuse.
enum class IteratorKind : uint8_t { Spatial = 0, Reduction = 1, Mixed = 2, Special = 3 };

/// Loop annotation; the integer values are the ones stored in "AN" records (REFERENCE-TVM §1.1).
enum class IteratorAnnotation : uint8_t {
    None = 0, Unroll = 1, Vectorize = 2, Parallel = 3, VThread = 4,
    BlockX = 5, ThreadX = 6, BlockY = 7, ThreadY = 8, BlockZ = 9, ThreadZ = 10, Tensorize = 11
};
inline constexpr int kNumIteratorAnnotations = 12;

/// TVM's IteratorAnnotationString: "for", "unroll", "vectorize", "parallel", "vthread",
/// "blockIdx.x", "threadIdx.x", "blockIdx.y", "threadIdx.y", "blockIdx.z", "threadIdx.z", "tensorize".
const char* annotationString(IteratorAnnotation a);
/// True for vthread / blockIdx.* / threadIdx.* (the annotations that bind a GPU thread axis).
bool isThreadBinding(IteratorAnnotation a);

/// A half-open integer range [min, min + extent).
struct Range {
    int64_t min = 0;
    int64_t extent = 0;
    bool operator==(const Range&) const = default;
};

/// One loop of a stage (TVM Iterator).
struct Iterator {
    std::string name;            ///< `i`, `i.0`, `i.0@j.0@`, `i_c` (see naming rules in transform_step.h)
    std::optional<Range> range;  ///< undefined ("None") after compute_at/compute_root until inferBound
    IteratorKind kind = IteratorKind::Spatial;
    IteratorAnnotation annotation = IteratorAnnotation::None;
    std::vector<Iterator> origIters;  ///< the iterators a fuse consumed (TVM orig_iters), else empty
    int var = -1;                     ///< this loop's variable in the stage's IterVarGraph

    /// Equality of what TVM compares (name, range, kind, annotation); `var` is bookkeeping.
    bool operator==(const Iterator& o) const {
        return name == o.name && range == o.range && kind == o.kind && annotation == o.annotation;
    }
};

/// One loop variable of a stage's te schedule: a root axis or a result of split/fuse.
struct IterVarInfo {
    std::string teName;  ///< the name te gives the variable: `k`, `k.outer`, `k.inner`, `i.j.fused`
    IteratorKind kind = IteratorKind::Spatial;
};

/// A te iter-var relation: Split (parent -> outer, inner by `factor` or by `nparts`) or Fuse
/// (outer, inner -> fused, stored in `parent`). TVM message_passing.cc semantics.
struct IterRelation {
    enum class Kind : uint8_t { Split, Fuse };
    Kind kind = Kind::Split;
    int parent = -1;      ///< split: the split variable; fuse: the fused result
    int outer = -1;
    int inner = -1;
    int64_t factor = 0;   ///< split: factor (or nparts when `nparts`); 0 = not yet known
    bool nparts = false;
};

/// How every loop of a stage derives from the op's axes: vars[0 .. numRoots) are the op's axes
/// followed by its reduce axes (in op order); later vars come from `relations`, in creation order.
/// Immutable once shared; steps copy it and append.
struct IterVarGraph {
    std::vector<IterVarInfo> vars;
    std::vector<IterRelation> relations;
    int numRoots = 0;
};

/// Stage attributes changed by PR and SA steps (TVM StageAttributes).
struct StageAttributes {
    int autoUnrollMaxStep = 0;
    int storageOffset = 0;
    bool operator==(const StageAttributes&) const = default;
};

/// One operation's loop nest (TVM Stage). Immutable when shared through StageRef.
struct Stage {
    te::Operation op;
    StageKind opType = StageKind::Placeholder;
    std::vector<Iterator> iters;
    ComputeAtKind computeAt = ComputeAtKind::Root;
    StageAttributes attrs;
    std::shared_ptr<const IterVarGraph> graph;  ///< never null for compute stages

    /// The initial stage of op: one iterator per axis, then per reduce axis, named by TVM's
    /// CleanName of the axis name (`.`/`@` -> `_`, `outer` -> `o`, `inner` -> `i`), full ranges.
    explicit Stage(te::Operation op);
    Stage() = default;
};
using StageRef = std::shared_ptr<const Stage>;

/// TVM's CleanName(str): `.` and `@` become `_`, then `outer` -> `o`, `inner` -> `i`.
std::string cleanName(const std::string& name);

/// TVM's ExtractOriginalIterators: the axis names inside a split or fused loop name
/// (`i.0@j.1@` -> {i, j}; `ff_c.2` -> {ff_c}); segments that start with a digit are split indices.
std::set<std::string> originalIteratorNames(const std::string& name);

/// (stage id, iterator index) of a loop.
using IterKey = std::pair<int, int>;

/// Which stage is computed at which loop (TVM AttachMap). Both directions are kept.
class AttachMap {
public:
    /// Attach stage_id at (target_stage_id, target_iter_id), replacing an earlier attachment.
    void setComputeAtIter(int stageId, int targetStageId, int targetIterId);
    /// Forget the attachment of stageId (compute_root, compute_inline).
    void deleteStage(int stageId);
    /// Re-key loops after a split/fuse moved them: originals[i] becomes updated[i].
    void updateIters(const std::vector<IterKey>& originals, const std::vector<IterKey>& updated);
    /// A copy where every stage id >= startId is shifted by offset (a stage was inserted).
    AttachMap applyStageIdOffset(int startId, int offset = 1) const;

    /// The loop stageId is attached at, if any.
    std::optional<IterKey> attachedAt(int stageId) const;
    /// Stages attached at a loop, in attachment order (empty if none).
    const std::vector<int>& attachedStages(const IterKey& key) const;
    bool hasAttached(const IterKey& key) const { return m_iterToStages.count(key) != 0; }

    const std::map<int, IterKey>& stageToAttachIter() const { return m_stageToIter; }
    const std::map<IterKey, std::vector<int>>& iterToAttachedStages() const { return m_iterToStages; }
    bool operator==(const AttachMap&) const = default;

private:
    void deleteEntry(int stageId);
    std::map<int, IterKey> m_stageToIter;
    std::map<IterKey, std::vector<int>> m_iterToStages;
};

/// The data of a State.
struct StateNode {
    std::vector<StageRef> stages;
    std::vector<Step> transformSteps;
    AttachMap attachMap;
    /// The DAG after CHR/CHW/RF steps rebuilt operations (stage order may differ from its ops());
    /// null while the state still has the original DAG's operations.
    std::shared_ptr<const te::ComputeDAG> currentComputeDag;
    /// False while some split has an undefined length (a sketch before tile-size sampling).
    bool concrete = true;
};

/// A copy-on-write loop state (TVM State). A default-constructed State is null.
class State {
public:
    State() = default;
    /// The initial state of a DAG: one Stage per op of dag.ops(), no steps.
    explicit State(const te::ComputeDAG& dag);
    /// The initial state over explicit ops (in stage order).
    explicit State(const std::vector<te::Operation>& ops);

    bool defined() const { return bool(m_node); }
    const StateNode* operator->() const { return m_node.get(); }
    const StateNode& node() const { return *m_node; }
    /// The node for writing; clones it first when another State shares it.
    StateNode* copyOnWrite();

    const std::vector<StageRef>& stages() const { return m_node->stages; }
    const Stage& stage(int id) const;
    const std::vector<Step>& transformSteps() const { return m_node->transformSteps; }
    const AttachMap& attachMap() const { return m_node->attachMap; }
    bool concrete() const { return m_node->concrete; }
    /// Stage id of an operation (by identity) or -1.
    int stageId(const te::OperationNode* op) const;
    /// Replace stage id with a new stage value.
    void setStage(int id, Stage s);

    /// The loop nest as TVM's State::ToStr / PrintState prints it: `Placeholder: A, B` then every
    /// root stage with its attached stages nested, `<annotation> <name> (<min>,<extent>)` per
    /// loop (`(None)` without a range), two spaces per level, `<op> auto_unroll: N` /
    /// `<op> storage_offset: N` lines and a final `<op> = ...`. With deleteTrivialLoop, loops of
    /// extent 1 are not printed (TVM's default, used for dedup and by `print(state)`).
    std::string toStr(bool deleteTrivialLoop = true) const;

    /// Structural equality as TVM's std::equal_to<State>: equal printed loop nests.
    bool operator==(const State& o) const { return toStr() == o.toStr(); }

private:
    std::shared_ptr<StateNode> m_node;
};

}  // namespace tb
