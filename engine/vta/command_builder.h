// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file command_builder.h
/// \brief Assembles VTA instruction and micro-op streams: the analogue of TVM's VTA runtime API.
///
/// TVM does not compile VTA programs ahead of time: the generated host code calls the VTA
/// runtime (apache/tvm vta/runtime/runtime.cc), which builds the instruction and micro-op queues
/// at run time and hands them to the device on VTASynchronize. This class is that runtime for
/// our simulator, and is what the packed operators' lowering will emit calls to:
/// | TVM runtime call | here |
/// |---|---|
/// | VTALoadBuffer2D | loadBuffer2D |
/// | VTAStoreBuffer2D | storeBuffer2D |
/// | VTAUopLoopBegin / VTAUopLoopEnd / VTAUopPush | UopKernel::loopBegin / loopEnd / push |
/// | VTAPushGEMMOp / VTAPushALUOp | pushGemmOp / pushAluOp |
/// | VTADepPush / VTADepPop | depPush / depPop |
/// | VTASynchronize | synchronize |
///
/// Dependence tokens (TVM's semantics): stages are TVM's queue ids, load = 1, compute = 2,
/// store = 3. depPop(from, to) makes the next instruction created on stage `to` wait for a token
/// from `from` (pop_prev when from < to, else pop_next); a second pending pop of the same kind
/// is first committed as a no-op. depPush(from, to) commits `from`'s pending pops, then sets the
/// push flag on the stream's last instruction if it runs on `from` and does not push that way
/// yet, else appends a no-op (LOAD/STORE with x_size 0) on `from` that pushes. Load and store are
/// never connected directly. synchronize() pushes store->compute and load->compute, makes the
/// compute stage pop both (so everything before has finished), appends FINISH, writes the
/// micro-ops and the 128-bit instructions to DRAM and runs the device (Simulator::runFromDram).
///
/// Micro-op kernels are cached in the uop SRAM as TVM's UopQueue does, a ring: a kernel equal to
/// one still resident (same micro-ops, loops, mode and ALU fields; TVM keys them by their call
/// site) is not loaded again; a new one is placed after the last and loaded with a LOAD UOP on the
/// compute stage, or at 0 when it does not fit there, and the resident kernels it overwrites are
/// forgotten. The cache does not survive synchronize() (TVM resets it).
/// Like TVM's runtime, the builder synchronizes by itself when the instruction or micro-op
/// staging buffer (TVM's VTA_MAX_XFER, 4 MiB each) would overflow; the reports of such runs are
/// added into the next synchronize()'s report.

#include <cstdint>
#include <vector>

#include "engine/vta/isa.h"
#include "engine/vta/simulator.h"

namespace tb::vta {

/// TVM's pipeline stage / task queue ids (runtime.cc PipelineStage, environment.py QID_*).
enum Stage : int { kLoadStage = 1, kComputeStage = 2, kStoreStage = 3 };

/// One micro-op kernel being recorded (TVM's UopKernel): up to two loops, then the micro-ops.
/// All micro-ops of a kernel share the mode (GEMM or ALU), the reset flag and, for ALU, the
/// opcode and immediate, as TVM checks.
class UopKernel {
public:
    enum class Mode : uint8_t { Gemm = 0, Alu = 1 };  ///< TVM's `mode` argument of VTAUopPush
    struct Loop {
        uint32_t extent = 1;
        uint32_t dstFactor = 0;  ///< accumulator index step
        uint32_t srcFactor = 0;  ///< input (GEMM) / accumulator source (ALU) index step
        uint32_t wgtFactor = 0;  ///< weight index step (GEMM)
        friend bool operator==(const Loop&, const Loop&) = default;
    };

    /// VTAUopLoopBegin: opens a loop level (outer first). At most two, and only before the first
    /// push; throws tb::UserError otherwise.
    void loopBegin(uint32_t extent, uint32_t dstFactor, uint32_t srcFactor, uint32_t wgtFactor);
    /// VTAUopLoopEnd.
    void loopEnd();
    /// VTAUopPush: appends one micro-op (accumulator index `dst`, input/source index `src`,
    /// weight index `wgt`). Throws tb::UserError when mode, reset, opcode or immediate differ from
    /// the kernel's earlier micro-ops, or when `dst` repeats one of the two previous micro-ops'
    /// (TVM's VerifyDep: the accumulator pipeline cannot write one index in consecutive cycles).
    void push(Mode mode, bool resetOut, uint32_t dst, uint32_t src, uint32_t wgt, AluOpcode opcode = AluOpcode::Min,
              bool useImm = false, int32_t imm = 0);
    /// GEMM micro-op: acc[dst] += inp[src] x wgt[wgt]^T (or acc[dst] = 0 with `reset`).
    void pushGemm(uint32_t dst, uint32_t src, uint32_t wgt, bool reset = false) { push(Mode::Gemm, reset, dst, src, wgt); }
    /// ALU micro-op: acc[dst] = op(acc[dst], useImm ? imm : acc[src]).
    void pushAlu(AluOpcode op, uint32_t dst, uint32_t src, bool useImm = false, int32_t imm = 0) {
        push(Mode::Alu, false, dst, src, 0, op, useImm, imm);
    }

