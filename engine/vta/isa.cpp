// SPDX-License-Identifier: Apache-2.0
#include "engine/vta/isa.h"

#include <algorithm>
#include <sstream>
#include <type_traits>

#include "engine/support/error.h"

namespace tb::vta {

namespace {

// hw_spec_const.h widths that do not depend on the config.
constexpr int kOpcodeBits = 3;
constexpr int kMemIdBits = 3;
constexpr int kSramAddrBits = 16;
constexpr int kDramAddrBits = 32;
constexpr int kSizeBits = 16;
constexpr int kStrideBits = 16;
constexpr int kPadBits = 4;
constexpr int kLoopIterBits = 14;
constexpr int kAluOpcodeBits = 3;
constexpr int kImmBits = 16;

// A field of a format: its width and how to read/write it in an Instruction (or a Uop).
template <class T>
struct FieldSpec {
    const char* name;
    int width;
    bool isSigned;
    int64_t (*get)(const T&);
    void (*set)(T&, int64_t);
};

#define TB_VTA_FIELD(T, NAME, MEMBER, WIDTH, SIGNED)                                                  \
    FieldSpec<T> {                                                                                    \
        NAME, WIDTH, SIGNED, [](const T& x) -> int64_t { return int64_t(x.MEMBER); },                 \
            [](T& x, int64_t v) { x.MEMBER = static_cast<std::remove_reference_t<decltype(x.MEMBER)>>(v); } \
    }

std::vector<FieldSpec<Instruction>> specsFor(Opcode opcode, const VtaConfig& cfg) {
    using I = Instruction;
    std::vector<FieldSpec<I>> f = {
        TB_VTA_FIELD(I, "opcode", opcode, kOpcodeBits, false),
        TB_VTA_FIELD(I, "pop_prev_dep", popPrev, 1, false),
        TB_VTA_FIELD(I, "pop_next_dep", popNext, 1, false),
        TB_VTA_FIELD(I, "push_prev_dep", pushPrev, 1, false),
        TB_VTA_FIELD(I, "push_next_dep", pushNext, 1, false),
    };
    const int uopBits = cfg.logUopBuffDepth();
    const int accBits = cfg.logAccBuffDepth();
    switch (opcode) {
    case Opcode::Load:
    case Opcode::Store:
        f.insert(f.end(), {
                              TB_VTA_FIELD(I, "memory_type", memoryType, kMemIdBits, false),
                              TB_VTA_FIELD(I, "sram_base", sramBase, kSramAddrBits, false),
                              TB_VTA_FIELD(I, "dram_base", dramBase, kDramAddrBits, false),
                              TB_VTA_FIELD(I, "y_size", ySize, kSizeBits, false),
                              TB_VTA_FIELD(I, "x_size", xSize, kSizeBits, false),
                              TB_VTA_FIELD(I, "x_stride", xStride, kStrideBits, false),
                              TB_VTA_FIELD(I, "y_pad_0", yPad0, kPadBits, false),
                              TB_VTA_FIELD(I, "y_pad_1", yPad1, kPadBits, false),
                              TB_VTA_FIELD(I, "x_pad_0", xPad0, kPadBits, false),
                              TB_VTA_FIELD(I, "x_pad_1", xPad1, kPadBits, false),
                          });
        break;
    case Opcode::Gemm:
    case Opcode::Alu: {
        const bool gemm = opcode == Opcode::Gemm;
        const int srcBits = gemm ? cfg.logInpBuffDepth() : accBits;
        f.insert(f.end(), {
                              TB_VTA_FIELD(I, "reset_reg", resetReg, 1, false),
                              TB_VTA_FIELD(I, "uop_bgn", uopBgn, uopBits, false),
                              TB_VTA_FIELD(I, "uop_end", uopEnd, uopBits + 1, false),
                              TB_VTA_FIELD(I, "iter_out", iterOut, kLoopIterBits, false),
                              TB_VTA_FIELD(I, "iter_in", iterIn, kLoopIterBits, false),
                              TB_VTA_FIELD(I, "dst_factor_out", dstFactorOut, accBits, false),
                              TB_VTA_FIELD(I, "dst_factor_in", dstFactorIn, accBits, false),
                              TB_VTA_FIELD(I, "src_factor_out", srcFactorOut, srcBits, false),
                              TB_VTA_FIELD(I, "src_factor_in", srcFactorIn, srcBits, false),
                          });
        if (gemm) {
            const int wgtBits = cfg.logWgtBuffDepth();
            f.push_back(TB_VTA_FIELD(I, "wgt_factor_out", wgtFactorOut, wgtBits, false));
            f.push_back(TB_VTA_FIELD(I, "wgt_factor_in", wgtFactorIn, wgtBits, false));
        } else {
            f.push_back(TB_VTA_FIELD(I, "alu_opcode", aluOpcode, kAluOpcodeBits, false));
            f.push_back(TB_VTA_FIELD(I, "use_imm", useImm, 1, false));
            f.push_back(TB_VTA_FIELD(I, "imm", imm, kImmBits, true));
        }
        break;
    }
    case Opcode::Finish:
        break;
    }
    return f;
}

std::vector<FieldSpec<Uop>> uopSpecs(const VtaConfig& cfg) {
    return {
        TB_VTA_FIELD(Uop, "dst_idx", dstIdx, cfg.logAccBuffDepth(), false),
        TB_VTA_FIELD(Uop, "src_idx", srcIdx, std::max(cfg.logAccBuffDepth(), cfg.logInpBuffDepth()), false),
        TB_VTA_FIELD(Uop, "wgt_idx", wgtIdx, cfg.logWgtBuffDepth(), false),
    };
}

#undef TB_VTA_FIELD

// Offsets of bit-fields of one declared type whose storage unit is `unitBits` wide (SysV ABI):
// a field that would cross a unit boundary starts at the next unit.
template <class T>
std::vector<FieldLayout> layoutOf(const std::vector<FieldSpec<T>>& specs, int unitBits) {
    std::vector<FieldLayout> out;
    int pos = 0;
    for (const auto& s : specs) {
        if (pos % unitBits + s.width > unitBits) pos = (pos / unitBits + 1) * unitBits;
        out.push_back({s.name, pos, s.width});
        pos += s.width;
    }
    return out;
}

uint64_t getBits(const InsnWord& w, int offset, int width) {
    // Fields never straddle the two 64-bit words (see layoutOf).
    const uint64_t word = w[size_t(offset / 64)];
    const int shift = offset % 64;
    const uint64_t mask = width == 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
    return (word >> shift) & mask;
}

void putBits(InsnWord& w, int offset, int width, uint64_t value) {
    const int shift = offset % 64;
    const uint64_t mask = width == 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
    w[size_t(offset / 64)] |= (value & mask) << shift;
}

bool fits(int64_t v, int width, bool isSigned) {
    if (isSigned) return v >= -(int64_t(1) << (width - 1)) && v < (int64_t(1) << (width - 1));
    return v >= 0 && (width >= 63 || v < (int64_t(1) << width));
}

int64_t signExtend(uint64_t v, int width) {
    const uint64_t sign = uint64_t(1) << (width - 1);
    return int64_t((v ^ sign) - sign);
}

std::string insnLabel(const Instruction& insn) {
    std::string s = opcodeName(insn.opcode);
    if (insn.opcode == Opcode::Load || insn.opcode == Opcode::Store) s += std::string(" ") + memIdName(insn.memoryType);
    if (insn.opcode == Opcode::Alu) s += std::string(" ") + aluOpcodeName(insn.aluOpcode);
    return s;
}

}  // namespace

uint32_t dramElemBytes(MemId id, const VtaConfig& cfg) {
    switch (id) {
    case MemId::Uop: return VtaConfig::kUopElemBytes;
    case MemId::Wgt: return uint32_t(cfg.wgtElemBytes());
    case MemId::Inp: return uint32_t(cfg.inpElemBytes());
    case MemId::Acc: return uint32_t(cfg.accElemBytes());
    case MemId::Out: return uint32_t(cfg.outElemBytes());
    case MemId::Acc8Bit: return uint32_t(cfg.batch() * cfg.blockOut());
    }
    TB_USER_ERROR() << "VTA: unknown memory type " << int(id);
}

const char* opcodeName(Opcode op) {
    switch (op) {
    case Opcode::Load: return "LOAD";
    case Opcode::Store: return "STORE";
    case Opcode::Gemm: return "GEMM";
    case Opcode::Finish: return "FINISH";
    case Opcode::Alu: return "ALU";
    }
    return "UNKNOWN";
}

const char* memIdName(MemId id) {
    switch (id) {
    case MemId::Uop: return "UOP";
    case MemId::Wgt: return "WGT";
    case MemId::Inp: return "INP";
    case MemId::Acc: return "ACC";
    case MemId::Out: return "OUT";
    case MemId::Acc8Bit: return "ACC_8BIT";
    }
    return "UNKNOWN";
}

const char* aluOpcodeName(AluOpcode op) {
    switch (op) {
    case AluOpcode::Min: return "MIN";
    case AluOpcode::Max: return "MAX";
    case AluOpcode::Add: return "ADD";
    case AluOpcode::Shr: return "SHR";
    case AluOpcode::Mul: return "MUL";
    }
    return "UNKNOWN";
}

const char* moduleName(Module m) {
    switch (m) {
    case Module::Load: return "load";
    case Module::Compute: return "compute";
    case Module::Store: return "store";
    }
    return "unknown";
}

Module Instruction::module() const {
    if (opcode == Opcode::Store) return Module::Store;
    if (opcode == Opcode::Load && (memoryType == MemId::Inp || memoryType == MemId::Wgt)) return Module::Load;
    return Module::Compute;
}

std::vector<FieldLayout> instructionLayout(Opcode opcode, const VtaConfig& cfg) {
    return layoutOf(specsFor(opcode, cfg), 64);
}

std::vector<FieldLayout> uopLayout(const VtaConfig& cfg) { return layoutOf(uopSpecs(cfg), 32); }

void checkIsaFits(const VtaConfig& cfg) {
    for (Opcode op : {Opcode::Load, Opcode::Gemm, Opcode::Alu}) {
        const auto layout = instructionLayout(op, cfg);
        for (const auto& f : layout)
            TB_USER_CHECK(f.width >= 1 && f.offset + f.width <= 128)
                << "VTA config: the " << opcodeName(op) << " instruction's field " << f.name << " (" << f.width
                << " bits) does not fit the 128-bit instruction at bit " << f.offset
                << " (the buffer sizes make the index fields too wide)";
    }
    for (const auto& f : uopLayout(cfg))
        TB_USER_CHECK(f.width >= 1 && f.offset + f.width <= 32)
            << "VTA config: the micro-op field " << f.name << " (" << f.width
            << " bits) does not fit the 32-bit micro-op at bit " << f.offset
            << " (the acc/inp/wgt buffer depths need more than 32 bits of indices)";
}

InsnWord encode(const Instruction& insn, const VtaConfig& cfg) {
    InsnWord w{0, 0};
    const auto specs = specsFor(insn.opcode, cfg);
    const auto layout = layoutOf(specs, 64);
    for (size_t i = 0; i < specs.size(); ++i) {
        const int64_t v = specs[i].get(insn);
        TB_USER_CHECK(fits(v, specs[i].width, specs[i].isSigned))
            << "VTA " << insnLabel(insn) << ": field " << specs[i].name << " = " << v << " does not fit its "
            << specs[i].width << (specs[i].isSigned ? " signed" : "") << " bits";
        putBits(w, layout[i].offset, layout[i].width, uint64_t(v));
    }
    if (insn.opcode == Opcode::Load || insn.opcode == Opcode::Store) {
        TB_USER_CHECK(uint8_t(insn.memoryType) <= uint8_t(MemId::Acc8Bit))
            << "VTA " << opcodeName(insn.opcode) << ": unknown memory_type " << int(insn.memoryType);
    }
    if (insn.opcode == Opcode::Alu) {
        TB_USER_CHECK(uint8_t(insn.aluOpcode) <= uint8_t(AluOpcode::Mul))
            << "VTA ALU: unknown alu_opcode " << int(insn.aluOpcode);
    }
    return w;
}

Instruction decode(const InsnWord& word, const VtaConfig& cfg) {
    const auto opcode = getBits(word, 0, kOpcodeBits);
    TB_USER_CHECK(opcode <= uint64_t(Opcode::Alu))
        << "VTA instruction word 0x" << std::hex << word[1] << "_" << word[0] << ": unknown opcode " << std::dec << opcode;
    Instruction insn;
    insn.opcode = Opcode(opcode);
    const auto specs = specsFor(insn.opcode, cfg);
    const auto layout = layoutOf(specs, 64);
    for (size_t i = 0; i < specs.size(); ++i) {
        const uint64_t raw = getBits(word, layout[i].offset, layout[i].width);
        specs[i].set(insn, specs[i].isSigned ? signExtend(raw, layout[i].width) : int64_t(raw));
    }
    return insn;
}

uint32_t encodeUop(const Uop& uop, const VtaConfig& cfg) {
    const auto specs = uopSpecs(cfg);
    const auto layout = layoutOf(specs, 32);
    uint64_t w = 0;
    for (size_t i = 0; i < specs.size(); ++i) {
        const int64_t v = specs[i].get(uop);
        TB_USER_CHECK(fits(v, specs[i].width, false))
            << "VTA micro-op: " << specs[i].name << " = " << v << " does not fit its " << specs[i].width
            << " bits (the buffer has " << (int64_t(1) << specs[i].width) << " elements)";
        w |= uint64_t(v) << layout[i].offset;
    }
    return uint32_t(w);
}

Uop decodeUop(uint32_t word, const VtaConfig& cfg) {
    const auto specs = uopSpecs(cfg);
    const auto layout = layoutOf(specs, 32);
    Uop uop;
    for (size_t i = 0; i < specs.size(); ++i)
        specs[i].set(uop, int64_t((uint64_t(word) >> layout[i].offset) & ((uint64_t(1) << layout[i].width) - 1)));
    return uop;
}

std::string disassemble(const Instruction& insn) {
    std::ostringstream s;
    if (insn.isNop()) {
        s << "NOP " << moduleName(insn.module());
    } else {
        s << insnLabel(insn);
        switch (insn.opcode) {
        case Opcode::Load:
        case Opcode::Store:
            s << " sram=" << insn.sramBase << " dram=" << insn.dramBase << " y=" << insn.ySize;
            if (insn.yPad0 || insn.yPad1) s << " pad(" << insn.yPad0 << "," << insn.yPad1 << ")";
            s << " x=" << insn.xSize << " stride=" << insn.xStride;
            if (insn.xPad0 || insn.xPad1) s << " pad(" << insn.xPad0 << "," << insn.xPad1 << ")";
            break;
        case Opcode::Gemm:
            if (insn.resetReg) s << " reset";
            s << " uop=[" << insn.uopBgn << "," << insn.uopEnd << ")"
              << " out=" << insn.iterOut << "(acc+" << insn.dstFactorOut << " inp+" << insn.srcFactorOut << " wgt+"
              << insn.wgtFactorOut << ")"
              << " in=" << insn.iterIn << "(acc+" << insn.dstFactorIn << " inp+" << insn.srcFactorIn << " wgt+"
              << insn.wgtFactorIn << ")";
            break;
        case Opcode::Alu:
            if (insn.useImm) s << " imm=" << insn.imm;
            s << " uop=[" << insn.uopBgn << "," << insn.uopEnd << ")"
              << " out=" << insn.iterOut << "(dst+" << insn.dstFactorOut << " src+" << insn.srcFactorOut << ")"
              << " in=" << insn.iterIn << "(dst+" << insn.dstFactorIn << " src+" << insn.srcFactorIn << ")";
            break;
        case Opcode::Finish:
            break;
        }
    }
    const std::pair<bool, const char*> flags[] = {{insn.popPrev, "pop_prev"},
                                                  {insn.popNext, "pop_next"},
                                                  {insn.pushPrev, "push_prev"},
                                                  {insn.pushNext, "push_next"}};
    bool first = true;
    for (const auto& [on, name] : flags) {
        if (!on) continue;
        s << (first ? " | " : " ") << name;
        first = false;
    }
    return s.str();
}

std::string disassemble(const std::vector<Instruction>& program) {
    std::ostringstream s;
    for (size_t i = 0; i < program.size(); ++i) s << (i < 10 ? "  " : i < 100 ? " " : "") << i << ": " << disassemble(program[i]) << "\n";
    return s.str();
}

std::string disassemble(const Uop& uop) {
    std::ostringstream s;
    s << "acc=" << uop.dstIdx << " src=" << uop.srcIdx << " wgt=" << uop.wgtIdx;
    return s.str();
}

}  // namespace tb::vta
