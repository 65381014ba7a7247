// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file vta_schedule.h
/// \brief The VTA packed operators' workloads, their AutoTVM schedule configs and config spaces.
///
/// What it is: the description side of TVM's VTA operator templates (apache/tvm
/// vta/python/vta/top/vta_conv2d.py, vta_dense.py, op.py, removed from TVM in 0.19): which packed
/// operator is computed on which shapes (the *workload*), and the knobs of its AutoTVM template
/// with their candidate values (the *config space*). packed_ops.h lowers a workload plus one point
/// of its space to a VTA instruction stream. The spaces are built with engine/autotvm/space.h, so
/// an index <-> config mapping exists exactly as TVM decodes it (first-defined knob = least
/// significant digit) and TopHub-style VTA records decode here; only the LLVM-free part of
/// autotvm/ (the tb::autotvm_space library) is linked, so tb::vta stays free of LLVM.
///
/// The templates and their knobs, in TVM's definition order (all splits `define_split(name, axis,
/// num_outputs=2)` with the default policy "factors": every divisor of the axis as inner factor,
/// ascending; entities `[-1, inner]`):
/// - `conv2d_packed.vta`: tile_b (batch blocks N/BATCH), tile_h (output rows), tile_w (output
///   columns), tile_ci (input channel blocks C/BLOCK_IN), tile_co (output channel blocks
///   O/BLOCK_OUT), oc_nthread [1, 2], h_nthread [1, 2]. TVM's schedule defines tile_b but never
///   applies it; so do we (the knob is in the space, the lowering ignores it).
/// - `dense_packed.vta`: tile_b (N/BATCH), tile_ci (C/BLOCK_IN), tile_co (O/BLOCK_OUT),
///   oc_nthread [1, 2].
/// - `add.vta` / `multiply.vta` (schedule_alu_packed): tile_co (channel blocks), tile_h (rows),
///   tile_w (columns); no virtual threads.
/// - `group_conv2d_packed.vta` (vta_group_conv2d.py): the knobs of conv2d_packed.vta in the same
///   order, tile_ci splitting the kernel's reduction axis C/groups/BLOCK_IN (a group's input
///   channel blocks), tile_co the output channel blocks O/BLOCK_OUT.
/// Knob values are the *inner* split factors, i.e. tile sizes: a conv2d output tile is tile_co
/// channel blocks x tile_h rows x tile_w columns.

#include <cstdint>
#include <string>

#include "engine/autotvm/space.h"
#include "engine/vta/vta_config.h"

