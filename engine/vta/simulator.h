// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file simulator.h
/// \brief A bit-exact functional simulator of the VTA accelerator with a cycle model.
///
/// What it is: the device side of VTA for machines without the FPGA. It executes an instruction
/// stream (isa.h) against a simulated DRAM exactly as TVM's behavioural simulator does
/// (apache/tvm-vta src/sim/sim_driver.cc, sim_tlpp.cc), and in the same run computes how many
/// cycles the three hardware modules would take. Later work targets it: the packed operators'
/// lowering, the `rpc-server --device vta` device, AutoTVM's vta templates. It has no Qt and no
/// LLVM dependency.
///
/// ## Functional semantics (as TVM's simulator)
/// - DRAM is byte-addressed; a LOAD/STORE's `dram_base` and `x_stride` count elements of the
///   buffer's type (byte address = dram_base * element bytes, vta_config.h).
/// - LOAD copies `y_size` rows of `x_size` elements (rows `x_stride` apart in DRAM) to SRAM at
///   `sram_base`, contiguously, with `y_pad_0`/`y_pad_1` zero rows and `x_pad_0`/`x_pad_1` zero
///   elements per row around them; the SRAM region is (y_pad_0+y_size+y_pad_1) x
///   (x_pad_0+x_size+x_pad_1) elements. An ACC_8BIT load reads int8 values and sign-extends them
///   into the int32 accumulator (needs INP_WIDTH 8, ACC_WIDTH 32, as TVM). x_size == 0 is a no-op.
/// - GEMM, for every (i < iter_out, j < iter_in, uop in [uop_bgn, uop_end)):
///   acc = uop.dst + i*dst_factor_out + j*dst_factor_in (likewise inp with src_*, wgt with wgt_*),
///   and then for b < BATCH, o < BLOCK_OUT: acc[b][o] += sum_k inp[b][k] * wgt[o][k] (signed,
///   wrapping in 32 bits, then truncated to ACC_WIDTH); with reset_reg the acc vector is zeroed.
/// - ALU, same loop without the weight index: acc[dst][l] = f(acc[dst][l], use_imm ? imm :
///   acc[src][l]) for every lane l < BATCH*BLOCK_OUT; MIN, MAX, ADD (wrapping), MUL (wrapping, low
///   32 bits), SHR: arithmetic right shift by y >= 0, left shift by -y when y < 0. Shift amounts
///   outside [-31, 31] are undefined behaviour in TVM's C++ simulator; here they are an error.
/// - STORE (memory type OUT, no padding) writes `y_size` x `x_size` accumulator vectors, read
///   contiguously from `sram_base`, to DRAM rows `x_stride` apart, narrowing every value to
///   OUT_WIDTH bits by truncation (two's complement wrap: TVM's BitPacker::SetSigned, not
///   saturation). Stores of other memory types are an error, as in TVM.
/// - Counters as TVM's `vta.testing.simulator.stats()`: inp/wgt/acc/uop_load_nbytes (x_size *
///   y_size * element bytes, padding not counted; an ACC_8BIT load counts accumulator element
///   bytes, as TVM), out_store_nbytes (x_size * y_size * BATCH * BLOCK_OUT * OUT_WIDTH / 8),
///   gemm_counter and alu_counter (iter_out * iter_in * (uop_end - uop_bgn) per instruction; a
///   reset GEMM is not counted). They accumulate over runs until clearStats(), as TVM's profiler.
///
/// ## Modules and dependence queues
/// Instructions go, in stream order, to three in-order modules (Instruction::module()): load,
/// compute, store. Four token queues connect them: l2c (load->compute), c2l (compute->load),
/// c2s (compute->store), s2c (store->compute). An instruction first pops one token from each queue
/// its pop flags name (load: pop_next = c2l; compute: pop_prev = l2c, pop_next = s2c; store:
/// pop_prev = c2s), runs, then pushes to the queues its push flags name (load: push_next = l2c;
/// compute: push_prev = c2l, push_next = c2s; store: push_prev = s2c). A flag naming a queue the
/// module does not have (a load's pop_prev) is an error. A module whose next instruction needs a
/// token that is not there waits. When every module waits (or is done) with instructions left,
/// the stream can never finish: run() throws tb::UserError naming each waiting instruction (index
/// and opcode) and its empty queue, where TVM's simulator would loop forever. This includes
/// instructions still waiting after FINISH ran (TVM's simulator would silently drop them). A
/// stream without FINISH is rejected before it runs. Tokens left in the queues, and the SRAM contents, persist
/// into the next run, as on the device.
///
/// ## Cycle model (ours; TVM's simulator has no timing)
/// Every instruction has a cost in cycles (CycleModel, defaults below), each module runs its
/// instructions one after another, and the modules overlap, synchronised only by the tokens: an
/// instruction starts when its module is free and each token it pops has been pushed, i.e. its
/// pushing instruction has finished. The run takes the cycles until the last instruction
/// finishes; time = cycles / clock (the target's FPGA clock, 100 MHz for pynq, vta_config.h).
/// Costs:
/// - LOAD: dmaLatency + sum over rows of ceil(row bytes / bus bytes) + one cycle per padding
///   element written (the DMA engine zero-fills SRAM element by element); the bus moves
///   2^logBusWidth / 8 bytes per cycle (8 on pynq). UOP loads likewise with 4-byte elements.
/// - STORE: dmaLatency + sum over rows of ceil(row bytes / bus bytes), row bytes at OUT_WIDTH.
/// - GEMM: pipeline fill + one cycle per micro-op iteration (iter_out * iter_in * uops): the
///   GEMM core does one BATCH x BLOCK_IN x BLOCK_OUT block of MACs per cycle (TVM's HLS core is
///   pipelined with II = 1), so the peak is BATCH*BLOCK_IN*BLOCK_OUT MACs per cycle (256 for the
///   default 1x16x16). A reset GEMM costs the same.
/// - ALU: pipeline fill + two cycles per micro-op iteration (the HLS ALU loop has II = 2: it
///   reads and writes the accumulator SRAM in the same pass), one BATCH x BLOCK_OUT vector op each.
/// - FINISH and NOPs (x_size == 0): one cycle.
/// The instruction fetch is not modelled (each module sees its queue at once), nor DRAM contention
/// between the load and store modules.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/vta/isa.h"
#include "engine/vta/vta_config.h"

