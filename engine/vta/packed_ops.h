// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file packed_ops.h
/// \brief VTA's packed operators lowered to instruction + micro-op streams, and their int8
/// reference implementations.
///
/// What it is: the device side of TVM's VTA operator templates. TVM schedules `conv2d_packed`,
/// `dense_packed` and the ALU-only `add`/`multiply` with an AutoTVM config, lowers them through
/// its VTA passes (InjectDMAIntrin, FoldUopLoop, InjectALUIntrin, InjectVirtualThread, CoProcSync)
/// into host code that calls the VTA runtime, and that runtime builds the instruction stream at
/// run time. Here one function per operator does that whole path: it walks the loop nest the
/// schedule (vta_schedule.h) implies and issues the runtime calls through CommandBuilder, then
/// synchronizes on a Simulator. A plain-loop reference per operator computes the same int8
/// result, so the simulator's output can be compared bit for bit.
///
/// ## The loop nests (TVM's schedules, vta_conv2d.py / vta_dense.py / op.py)
/// conv2d_packed, per output tile of tile_co channel blocks x tile_h rows x tile_w columns (outer
/// loops batch, row tiles, channel tiles, column tiles):
/// - compute: GEMM reset of the tile's accumulators;
/// - for each of C/BI/tile_ci reduction steps: load: the input window (tile_ci channel blocks x
///   ((tile_h-1)*stride+KH) rows x ((tile_w-1)*stride+KW) columns, padding from the LOAD's pad
///   fields) and the weight tile (tile_co x tile_ci x KH x KW matrices); compute: one GEMM whose
///   micro-ops follow TVM's loop order inside the tensorized stage (ci, ow, kw, kh, co, oh), the
///   two outermost non-unit loops folded into the GEMM's iter_out/iter_in (FoldUopLoop) and the
///   rest unrolled into micro-ops;
/// - compute: the epilogue (EpilogueOp list) as ALU instructions over the tile, a bias tile
///   loaded into the accumulator buffer first (LOAD ACC);
/// - store: the tile, narrowed to int8.
/// group_conv2d_packed (vta_group_conv2d.py: the same schedule and knobs) is lowered by the same
/// code: the reduction runs over the C/groups/BI channel blocks of the tile's group only (the
/// kernel's second axis), the input window starts at the group's first input block, and the
/// weight tile is tile_co x tile_ci x KH x KW of the (O/BO, C/groups/BI, KH, KW) kernel. An
/// output-channel tile stays inside one group, except when a group has one output block
/// (depthwise-like, groups == O/BO): then output block c reads input blocks c * C/groups/BI + k,
/// affine in c, and the window holds tile_ci + (tile_co - 1) * C/groups/BI channel blocks (TVM's
/// bound box of that index), read with micro-op step C/groups/BI per output block.
/// dense_packed, per output tile of tile_b batch rows x tile_co blocks: for each batch row a GEMM
/// reset and C/BI/tile_ci steps of (load 1 x tile_ci input, tile_co x tile_ci weights; GEMM);
/// then the epilogue and one store. add/multiply: per tile of tile_co x tile_h x tile_w, load
/// both operands into the accumulator buffer (ACC, or ACC_8BIT for int8 operands), one ALU
/// ADD/MUL, the epilogue, a store. ALU loops are flattened where strides allow (InjectALUIntrin).
/// A per-channel rhs (AluWorkload::rhsBroadcast: graph_pack's packed constant (C/BO, 1, 1, B, BO),
/// topi broadcasting it over batch blocks, rows and columns) is loaded as tile_co accumulator
/// vectors and read with micro-op source stride 0 over rows and columns (1 over channel blocks),
/// as TVM's InjectALUIntrin finds the broadcast index; the per-channel constants of the epilogue
/// (AddChannel/MulChannel, e.g. a fused batch-norm shift after a scale) are loaded and read the
/// same way, after the operand tiles.
///
/// ## Virtual threads (oc_nthread, h_nthread)
/// With n = oc_nthread * h_nthread > 1, the channel-tile (or row-tile) loop is split by n and
/// each virtual thread gets its own copy of every SRAM tile (TVM's InjectVirtualThread for
/// `cthread` does not share buffers). The threads' statements are interleaved step by step
/// (thread 0's loads and GEMM of a reduction step, then thread 1's, ...), and the dependence
/// tokens are per buffer copy, so thread 1's loads run while thread 0 computes. The tokens follow
/// TVM's CoProcSync: a load waits (pop compute->load) for the GEMM that last read its copy, a
/// GEMM waits (pop load->compute) for its loads, a tile's first GEMM waits (pop store->compute)
/// for the store that last read its accumulators, a store waits (pop compute->store) for the
/// epilogue. The first n uses of each copy have nothing to wait for; the last tokens are popped
/// before the stream ends.
///
/// ## When a config cannot be instantiated (tb::UserError naming template, config and reason)
/// - a split of a vthread-split loop that does not divide by the thread count;
/// - SRAM: per-thread tiles times the thread count exceed the input, weight or accumulator
///   buffer (TVM's allocation bound check on the VTA scopes); the accumulator buffer holds the
///   output tile plus the bias tile (conv2d) or both operand tiles (add/multiply);
/// - a micro-op kernel larger than the micro-op buffer, or one writing an accumulator twice within
///   three consecutive micro-ops (TVM's runtime VerifyDep), e.g. a 3x3 conv2d tile of one row and
///   one channel block but several columns (columns and kernel columns fold into the GEMM's loops,
///   the three kernel rows unroll into micro-ops on one accumulator);
/// - a tile that is not one 2-D DMA (TVM's InjectDMAIntrin finds no 2-D pattern): a padded input
///   window spanning more than one channel block (for a grouped depthwise-like tile: tile_co > 1
///   with padding), or a (channels x rows x columns) tile of the
///   output or of an ALU operand whose rows are neither full nor single.
///
/// - group_conv2d_packed only: an output-channel tile that spans groups of more than one output
///   block (its input channel index is not affine over the tile).
///
/// ## Epilogue semantics (TVM's ALU and topi on int32)
/// SHR: arithmetic shift right (by a negative amount: left, wrapping); ADD/MUL: wrapping 32-bit; MIN/MAX; the final cast to int8
/// truncates (TVM's store narrows by truncation; after the usual clip to [0, 127] or
/// [-127, 127] it is exact).

