// SPDX-License-Identifier: Apache-2.0
#include "engine/vta/command_builder.h"

#include <algorithm>

#include "engine/support/error.h"

namespace tb::vta {

namespace {

int memStage(MemId id) {
    return id == MemId::Acc || id == MemId::Uop || id == MemId::Acc8Bit ? kComputeStage : kLoadStage;
}

// The stage an existing instruction runs on, for folding a push into it (TVM's GetPipelineStage:
// an empty LOAD belongs to no stage, so pushes are never folded into it).
int stageOf(const Instruction& insn) {
    switch (insn.opcode) {
    case Opcode::Gemm:
    case Opcode::Alu: return kComputeStage;
    case Opcode::Load: return insn.xSize == 0 ? 0 : memStage(insn.memoryType);
    case Opcode::Store: return kStoreStage;
    case Opcode::Finish: return 0;
    }
    return 0;
}

uint32_t dramBase(uint32_t addr, uint32_t elemOffset, MemId id, const VtaConfig& cfg, const char* call) {
    const uint32_t bytes = dramElemBytes(id, cfg);
    TB_USER_CHECK(addr % bytes == 0) << "VTA " << call << ": DRAM buffer address " << addr << " is not a multiple of the "
                                     << memIdName(id) << " element size " << bytes << " bytes";
    const uint64_t base = uint64_t(addr / bytes) + elemOffset;
    TB_USER_CHECK(base < (uint64_t(1) << 32)) << "VTA " << call << ": DRAM element address " << base << " does not fit 32 bits";
    return uint32_t(base);
}

Instruction memInsn(Opcode opcode, MemId id, uint32_t sram, uint32_t dram, uint32_t ySize, uint32_t xSize,
                    uint32_t xStride) {
    Instruction insn;
    insn.opcode = opcode;
    insn.memoryType = id;
    insn.sramBase = sram;
    insn.dramBase = dram;
    insn.ySize = ySize;
    insn.xSize = xSize;
    insn.xStride = xStride;
    return insn;
}

}  // namespace

// --- UopKernel ----------------------------------------------------------------------------------

void UopKernel::loopBegin(uint32_t extent, uint32_t dstFactor, uint32_t srcFactor, uint32_t wgtFactor) {
    TB_USER_CHECK(m_uops.empty()) << "VTA micro-op kernel: loops must be opened before the first micro-op";
    TB_USER_CHECK(m_loops.size() < 2) << "VTA micro-op kernel: at most two loop levels (GEMM/ALU iter_out, iter_in)";
    m_loops.push_back({extent, dstFactor, srcFactor, wgtFactor});
    ++m_openLoops;
}

void UopKernel::loopEnd() {
    TB_USER_CHECK(m_openLoops > 0) << "VTA micro-op kernel: loopEnd without loopBegin";
    --m_openLoops;
}

void UopKernel::push(Mode mode, bool resetOut, uint32_t dst, uint32_t src, uint32_t wgt, AluOpcode opcode, bool useImm,
                     int32_t imm) {
    for (size_t i = m_uops.size() - std::min<size_t>(2, m_uops.size()); i < m_uops.size(); ++i)
        TB_USER_CHECK(m_uops[i].dstIdx != dst)
            << "VTA micro-op kernel: micro-op " << m_uops.size() << " writes accumulator " << dst
            << " like micro-op " << i << " right before it (the accumulator pipeline needs two micro-ops between writes to one index)";
    if (!m_started) {
        m_started = true;
        m_mode = mode;
        m_reset = resetOut;
        m_opcode = opcode;
        m_useImm = useImm;
        m_imm = imm;
    } else {
        TB_USER_CHECK(mode == m_mode) << "VTA micro-op kernel: mixes GEMM and ALU micro-ops";
        TB_USER_CHECK(resetOut == m_reset) << "VTA micro-op kernel: mixes reset and accumulate micro-ops";
        if (mode == Mode::Alu) {
            TB_USER_CHECK(opcode == m_opcode && useImm == m_useImm && imm == m_imm)
                << "VTA micro-op kernel: ALU micro-ops of one kernel must share opcode and immediate ("
                << aluOpcodeName(m_opcode) << (m_useImm ? " imm" : "") << " vs " << aluOpcodeName(opcode) << (useImm ? " imm" : "") << ")";
        }
    }
    m_uops.push_back({dst, src, wgt});
}

// --- CommandBuilder -----------------------------------------------------------------------------

CommandBuilder::CommandBuilder(Simulator& sim) : m_sim(sim) {
    m_insnAddr = sim.dram().alloc(kMaxXferBytes);
    m_uopAddr = sim.dram().alloc(kMaxXferBytes);
}

void CommandBuilder::checkStages(int from, int to, const char* call) {
    TB_USER_CHECK(from >= kLoadStage && from <= kStoreStage && to >= kLoadStage && to <= kStoreStage &&
                  (from - to == 1 || to - from == 1))
        << "VTA " << call << "(" << from << ", " << to
        << "): stages must be neighbours among load = 1, compute = 2, store = 3 (load and store share no queue)";
}

void CommandBuilder::append(int stage, const Instruction& insn) {
    const bool popPrev = m_pendingPopPrev[stage], popNext = m_pendingPopNext[stage];
    m_pendingPopPrev[stage] = m_pendingPopNext[stage] = false;
    Instruction& added = m_insns.emplace_back(insn);
    added.popPrev = popPrev;
    added.popNext = popNext;
}

Instruction& CommandBuilder::create(int stage) {
    Instruction& insn = m_insns.emplace_back();
    insn.popPrev = m_pendingPopPrev[stage];
    insn.popNext = m_pendingPopNext[stage];
    m_pendingPopPrev[stage] = m_pendingPopNext[stage] = false;
    return insn;
}

void CommandBuilder::pushNoop(int stage, bool pushPrev, bool pushNext, bool popPrev, bool popNext) {
    Instruction& insn = m_insns.emplace_back();
    insn.opcode = stage == kStoreStage ? Opcode::Store : Opcode::Load;
    insn.memoryType = stage == kLoadStage ? MemId::Inp : MemId::Uop;
    insn.pushPrev = pushPrev;
    insn.pushNext = pushNext;
    insn.popPrev = popPrev;
    insn.popNext = popNext;
}

void CommandBuilder::commitPendingPop(int stage) {
    if (!m_pendingPopPrev[stage] && !m_pendingPopNext[stage]) return;
    pushNoop(stage, false, false, m_pendingPopPrev[stage], m_pendingPopNext[stage]);
    m_pendingPopPrev[stage] = m_pendingPopNext[stage] = false;
}

void CommandBuilder::depPop(int fromStage, int toStage) {
    checkStages(fromStage, toStage, "depPop");
    bool& pending = fromStage < toStage ? m_pendingPopPrev[toStage] : m_pendingPopNext[toStage];
    if (pending) commitPendingPop(toStage);
    pending = true;
}

void CommandBuilder::depPush(int fromStage, int toStage) {
    checkStages(fromStage, toStage, "depPush");
    commitPendingPop(fromStage);
    if (!m_insns.empty() && stageOf(m_insns.back()) == fromStage) {
        Instruction& last = m_insns.back();
        bool& flag = fromStage < toStage ? last.pushNext : last.pushPrev;
        if (!flag) {
            flag = true;
            return;
        }
    }
    pushNoop(fromStage, fromStage > toStage, fromStage < toStage, false, false);
    checkOverflow();
}

void CommandBuilder::loadBuffer2D(uint32_t srcAddr, uint32_t srcElemOffset, uint32_t xSize, uint32_t ySize,
                                  uint32_t xStride, uint32_t xPadBefore, uint32_t yPadBefore, uint32_t xPadAfter,
                                  uint32_t yPadAfter, uint32_t dstSramIndex, MemId dstMemoryType) {
    TB_USER_CHECK(dstMemoryType != MemId::Out) << "VTA loadBuffer2D: cannot load into the OUT memory type";
    Instruction insn = memInsn(Opcode::Load, dstMemoryType, dstSramIndex,
                               dramBase(srcAddr, srcElemOffset, dstMemoryType, m_sim.config(), "loadBuffer2D"), ySize,
                               xSize, xStride);
    insn.yPad0 = yPadBefore;
    insn.yPad1 = yPadAfter;
    insn.xPad0 = xPadBefore;
    insn.xPad1 = xPadAfter;
    encode(insn, m_sim.config());  // throws naming a field that does not fit
    append(memStage(dstMemoryType), insn);
    checkOverflow();
}

void CommandBuilder::storeBuffer2D(uint32_t srcSramIndex, MemId srcMemoryType, uint32_t dstAddr, uint32_t dstElemOffset,
                                   uint32_t xSize, uint32_t ySize, uint32_t xStride) {
    const Instruction insn = memInsn(Opcode::Store, srcMemoryType, srcSramIndex,
                                     dramBase(dstAddr, dstElemOffset, srcMemoryType, m_sim.config(), "storeBuffer2D"),
                                     ySize, xSize, xStride);
    encode(insn, m_sim.config());
    append(kStoreStage, insn);
    checkOverflow();
}

std::pair<uint32_t, uint32_t> CommandBuilder::placeKernel(const UopKernel& kernel) {
    const auto& uops = kernel.uops();
    const uint32_t n = uint32_t(uops.size());
    for (const Resident& r : m_resident)
        if (r.kernel == kernel) return {r.sramBegin, r.sramEnd};
    if ((m_uops.size() + n) * VtaConfig::kUopElemBytes > kMaxXferBytes) {
        accumulate(m_carry, synchronize());
        m_hasCarry = true;
    }
    const VtaConfig& cfg = m_sim.config();
    for (const Uop& u : uops) encodeUop(u, cfg);  // throws naming an index that does not fit
    // A ring: placement wraps to 0 when the kernel does not fit after the last one, and every
    // resident kernel the new one overwrites is forgotten.
    if (m_sramEnd + n > uint32_t(cfg.uopBuffDepth())) m_sramEnd = 0;
    const uint32_t begin = m_sramEnd;
    m_sramEnd += n;
    std::erase_if(m_resident, [&](const Resident& r) { return r.sramBegin < m_sramEnd && r.sramEnd > begin; });
    m_resident.push_back({kernel, begin, m_sramEnd});
    const Instruction insn =
        memInsn(Opcode::Load, MemId::Uop, begin, m_uopAddr / VtaConfig::kUopElemBytes + uint32_t(m_uops.size()), 1, n, n);
    m_uops.insert(m_uops.end(), uops.begin(), uops.end());
    append(kComputeStage, insn);
    return {begin, m_sramEnd};
}

void CommandBuilder::checkKernel(const UopKernel& kernel, UopKernel::Mode mode, const char* call) const {
    TB_USER_CHECK(!kernel.uops().empty()) << "VTA " << call << ": the micro-op kernel is empty";
    TB_USER_CHECK(kernel.mode() == mode) << "VTA " << call << ": the kernel holds "
                                         << (kernel.mode() == UopKernel::Mode::Alu ? "ALU" : "GEMM") << " micro-ops";
    TB_USER_CHECK(kernel.uops().size() <= size_t(m_sim.config().uopBuffDepth()))
        << "VTA " << call << ": a kernel of " << kernel.uops().size() << " micro-ops does not fit the uop buffer of "
        << m_sim.config().uopBuffDepth();
}

void CommandBuilder::pushGemmOp(const UopKernel& kernel) { pushKernelOp(kernel, UopKernel::Mode::Gemm, "pushGemmOp"); }

void CommandBuilder::pushAluOp(const UopKernel& kernel) { pushKernelOp(kernel, UopKernel::Mode::Alu, "pushAluOp"); }

void CommandBuilder::pushKernelOp(const UopKernel& kernel, UopKernel::Mode mode, const char* call) {
    checkKernel(kernel, mode, call);
    const bool gemm = mode == UopKernel::Mode::Gemm;
    const auto [begin, end] = placeKernel(kernel);
    Instruction insn;
    insn.opcode = gemm ? Opcode::Gemm : Opcode::Alu;
    insn.resetReg = kernel.resetOut();
    insn.uopBgn = begin;
    insn.uopEnd = end;
    if (!gemm) {
        insn.aluOpcode = kernel.opcode();
        insn.useImm = kernel.useImm();
        insn.imm = kernel.imm();
    }
    // A single loop is the outer loop of a GEMM but the inner loop of an ALU op (TVM's
    // PushGEMMOp / PushALUUop); the ALU has no weight factors.
    const auto& loops = kernel.loops();
    const UopKernel::Loop none;
    const UopKernel::Loop& out = loops.size() == 2 || (gemm && loops.size() == 1) ? loops[0] : none;
    const UopKernel::Loop& in = loops.size() == 2 ? loops[1] : !gemm && loops.size() == 1 ? loops[0] : none;
    insn.iterOut = out.extent, insn.dstFactorOut = out.dstFactor, insn.srcFactorOut = out.srcFactor;
    insn.iterIn = in.extent, insn.dstFactorIn = in.dstFactor, insn.srcFactorIn = in.srcFactor;
    if (gemm) insn.wgtFactorOut = out.wgtFactor, insn.wgtFactorIn = in.wgtFactor;
    encode(insn, m_sim.config());
    append(kComputeStage, insn);
    checkOverflow();
}

void CommandBuilder::checkOverflow() {
    // Room for the closing no-ops and FINISH (TVM's CheckInsnOverFlow); that room is reserved,
    // so the closing instructions themselves never flush (which would recurse).
    if (!m_closing && (m_insns.size() + 4) * VtaConfig::kInsnBytes >= kMaxXferBytes) {
        accumulate(m_carry, synchronize());
        m_hasCarry = true;
    }
}

void CommandBuilder::closeStream() {
    // FINISH runs after the last store and the last load (TVM's Synchronize).
    m_closing = true;
    depPush(kStoreStage, kComputeStage);
    depPush(kLoadStage, kComputeStage);
    depPop(kStoreStage, kComputeStage);
    depPop(kLoadStage, kComputeStage);
    commitPendingPop(kComputeStage);
    for (int stage : {kLoadStage, kStoreStage})
        TB_USER_CHECK(!m_pendingPopPrev[stage] && !m_pendingPopNext[stage])
            << "VTA synchronize: a depPop on the " << (stage == kLoadStage ? "load" : "store")
            << " stage has no instruction after it to carry the pop";
    create(kComputeStage).opcode = Opcode::Finish;
    m_closing = false;
}

std::vector<Instruction> CommandBuilder::closedStream() const {
    CommandBuilder copy(*this);
    copy.closeStream();
    return copy.m_insns;
}

RunReport CommandBuilder::synchronize() {
    closeStream();
    const VtaConfig& cfg = m_sim.config();
    std::vector<InsnWord> words;
    words.reserve(m_insns.size());
    for (const Instruction& insn : m_insns) words.push_back(encode(insn, cfg));
    std::vector<uint32_t> uopWords;
    uopWords.reserve(m_uops.size());
    for (const Uop& u : m_uops) uopWords.push_back(encodeUop(u, cfg));
    m_sim.dram().write(m_uopAddr, uopWords.data(), uopWords.size() * VtaConfig::kUopElemBytes);
    m_sim.dram().write(m_insnAddr, words.data(), words.size() * VtaConfig::kInsnBytes);
    const auto count = uint32_t(words.size());
    m_insns.clear();
    m_uops.clear();
    m_resident.clear();
    m_sramEnd = 0;
    RunReport report = m_sim.runFromDram(m_insnAddr, count);
    if (m_hasCarry) {
        accumulate(m_carry, report);
        report = std::move(m_carry);
        m_carry = RunReport{};
        m_hasCarry = false;
    }
    return report;
}

void accumulate(RunReport& a, const RunReport& b) {
    for (InsnTiming t : b.timeline) {
        t.start += a.cycles;
        t.end += a.cycles;
        a.timeline.push_back(t);
    }
    a.cycles += b.cycles;
    a.clockMhz = b.clockMhz;
    for (size_t m = 0; m < 3; ++m) {
        a.busyCycles[m] += b.busyCycles[m];
        a.instructions[m] += b.instructions[m];
    }
    a.macs += b.macs;
    a.stats += b.stats;
}

}  // namespace tb::vta
