// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file vta_config.h
/// \brief The VTA accelerator's hardware configuration: TVM's `vta_config.json`.
///
/// VTA (the Versatile Tensor Accelerator of TVM, apache/tvm-vta) is a parameterised design: the
/// data widths, the GEMM core's shape (BATCH x BLOCK_IN by BLOCK_OUT x BLOCK_IN) and the four
/// on-chip buffers (micro-op, input, weight, accumulator) are chosen by one JSON file,
/// `config/vta_config.json`, whose `LOG_*` fields are base-2 logarithms. Everything else in the
/// vta/ layer (the ISA's field widths, the simulator's SRAM sizes, the cycle model, later the
/// packed operators' lowering) is derived from this one value, so it exists before anything else.
///
/// Facts followed (apache/tvm-vta config/vta_config.json, config/pkg_config.py,
/// include/vta/hw_spec_const.h; apache/tvm vta/python/vta/environment.py):
/// - defaults: TARGET "sim", HW_VER "0.0.2", int8 inputs and weights (LOG_*_WIDTH 3), int32
///   accumulators (5), BATCH 1 (0), BLOCK 16 (4), buffers of 2^15 B (uop), 2^15 B (inp),
///   2^18 B (wgt), 2^17 B (acc);
/// - BLOCK_IN = BLOCK_OUT = BLOCK, OUT_WIDTH = INP_WIDTH, LOG_OUT_BUFF_SIZE =
///   LOG_ACC_BUFF_SIZE + LOG_OUT_WIDTH - LOG_ACC_WIDTH (pkg_config.py);
/// - per target (pkg_config.py): FPGA clock and AXI bus width; "ultra96" and "zcu104" run at
///   333 MHz with a 128-bit bus, every other target (pynq, de10nano, sim, tsim, intelfocl) takes
///   the Pynq-Z1 numbers, 100 MHz and a 64-bit bus; the host target string (environment.py).
///
/// What else differs per TARGET in TVM is on the compiler side and not part of this value: for
/// "intelfocl", graph_pack's device annotation, the heterogeneous CPU + VTA build and the ALU-only
/// operators (add.vta, multiply.vta: TVM's tutorial prints "ALU only op only available for
/// intelfocl target" elsewhere); the lowering reads `target` for those.
///
/// Units: `*_BUFF_SIZE` in bytes; an "element" of a buffer is one row the hardware reads at once
/// (one input vector BATCH x BLOCK_IN, one weight matrix BLOCK_OUT x BLOCK_IN, one accumulator
/// vector BATCH x BLOCK_OUT, one 32-bit micro-op); DRAM addresses in LOAD/STORE instructions
/// count such elements.

#include <cstdint>
#include <string>

namespace tb::vta {

/// TVM's vta_config.json plus the derived quantities of pkg_config.py / hw_spec_const.h.
struct VtaConfig {
    // --- the JSON fields, TVM's names and defaults ----------------------------------------
    std::string target = "sim";  ///< TARGET: sim, tsim, pynq, de10nano, ultra96, zcu104, intelfocl
    std::string hwVer = "0.0.2";  ///< HW_VER
    int logInpWidth = 3;          ///< LOG_INP_WIDTH: input element bits = 2^3 = 8
    int logWgtWidth = 3;          ///< LOG_WGT_WIDTH: weight element bits = 8
    int logAccWidth = 5;          ///< LOG_ACC_WIDTH: accumulator element bits = 32
    int logBatch = 0;             ///< LOG_BATCH: BATCH = 1
    int logBlock = 4;             ///< LOG_BLOCK: BLOCK_IN = BLOCK_OUT = 16
    int logUopBuffSize = 15;      ///< LOG_UOP_BUFF_SIZE: micro-op buffer bytes = 32 KiB
    int logInpBuffSize = 15;      ///< LOG_INP_BUFF_SIZE: input buffer bytes = 32 KiB
    int logWgtBuffSize = 18;      ///< LOG_WGT_BUFF_SIZE: weight buffer bytes = 256 KiB
    int logAccBuffSize = 17;      ///< LOG_ACC_BUFF_SIZE: accumulator buffer bytes = 128 KiB

    friend bool operator==(const VtaConfig&, const VtaConfig&) = default;

    /// Reads a vta_config.json text. Every one of TVM's keys (TARGET, LOG_INP_WIDTH, ...,
    /// LOG_ACC_BUFF_SIZE) is required, as TVM's PkgConfig reads them all; HW_VER is optional
    /// (default "0.0.2"); unknown keys are an error (a misspelt key would otherwise be ignored).
    /// `source` names the input in messages (a file path). Throws tb::UserError naming the source
    /// and the key on malformed JSON, a missing or mistyped key, an unknown target, or values out
    /// of range (see validate()).
    static VtaConfig fromJson(const std::string& text, const std::string& source = "vta_config.json");
    /// Reads a vta_config.json file; throws tb::UserError when it cannot be read or is invalid.
    static VtaConfig fromFile(const std::string& path);
    /// TVM's defaults with TARGET set to `target` (the pynq_sample.json / intelfocl_sample.json of
    /// apache/tvm-vta differ from vta_config.json only in TARGET). Throws tb::UserError on an
    /// unknown target.
    static VtaConfig forTarget(const std::string& target);
    /// This config as vta_config.json text (TVM's keys, 2-space indent); fromJson(toJson()) == *this.
    std::string toJson() const;

