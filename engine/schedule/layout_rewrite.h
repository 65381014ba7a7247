// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file layout_rewrite.h
/// \brief Ansor's weight layout rewrite (TVM `ComputeDAG::RewriteLayout`, compute_dag.cc, and
/// `LayoutRewriteOption`): a tuned conv2d / dense reads its weight in the order its tiled loops
/// walk it, instead of the weight's original layout.
///
/// Why it exists: a multi-level tiled conv reads a weight tile per inner loop nest; in the original
/// layout (HWIO, or [N, K] for dense) consecutive reads of the tile are far apart, so the kernel
/// streams cache lines it uses a few floats of. Weights are constants of the network, so the
/// network compiler can store them once, at compile time, in exactly the order the schedule reads
/// them; the kernel then reads them contiguously. The paper credits it with about 40% on ResNet-50.
///
/// Which tensors: a compute op marks the placeholders whose layout may change
/// (`layout_free_placeholders`: conv2d_nhwc's kernel, dense / matmul / batch_matmul's weight, the
/// pre-transformed winograd kernel of bgemm). Every index of such a placeholder's load is a plain
/// axis variable of the op (or the constant 0).
///
/// TVM's rule, which this file follows: take the stage that reads the placeholder directly (after
/// the state's steps: the `.local` stage of a cache_write), its loops in loop order with their
/// extents after bound inference; when the stage is attached (compute_at), first the loops of its
/// target stage up to and including the attach loop, each named like the stage's own loop at the
/// same position (they tile the same output axes); a fused loop counts as the loops it fused. Of
/// those loops, the ones whose original axis indexes the placeholder, in order, with their
/// extents, are the new shape (a loop left without a range by bound inference counts as 1). The
/// read `W[ry, rx, rc, ff]` becomes `W'[..., floormod(floordiv(ff, d), e), ...]`: every occurrence
/// of an axis takes its digit of a mixed-radix decomposition of the original index, the innermost
/// occurrence the least significant. The new shape's product can exceed the original's (a split
/// that does not divide); the transformed weight is 0 there.
///
/// The options (TVM's numbering, stored in every record's task): 0 NoRewrite; 1
/// InsertTransformStage (a layout_transform stage inside the kernel: what TVM tunes a standalone
/// task with; not implemented here); 2 RewriteForPreTransformed (the kernel takes the weight already
/// in the new layout: what TVM tunes network tasks with on CPU and what its relay build applies).

#include <string>
#include <vector>

#include "engine/schedule/loop_state.h"
#include "engine/schedule/transform_step.h"

namespace tb {

/// Attribute set (to 1) on the placeholder that replaces a rewritten weight: it is no longer among
/// its reader's layout_free_placeholders (as in TVM), but it is still a weight (lower_dag.h
/// weightArgIndices).
inline constexpr const char* kLayoutRewrittenAttr = "layout_rewritten";

/// TVM's LayoutRewriteOption (the integer in a record's task, `i[0][4]`).
enum class LayoutRewriteOption : int { NoRewrite = 0, InsertTransformStage = 1, RewriteForPreTransformed = 2 };

/// The layout change of one placeholder, as TVM's layout strings say it: the original
/// `3ry3rx64rc64ff` and the new `1ff3ry3rx8rc8ff8rc...` (extent then axis name, in order).
struct PlaceholderLayout {
    std::string placeholder;              ///< the placeholder's name (`p1`, `kernel_pack`)
    int tensorIndex = -1;                 ///< its index in ComputeDAG::tensors() (the kernel argument)
    std::vector<int64_t> origShape;       ///< the placeholder's shape
    std::vector<std::string> origAxes;    ///< the axis indexing each dimension (`IntImm` for a constant 0)
    std::vector<int64_t> newShape;        ///< the rewritten shape (one dimension per loop, see the file comment)
    std::vector<std::string> newAxes;     ///< the original axis of each new dimension
    std::string origLayout() const;       ///< TVM's `ori_placeholder_layout` string
    std::string newLayout() const;        ///< TVM's `new_placeholder_layout` string
};

/// A DAG with rewritten placeholders and the state replayed on it.
struct LayoutRewrite {
    te::ComputeDAG dag;  ///< the DAG the kernel is lowered from (the input DAG when nothing changed)
    State state;         ///< the steps replayed on `dag`, bound-inferred (ready for lower::lowerState)
    /// One entry per rewritten placeholder; empty when the DAG has no layout-free placeholder, the
    /// steps are empty (TVM rewrites only a scheduled DAG), or the option is NoRewrite.
    std::vector<PlaceholderLayout> layouts;
    bool rewritten() const { return !layouts.empty(); }
};

/// True when some compute op of `dag` marks a layout-free placeholder (TVM HasLayoutFreeTensors).
bool hasLayoutFreePlaceholders(const te::ComputeDAG& dag);

/// TVM `ComputeDAG::RewriteLayout` for a state: `state` (its steps applied to `dag`, bound-inferred,
/// as lower::lowerState takes it) with the layout rewrite `option`. With RewriteForPreTransformed
/// every layout-free placeholder that a stage reads directly becomes a placeholder of the new shape
/// (same name and position in tensors()), the op that reads it reads the new layout (the file
/// comment), and the state's steps are replayed on the new DAG and bound-inferred. The rewritten op
/// no longer lists a layout-free placeholder (its layout is fixed now). With NoRewrite, for a DAG
/// without layout-free placeholders and for a state without steps, the result is `dag` and `state`.
/// Errors: tb::UserError for InsertTransformStage (not implemented here) and for a placeholder whose
/// reads TVM's rule cannot rewrite (an index that is not an axis or 0, two reads at different
/// indices, two reading ops, a loop that mixes two axes); each message names the placeholder.
LayoutRewrite rewriteLayout(const te::ComputeDAG& dag, const State& state, LayoutRewriteOption option);

/// The contents of a placeholder in its new layout, from its contents in the original layout
/// (row-major float32, origShape; TVM's `auto_scheduler_layout_transform` op, which the network
/// compiler folds into the constant): element (n_0, ..., n_k) of the result is the original element
/// whose index along each axis is the mixed-radix number of that axis' digits n_j; 0 where that
/// index falls outside the original shape. Throws tb::UserError when `orig` has the wrong size.
std::vector<float> transformLayout(const PlaceholderLayout& layout, const std::vector<float>& orig);

}  // namespace tb