namespace tb::vta {

/// The DRAM the host and the accelerator share (TVM's VTAMemAlloc / physical addresses). A bump
/// allocator over one byte array; addresses are 32-bit physical byte addresses, page aligned,
/// never 0 (0 is TVM's "no buffer").
class Dram {
public:
    static constexpr uint32_t kPageBytes = 4096;  ///< allocation alignment (TVM's VTA_PAGE_BYTES)

    /// Allocates `bytes` zeroed bytes; returns their physical byte address (a multiple of
    /// kPageBytes). Throws tb::UserError when the 32-bit address space would overflow.
    uint32_t alloc(size_t bytes);
    /// Copies host bytes into DRAM; throws tb::UserError when [addr, addr+bytes) is not allocated.
    void write(uint32_t addr, const void* src, size_t bytes);
    /// Copies DRAM bytes to the host; throws tb::UserError when out of range.
    void read(uint32_t addr, void* dst, size_t bytes) const;
    /// Writes `values` (int8_t, int32_t, ... in host byte order, little-endian) at `addr`.
    template <class T>
    void writeArray(uint32_t addr, const std::vector<T>& values) {
        write(addr, values.data(), values.size() * sizeof(T));
    }
    /// Reads `n` values of T at `addr`.
    template <class T>
    std::vector<T> readArray(uint32_t addr, size_t n) const {
        std::vector<T> v(n);
        read(addr, v.data(), n * sizeof(T));
        return v;
    }
    /// Pointer to [addr, addr+bytes) for the simulator's DMA; throws tb::UserError naming `what`
    /// (the instruction) when the range is not inside allocated DRAM.
    uint8_t* span(uint64_t addr, uint64_t bytes, const std::string& what);
    /// Bytes allocated so far (including the unused page 0).
    size_t size() const { return m_bytes.size(); }

private:
    std::vector<uint8_t> m_bytes = std::vector<uint8_t>(kPageBytes, 0);
};

/// TVM's simulator counters (`vta.testing.simulator.stats()`), TVM's names.
struct SimStats {
    uint64_t inp_load_nbytes = 0;   ///< bytes loaded into the input buffer
    uint64_t wgt_load_nbytes = 0;   ///< bytes loaded into the weight buffer
    uint64_t acc_load_nbytes = 0;   ///< bytes loaded into the accumulator buffer
    uint64_t uop_load_nbytes = 0;   ///< bytes loaded into the micro-op buffer
    uint64_t out_store_nbytes = 0;  ///< bytes stored from the accumulator buffer
    uint64_t gemm_counter = 0;      ///< GEMM micro-op iterations (without resets)
    uint64_t alu_counter = 0;       ///< ALU micro-op iterations
    friend bool operator==(const SimStats&, const SimStats&) = default;
    SimStats& operator+=(const SimStats& o);                       ///< field-wise sum
    friend SimStats operator-(SimStats a, const SimStats& b);      ///< field-wise difference
    /// TVM's profiler_status JSON: {"inp_load_nbytes": ..., ..., "alu_counter": ...}.
    std::string toJson() const;
};

/// The cycle model's per-instruction costs (see the file comment). All in cycles except
/// busBytes (bytes per cycle) and clockMhz.
struct CycleModel {
    int busBytes = 8;             ///< DMA bytes per cycle (pynq: 64-bit AXI)
    int dmaLatency = 32;          ///< fixed cost of a LOAD/STORE: request to first beat
    int gemmPipelineDepth = 4;    ///< GEMM fill/drain
    int gemmCyclesPerUop = 1;     ///< per micro-op iteration (II = 1)
    int aluPipelineDepth = 4;     ///< ALU fill/drain
    int aluCyclesPerUop = 2;      ///< per micro-op iteration (II = 2)
    int simpleCycles = 1;         ///< FINISH and NOPs
    double clockMhz = 100.0;      ///< FPGA clock
    /// The defaults with the target's bus width and clock (vta_config.h).
    static CycleModel forConfig(const VtaConfig& cfg);
    /// Cycles one instruction takes under this model.
    uint64_t cost(const Instruction& insn, const VtaConfig& cfg) const;
};

/// The four dependence token queues.
enum class DepQueue : uint8_t { L2C = 0, C2L = 1, C2S = 2, S2C = 3 };
/// "l2c (load->compute)", "c2l (compute->load)", "c2s (compute->store)", "s2c (store->compute)".
const char* depQueueName(DepQueue q);

/// When one instruction ran (cycle model).
struct InsnTiming {
    uint32_t index = 0;  ///< position in the stream
    Module module = Module::Compute;
    uint64_t start = 0;  ///< cycle it started
    uint64_t end = 0;    ///< cycle it finished (start + cost)
};

/// The result of one run.
struct RunReport {
    uint64_t cycles = 0;                  ///< cycles until the last instruction finished
    double clockMhz = 100.0;              ///< clock the time is computed at
    std::array<uint64_t, 3> busyCycles{};  ///< per module (Module order): cycles spent executing
    std::array<uint64_t, 3> instructions{};  ///< per module: instructions executed
    uint64_t macs = 0;                    ///< multiply-accumulates done by GEMMs (BATCH*BLOCK_IN*BLOCK_OUT per iteration)
    SimStats stats;                       ///< this run's counters
    std::vector<InsnTiming> timeline;     ///< per instruction, stream order
    /// Simulated time in milliseconds: cycles / (clockMhz * 1e3).
    double timeMs() const { return double(cycles) / (clockMhz * 1e3); }
    /// Simulated seconds.
    double timeSeconds() const { return double(cycles) / (clockMhz * 1e6); }
    /// The cycles if nothing overlapped: the sum of every module's busy cycles.
    uint64_t serialCycles() const { return busyCycles[0] + busyCycles[1] + busyCycles[2]; }
};

/// The device: SRAM buffers, dependence queues, counters, and the DRAM it shares with the host.
class Simulator {
public:
    /// Validates `cfg` (tb::UserError when invalid) and sizes the buffers from it; the cycle
    /// model is CycleModel::forConfig(cfg).
    explicit Simulator(const VtaConfig& cfg);
    Simulator(const VtaConfig& cfg, const CycleModel& model);