    /// Checks ranges and that the ISA fields fit TVM's 128-bit instruction and 32-bit micro-op
    /// (the buffer depths decide the index field widths). Throws tb::UserError naming the field.
    void validate() const;

    // --- derived: widths (bits) and the GEMM core's shape ------------------------------------
    int inpWidth() const { return 1 << logInpWidth; }  ///< bits of one input value
    int wgtWidth() const { return 1 << logWgtWidth; }  ///< bits of one weight value
    int accWidth() const { return 1 << logAccWidth; }  ///< bits of one accumulator value
    int logOutWidth() const { return logInpWidth; }    ///< LOG_OUT_WIDTH = LOG_INP_WIDTH
    int outWidth() const { return 1 << logOutWidth(); }  ///< bits of one stored output value
    int batch() const { return 1 << logBatch; }        ///< BATCH
    int blockIn() const { return 1 << logBlock; }      ///< BLOCK_IN (reduction axis)
    int blockOut() const { return 1 << logBlock; }     ///< BLOCK_OUT (output channels)

    // --- derived: buffer element ("row") sizes in bytes --------------------------------------
    int inpElemBytes() const { return batch() * blockIn() * inpWidth() / 8; }    ///< one input vector
    int wgtElemBytes() const { return blockOut() * blockIn() * wgtWidth() / 8; } ///< one weight matrix
    int accElemBytes() const { return batch() * blockOut() * accWidth() / 8; }   ///< one accumulator vector
    int outElemBytes() const { return batch() * blockOut() * outWidth() / 8; }   ///< one output vector
    static constexpr int kUopElemBytes = 4;   ///< a micro-op is 32 bits (VTA_UOP_WIDTH)
    static constexpr int kInsnBytes = 16;     ///< an instruction is 128 bits (VTA_INS_WIDTH)

    // --- derived: buffer sizes (bytes) and depths (elements) ---------------------------------
    int64_t uopBuffBytes() const { return int64_t(1) << logUopBuffSize; }
    int64_t inpBuffBytes() const { return int64_t(1) << logInpBuffSize; }
    int64_t wgtBuffBytes() const { return int64_t(1) << logWgtBuffSize; }
    int64_t accBuffBytes() const { return int64_t(1) << logAccBuffSize; }
    int logOutBuffSize() const { return logAccBuffSize + logOutWidth() - logAccWidth; }
    int64_t outBuffBytes() const { return int64_t(1) << logOutBuffSize(); }
    /// log2 of the number of elements per buffer (hw_spec_const.h's VTA_LOG_*_BUFF_DEPTH); these
    /// are the widths of the SRAM index fields of instructions and micro-ops.
    int logUopBuffDepth() const { return logUopBuffSize - 5 + 3; }
    int logInpBuffDepth() const { return logInpBuffSize - logBatch - logBlock - logInpWidth + 3; }
    int logWgtBuffDepth() const { return logWgtBuffSize - 2 * logBlock - logWgtWidth + 3; }
    int logAccBuffDepth() const { return logAccBuffSize - logBatch - logBlock - logAccWidth + 3; }
    int uopBuffDepth() const { return 1 << logUopBuffDepth(); }  ///< micro-ops in the uop buffer
    int inpBuffDepth() const { return 1 << logInpBuffDepth(); }  ///< input vectors in the inp buffer
    int wgtBuffDepth() const { return 1 << logWgtBuffDepth(); }  ///< weight matrices in the wgt buffer
    int accBuffDepth() const { return 1 << logAccBuffDepth(); }  ///< accumulator vectors in the acc buffer

    // --- derived: per target ------------------------------------------------------------------
    /// FPGA clock in MHz (pkg_config.py fpga_freq): 333 for ultra96/zcu104, else 100 (Pynq-Z1).
    int fpgaFreqMhz() const;
    /// log2 of the AXI bus width in bits (pkg_config.py fpga_log_axi_bus_width): 7 for
    /// ultra96/zcu104, else 6.
    int logBusWidth() const;
    /// Bytes the DMA moves per cycle: 2^logBusWidth / 8.
    int busBytes() const { return (1 << logBusWidth()) / 8; }
    /// TVM's `env.target_host` for this TARGET ("llvm -mtriple=armv7-none-linux-gnueabihf" for
    /// pynq and de10nano, "llvm -mtriple=aarch64-linux-gnu" for ultra96, "llvm" for sim, tsim,
    /// intelfocl). Throws tb::UserError for zcu104, as TVM raises "Unknown target".
    std::string targetHost() const;
    /// TVM's bitstream name, e.g. "1x16_i8w8a32_15_15_18_17" (pkg_config.py).
    std::string bitstream() const;
    /// TVM's `env.MODEL`: TARGET + "_" + bitstream, e.g. "sim_1x16_i8w8a32_15_15_18_17".
    std::string model() const { return target + "_" + bitstream(); }
    /// Peak multiply-accumulates per cycle of the GEMM core: BATCH * BLOCK_IN * BLOCK_OUT.
    int64_t peakMacsPerCycle() const { return int64_t(batch()) * blockIn() * blockOut(); }
};

/// The TARGET names TVM knows (pkg_config.py, environment.py).
bool isKnownVtaTarget(const std::string& target);

}  // namespace tb::vta
