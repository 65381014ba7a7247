// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file lower_state.h
/// \brief Lowering of an auto-scheduler loop State to the loop IR: what TVM does when it applies
/// a state's steps to a te schedule and calls `tvm.lower` (te ScheduleOps / MakePipeline,
/// compute_op.cc MakeComputeStmt, op_utils.cc MakeLoopNest, message_passing.cc PassUpIndex /
/// MakeBoundCheck, schedule_ops.cc InjectAttach / InjectInline).
///
/// Where it sits: the search (search/) edits States and ranks them with the cost model, which reads
/// per-store features of the lowered IR (cost_model/feature.h); the builder (measure/) compiles the
/// lowered IR of the states it measures (codegen/). Both need this one function, and the search
/// calls it thousands of times per round, so it works directly on the State (no te schedule is
/// built) and only allocates the IR it returns.
///
/// What the result looks like, stage by stage (stage order; placeholders and inlined stages emit
/// nothing):
///   - A stage computed at the root emits its loop nest at the top level: one `For` per iterator,
///     outermost first, with the iterator's extent (from bound inference) and a kind from its
///     annotation (parallel / vectorized / unrolled, else serial). Every loop runs from 0; the
///     stage's original axes are recovered through its IterVarGraph (split: parent = outer *
///     inner_extent + inner; fuse: outer = fused / inner_extent, inner = fused % inner_extent; an
///     unsplit axis adds the min of its region). Loops of extent 1 are not emitted (their variable
///     is 0, as TVM binds it to its min), except blockIdx / threadIdx loops in lowerStateThreaded
///     (a launch dimension of 1: TVM keeps the thread_extent attribute). Loop variables carry the
///     iterator names (`i.0`, `i.0@j.0@`); a name already used by an enclosing stage gets a `_1`, `_2` suffix (consumers
///     are named first), the re-created spatial loops of a reduction's init end in `.init`.
///   - A stage attached by compute_at is emitted at the start of the body of its target loop (before
///     the consumer's own statements; several attached stages in stage order). It computes only the
///     region its consumers read inside that loop: its extents are bound inference's, and the region
///     starts at a *symbolic* min, an expression of the enclosing loop variables (e.g. `yy.0*4` for a
///     `pad_temp` under a conv tile). Both come from `inferSymbolicBounds` (infer_bound.h), the
///     bound inference that also gave the state its ranges, of which the min is the first-iteration
///     value.
///   - Inlined stages are substituted into their readers' bodies.
///   - A reduction stores the combiner's identity (or the Reduce's own init) once per output point
///     before its outermost reduce loop, in a copy of the spatial loops found below that point
///     (TVM's `.init` loops), then the update `C = C + ...` inside all loops; a Reduce condition
///     becomes an IfThenElse around the update. In lowerStateThreaded, a reduce loop bound to
///     threadIdx (a cross-thread reduction) becomes an allreduce across those threads instead
///     (lower_gpu.h; TVM LowerThreadAllreduce).
///   - Guards: when a split does not divide its loop, or a stage computes a region that is not its
///     whole domain, the store is wrapped in an IfThenElse (TVM's MakeBoundCheck predicates), so no
///     loop ever touches memory outside its buffers; guards the simplifier proves true disappear.
///   - Buffers: the DAG's io tensors are the function's arguments (`dag.tensors()` order; an output
///     whose op was rewritten by cache_write/rfactor is still written through the argument). Every
///     other computed stage (intermediates such as `pad_temp`, `.local` cache stages, `.rf` stages)
///     gets an Allocate of exactly its bound-inferred region, indexed relative to the region's min:
///     Local inside its attach loop when it is attached, Global around the whole body at the root.
///   - `auto_unroll_max_step$N` (a PR step) becomes `pragma_auto_unroll_max_step = N` and
///     `pragma_unroll_explicit = 1` attributes around the stage's outermost loop (N = 0: none).
/// The result is run through the simplifier (simplify.h).
///
/// Cost and threads: one call is a few hundred microseconds for a conv2d state (about half of it in
/// the simplifier); calls share no state, so the cost model and the builder may lower from many
/// threads at once.
///
/// Differences from TVM, by design: `tir.likely` is not emitted (guards are plain conditions, and
/// the `likely` that rfactor puts into a reduction's condition is dropped), because codegen does not
/// know the intrinsic; storage_align (SA, GPU only) is ignored: buffers are dense row-major.

#include <string>

#include "engine/lower/loop_ir.h"
#include "engine/schedule/loop_state.h"
#include "engine/te/compute_dag.h"

namespace tb::lower {

/// Lower `state` (its steps applied to `dag`, then `inferBound`) to a kernel named `name` whose
/// arguments are `dag.tensors()` in order (see the file comment for the shape of the result).
///
/// Errors:
///   - tb::UserError when the state cannot be lowered for a CPU: a loop is bound to a GPU thread
///     axis (vthread, blockIdx.*, threadIdx.*) or tensorized; a loop has no range (the state did not
///     go through inferBound); a stage is attached to an inlined stage, to a missing loop, in a
///     cycle, or outside the loop nest of one of its consumers; an inlined stage is a reduction;
///     the state was not made from `dag` (different placeholders or stage count).
///   - tb::InternalError when bound inference on the state's steps gives other ranges than the
///     state's (a state whose ranges are stale, or a bug), or for multi-output compute ops.
LoweredFunc lowerState(const te::ComputeDAG& dag, const State& state, const std::string& name = "default_function");

/// The same lowering for a GPU (the first half of lower_gpu.h's `lowerStateGpu`, which most callers
/// want instead): loops bound to vthread / blockIdx.* / threadIdx.* become ForKind::ThreadBinding
/// loops tagged with the axis, and an attached stage's buffer gets TVM's storage scope (a `.shared`
/// stage Shared, a `.local` stage Local, otherwise Shared inside blockIdx loops only, Local inside a
/// threadIdx or vthread loop, Global outside every thread loop; root stages Global). The region a
/// stage computes is bound inference's, whose relaxation follows the scope (infer_bound.h: a shared
/// stage covers every thread and vthread of its block). No kernel split, and no barriers except
/// those of a cross-thread reduction's allreduce (a reduce loop bound to threadIdx, lower_gpu.h).
/// Errors: as lowerState, except that GPU bindings are accepted (tensorize is still a UserError; a
/// reduce loop bound to blockIdx / vthread, or a cross-thread reduction with a spatial loop of
/// extent > 1 inside its reduce loops, is one).
LoweredFunc lowerStateThreaded(const te::ComputeDAG& dag, const State& state,
                               const std::string& name = "default_function");

}  // namespace tb::lower
