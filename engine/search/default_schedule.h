// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file default_schedule.h
/// \brief The schedule a fused group gets when the tuning log has no record for it (TVM falls back
/// to its hand-written topi schedules; Ansor's users see "Cannot find tuned schedules" warnings).
///
/// A network is rarely tuned completely: the injective glue between the heavy layers (layout
/// transforms, padding, reshapes, softmax) is not a search task at all, and a log may cover only
/// some tasks. Every such group still has to run at a decent speed, so instead of the unscheduled
/// lowering (one serial loop nest per stage) it gets a schedule built from the same transform
/// steps the search uses, which keeps it on the well-tested path replay -> inferBound ->
/// lowerState:
///   1. Inlining: a non-output stage without reduction is inlined into its readers, unless it is
///      not strictly inlineable (a padding `if_then_else`, an `exp`, a non-trivial index) and a
///      reduction reads it (directly or through inlined stages): then it is computed once at the
///      root rather than once per reduction step.
///   2. Register tiling, for a reduction vectorizable along its last output axis (conv2d,
///      depthwise, NCHWc convolutions, winograd's transforms and batch gemm): its single
///      element-wise reader (or, when it has none, a `local` cache-write copy of it) is tiled
///      `[outer..., w.0, v.0 | w.1, v.1]` with v.1 the vector lanes and w.1 up to 8 rows of the
///      second-to-last axis; the reduction is computed at `v.0` (`CA`) with its reduce loops
///      between `v.0` and `[w.1 (unrolled), v.1 (vectorized)]`, so its tile of accumulators lives
///      in registers (Ansor's multi-level tiling, with one level).
///      Its lanes need not divide the axis (42 channels): the last vector is masked. An axis
///      without lanes to give (one output channel per NCHWc block) passes them to an inner axis.
///      Dense with rows to reuse (M >= 4) tiles its strided weight too when the caller rewrites
///      the weight's layout (`layoutFreeContiguous`).
///   3. A reduction whose last output axis is read with a stride (dense `W[j, k]`, winograd's batch
///      gemm with its `[alpha, alpha, CO, CI]` kernel) is rfactored on a vector-wide split of its
///      innermost reduce axis, so the partial sums are vectors; the rfactor stage is computed at
///      the final sum's row tile (up to 8 rows of the last output axis x the lanes, in registers),
///      which adds up each row's lanes right there.
///   4. Every other root stage: the last spatial axis is split by the vector width and vectorized
///      when every load is contiguous or invariant along it (reduce loops move inside the outer
///      part), and the outermost spatial loops are fused (until `parallelGoal` iterations) and
///      parallelized when the stage does enough work (`parallelMinWork` multiply-adds or points).
///      An injective stage whose last axes have one element (an NCHWc packing with one channel per
///      block) vectorizes the axis before them, with gathers where its loads need them.
/// When this state cannot be lowered, the compiler falls back to lower::lowerComputeDag.
///
/// The same state seeds the search (tuning::TuneOptions::seedDefaultSchedule): it is measured in
/// each task's first round, so a tuned network is never slower than the untuned one, and as a
/// measured state it joins the evolutionary search's initial population.

#include <cstdint>

#include "engine/schedule/loop_state.h"
#include "engine/te/compute_dag.h"

namespace tb::search {

struct DefaultScheduleOptions {
    int vectorLanes = 16;                     ///< float32 lanes of the target's vectors (16: AVX-512)
    int64_t parallelMinWork = int64_t(1) << 15; ///< iteration points below which a stage stays serial
    int64_t parallelGoal = 64;                ///< outer loops are fused until their extent reaches this
    int maxTileRows = 8;                      ///< w.1 extent limit of the register tile
    /// Float lanes of one FMA at the core's full FMA rate (measure::fullRateFmaLanes). Where it
    /// reaches vectorLanes (two 512-bit FMA pipes), a tile of one vector column broadcasts one input
    /// per FMA and is load-bound (rows broadcasts + 1 vector load per rows FMAs, on two load ports),
    /// so the tile takes two columns of vectors when the lane axis divides (rows x 2 accumulators).
    int fmaLanes = 8;
    bool registerTiling = true;               ///< step 2 (off: step 4 for reductions too)
    bool rfactor = true;                      ///< step 3
    /// Step 2 may read an op's `layout_free_placeholders` (dense's weight W[N, K]) across its
    /// layout: the caller rewrites them into the tile's loop order (layout_rewrite.h, option 2;
    /// dense becomes TVM's dense_pack, W'[N/16, K, 16]). Set it when the weights are constants
    /// that the compiler transforms once (build_module.h), or when the measurer rewrites them
    /// (a task with layout_rewrite_option 2). Applies to tiles of at least 4 rows.
    bool layoutFreeContiguous = false;
};

/// The default schedule of `dag` as a State (steps applied, not yet through inferBound). Throws
/// tb::UserError or InternalError when a step does not apply (the caller falls back).
/// `readsRewrittenLayout` (optional) is set when the state relies on
/// DefaultScheduleOptions::layoutFreeContiguous: it must run with its weights rewritten
/// (rewriteLayout with RewriteForPreTransformed), or it reads them with gathers.
State defaultSchedule(const te::ComputeDAG& dag, const DefaultScheduleOptions& options = {},
                      bool* readsRewrittenLayout = nullptr);

/// GPU targets: default_schedule_gpu.h.

}  // namespace tb::search
