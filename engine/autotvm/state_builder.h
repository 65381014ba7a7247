// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file state_builder.h
/// \brief Private to engine/autotvm: te-schedule-style calls (`s[C].split`, `reorder`, `fuse`,
/// `parallel`, `compute_at`, `cache_write`, `SplitEntity.apply`) that append the equivalent
/// auto-scheduler transform steps to a State, so an AutoTVM template's schedule function reads like
/// TVM's and produces a State that lower::lowerState lowers (see template.h for the design).
///
/// Stages are named by their op name (and occurrence, since TVM's dense_nopack has two stages
/// called `compute`); loops by their State iterator names (`y`, `y.0`, `y.0@x.0@`, `y_c`). Ids
/// are looked up at each call, so the stage shift of cache_write needs no bookkeeping. Every call
/// throws tb::UserError naming the stage and loop when they do not exist.

#include <string>
#include <vector>

#include "engine/autotvm/template.h"
#include "engine/schedule/loop_state.h"
#include "engine/te/compute_dag.h"

namespace tb::autotvm::detail {

/// A stage reference: the `occurrence`-th stage (0-based, stage order) whose op is named `name`.
struct StageRefName {
    std::string name;
    int occurrence = 0;
};

class StateBuilder {
public:
    explicit StateBuilder(std::shared_ptr<const te::ComputeDAG> dag);

    /// `cfg[knob].apply(s, stage, axis)`: split `iter` into `entity.size.size()` loops (outermost
    /// first; the outermost length is the rest). Returns the new loop names.
    std::vector<std::string> applySplit(const StageRefName& stage, const std::string& iter, const SplitEntity& entity);
    /// `s[stage].split(iter, factor)`: returns {outer, inner}.
    std::vector<std::string> split(const StageRefName& stage, const std::string& iter, std::int64_t factor);
    /// te `reorder(order...)`: the listed loops take the positions they occupy, in the listed order.
    void reorder(const StageRefName& stage, const std::vector<std::string>& order);
    /// te `fuse(a, b, ...)` of consecutive loops; returns the fused loop's name.
    std::string fuse(const StageRefName& stage, const std::vector<std::string>& iters);
    /// `s[stage].unroll / vectorize / parallel / bind(iter, thread_axis(...))` (the thread axes are
    /// IteratorAnnotation::BlockX ... ThreadZ, VThread).
    void annotate(const StageRefName& stage, const std::string& iter, IteratorAnnotation ann);
    /// `s[stage].compute_at(s[target], iter)`.
    void computeAt(const StageRefName& stage, const StageRefName& target, const std::string& iter);
    /// `s.cache_read(stage, scope, readers)`: inserts stage `<name>.<scope>` after it, read by
    /// `readers` instead of it. Returns the new stage.
    StageRefName cacheRead(const StageRefName& stage, const std::string& scope, const std::vector<StageRefName>& readers);
    /// `AnnotateEntity.apply(s, stage, axes, axis_lens, max_unroll, vec_size)`: "unroll" / "vec" /
    /// "none" per loop; throws tb::UserError (TVM's cfg.raise_error, an invalid config) when an
    /// unrolled loop is longer than `maxUnroll` (0: no limit) or a vectorized loop's length is not
    /// in `vecSizes` (empty: any), unless ignoreConfigErrors() was called.
    void applyAnnotate(const StageRefName& stage, const std::vector<std::string>& iters, const AnnotateEntity& entity,
                       const std::vector<std::int64_t>& axisLens, std::int64_t maxUnroll = 0,
                       const std::vector<std::int64_t>& vecSizes = {});
    /// `ReorderEntity.apply(s, stage, axes)`: reorder to axes[perm[0]], axes[perm[1]], ...
    void applyReorder(const StageRefName& stage, const std::vector<std::string>& iters, const ReorderEntity& entity);
    /// `s[stage].compute_inline()`.
    void computeInline(const StageRefName& stage);
    /// `s.cache_write(stage, scope)`: inserts stage `<name>.<scope>` before it.
    void cacheWrite(const StageRefName& stage, const std::string& scope);

    /// For network kernels (relay.build under apply_history_best): TVM's cfg.raise_error only
    /// records the error, which the builder of a tuning measurement turns into an invalid config;
    /// a network build applies the schedule regardless (the loop is unrolled). After this call,
    /// applyAnnotate does the same.
    void ignoreConfigErrors() { m_strict = false; }
    /// The compute stages after `stage` in stage order (for a network kernel: the ops fused after
    /// the template's output; the last one is the kernel's output).
    std::vector<StageRefName> computeStagesAfter(const StageRefName& stage) const;
    /// TVM's traverse_inline before a template's schedule on a network kernel: inlines every
    /// compute stage after `stage` except the last (the group's output). Returns the stages after
    /// `stage` (empty when `stage` is the output).
    std::vector<StageRefName> inlineFusedAfter(const StageRefName& stage);
    /// The op name of the `i`-th tensor `stage` reads (TVM `op.input_tensors[i]`); throws
    /// tb::UserError when it reads fewer.
    std::string inputName(const StageRefName& stage, std::size_t i) const;
    /// True if the DAG has the stage.
    bool hasStage(const StageRefName& stage) const;
    /// The loop names of a stage, outermost first.
    std::vector<std::string> iters(const StageRefName& stage) const;
    /// Bound inference; the result is ready for lowering.
    TemplateInstance finish() const;

private:
    int stageId(const StageRefName& stage) const;
    int iterId(int stageId, const std::string& iter) const;
    std::shared_ptr<const te::ComputeDAG> m_dag;
    State m_state;
    bool m_strict = true;
};

}  // namespace tb::autotvm::detail