namespace tb::vta {

/// A packed conv2d's shape: TVM's `Conv2DWorkload` namedtuple (test_benchmark_topi_conv2d.py),
/// channels and batch unpacked (multiples of BLOCK_IN/BLOCK_OUT/BATCH). Layouts (TVM's
/// NCHW{BATCH}n{BLOCK}c): data (N/B, C/BI, H, W, B, BI) int8, kernel (O/BO, C/BI, KH, KW, BO, BI)
/// int8, bias (N/B, O/BO, 1, 1, B, BO) int32, output (N/B, O/BO, OH, OW, B, BO) int8.
struct Conv2dWorkload {
    int batch = 1, height = 0, width = 0, inFilter = 0, outFilter = 0;
    int hkernel = 1, wkernel = 1, hpad = 0, wpad = 0, hstride = 1, wstride = 1;
    /// Output rows: (height + 2*hpad - hkernel) / hstride + 1.
    int outHeight() const { return (height + 2 * hpad - hkernel) / hstride + 1; }
    /// Output columns.
    int outWidth() const { return (width + 2 * wpad - wkernel) / wstride + 1; }
    /// Multiply-accumulates of the convolution: N * O * OH * OW * C * KH * KW.
    int64_t macs() const;
    /// Throws tb::UserError naming the field when a size is not positive, batch/channels are not
    /// multiples of BATCH/BLOCK, a padding is negative or not smaller than the kernel (a load would
    /// then hold only padding), or the output would be empty.
    void validate(const VtaConfig& cfg) const;
    /// "conv2d_packed 1x64x56x56 -> 64, 3x3 pad 1 stride 1".
    std::string str() const;
};

/// A packed grouped conv2d (TVM's group_conv2d_packed, vta_group_conv2d.py): the conv2d shape
/// plus `groups`; output channel block c reads input channel blocks
/// [c / (O/BO/groups) * (C/BI/groups), +C/BI/groups). Layouts: data (N/B, C/BI, H, W, B, BI) int8,
/// kernel (O/BO, C/groups/BI, KH, KW, BO, BI) int8, bias (N/B, O/BO, 1, 1, B, BO) int32, output as
/// conv2d's. groups == C/BI == O/BO is the packed depthwise convolution of mobilenet-style layers.
struct GroupConv2dWorkload : Conv2dWorkload {
    int groups = 1;
    /// Multiply-accumulates actually done: N * O * OH * OW * (C/groups) * KH * KW. (TVM's
    /// cfg.add_flop counts 2 * N * O * OH * OW * C * KH * KW, without the 1/groups, which would
    /// put a depthwise layer's GFLOPS above VTA's peak; the task's flop is 2 x these MACs.)
    int64_t macs() const;
    /// Conv2dWorkload::validate, then tb::UserError when groups is not positive, does not divide
    /// the input and output channels, or a group's input or output channels are not a multiple of
    /// BLOCK_IN / BLOCK_OUT (TVM asserts group * kshape[1] == ishape[1], kshape[0] % group == 0 on
    /// the packed shapes).
    void validate(const VtaConfig& cfg) const;
    /// "group_conv2d_packed 1x256x14x14 -> 256 groups 16, 3x3 pad 1 stride 1" (the groups follow
    /// the output channels).
    std::string str() const;
};

/// A packed dense: data (N/B, C/BI, B, BI) int8, weight (O/BO, C/BI, BO, BI) int8, output
/// (N/B, O/BO, B, BO) int8 (vta_dense.py; TVM's dense_packed takes no bias on VTA's path).
struct DenseWorkload {
    int batch = 1, inFeat = 0, outFeat = 0;
    int64_t macs() const { return int64_t(batch) * inFeat * outFeat; }
    /// Throws tb::UserError when a size is not positive or not a multiple of BATCH/BLOCK.
    void validate(const VtaConfig& cfg) const;
    std::string str() const;
};

/// The tensor operation of an ALU-only operator (op.py: add_packed, multiply_packed).
enum class AluOpKind { Add, Multiply };
/// "add.vta", "multiply.vta".
const char* aluTemplateName(AluOpKind kind);

/// An elementwise add/multiply of two packed tensors of one shape (N/B, C/BO, H, W, B, BO),
/// each int32 or int8 (an int8 operand is loaded with ACC_8BIT, sign-extended; TVM's intelfocl
/// path), output int8 (N/B, C/BO, H, W, B, BO). Seed 004 merges a scalar right-hand side into a
/// same-shaped tensor, so both operands always have the output's shape.
struct AluWorkload {
    AluOpKind op = AluOpKind::Add;
    int batch = 1, channels = 0, height = 0, width = 0;
    bool lhsInt8 = false, rhsInt8 = false;
    /// The rhs is a per-channel packed constant (C/BO, 1, 1, B, BO) broadcast over batch blocks,
    /// rows and columns (graph_pack's _pack_const; a batch-norm scale or shift in the network),
    /// not a tensor of the lhs's shape. The space is the same (tiles of the output).
    bool rhsBroadcast = false;
    /// Throws tb::UserError when a size is not positive or not a multiple of BATCH/BLOCK_OUT.
    void validate(const VtaConfig& cfg) const;
    std::string str() const;
};

/// One point of conv2d_packed.vta's space: the inner split factors and the virtual threads.
struct Conv2dSchedule {
    int tileB = 1, tileH = 1, tileW = 1, tileCi = 1, tileCo = 1;
    int ocNthread = 1, hNthread = 1;
    friend bool operator==(const Conv2dSchedule&, const Conv2dSchedule&) = default;
    /// Reads the knobs of a config of conv2dConfigSpace(). Throws tb::UserError naming a missing knob.
    static Conv2dSchedule fromConfig(const autotvm::ConfigEntity& config);
    /// "tile_b=1 tile_h=14 tile_w=14 tile_ci=1 tile_co=4 oc_nthread=2 h_nthread=1".
    std::string str() const;
};

/// One point of dense_packed.vta's space.
struct DenseSchedule {
    int tileB = 1, tileCi = 1, tileCo = 1, ocNthread = 1;
    friend bool operator==(const DenseSchedule&, const DenseSchedule&) = default;
    static DenseSchedule fromConfig(const autotvm::ConfigEntity& config);
    std::string str() const;
};

/// One point of add.vta / multiply.vta's space.
struct AluSchedule {
    int tileCo = 1, tileH = 1, tileW = 1;
    friend bool operator==(const AluSchedule&, const AluSchedule&) = default;
    static AluSchedule fromConfig(const autotvm::ConfigEntity& config);
    std::string str() const;
};

/// conv2d_packed.vta's space for `wl` (knob order and candidates as vta_conv2d.py). Throws
/// tb::UserError when the workload is invalid (Conv2dWorkload::validate).
autotvm::ConfigSpace conv2dConfigSpace(const Conv2dWorkload& wl, const VtaConfig& cfg);
/// group_conv2d_packed.vta's space for `wl` (vta_group_conv2d.py; the schedule is a
/// Conv2dSchedule). Throws tb::UserError when the workload is invalid.
autotvm::ConfigSpace groupConv2dConfigSpace(const GroupConv2dWorkload& wl, const VtaConfig& cfg);
/// dense_packed.vta's space for `wl` (vta_dense.py).
autotvm::ConfigSpace denseConfigSpace(const DenseWorkload& wl, const VtaConfig& cfg);
/// add.vta / multiply.vta's space for `wl` (op.py schedule_alu_packed).
autotvm::ConfigSpace aluConfigSpace(const AluWorkload& wl, const VtaConfig& cfg);

}  // namespace tb::vta
