// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file infer_bound.h
/// \brief Bound inference for a loop State: the extent of every loop once splits, fuses and
/// compute_at locations are known (TVM `ComputeDAG::InferBound`, which runs te::InferBound on the
/// replayed schedule), and the symbolic region each stage computes (what te::InferBound hands to
/// ScheduleOps when a schedule is lowered).
///
/// After a `CA` step the attached stage only computes the region its consumers need inside the
/// target loop, so its loops shrink (a matmul tile computed at the consumer's tile loop iterates
/// over the tile, not over the whole matrix). The search prints states, extracts features and
/// lowers them only after this pass. We follow te's algorithm (src/te/schedule/bound.cc,
/// message_passing.cc): stages are visited consumers first; an output's (or placeholder's) root
/// axes take their full domain; any other stage's root axes are the union, over every consumer
/// (reads through inlined stages included), of the index ranges it reads, where the consumer's
/// loops outside the attach point are fixed and the inner ones range fully (thread-bound loops are
/// relaxed by TVM's storage-scope rule), clipped to the tensor shape when the range covers it;
/// then ranges are passed down the split (outer = ceil(ext/factor), inner = min(ext, factor)) and
/// fuse (product) relations to the loops. Reduce axes always keep their full domain.
///
/// This is the only implementation of that algorithm: `inferBound` reports its result on the
/// State, and the lowering (lower/lower_state.h) reads the symbolic form from `inferSymbolicBounds`,
/// so the loops a state prints with and the loops its kernel runs can never disagree.
///
/// Symbolic mins: the fixed loops are kept as variables while ranges are unioned and passed up, so
/// a tile read at i.0*8 .. i.0*8+7 has extent 8 whatever i.0 is (te's simplifier cancels the same
/// way). A root axis of an attached stage therefore starts at an expression of the enclosing loop
/// variables (`yy.0*4` for a `pad_temp` computed under a conv tile); `inferSymbolicBounds` gives
/// that expression, `inferBound` its value in the first iteration of the enclosing loops. Extents
/// that TVM leaves symbolic (rare: non-affine reads with non-divisible tiles) are reported as their
/// maximum, by both.

#include <vector>

#include "engine/schedule/loop_state.h"
#include "engine/te/expr.h"

namespace tb {

/// A copy of `state` whose every non-inlined stage has all iterator ranges defined (the min of a
/// range is its value in the first iteration of the enclosing loops). Throws tb::UserError if the
/// state is not concrete (a split length is undefined), if a stage is attached to a missing loop,
/// to a stage that is not computed, or in a cycle, or if a stage is attached at a loop nest that
/// does not enclose one of its consumers (TVM: "Invalid Schedule, cannot find the producer along
/// the loop nest specified by compute_at of consumer").
State inferBound(const State& state);

/// The bounds of one stage, indexed by its IterVarGraph vars (roots first: the op's spatial axes,
/// then its reduce axes; then the vars the split and fuse relations create).
struct StageBounds {
    /// Per var: the number of iterations (>= 1 on a valid state; a split's outer loop may overshoot
    /// the parent, see the guards of lower_state.h).
    std::vector<int64_t> extent;
    /// Per var: the min in the first iteration of the enclosing loops (what `inferBound` stores).
    std::vector<int64_t> min;
    /// Per root var: the min as an expression of the loop variables given to `inferSymbolicBounds`
    /// (an IntImm when it does not depend on them). Split and fuse outputs always start at 0.
    std::vector<te::Expr> rootMin;
};

/// The loop variables a lowering binds: `loopVars[s][j]` stands for loop j of stage s and counts
/// from the loop's min (it runs over [0, extent)). Empty for stages that emit no loops.
using LoopVars = std::vector<std::vector<te::Var>>;

/// The bounds of every stage of `state` (index = stage id; empty StageBounds for placeholders and
/// inlined stages), with region mins as expressions of `loopVars` (TVM: the Range map of
/// te::InferBound, whose mins ScheduleOps binds to the enclosing loop variables). Only loops of
/// extent > 1 that enclose an attached stage appear in the expressions. Reads the stages' iter-var
/// graphs, loops and attach map, never the loops' ranges, so a state whose ranges are stale can be
/// checked against it. Throws what `inferBound` throws; tb::InternalError if `loopVars` does not have one
/// variable per loop of every computed stage. Cost: about that of `inferBound` (some 10 us for a
/// resnet-18 conv2d state; the lowering calls it once per state).
std::vector<StageBounds> inferSymbolicBounds(const State& state, const LoopVars& loopVars);

}  // namespace tb