    // The recorded kernel: mode, reset flag and ALU fields are those of the first micro-op.
    Mode mode() const { return m_mode; }
    bool resetOut() const { return m_reset; }
    AluOpcode opcode() const { return m_opcode; }
    bool useImm() const { return m_useImm; }
    int32_t imm() const { return m_imm; }
    const std::vector<Loop>& loops() const { return m_loops; }
    const std::vector<Uop>& uops() const { return m_uops; }
    friend bool operator==(const UopKernel&, const UopKernel&) = default;

private:
    bool m_started = false;
    Mode m_mode = Mode::Gemm;
    bool m_reset = false;
    AluOpcode m_opcode = AluOpcode::Min;
    bool m_useImm = false;
    int32_t m_imm = 0;
    int m_openLoops = 0;
    std::vector<Loop> m_loops;
    std::vector<Uop> m_uops;
};

/// Builds instruction streams for one Simulator and runs them on synchronize().
class CommandBuilder {
public:
    static constexpr uint32_t kMaxXferBytes = 1u << 22;  ///< TVM's VTA_MAX_XFER

    /// Allocates the instruction and micro-op staging buffers in `sim`'s DRAM.
    explicit CommandBuilder(Simulator& sim);

    /// VTALoadBuffer2D: loads `ySize` rows of `xSize` elements, rows `xStride` elements apart,
    /// starting `srcElemOffset` elements after the DRAM buffer at byte address `srcAddr`, into
    /// SRAM element `dstSramIndex` of `dstMemoryType` (INP, WGT on the load stage; ACC, ACC_8BIT,
    /// UOP on the compute stage), with zero padding. Throws tb::UserError when `srcAddr` is not a
    /// multiple of the element size or a value does not fit its instruction field.
    void loadBuffer2D(uint32_t srcAddr, uint32_t srcElemOffset, uint32_t xSize, uint32_t ySize, uint32_t xStride,
                      uint32_t xPadBefore, uint32_t yPadBefore, uint32_t xPadAfter, uint32_t yPadAfter,
                      uint32_t dstSramIndex, MemId dstMemoryType);
    /// VTAStoreBuffer2D: stores `ySize` x `xSize` accumulator vectors from SRAM element
    /// `srcSramIndex` (memory type OUT) to rows `xStride` output elements apart, starting
    /// `dstElemOffset` output elements after the DRAM buffer at byte address `dstAddr`.
    void storeBuffer2D(uint32_t srcSramIndex, MemId srcMemoryType, uint32_t dstAddr, uint32_t dstElemOffset,
                       uint32_t xSize, uint32_t ySize, uint32_t xStride);
    /// VTAPushGEMMOp: loads the kernel's micro-ops unless resident, then a GEMM over them with
    /// the kernel's loops (missing levels have extent 1, factors 0). Throws tb::UserError when the
    /// kernel is empty, is an ALU kernel, or has more micro-ops than the uop buffer.
    void pushGemmOp(const UopKernel& kernel);
    /// VTAPushALUOp: as pushGemmOp for an ALU kernel (one loop is the inner loop, as TVM).
    void pushAluOp(const UopKernel& kernel);
    /// VTADepPush(from, to), stages 1..3, |from - to| == 1; throws tb::UserError otherwise.
    void depPush(int fromStage, int toStage);
    /// VTADepPop(from, to), stages 1..3, |from - to| == 1; throws tb::UserError otherwise.
    void depPop(int fromStage, int toStage);
    /// VTASynchronize: closes the stream (see the file comment), runs it, and returns the report
    /// (plus those of automatic synchronisations since the last call). An empty stream still
    /// runs its closing no-ops and FINISH.
    RunReport synchronize();

    /// The instructions recorded since the last synchronize (no closing dependences or FINISH).
    const std::vector<Instruction>& instructions() const { return m_insns; }
    /// The micro-ops staged for loading since the last synchronize.
    const std::vector<Uop>& stagedUops() const { return m_uops; }
    /// The stream synchronize() would run, without running it (for disassembly and tests).
    std::vector<Instruction> closedStream() const;

private:
    struct Resident {
        UopKernel kernel;
        uint32_t sramBegin = 0;
        uint32_t sramEnd = 0;
    };
    Instruction& create(int stage);
    void append(int stage, const Instruction& insn);  // with the stage's pending pops
    void checkKernel(const UopKernel& kernel, UopKernel::Mode mode, const char* call) const;
    void pushKernelOp(const UopKernel& kernel, UopKernel::Mode mode, const char* call);
    void pushNoop(int stage, bool pushPrev, bool pushNext, bool popPrev, bool popNext);
    void commitPendingPop(int stage);
    void closeStream();
    std::pair<uint32_t, uint32_t> placeKernel(const UopKernel& kernel);
    void checkOverflow();
    static void checkStages(int from, int to, const char* call);

    Simulator& m_sim;
    uint32_t m_insnAddr = 0;  // DRAM staging buffers
    uint32_t m_uopAddr = 0;
    std::vector<Instruction> m_insns;
    std::vector<Uop> m_uops;
    std::vector<Resident> m_resident;
    uint32_t m_sramEnd = 0;
    bool m_pendingPopPrev[4] = {false, false, false, false};
    bool m_pendingPopNext[4] = {false, false, false, false};
    RunReport m_carry;  // reports of automatic synchronisations
    bool m_hasCarry = false;
    bool m_closing = false;  ///< closeStream() is appending its closing instructions (no overflow flush then)
};

/// Adds `b` into `a`: cycles, busy cycles, instruction counts, MACs and counters are summed (the
/// runs are sequential), timelines concatenated with `b`'s cycles shifted by `a`'s.
void accumulate(RunReport& a, const RunReport& b);

}  // namespace tb::vta
