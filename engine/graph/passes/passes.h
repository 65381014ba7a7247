// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file passes.h
/// \brief Graph-to-graph rewrites: the part of TVM's Relay pipeline that decides which subgraphs
/// become tuning tasks (REFERENCE-ZOO §2.2), in the order `auto_scheduler.extract_tasks` runs them.
///
/// Task extraction must see the graph exactly as TVM's VM compiler sees it right before FuseOps,
/// otherwise the fused subgraphs, their DAG prints and so the workload keys differ from TVM's:
/// batch-norms become multiply/add (SimplifyInference), their scales disappear into convolution
/// weights (FoldScaleAxis), biases become broadcast adds (CanonicalizeOps), x86 rewrites some
/// convolutions (winograd for NHWC, NCHWc for NCHW) and expands broadcast constants to full rank
/// (AlterOpLayout), and constant subgraphs are evaluated (FoldConstant). Every pass takes a graph
/// and returns a new one (ids renumbered, unreachable nodes dropped); inputs keep their order.
/// Numerics are preserved up to float32 rounding (tests check this with the te interpreter).

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "engine/graph/graph.h"

namespace tb::graph {

/// Relay SimplifyInference (src/relay/transforms/simplify_inference.cc): `nn.batch_norm(x, g, b,
/// m, v)` -> `add(multiply(x, scale), shift)` with scale = 1/sqrt(v + eps) (x gamma if `scale`),
/// shift = -m*scale (+ beta if `center`), both shaped by ExpandBiasToMatchAxis ([C, 1, 1] for axis
/// 1 of a 4-D tensor, [C] for the last axis). With constant parameters the scale/shift constants
/// are computed directly in float32, in TVM's operation order; otherwise as ops. `nn.dropout` ->
/// identity.
Graph simplifyInference(const Graph& g);

/// Relay FoldConstant: every op whose inputs are all (float32) constants is evaluated (through
/// its te lowering and the reference interpreter, or direct float32 loops for broadcast
/// arithmetic and pure reshapes) and replaced by a constant. Opaque ops (dropout) are kept.
Graph foldConstant(const Graph& g);

/// Relay FoldScaleAxis (src/relay/transforms/fold_scale_axis.cc): BackwardFoldScaleAxis, then
/// ForwardFoldScaleAxis, then FoldConstant. Backward folds `multiply(conv(x, w), c)` (c varying
/// only along the conv's output-channel axis, possibly through relu/add, every intermediate used
/// once) into w; forward folds `multiply(x, c)` [-> add(., b)] [-> relu] -> conv into the conv
/// weight's input-channel axis (add becomes add(x, b/c)). Relu requires c >= 0. Knows nn.conv2d
/// (plain and depthwise) and nn.dense, as TVM's.
Graph foldScaleAxis(const Graph& g);
/// The two halves alone (no FoldConstant afterwards), for tests.
Graph backwardFoldScaleAxis(const Graph& g);
Graph forwardFoldScaleAxis(const Graph& g);

/// Relay CanonicalizeOps: `nn.bias_add(x, b, axis)` -> `add(x, expand_dims(b))` (ExpandBiasToMatchAxis).
Graph canonicalizeOps(const Graph& g);

/// Which of TVM's op-strategy families lowers the network (TVM dispatches its generic functions on
/// the first target key that has a registration). It decides the winograd rules and the NCHW
/// rewrites below, and how task extraction lowers convolutions and concatenates.
enum class OpStrategy {
    X86,   ///< `llvm` targets (strategy/x86.py, topi/x86/conv2d_alter_op.py)
    Cuda,  ///< `cuda` (strategy/cuda.py, topi/cuda/conv2d_alter_op.py)
    Mali,  ///< targets with the key `mali`, i.e. `opencl -device=mali` (strategy/mali.py, topi/mali/conv2d.py)
    /// Other OpenCL targets (keys `opencl,gpu`): the cuda strategies registered for the key `gpu`,
    /// but the cuda AlterOpLayout does nothing for them (it returns early for kinds other than
    /// cuda/vulkan/rocm), so winograd convolutions keep their weight transform inside the task.
    GpuGeneric,
};

/// Target facts AlterOpLayout needs.
struct AlterLayoutOptions {
    /// The strategy family of the target (alterOptionsForTarget).
    OpStrategy strategy = OpStrategy::X86;
    /// fp32 SIMD lanes: 8 for AVX2 (`-mcpu=core-avx2`), 16 for AVX-512; the NCHWc block is the
    /// largest divisor of the channel count <= this (topi/x86/conv2d.py fallback config).
    int simdLanes = 8;
    /// Relay `relay.backend.use_auto_scheduler`: enables the NHWC winograd rewrite.
    bool autoScheduler = true;
    /// false: NHWC 3x3 convolutions stay direct `nn.conv2d` even where TVM picks winograd (not a
    /// TVM option: TVM always takes the higher-plevel winograd; this lets the two be compared, and
    /// the task list then differs from TVM's).
    bool winograd = true;
    /// Per-convolution override of `winograd`: called with the index of each convolution that TVM's
    /// rule would rewrite to winograd (0, 1, ... in the order the pass meets them, topological),
    /// true keeps the rewrite, false leaves that one a direct nn.conv2d. build() sets it from a
    /// log's records (runtime/build_module.h: whichever of the two tasks ran faster). Empty: the
    /// rule for all.
    std::function<bool(int winogradIndex)> winogradAt;
    /// AutoTVM dispatch (TVM's `_alter_conv2d_layout` asks `DispatchContext.current` for the
    /// conv2d_NCHWc.x86 config of each NCHW conv and blocks by its tile_ic / tile_oc): given an
    /// NCHW, OIHW, groups-1 conv2d node and its data (NCHW) and kernel (OIHW) shapes, the
    /// (ic_bn, oc_bn) to block with, or nullopt for the fallback blocking below. Empty: fallback
    /// blocking for every conv (what TVM does without AutoTVM records).
    std::function<std::optional<std::pair<int64_t, int64_t>>(const Node& conv, const std::vector<int64_t>& data,
                                                            const std::vector<int64_t>& kernel)>
        nchwcBlocks;
    /// The arm_cpu implementation of a conv: which template TVM's select_implementation picks
    /// and its packing factor (the config's tile_co, or tile_k for winograd, inner factor).
    struct ArmCpuConv {
        bool winograd = false;
        int64_t block = 1;
        /// Winograd's output tile size m (arm_cpu: 4; mali: _pick_tile_size, 4 if H % 4 == 0 else 2).
        int64_t tileSize = 4;
    };
    /// AutoTVM dispatch on an arm_cpu target (TVM python/tvm/topi/arm_cpu/conv2d_alter_op.py
    /// `_alter_conv2d_layout`) or a mali one (python/tvm/topi/mali/conv2d.py `_alter_conv2d_layout`,
    /// the same rewrites with the Mali templates' factors and tile size). When set, NCHW convs are never NCHWc-blocked; an NCHW, OIHW,
    /// groups-1, float32 conv2d for which this returns a choice becomes
    ///   - conv2d_nchw_spatial_pack: `nn.conv2d(x, layout_transform(w, OIHW, OIHW{VC}o),
    ///     kernel_layout=OIHW{VC}o)`;
    ///   - conv2d_nchw_winograd: `nn.contrib_conv2d_winograd_without_weight_transform(x,
    ///     transpose(reshape(nn.contrib_conv2d_winograd_weight_transform(w, tile_size=m),
    ///     (m+2, m+2, CO/VC, VC, CI)), [0, 1, 2, 4, 3]), tile_size=m, channels=CO)` (NCHW; m =
    ///     ArmCpuConv::tileSize);
    /// and stays as it is for nullopt (depthwise convs always do).
    std::function<std::optional<ArmCpuConv>(const Node& conv, const std::vector<int64_t>& data,
                                            const std::vector<int64_t>& kernel)>
        armCpuConv;
};

/// Relay AlterOpLayout + SimplifyExprPostAlterOp (src/relay/transforms/alter_op_layout.cc and the
/// target's `_alter_conv2d_layout`), REFERENCE-ZOO §2.2-7:
/// - NHWC conv2d (kernel HWIO), float32, groups 1, 3x3, stride 1, dilation 1, auto-scheduler on,
///   where the target's strategy picks winograd (x86: 64 < CO < 512, python/tvm/topi/x86/
///   conv2d_alter_op.py; cuda and mali: every such conv, strategy/cuda.py judge_winograd and
///   strategy/mali.py) -> `nn.contrib_conv2d_winograd_without_weight_transform(x,
///   nn.contrib_conv2d_winograd_weight_transform(transpose(w, [3, 2, 0, 1]), tile_size=m),
///   tile_size=m, channels=CO)` with m = 4 on x86, on cuda 4 if H % 8 == 0 else 2
///   (topi/cuda/conv2d_winograd.py _infer_tile_size), on mali 4 if H % 4 == 0 else 2
///   (topi/mali/conv2d.py _pick_tile_size); GpuGeneric targets are left alone;
/// - x86 only: NCHW conv2d (groups 1, or depthwise) -> `nn.contrib_conv2d_NCHWc` /
///   `nn.contrib_depthwise_conv2d_NCHWc` with the fallback blocking, `layout_transform`s around
///   them, and the element-wise, broadcast and pooling ops in between kept in the blocked layout
///   (the GPU strategies' NCHW templates fall back to no rewrite);
/// - every broadcast binary op whose lower-rank operand meets a tensor with a known layout gets
///   that operand expanded to full rank (`expand_dims(axis 0)`): [C] -> [1, 1, 1, C].
/// Run FoldConstant afterwards (the pipeline does) to fold the weight rewrites.
Graph alterOpLayout(const Graph& g, const AlterLayoutOptions& options = {});

/// Relay ConvertLayout({"nn.conv2d": ["NHWC", "default"]}) for NCHW models: every NCHW conv2d
/// becomes NHWC (kernel HWIO, or HWOI for depthwise) with `layout_transform`s inserted at the
/// boundary, and the element-wise / broadcast / pooling / concatenate ops between convs follow the
/// new layout (their constants and axes are transposed), so that only the graph inputs and the
/// points where a layout-sensitive op without NHWC support reads a converted tensor get a transform.
Graph convertLayout(const Graph& g, const std::string& desiredLayout = "NHWC");

/// The pipeline of `auto_scheduler.extract_tasks` up to FuseOps (REFERENCE-ZOO §2.2), for the
/// target of `options` (the same passes for every target; AlterOpLayout differs):
/// SimplifyInference, FoldConstant, FoldScaleAxis, CanonicalizeOps, AlterOpLayout, FoldConstant.
Graph optimizeForTasks(const Graph& g, const AlterLayoutOptions& options = {});

}  // namespace tb::graph
