// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file isa.h
/// \brief VTA's instruction set: 128-bit instructions, 32-bit micro-ops, their encoding and a
/// readable disassembly.
///
/// VTA executes a stream of coarse instructions fetched from DRAM (apache/tvm-vta
/// include/vta/hw_spec.h, hw_spec_const.h):
/// - LOAD / STORE (VTAMemInsn): a 2-D strided DMA between DRAM and one on-chip buffer, `y_size`
///   rows of `x_size` elements, rows `x_stride` elements apart in DRAM, packed contiguously in
///   SRAM; a LOAD may add zero padding (`y_pad_0/1` rows before/after, `x_pad_0/1` elements
///   before/after each row). Addresses count buffer elements (see vta_config.h). memory_type
///   selects the buffer: UOP, WGT, INP, ACC, OUT (stores), ACC_8BIT (int8 DRAM data widened into
///   the accumulator, TVM's intelfocl addition).
/// - GEMM (VTAGemInsn): runs micro-ops `[uop_bgn, uop_end)` inside a two-level loop
///   (`iter_out` x `iter_in`); each micro-op names an accumulator, input and weight element and
///   each loop level adds its index factors: acc[dst] += inp[src] * wgt[wgt]^T over the
///   BATCH x BLOCK_IN by BLOCK_OUT x BLOCK_IN core; `reset_reg` zeroes acc[dst] instead.
/// - ALU (VTAAluInsn): the same loop over micro-ops, acc[dst] = op(acc[dst], acc[src] or imm)
///   elementwise over a BATCH x BLOCK_OUT vector, op in MIN, MAX, ADD, SHR, MUL.
/// - FINISH: signals the host that the stream is done.
/// Every instruction carries four dependence flags (pop_prev, pop_next, push_prev, push_next)
/// that synchronise the load, compute and store modules through token queues; see simulator.h.
///
/// Bit layout: TVM defines the formats as C bit-fields of `uint64_t` (instructions) and
/// `uint32_t` (micro-ops), so the layout is the one GCC/Clang give on x86-64 and ARM (SysV ABI):
/// fields are packed from bit 0 in declaration order, and a field that would straddle a 64-bit
/// (micro-op: 32-bit) unit starts at the next unit. The index field widths depend on the config
/// (log2 of the buffer depths), so the layout is computed from a VtaConfig; for the default
/// config e.g. a LOAD's y_size starts at bit 64 and a GEMM's dst_factor_out at bit 64. A config
/// whose fields do not fit 128 (32) bits is rejected by VtaConfig::validate(), as TVM's runtime
/// static_asserts the micro-op width.
///
/// Words are little-endian: InsnWord[0] holds bits 0..63, InsnWord[1] bits 64..127, as the
/// 16 bytes TVM's runtime writes to the DRAM instruction buffer on a little-endian host.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/vta/vta_config.h"

namespace tb::vta {

/// Instruction opcodes (VTA_OPCODE_*).
enum class Opcode : uint8_t { Load = 0, Store = 1, Gemm = 2, Finish = 3, Alu = 4 };
/// Buffer ids of LOAD/STORE (VTA_MEM_ID_*).
enum class MemId : uint8_t { Uop = 0, Wgt = 1, Inp = 2, Acc = 3, Out = 4, Acc8Bit = 5 };
/// ALU opcodes (VTA_ALU_OPCODE_*).
enum class AluOpcode : uint8_t { Min = 0, Max = 1, Add = 2, Shr = 3, Mul = 4 };
/// The three hardware modules an instruction runs on (TVM's pipeline stages 1, 2, 3 and the
/// CORELOAD / COREGEMM / CORESTORE of its simulator): LOAD of INP/WGT on Load; LOAD of UOP/ACC/
/// ACC_8BIT, GEMM, ALU and FINISH on Compute; STORE on Store.
enum class Module : uint8_t { Load = 0, Compute = 1, Store = 2 };

/// Bytes one DRAM element of a LOAD/STORE memory type occupies: the buffer's element bytes
/// (vta_config.h), 4 for UOP, and BATCH*BLOCK_OUT for ACC_8BIT (int8 values that a load widens
/// into an accumulator vector). `dram_base` and `x_stride` count such elements.
uint32_t dramElemBytes(MemId id, const VtaConfig& cfg);

/// TVM's names: "LOAD", "STORE", "GEMM", "FINISH", "ALU".
const char* opcodeName(Opcode op);
/// "UOP", "WGT", "INP", "ACC", "OUT", "ACC_8BIT".
const char* memIdName(MemId id);
/// "MIN", "MAX", "ADD", "SHR", "MUL".
const char* aluOpcodeName(AluOpcode op);
/// "load", "compute", "store".
const char* moduleName(Module m);

/// One decoded instruction. A plain value: the fields of all formats side by side, those of
/// other formats zero. Field names follow hw_spec.h (camelCase).
struct Instruction {
    Opcode opcode = Opcode::Finish;
    // Dependence flags (every format).
    bool popPrev = false;   ///< wait for a token from the previous module (compute: load; store: compute)
    bool popNext = false;   ///< wait for a token from the next module (load: compute; compute: store)
    bool pushPrev = false;  ///< send a token to the previous module when done
    bool pushNext = false;  ///< send a token to the next module when done
    // LOAD / STORE
    MemId memoryType = MemId::Uop;
    uint32_t sramBase = 0;  ///< SRAM element index
    uint32_t dramBase = 0;  ///< DRAM address in elements of the buffer's type (byte address / element bytes)
    uint32_t ySize = 0;     ///< rows
    uint32_t xSize = 0;     ///< elements per row; 0 makes the instruction a no-op (a dependence carrier)
    uint32_t xStride = 0;   ///< DRAM elements between row starts
    uint32_t yPad0 = 0, yPad1 = 0, xPad0 = 0, xPad1 = 0;  ///< LOAD zero padding (rows / elements)
    // GEMM / ALU
    bool resetReg = false;  ///< GEMM: zero the accumulators instead of accumulating
    uint32_t uopBgn = 0, uopEnd = 0;  ///< micro-op range [uopBgn, uopEnd) in the uop buffer
    uint32_t iterOut = 0, iterIn = 0;  ///< loop extents (outer, inner)
    uint32_t dstFactorOut = 0, dstFactorIn = 0;  ///< accumulator index factors
    uint32_t srcFactorOut = 0, srcFactorIn = 0;  ///< GEMM: input index factors; ALU: accumulator source
    uint32_t wgtFactorOut = 0, wgtFactorIn = 0;  ///< GEMM: weight index factors
    // ALU
    AluOpcode aluOpcode = AluOpcode::Min;
    bool useImm = false;  ///< second operand is `imm` instead of acc[src]
    int32_t imm = 0;      ///< signed 16-bit immediate

