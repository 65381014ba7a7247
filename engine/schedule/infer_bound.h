// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file infer_bound.h
/// \brief Bound inference for a loop State: the extent of every loop once splits, fuses and
/// compute_at locations are known (TVM `ComputeDAG::InferBound`, which runs te::InferBound on the
/// replayed schedule).
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
/// Differences from TVM, by design: range mins that TVM keeps symbolic (a root loop of an
/// attached stage starts at an expression of the enclosing loop variables) are reported as their
/// value in the first iteration of the enclosing loops; extents that TVM leaves symbolic (rare:
/// non-affine reads with non-divisible tiles) are reported as their maximum.

#include "engine/schedule/loop_state.h"

namespace tb {

/// A copy of `state` whose every non-inlined stage has all iterator ranges defined. Throws
/// tb::UserError if the state is not concrete (a split length is undefined) or if a stage is
/// attached at a loop nest that does not enclose one of its consumers (TVM: "Invalid Schedule,
/// cannot find the producer along the loop nest specified by compute_at of consumer").
State inferBound(const State& state);

}  // namespace tb
