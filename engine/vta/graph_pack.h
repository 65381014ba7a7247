// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file graph_pack.h
/// \brief TVM's vta.top.graph_pack: rewrites the VTA part of a quantized network into VTA's packed
/// layouts, so that its conv2d/add/multiply become the packed operators VTA runs.
///
/// Why: VTA's GEMM core works on BATCH x BLOCK tiles; TVM (vta/python/vta/top/graphpack.py, TVM
/// <= 0.18) packs the region between `start_name` and `stop_name` into NCHW{B}n{BLOCK}c. Facts
/// followed:
/// - the region starts after the first `start_name` op (its output is packed: reshape to
///   (N/B, B, C/BLOCK, BLOCK, H, W), transpose (0, 2, 4, 5, 1, 3)) and ends at the op right
///   before the first `stop_name` op in node order (TVM's A-normal-form order; that op's output is
///   unpacked: transpose (0, 4, 1, 5, 2, 3), reshape to its old shape);
/// - inside, every conv2d with out_dtype int32 gets data_layout "NCHW{B}n{BLOCK}c", kernel_layout
///   "OIHW{BLOCK}o{BLOCK}i", its weight padded to a multiple of BLOCK output channels (TVM's
///   _weight_shape_match, `channels` updated) and packed (O/BLOCK, I/BLOCK, KH, KW, BLOCK, BLOCK);
///   TVM emits reshape/transpose on the weight and FoldConstant folds them at build: here the
///   packed constant is written directly;
/// - add/multiply with a rank-3 (C, 1, 1) constant: the constant is padded to a multiple of BLOCK
///   (add only, TVM's _const_shape_match) and packed to (C/BLOCK, 1, 1, B, BLOCK) (reshape,
///   transpose, broadcast_to: _pack_const), also folded here;
/// - every other op is kept (element-wise ops broadcast over the packed shape; scalars stay).
/// WGT_WIDTH must divide 8; WGT_WIDTH < 8 (bitpack) is not supported (tb::UserError).

#include <string>

#include "engine/graph/graph.h"

namespace tb::vta {

/// graph_pack(expr, bfactor, cfactor, weight_bits, start_name, stop_name) on a realized graph
/// (graph::quantize output, every node with its "dtype" attr). Throws tb::UserError when the
/// start or stop op is missing, the channels at the start are not a multiple of `cfactor` (TVM's
/// assert), a packed conv's input channels are not, or weight_bits != 8.
graph::Graph graphPack(const graph::Graph& g, int bfactor, int cfactor, int weightBits,
                       const std::string& startName = "nn.max_pool2d",
                       const std::string& stopName = "nn.global_avg_pool2d");

/// True for a conv2d node graphPack packed (data_layout NCHW{B}n{BLOCK}c).
bool isPackedConv2d(const graph::Node& node);

}  // namespace tb::vta