    friend bool operator==(const Instruction&, const Instruction&) = default;

    /// The module that executes this instruction (see Module).
    Module module() const;
    /// LOAD/STORE with x_size == 0: moves nothing, only carries dependence flags.
    bool isNop() const { return (opcode == Opcode::Load || opcode == Opcode::Store) && xSize == 0; }
};

/// One micro-op (VTAUop): element indices into the accumulator, input (GEMM) or accumulator
/// (ALU source), and weight buffers.
struct Uop {
    uint32_t dstIdx = 0;  ///< accumulator element (GEMM and ALU destination)
    uint32_t srcIdx = 0;  ///< input element (GEMM) or accumulator element (ALU source)
    uint32_t wgtIdx = 0;  ///< weight element (GEMM)
    friend bool operator==(const Uop&, const Uop&) = default;
};

/// A 128-bit instruction word, little-endian (word[0] = bits 0..63).
using InsnWord = std::array<uint64_t, 2>;

/// Placement of one bit-field inside an instruction or micro-op.
struct FieldLayout {
    std::string name;  ///< hw_spec.h's field name, e.g. "dram_base"
    int offset = 0;    ///< first bit
    int width = 0;     ///< bits
};
/// The bit layout of `opcode`'s format under `cfg` (Finish: the generic format, opcode and flags).
std::vector<FieldLayout> instructionLayout(Opcode opcode, const VtaConfig& cfg);
/// The bit layout of a micro-op under `cfg`.
std::vector<FieldLayout> uopLayout(const VtaConfig& cfg);
/// Throws tb::UserError naming the format and field when an instruction format needs more than
/// 128 bits or the micro-op more than 32 under `cfg`'s buffer depths (called by VtaConfig::validate).
void checkIsaFits(const VtaConfig& cfg);

/// Packs `insn` into TVM's 128-bit format. Throws tb::UserError naming the instruction and field
/// when a value does not fit its field (e.g. a uop_end past the buffer's index width, an imm
/// outside int16, an unknown memory type or ALU opcode).
InsnWord encode(const Instruction& insn, const VtaConfig& cfg);
/// Unpacks a 128-bit word; fields of other formats are zero, imm is sign-extended. Throws
/// tb::UserError on an unknown opcode.
Instruction decode(const InsnWord& word, const VtaConfig& cfg);
/// Packs a micro-op into 32 bits; throws tb::UserError when an index does not fit its field.
uint32_t encodeUop(const Uop& uop, const VtaConfig& cfg);
/// Unpacks a 32-bit micro-op.
Uop decodeUop(uint32_t word, const VtaConfig& cfg);

/// One line for one instruction, e.g.
/// `LOAD INP sram=0 dram=256 y=4 pad(1,1) x=4 stride=16 pad(1,1) | pop_next push_next`
/// `GEMM uop=[0,16) out=4(acc+16 inp+0 wgt+1) in=1(acc+0 inp+0 wgt+0)`,
/// `ALU SHR imm=8 uop=[0,1) out=1(dst+0 src+0) in=16(dst+1 src+1)`, `FINISH`, and
/// `NOP load` / `NOP compute` / `NOP store` for empty LOAD/STORE.
std::string disassemble(const Instruction& insn);
/// A numbered listing, one instruction per line: "  0: LOAD UOP ...".
std::string disassemble(const std::vector<Instruction>& program);
/// "uop 3: acc=16 src=0 wgt=1".
std::string disassemble(const Uop& uop);

}  // namespace tb::vta