    /// The hardware configuration the buffers and the ISA layout follow.
    const VtaConfig& config() const { return m_cfg; }
    /// The costs run() times instructions with.
    const CycleModel& cycleModel() const { return m_model; }
    /// The DRAM shared with the host: allocate and fill buffers here before a run, read results after.
    Dram& dram() { return m_dram; }
    const Dram& dram() const { return m_dram; }

    /// Runs a decoded stream to the end (see the file comment). Throws tb::UserError naming the
    /// instruction (index, opcode) for: no FINISH, a dependence flag the module does not have,
    /// an unknown memory type or ALU opcode, a STORE with padding or of a memory type other than
    /// OUT, an SRAM or DRAM range outside the buffer, a micro-op index outside its buffer, a
    /// shift amount outside [-31, 31], and a deadlock (every module waiting on an empty queue).
    /// Instructions before the failing one have taken effect.
    RunReport run(const std::vector<Instruction>& program);
    /// Decodes 128-bit words (isa.h) and runs them.
    RunReport run(const std::vector<InsnWord>& words);
    /// TVM's VTADeviceRun: fetches `count` 16-byte instructions from DRAM at `insnAddr` and runs them.
    RunReport runFromDram(uint32_t insnAddr, uint32_t count);

    /// Counters accumulated since construction or the last clearStats().
    const SimStats& stats() const { return m_stats; }
    void clearStats() { m_stats = {}; }
    /// Tokens waiting in a dependence queue (they persist between runs).
    size_t pendingTokens(DepQueue q) const { return m_tokens[size_t(q)]; }