#include <cstdint>
#include <string>
#include <vector>

#include "engine/vta/command_builder.h"
#include "engine/vta/simulator.h"
#include "engine/vta/vta_config.h"
#include "engine/vta/vta_schedule.h"

namespace tb::vta {

/// One elementwise step of the fused epilogue, applied in order to every int32 accumulator.
enum class EpilogueKind : uint8_t {
    ShrImm,   ///< x >> imm (arithmetic), TVM topi.right_shift by a constant; ALU SHR imm
    ShlImm,   ///< x << imm (wrapping), topi.left_shift by a constant; ALU SHR by -imm (TVM's
              ///< InjectALUIntrin turns shift_left into SHR with the negated amount)
    AddImm,   ///< x + imm (wrapping); ALU ADD imm
    MulImm,   ///< x * imm (wrapping); ALU MUL imm
    MinImm,   ///< min(x, imm); ALU MIN imm (clipA of TVM's my_clip)
    MaxImm,   ///< max(x, imm); ALU MAX imm (clipB)
    AddBias,  ///< x + bias[channel] (conv2d only; bias broadcast over rows and columns); ALU ADD
    /// x + channel[imm][channel] / x * channel[imm][channel] (add/multiply only): the imm-th
    /// per-channel constant of AluOperands::channel, broadcast over rows and columns; ALU ADD/MUL
    /// with a source, not an immediate
    AddChannel,
    MulChannel,
};
struct EpilogueOp {
    EpilogueKind kind = EpilogueKind::ShrImm;
    /// The immediate (signed 16-bit, the ALU's field); the constant's index for AddChannel /
    /// MulChannel; unused for AddBias
    int32_t imm = 0;
    friend bool operator==(const EpilogueOp&, const EpilogueOp&) = default;
};
/// TVM's conv2d benchmark epilogue (test_benchmark_topi_conv2d.py): >> 8, [+ bias], min 127, max 0.
std::vector<EpilogueOp> conv2dEpilogue(bool withBias);
/// Clip to [0, 127] (min 127, then max 0), preceded by >> shift when shift > 0: dense_packed's
/// epilogue with shift 8 (test_benchmark_topi_dense.py), add.vta/multiply.vta's with shift 0
/// (seed 004 / tune_alu_vta.py).
std::vector<EpilogueOp> clipEpilogue(int shift);

/// Host data of a conv2d, packed layouts (vta_schedule.h); `bias` empty when the epilogue has no
/// AddBias.
struct Conv2dOperands {
    std::vector<int8_t> data, kernel;
    std::vector<int32_t> bias;
};
/// Host data of a dense, packed layouts.
struct DenseOperands {
    std::vector<int8_t> data, weight;
};
/// Host data of add/multiply: operand values in the packed layout (int8 operands hold values in
/// [-128, 127]). `rhs` has the lhs's N*C*H*W values, or C*B values in (C/BO, B, BO) order when
/// the workload's rhsBroadcast is set (graph_pack's (C/BO, 1, 1, B, BO) constant). `channel`
/// holds the epilogue's per-channel constants (AddChannel/MulChannel imm = index), C*B values
/// each in the same order.
struct AluOperands {
    std::vector<int32_t> lhs, rhs;
    std::vector<std::vector<int32_t>> channel;
};

/// Random operands with TVM's test ranges: data and weights uniform over int8, bias in
/// [-2^14, 2^14) (test_benchmark_topi_conv2d.py); ALU operands over int8, or [-512, 512) for
/// int32 ones (so that a sum or a shifted product lands inside the clip range [0, 127] often).
/// Deterministic per seed.
Conv2dOperands randomConv2dOperands(const VtaConfig& cfg, const Conv2dWorkload& wl, bool withBias, uint32_t seed);
/// Operands of group_conv2d_packed: the kernel has O * C/groups * KH * KW values.
Conv2dOperands randomGroupConv2dOperands(const VtaConfig& cfg, const GroupConv2dWorkload& wl, bool withBias,
                                         uint32_t seed);
DenseOperands randomDenseOperands(const VtaConfig& cfg, const DenseWorkload& wl, uint32_t seed);
AluOperands randomAluOperands(const VtaConfig& cfg, const AluWorkload& wl, uint32_t seed);

/// SRAM the instantiated schedule uses, in buffer elements (all virtual threads together), and
/// the largest micro-op kernel.
struct SramUse {
    int64_t inp = 0, wgt = 0, acc = 0;
    int64_t maxKernelUops = 0;
    int threads = 1;  ///< virtual threads
};

/// Checks that `sched` instantiates for `wl` (see the file comment) and returns its SRAM use.
/// Throws tb::UserError naming the template, the config and the reason otherwise.
SramUse checkConv2dSchedule(const VtaConfig& cfg, const Conv2dWorkload& wl, const Conv2dSchedule& sched,
                            const std::vector<EpilogueOp>& epilogue);
/// As checkConv2dSchedule for group_conv2d_packed.vta (a Conv2dSchedule of groupConv2dConfigSpace).
SramUse checkGroupConv2dSchedule(const VtaConfig& cfg, const GroupConv2dWorkload& wl, const Conv2dSchedule& sched,
                                 const std::vector<EpilogueOp>& epilogue);
SramUse checkDenseSchedule(const VtaConfig& cfg, const DenseWorkload& wl, const DenseSchedule& sched,
                           const std::vector<EpilogueOp>& epilogue);
SramUse checkAluSchedule(const VtaConfig& cfg, const AluWorkload& wl, const AluSchedule& sched,
                         const std::vector<EpilogueOp>& epilogue);

/// The result of running one operator on the simulator.
struct PackedOpResult {
    std::vector<int8_t> output;  ///< packed output
    RunReport report;            ///< cycles, counters, per-instruction timeline of the run
    size_t instructions = 0;     ///< instructions of the stream (with the closing ones and FINISH)
};

/// Lowers conv2d_packed with `sched` and `epilogue`, runs it on `sim` and returns the packed int8
/// output. Each call allocates the operands, the output and a CommandBuilder's staging buffers
/// (2 x 4 MiB) in `sim`'s DRAM, which is never freed: use a fresh Simulator per run when running
/// many configs. The config is checked (checkConv2dSchedule) before anything is allocated or run.
/// Throws tb::UserError when the workload or operands are malformed (sizes named) or the config
/// does not instantiate.
PackedOpResult runConv2dPacked(Simulator& sim, const Conv2dWorkload& wl, const Conv2dSchedule& sched,
                               const std::vector<EpilogueOp>& epilogue, const Conv2dOperands& operands);
/// As runConv2dPacked for group_conv2d_packed.vta (operands: randomGroupConv2dOperands' sizes).
PackedOpResult runGroupConv2dPacked(Simulator& sim, const GroupConv2dWorkload& wl, const Conv2dSchedule& sched,
                                    const std::vector<EpilogueOp>& epilogue, const Conv2dOperands& operands);
/// As runConv2dPacked for dense_packed (AddBias is not supported: tb::UserError).
PackedOpResult runDensePacked(Simulator& sim, const DenseWorkload& wl, const DenseSchedule& sched,
                              const std::vector<EpilogueOp>& epilogue, const DenseOperands& operands);
/// As runConv2dPacked for add.vta / multiply.vta (AddBias is not supported; AddChannel/MulChannel
/// need their constant in operands.channel).
PackedOpResult runAluPacked(Simulator& sim, const AluWorkload& wl, const AluSchedule& sched,
                            const std::vector<EpilogueOp>& epilogue, const AluOperands& operands);

/// Plain-loop int8 references on the packed layouts: int32 accumulation (wrapping), then the
/// epilogue, then truncation to int8. Throw tb::UserError on malformed operands.
std::vector<int8_t> conv2dPackedReference(const VtaConfig& cfg, const Conv2dWorkload& wl,
                                          const std::vector<EpilogueOp>& epilogue, const Conv2dOperands& operands);
/// Output block c accumulates over input blocks [c / (O/BO/groups) * C/groups/BI, +C/groups/BI).
std::vector<int8_t> groupConv2dPackedReference(const VtaConfig& cfg, const GroupConv2dWorkload& wl,
                                               const std::vector<EpilogueOp>& epilogue, const Conv2dOperands& operands);
std::vector<int8_t> densePackedReference(const VtaConfig& cfg, const DenseWorkload& wl,
                                         const std::vector<EpilogueOp>& epilogue, const DenseOperands& operands);
std::vector<int8_t> aluPackedReference(const VtaConfig& cfg, const AluWorkload& wl,
                                       const std::vector<EpilogueOp>& epilogue, const AluOperands& operands);

}  // namespace tb::vta
