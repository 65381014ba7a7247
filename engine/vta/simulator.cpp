// SPDX-License-Identifier: Apache-2.0
#include "engine/vta/simulator.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <sstream>

#include "engine/support/error.h"

namespace tb::vta {

namespace {

std::string label(const Instruction& insn, uint32_t index) {
    std::ostringstream s;
    s << "instruction #" << index << " (" << opcodeName(insn.opcode);
    if (insn.opcode == Opcode::Load || insn.opcode == Opcode::Store) s << " " << memIdName(insn.memoryType);
    if (insn.opcode == Opcode::Alu) s << " " << aluOpcodeName(insn.aluOpcode);
    s << ")";
    return s.str();
}

// Signed values of `bits` (a power of two <= 32) packed LSB-first, as TVM's BitPacker on a
// little-endian host.
int32_t getValue(const uint8_t* elem, uint32_t lane, int bits) {
    switch (bits) {
    case 8: return int8_t(elem[lane]);
    case 16: {
        int16_t v;
        std::memcpy(&v, elem + 2 * size_t(lane), 2);
        return v;
    }
    case 32: {
        int32_t v;
        std::memcpy(&v, elem + 4 * size_t(lane), 4);
        return v;
    }
    default: {
        const size_t bit = size_t(lane) * size_t(bits);
        const uint32_t raw = (elem[bit / 8] >> (bit % 8)) & ((1u << bits) - 1);
        const uint32_t sign = 1u << (bits - 1);
        return int32_t((raw ^ sign) - sign);
    }
    }
}

void setValue(uint8_t* elem, uint32_t lane, int bits, int32_t v) {
    switch (bits) {
    case 8: elem[lane] = uint8_t(v); return;
    case 16: {
        const int16_t t = int16_t(v);
        std::memcpy(elem + 2 * size_t(lane), &t, 2);
        return;
    }
    case 32: std::memcpy(elem + 4 * size_t(lane), &v, 4); return;
    default: {
        const size_t bit = size_t(lane) * size_t(bits);
        const uint8_t mask = uint8_t(((1u << bits) - 1) << (bit % 8));
        elem[bit / 8] = uint8_t((elem[bit / 8] & ~mask) | ((uint32_t(v) << (bit % 8)) & mask));
    }
    }
}

void unpack(const uint8_t* elem, uint32_t n, int bits, int32_t* out) {
    if (bits == 8) {
        for (uint32_t i = 0; i < n; ++i) out[i] = int8_t(elem[i]);
    } else {
        for (uint32_t i = 0; i < n; ++i) out[i] = getValue(elem, i, bits);
    }
}

void pack(const int32_t* in, uint32_t n, int bits, uint8_t* elem) {
    if (bits == 32) {
        std::memcpy(elem, in, 4 * size_t(n));
    } else {
        for (uint32_t i = 0; i < n; ++i) setValue(elem, i, bits, in[i]);
    }
}

// 32-bit wrapping arithmetic (TVM's int32 overflow wraps on every compiler it is built with).
int32_t wrapAdd(int32_t a, int32_t b) { return int32_t(uint32_t(a) + uint32_t(b)); }
int32_t wrapMul(int32_t a, int32_t b) { return int32_t(uint32_t(a) * uint32_t(b)); }

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

uint64_t uopIterations(const Instruction& insn) {
    return uint64_t(insn.iterOut) * insn.iterIn * (insn.uopEnd > insn.uopBgn ? insn.uopEnd - insn.uopBgn : 0);
}

// Queues an instruction pops from / pushes to, by module (see simulator.h). A flag that names a
// queue the module lacks was rejected by validate().
struct Deps {
    int pops[2] = {-1, -1};
    int pushes[2] = {-1, -1};
};
Deps depsOf(const Instruction& insn) {
    Deps d;
    switch (insn.module()) {
    case Module::Load:
        if (insn.popNext) d.pops[0] = int(DepQueue::C2L);
        if (insn.pushNext) d.pushes[0] = int(DepQueue::L2C);
        break;
    case Module::Compute:
        if (insn.popPrev) d.pops[0] = int(DepQueue::L2C);
        if (insn.popNext) d.pops[1] = int(DepQueue::S2C);
        if (insn.pushPrev) d.pushes[0] = int(DepQueue::C2L);
        if (insn.pushNext) d.pushes[1] = int(DepQueue::C2S);
        break;
    case Module::Store:
        if (insn.popPrev) d.pops[0] = int(DepQueue::C2S);
        if (insn.pushPrev) d.pushes[0] = int(DepQueue::S2C);
        break;
    }
    return d;
}

}  // namespace

// --- Dram ---------------------------------------------------------------------------------------

uint32_t Dram::alloc(size_t bytes) {
    const uint64_t base = m_bytes.size();
    const uint64_t end = base + ceilDiv(std::max<uint64_t>(bytes, 1), kPageBytes) * kPageBytes;
    TB_USER_CHECK(end <= (uint64_t(1) << 32)) << "VTA DRAM: allocating " << bytes
                                              << " bytes would pass the 32-bit physical address space";
    m_bytes.resize(size_t(end), 0);
    return uint32_t(base);
}

uint8_t* Dram::span(uint64_t addr, uint64_t bytes, const std::string& what) {
    TB_USER_CHECK(addr >= kPageBytes && addr + bytes <= m_bytes.size())
        << what << " accesses DRAM bytes [" << addr << ", " << addr + bytes << "), outside the allocated ["
        << kPageBytes << ", " << m_bytes.size() << ")";
    return m_bytes.data() + addr;
}

void Dram::write(uint32_t addr, const void* src, size_t bytes) {
    if (bytes == 0) return;
    std::memcpy(span(addr, bytes, "a host write"), src, bytes);
}

void Dram::read(uint32_t addr, void* dst, size_t bytes) const {
    if (bytes == 0) return;
    TB_USER_CHECK(addr >= kPageBytes && uint64_t(addr) + bytes <= m_bytes.size())
        << "a host read accesses DRAM bytes [" << addr << ", " << uint64_t(addr) + bytes
        << "), outside the allocated [" << kPageBytes << ", " << m_bytes.size() << ")";
    std::memcpy(dst, m_bytes.data() + addr, bytes);
}

// --- SimStats, CycleModel -------------------------------------------------------------------------

SimStats& SimStats::operator+=(const SimStats& o) {
    inp_load_nbytes += o.inp_load_nbytes;
    wgt_load_nbytes += o.wgt_load_nbytes;
    acc_load_nbytes += o.acc_load_nbytes;
    uop_load_nbytes += o.uop_load_nbytes;
    out_store_nbytes += o.out_store_nbytes;
    gemm_counter += o.gemm_counter;
    alu_counter += o.alu_counter;
    return *this;
}

SimStats operator-(SimStats a, const SimStats& b) {
    a.inp_load_nbytes -= b.inp_load_nbytes;
    a.wgt_load_nbytes -= b.wgt_load_nbytes;
    a.acc_load_nbytes -= b.acc_load_nbytes;
    a.uop_load_nbytes -= b.uop_load_nbytes;
    a.out_store_nbytes -= b.out_store_nbytes;
    a.gemm_counter -= b.gemm_counter;
    a.alu_counter -= b.alu_counter;
    return a;
}

std::string SimStats::toJson() const {
    std::ostringstream s;
    s << "{\n"
      << " \"inp_load_nbytes\":" << inp_load_nbytes << ",\n"
      << " \"wgt_load_nbytes\":" << wgt_load_nbytes << ",\n"
      << " \"acc_load_nbytes\":" << acc_load_nbytes << ",\n"
      << " \"uop_load_nbytes\":" << uop_load_nbytes << ",\n"
      << " \"out_store_nbytes\":" << out_store_nbytes << ",\n"
      << " \"gemm_counter\":" << gemm_counter << ",\n"
      << " \"alu_counter\":" << alu_counter << "\n"
      << "}\n";
    return s.str();
}

CycleModel CycleModel::forConfig(const VtaConfig& cfg) {
    CycleModel m;
    m.busBytes = cfg.busBytes();
    m.clockMhz = cfg.fpgaFreqMhz();
    return m;
}

uint64_t CycleModel::cost(const Instruction& insn, const VtaConfig& cfg) const {
    if (insn.isNop() || insn.opcode == Opcode::Finish) return uint64_t(simpleCycles);
    switch (insn.opcode) {
    case Opcode::Load: {
        const uint64_t rowBytes = uint64_t(insn.xSize) * dramElemBytes(insn.memoryType, cfg);
        const uint64_t total = uint64_t(insn.xPad0 + insn.xSize + insn.xPad1) * (insn.yPad0 + insn.ySize + insn.yPad1);
        const uint64_t padElems = total - uint64_t(insn.xSize) * insn.ySize;
        return uint64_t(dmaLatency) + insn.ySize * ceilDiv(rowBytes, uint64_t(busBytes)) + padElems;
    }
    case Opcode::Store: {
        const uint64_t rowBytes = uint64_t(insn.xSize) * uint64_t(cfg.outElemBytes());
        return uint64_t(dmaLatency) + insn.ySize * ceilDiv(rowBytes, uint64_t(busBytes));
    }
    case Opcode::Gemm: return uint64_t(gemmPipelineDepth) + uopIterations(insn) * uint64_t(gemmCyclesPerUop);
    case Opcode::Alu: return uint64_t(aluPipelineDepth) + uopIterations(insn) * uint64_t(aluCyclesPerUop);
    case Opcode::Finish: break;
    }
    return uint64_t(simpleCycles);
}

const char* depQueueName(DepQueue q) {
    switch (q) {
    case DepQueue::L2C: return "l2c (load->compute)";
    case DepQueue::C2L: return "c2l (compute->load)";
    case DepQueue::C2S: return "c2s (compute->store)";
    case DepQueue::S2C: return "s2c (store->compute)";
    }
    return "unknown";
}

// --- Simulator ----------------------------------------------------------------------------------

Simulator::Simulator(const VtaConfig& cfg) : Simulator(cfg, CycleModel::forConfig(cfg)) {}

Simulator::Simulator(const VtaConfig& cfg, const CycleModel& model) : m_cfg(cfg), m_model(model) {
    m_cfg.validate();
    TB_USER_CHECK(model.busBytes > 0 && model.clockMhz > 0)
        << "VTA cycle model: busBytes and clockMhz must be positive";
    m_inp.assign(size_t(cfg.inpBuffDepth()) * size_t(cfg.inpElemBytes()), 0);
    m_wgt.assign(size_t(cfg.wgtBuffDepth()) * size_t(cfg.wgtElemBytes()), 0);
    m_acc.assign(size_t(cfg.accBuffDepth()) * size_t(cfg.accElemBytes()), 0);
    m_uop.assign(size_t(cfg.uopBuffDepth()) * VtaConfig::kUopElemBytes, 0);
}

std::vector<int32_t> Simulator::sramElement(MemId buffer, uint32_t elem) const {
    const std::vector<uint8_t>* mem = nullptr;
    uint32_t depth = 0, lanes = 0, bytes = 0;
    int bits = 32;
    switch (buffer) {
    case MemId::Inp:
        mem = &m_inp, depth = uint32_t(m_cfg.inpBuffDepth()), lanes = uint32_t(m_cfg.batch() * m_cfg.blockIn());
        bits = m_cfg.inpWidth(), bytes = uint32_t(m_cfg.inpElemBytes());
        break;
    case MemId::Wgt:
        mem = &m_wgt, depth = uint32_t(m_cfg.wgtBuffDepth()), lanes = uint32_t(m_cfg.blockOut() * m_cfg.blockIn());
        bits = m_cfg.wgtWidth(), bytes = uint32_t(m_cfg.wgtElemBytes());
        break;
    case MemId::Acc:
        mem = &m_acc, depth = uint32_t(m_cfg.accBuffDepth()), lanes = uint32_t(m_cfg.batch() * m_cfg.blockOut());
        bits = m_cfg.accWidth(), bytes = uint32_t(m_cfg.accElemBytes());
        break;
    case MemId::Uop:
        mem = &m_uop, depth = uint32_t(m_cfg.uopBuffDepth()), lanes = 1, bytes = VtaConfig::kUopElemBytes;
        break;
    default: TB_USER_ERROR() << "VTA: memory type " << memIdName(buffer) << " has no SRAM buffer of its own";
    }
    TB_USER_CHECK(elem < depth) << "VTA " << memIdName(buffer) << " element " << elem << " is outside the buffer of "
                                << depth << " elements";
    std::vector<int32_t> values(lanes);
    unpack(mem->data() + size_t(elem) * bytes, lanes, bits, values.data());
    return values;
}

int32_t Simulator::accValue(uint32_t elem, uint32_t lane) const {
    const auto values = sramElement(MemId::Acc, elem);
    TB_USER_CHECK(lane < values.size()) << "VTA accumulator lane " << lane << " is outside the vector of " << values.size();
    return values[lane];
}

uint8_t* Simulator::sramElem(MemId buffer, uint32_t elem, const Instruction& insn, uint32_t index) {
    std::vector<uint8_t>* mem = nullptr;
    uint32_t depth = 0;
    size_t bytes = 0;
    switch (buffer) {
    case MemId::Inp: mem = &m_inp, depth = uint32_t(m_cfg.inpBuffDepth()), bytes = size_t(m_cfg.inpElemBytes()); break;
    case MemId::Wgt: mem = &m_wgt, depth = uint32_t(m_cfg.wgtBuffDepth()), bytes = size_t(m_cfg.wgtElemBytes()); break;
    case MemId::Uop: mem = &m_uop, depth = uint32_t(m_cfg.uopBuffDepth()), bytes = VtaConfig::kUopElemBytes; break;
    default: mem = &m_acc, depth = uint32_t(m_cfg.accBuffDepth()), bytes = size_t(m_cfg.accElemBytes()); break;
    }
    TB_USER_CHECK(elem < depth) << "VTA " << label(insn, index) << ": " << memIdName(buffer == MemId::Acc8Bit ? MemId::Acc : buffer)
                                << " index " << elem << " is outside the buffer of " << depth << " elements";
    return mem->data() + size_t(elem) * bytes;
}

void Simulator::validate(const std::vector<Instruction>& program) const {
    bool finish = false;
    for (uint32_t i = 0; i < program.size(); ++i) {
        const Instruction& insn = program[i];
        const std::string what = "VTA " + label(insn, i);
        TB_USER_CHECK(uint8_t(insn.opcode) <= uint8_t(Opcode::Alu)) << "VTA instruction #" << i << ": unknown opcode " << int(insn.opcode);
        const Module m = insn.module();
        if (m == Module::Load) {
            TB_USER_CHECK(!insn.popPrev && !insn.pushPrev)
                << what << " sets " << (insn.popPrev ? "pop_prev" : "push_prev")
                << ", but the load module has no previous module (only pop_next/push_next, queues c2l/l2c)";
        }
        if (m == Module::Store) {
            TB_USER_CHECK(!insn.popNext && !insn.pushNext)
                << what << " sets " << (insn.popNext ? "pop_next" : "push_next")
                << ", but the store module has no next module (only pop_prev/push_prev, queues c2s/s2c)";
        }
        finish = finish || insn.opcode == Opcode::Finish;
        if (insn.isNop()) continue;
        switch (insn.opcode) {
        case Opcode::Load: {
            TB_USER_CHECK(uint8_t(insn.memoryType) <= uint8_t(MemId::Acc8Bit) && insn.memoryType != MemId::Out)
                << what << ": LOAD into memory type " << int(insn.memoryType) << " is not supported (UOP, WGT, INP, ACC, ACC_8BIT)";
            if (insn.memoryType == MemId::Acc8Bit) {
                TB_USER_CHECK(m_cfg.accWidth() == 32 && m_cfg.inpWidth() == 8)
                    << what << ": ACC_8BIT loads need INP_WIDTH 8 and ACC_WIDTH 32 (as TVM's simulator)";
            }
            const uint64_t total = uint64_t(insn.xPad0 + insn.xSize + insn.xPad1) * (insn.yPad0 + insn.ySize + insn.yPad1);
            const uint64_t depth = insn.memoryType == MemId::Uop   ? uint64_t(m_cfg.uopBuffDepth())
                                   : insn.memoryType == MemId::Wgt ? uint64_t(m_cfg.wgtBuffDepth())
                                   : insn.memoryType == MemId::Inp ? uint64_t(m_cfg.inpBuffDepth())
                                                                   : uint64_t(m_cfg.accBuffDepth());
            TB_USER_CHECK(insn.sramBase + total <= depth)
                << what << ": writes SRAM elements [" << insn.sramBase << ", " << insn.sramBase + total
                << ") (with padding) past the " << memIdName(insn.memoryType) << " buffer of " << depth << " elements";
            break;
        }
        case Opcode::Store:
            TB_USER_CHECK(insn.memoryType == MemId::Out)
                << what << ": STORE of memory type " << int(insn.memoryType) << " is not supported (only OUT, as TVM)";
            TB_USER_CHECK(insn.xPad0 == 0 && insn.xPad1 == 0 && insn.yPad0 == 0 && insn.yPad1 == 0)
                << what << ": a STORE cannot pad (x_pad " << insn.xPad0 << "," << insn.xPad1 << ", y_pad " << insn.yPad0
                << "," << insn.yPad1 << ")";
            TB_USER_CHECK(insn.sramBase + uint64_t(insn.xSize) * insn.ySize <= uint64_t(m_cfg.accBuffDepth()))
                << what << ": reads accumulator elements [" << insn.sramBase << ", "
                << insn.sramBase + uint64_t(insn.xSize) * insn.ySize << ") past the buffer of " << m_cfg.accBuffDepth()
                << " elements";
            break;
        case Opcode::Gemm:
        case Opcode::Alu:
            TB_USER_CHECK(insn.uopBgn <= insn.uopEnd && insn.uopEnd <= uint32_t(m_cfg.uopBuffDepth()))
                << what << ": micro-op range [" << insn.uopBgn << ", " << insn.uopEnd << ") is not inside the uop buffer of "
                << m_cfg.uopBuffDepth() << " micro-ops";
            if (insn.opcode == Opcode::Alu) {
                TB_USER_CHECK(uint8_t(insn.aluOpcode) <= uint8_t(AluOpcode::Mul))
                    << what << ": unknown ALU opcode " << int(insn.aluOpcode);
                if (insn.aluOpcode == AluOpcode::Shr && insn.useImm) {
                    TB_USER_CHECK(insn.imm >= -31 && insn.imm <= 31)
                        << what << ": shift amount " << insn.imm << " is outside [-31, 31] (undefined in TVM's simulator)";
                }
            }
            break;
        case Opcode::Finish: break;
        }
    }
    TB_USER_CHECK(finish) << "VTA instruction stream of " << program.size()
                          << " instructions has no FINISH: the host would wait for the device forever";
}

RunReport Simulator::run(const std::vector<InsnWord>& words) {
    std::vector<Instruction> program;
    program.reserve(words.size());
    for (const auto& w : words) program.push_back(decode(w, m_cfg));
    return run(program);
}

RunReport Simulator::runFromDram(uint32_t insnAddr, uint32_t count) {
    std::vector<InsnWord> words(count);
    const uint8_t* p = m_dram.span(insnAddr, uint64_t(count) * VtaConfig::kInsnBytes, "the instruction fetch");
    std::memcpy(words.data(), p, size_t(count) * VtaConfig::kInsnBytes);
    return run(words);
}

RunReport Simulator::run(const std::vector<Instruction>& program) {
    validate(program);
    RunReport rep;
    rep.clockMhz = m_model.clockMhz;
    rep.timeline.resize(program.size());
    const SimStats before = m_stats;

    std::array<std::vector<uint32_t>, 3> queue;  // instruction indices per module, stream order
    for (uint32_t i = 0; i < program.size(); ++i) queue[size_t(program[i].module())].push_back(i);
    std::array<size_t, 3> next{};
    std::array<uint64_t, 3> freeAt{};
    // Each token carries the cycle it was pushed at; tokens left from earlier runs are ready at 0.
    std::array<std::deque<uint64_t>, 4> tokens;
    for (size_t q = 0; q < 4; ++q) tokens[q].assign(m_tokens[q], 0);

    for (;;) {
        int best = -1;
        uint64_t bestStart = 0;
        for (int m = 0; m < 3; ++m) {
            if (next[size_t(m)] == queue[size_t(m)].size()) continue;
            const Deps d = depsOf(program[queue[size_t(m)][next[size_t(m)]]]);
            uint64_t start = freeAt[size_t(m)];
            bool ready = true;
            for (int q : d.pops) {
                if (q < 0) continue;
                if (tokens[size_t(q)].empty()) {
                    ready = false;
                    break;
                }
                start = std::max(start, tokens[size_t(q)].front());
            }
            if (ready && (best < 0 || start < bestStart)) best = m, bestStart = start;
        }
        if (best < 0) {
            std::ostringstream msg;
            for (int m = 0; m < 3; ++m) {
                if (next[size_t(m)] == queue[size_t(m)].size()) continue;
                const uint32_t idx = queue[size_t(m)][next[size_t(m)]];
                const Deps d = depsOf(program[idx]);
                for (int q : d.pops) {
                    if (q < 0 || !tokens[size_t(q)].empty()) continue;
                    msg << (msg.tellp() > 0 ? "; " : "") << moduleName(Module(m)) << " module waits at "
                        << label(program[idx], idx) << " for a token on queue " << depQueueName(DepQueue(q))
                        << ", which is empty";
                    break;
                }
            }
            if (msg.tellp() == 0) break;  // every module is done
            TB_USER_ERROR() << "VTA deadlock: " << msg.str()
                            << "; no instruction left can push the missing token(s), so the stream can never finish";
        }
        const uint32_t idx = queue[size_t(best)][next[size_t(best)]++];
        const Instruction& insn = program[idx];
        const Deps d = depsOf(insn);
        for (int q : d.pops)
            if (q >= 0) tokens[size_t(q)].pop_front();
        execute(insn, idx);
        const uint64_t cost = m_model.cost(insn, m_cfg);
        const uint64_t end = bestStart + cost;
        for (int q : d.pushes)
            if (q >= 0) tokens[size_t(q)].push_back(end);
        freeAt[size_t(best)] = end;
        rep.busyCycles[size_t(best)] += cost;
        rep.instructions[size_t(best)] += 1;
        rep.cycles = std::max(rep.cycles, end);
        rep.timeline[idx] = {idx, Module(best), bestStart, end};
        if (insn.opcode == Opcode::Gemm && !insn.resetReg) rep.macs += uopIterations(insn) * uint64_t(m_cfg.peakMacsPerCycle());
    }
    for (size_t q = 0; q < 4; ++q) m_tokens[q] = tokens[q].size();
    rep.stats = m_stats - before;
    return rep;
}

void Simulator::execute(const Instruction& insn, uint32_t index) {
    if (insn.isNop()) return;
    switch (insn.opcode) {
    case Opcode::Load: load(insn, index); break;
    case Opcode::Store: store(insn, index); break;
    case Opcode::Gemm: gemm(insn, index); break;
    case Opcode::Alu: alu(insn, index); break;
    case Opcode::Finish: break;
    }
}

void Simulator::load(const Instruction& insn, uint32_t index) {
    const uint64_t elemBytes = dramElemBytes(insn.memoryType, m_cfg);
    const uint64_t xTotal = uint64_t(insn.xPad0) + insn.xSize + insn.xPad1;
    const uint64_t rowBytes = uint64_t(insn.xSize) * elemBytes;
    const bool widen = insn.memoryType == MemId::Acc8Bit;
    const MemId buffer = widen ? MemId::Acc : insn.memoryType;
    const size_t sramElemBytes = widen ? size_t(m_cfg.accElemBytes()) : size_t(elemBytes);
    const uint64_t counted = uint64_t(insn.xSize) * insn.ySize * sramElemBytes;
    switch (insn.memoryType) {
    case MemId::Inp: m_stats.inp_load_nbytes += counted; break;
    case MemId::Wgt: m_stats.wgt_load_nbytes += counted; break;
    case MemId::Uop: m_stats.uop_load_nbytes += counted; break;
    default: m_stats.acc_load_nbytes += counted; break;
    }
    // validate() checked the SRAM range; sramElem re-checks the first element only.
    uint8_t* sram = sramElem(buffer, insn.sramBase, insn, index);
    const std::string what = "VTA " + label(insn, index);
    const size_t padRowBytes = size_t(xTotal) * sramElemBytes;
    std::memset(sram, 0, padRowBytes * insn.yPad0);
    sram += padRowBytes * insn.yPad0;
    const uint32_t lanes = uint32_t(m_cfg.batch() * m_cfg.blockOut());
    for (uint32_t y = 0; y < insn.ySize; ++y) {
        const uint64_t addr = (uint64_t(insn.dramBase) + uint64_t(y) * insn.xStride) * elemBytes;
        const uint8_t* src = m_dram.span(addr, rowBytes, what);
        std::memset(sram, 0, sramElemBytes * insn.xPad0);
        sram += sramElemBytes * insn.xPad0;
        if (widen) {
            for (uint32_t x = 0; x < insn.xSize; ++x, sram += sramElemBytes)
                for (uint32_t l = 0; l < lanes; ++l) setValue(sram, l, 32, int8_t(src[size_t(x) * lanes + l]));
        } else {
            std::memcpy(sram, src, size_t(rowBytes));
            sram += rowBytes;
        }
        std::memset(sram, 0, sramElemBytes * insn.xPad1);
        sram += sramElemBytes * insn.xPad1;
    }
    std::memset(sram, 0, padRowBytes * insn.yPad1);
}

void Simulator::store(const Instruction& insn, uint32_t index) {
    const uint32_t lanes = uint32_t(m_cfg.batch() * m_cfg.blockOut());
    const uint64_t outBytes = uint64_t(m_cfg.outElemBytes());
    m_stats.out_store_nbytes += uint64_t(insn.xSize) * insn.ySize * outBytes;
    const std::string what = "VTA " + label(insn, index);
    std::vector<int32_t> values(lanes);
    for (uint32_t y = 0; y < insn.ySize; ++y) {
        const uint64_t addr = (uint64_t(insn.dramBase) + uint64_t(y) * insn.xStride) * outBytes;
        uint8_t* dst = m_dram.span(addr, uint64_t(insn.xSize) * outBytes, what);
        for (uint32_t x = 0; x < insn.xSize; ++x) {
            const uint8_t* src = sramElem(MemId::Acc, insn.sramBase + y * insn.xSize + x, insn, index);
            unpack(src, lanes, m_cfg.accWidth(), values.data());
            pack(values.data(), lanes, m_cfg.outWidth(), dst + size_t(x) * outBytes);
        }
    }
}

std::vector<Uop> Simulator::readUops(const Instruction& insn) const {
    std::vector<Uop> uops;
    uops.reserve(insn.uopEnd - insn.uopBgn);
    for (uint32_t u = insn.uopBgn; u < insn.uopEnd; ++u) {
        uint32_t word;
        std::memcpy(&word, m_uop.data() + size_t(u) * VtaConfig::kUopElemBytes, 4);
        uops.push_back(decodeUop(word, m_cfg));
    }
    return uops;
}

void Simulator::gemm(const Instruction& insn, uint32_t index) {
    if (!insn.resetReg) m_stats.gemm_counter += uopIterations(insn);
    const uint32_t batch = uint32_t(m_cfg.batch()), bin = uint32_t(m_cfg.blockIn()), bout = uint32_t(m_cfg.blockOut());
    std::vector<int32_t> inp(size_t(batch) * bin), wgt(size_t(bout) * bin), acc(size_t(batch) * bout);
    const bool int8Core = m_cfg.inpWidth() == 8 && m_cfg.wgtWidth() == 8 && m_cfg.accWidth() == 32;
    const std::vector<Uop> uops = readUops(insn);
    for (uint32_t i = 0; i < insn.iterOut; ++i) {
        for (uint32_t j = 0; j < insn.iterIn; ++j) {
            for (const Uop& uop : uops) {
                const uint32_t accIdx = uop.dstIdx + i * insn.dstFactorOut + j * insn.dstFactorIn;
                uint8_t* accPtr = sramElem(MemId::Acc, accIdx, insn, index);
                if (insn.resetReg) {
                    std::memset(accPtr, 0, size_t(m_cfg.accElemBytes()));
                    continue;
                }
                const uint32_t inpIdx = uop.srcIdx + i * insn.srcFactorOut + j * insn.srcFactorIn;
                const uint32_t wgtIdx = uop.wgtIdx + i * insn.wgtFactorOut + j * insn.wgtFactorIn;
                const uint8_t* inpPtr = sramElem(MemId::Inp, inpIdx, insn, index);
                const uint8_t* wgtPtr = sramElem(MemId::Wgt, wgtIdx, insn, index);
                unpack(accPtr, batch * bout, m_cfg.accWidth(), acc.data());
                if (int8Core) {
                    // TVM's default int8 x int8 -> int32 core: read the bytes in place.
                    const auto* x8 = reinterpret_cast<const int8_t*>(inpPtr);
                    const auto* w8 = reinterpret_cast<const int8_t*>(wgtPtr);
                    for (uint32_t b = 0; b < batch; ++b)
                        for (uint32_t o = 0; o < bout; ++o) {
                            int32_t dot = 0;  // |dot| <= BLOCK_IN * 2^14 fits int32 for BLOCK_IN <= 2^16
                            for (uint32_t k = 0; k < bin; ++k) dot += int32_t(x8[b * bin + k]) * int32_t(w8[o * bin + k]);
                            acc[b * bout + o] = int32_t(uint32_t(acc[b * bout + o]) + uint32_t(dot));
                        }
                    pack(acc.data(), batch * bout, m_cfg.accWidth(), accPtr);
                    continue;
                }
                unpack(inpPtr, batch * bin, m_cfg.inpWidth(), inp.data());
                unpack(wgtPtr, bout * bin, m_cfg.wgtWidth(), wgt.data());
                for (uint32_t b = 0; b < batch; ++b) {
                    for (uint32_t o = 0; o < bout; ++o) {
                        uint32_t sum = uint32_t(acc[b * bout + o]);
                        const int32_t* x = inp.data() + size_t(b) * bin;
                        const int32_t* w = wgt.data() + size_t(o) * bin;
                        for (uint32_t k = 0; k < bin; ++k) sum += uint32_t(x[k]) * uint32_t(w[k]);
                        acc[b * bout + o] = int32_t(sum);
                    }
                }
                pack(acc.data(), batch * bout, m_cfg.accWidth(), accPtr);
            }
        }
    }
}

void Simulator::alu(const Instruction& insn, uint32_t index) {
    m_stats.alu_counter += uopIterations(insn);
    const uint32_t lanes = uint32_t(m_cfg.batch() * m_cfg.blockOut());
    const int bits = m_cfg.accWidth();
    const std::vector<Uop> uops = readUops(insn);
    for (uint32_t i = 0; i < insn.iterOut; ++i) {
        for (uint32_t j = 0; j < insn.iterIn; ++j) {
            for (const Uop& uop : uops) {
                uint8_t* dst = sramElem(MemId::Acc, uop.dstIdx + i * insn.dstFactorOut + j * insn.dstFactorIn, insn, index);
                const uint8_t* src = insn.useImm ? nullptr
                                                 : sramElem(MemId::Acc, uop.srcIdx + i * insn.srcFactorOut + j * insn.srcFactorIn, insn, index);
                for (uint32_t l = 0; l < lanes; ++l) {
                    const int32_t x = getValue(dst, l, bits);
                    const int32_t y = insn.useImm ? insn.imm : getValue(src, l, bits);
                    int32_t r = 0;
                    switch (insn.aluOpcode) {
                    case AluOpcode::Min: r = std::min(x, y); break;
                    case AluOpcode::Max: r = std::max(x, y); break;
                    case AluOpcode::Add: r = wrapAdd(x, y); break;
                    case AluOpcode::Mul: r = wrapMul(x, y); break;
                    case AluOpcode::Shr:
                        TB_USER_CHECK(y >= -31 && y <= 31) << "VTA " << label(insn, index) << ": shift amount " << y
                                                           << " is outside [-31, 31] (undefined in TVM's simulator)";
                        r = y >= 0 ? (x >> y) : int32_t(uint32_t(x) << (-y));
                        break;
                    }
                    setValue(dst, l, bits, r);
                }
            }
        }
    }
}

}  // namespace tb::vta