    /// The values of SRAM element `elem` of buffer INP (BATCH*BLOCK_IN values), WGT (BLOCK_OUT
    /// rows of BLOCK_IN), ACC (BATCH*BLOCK_OUT) or UOP (one 32-bit word), sign-extended to int32.
    /// Throws tb::UserError when `elem` is outside the buffer or `buffer` is OUT/ACC_8BIT.
    std::vector<int32_t> sramElement(MemId buffer, uint32_t elem) const;
    /// One accumulator value: element `elem` of the acc buffer, lane `lane` < BATCH*BLOCK_OUT.
    int32_t accValue(uint32_t elem, uint32_t lane) const;

private:
    void execute(const Instruction& insn, uint32_t index);
    void load(const Instruction& insn, uint32_t index);
    void store(const Instruction& insn, uint32_t index);
    void gemm(const Instruction& insn, uint32_t index);
    void alu(const Instruction& insn, uint32_t index);
    void validate(const std::vector<Instruction>& program) const;
    std::vector<Uop> readUops(const Instruction& insn) const;  // the micro-ops [uop_bgn, uop_end)
    uint8_t* sramElem(MemId buffer, uint32_t elem, const Instruction& insn, uint32_t index);

    VtaConfig m_cfg;
    CycleModel m_model;
    Dram m_dram;
    std::vector<uint8_t> m_inp, m_wgt, m_acc, m_uop;  // SRAM buffers, element-major, packed bits
    std::array<size_t, 4> m_tokens{};                 // tokens per DepQueue
    SimStats m_stats;
};

}  // namespace tb::vta
