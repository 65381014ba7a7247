// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file vta_program.h
/// \brief Measuring one config of a VTA task on the simulator, and the "VTA program": the small
/// text a client uploads to a VTA device server so that the server measures that config.
///
/// Why: TVM tunes VTA operators through its RPC stack. A VTA board (or TVM's simulator behind
/// `python -m vta.exec.rpc_server`) registers with the tracker under the key env.TARGET, and
/// AutoTVM's RPCRunner(env.TARGET, host, port, number=5, timeout=60) (seed 004) uploads each
/// built module and times it there. Here the "module" is a description of the config instead of
/// code: the server (measure/vta_sim_executor.h) lowers it to VTA instructions and runs them on
/// its bit-exact simulator, exactly as the in-process path (autotvm/vta_tune.h) does, through the
/// same VtaSimMeasurer, so both paths give the same simulated seconds for the same config.
///
/// ## The VTA program (version 1), a one-line JSON object
/// ```
/// {"format": "tunebench.vta_program", "version": 1,
///  "target": "ext_dev -keys=vta,cpu -device=vta -model=intelfocl_1x16_i8w8a32_15_15_18_17",
///  "model": "intelfocl_1x16_i8w8a32_15_15_18_17",
///  "task": "add.vta", "args": [["TENSOR", [1, 4, 56, 56, 1, 16], "int32"], ...],
///  "config": {"index": 12, "code_hash": null, "entity": [["tile_co", "sp", [-1, 2]], ...]},
///  "seed": 1}
/// ```
/// - target, task, args: the AutoTVM task as its records name it (vta_task.h);
/// - model: the VTA the program was built for (TVM env.MODEL = TARGET_BITSTREAM): a server whose
///   simulated VTA has another model refuses it (COMPILE_DEVICE, naming both), never measures it;
/// - config: TVM's config dict (ConfigEntity::toJson); the server rebuilds the task's space from
///   the args and requires the index to decode to this entity;
/// - seed: the operands' random seed (packed_ops.h random*Operands); the simulated time does not
///   depend on the data, the correctness check does.
/// Readers refuse another format or version and unknown keys (tb::UserError naming them).
///
/// ## One measurement (VtaSimMeasurer::measure)
/// A fresh Simulator per config; a config the packed operator refuses (SRAM, micro-op dependences,
/// 2-D DMA, thread splits) is INSTANTIATION_ERROR with the refusal; otherwise the simulated time
/// (RunReport::timeSeconds: cycles / clock) and TVM's simulator counters (stats(): inp_load_nbytes,
/// wgt_load_nbytes, acc_load_nbytes, uop_load_nbytes, out_store_nbytes, gemm_counter,
/// alu_counter). The first time a config index of a task is measured its output is compared bit
/// for bit with the int8 reference (packed_ops.h): a difference is WRONG_ANSWER. Epilogues: TVM's
/// VTA benchmarks' (conv2d and group_conv2d >> 8, + bias, clip [0, 127]; dense >> 8, clip) and seed 004's ALU
/// template (clip [0, 127], cast int8).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/autotvm/space.h"
#include "engine/vta/packed_ops.h"
#include "engine/vta/simulator.h"
#include "engine/vta/vta_config.h"

namespace tb::vta {

/// TVM MeasureErrorNO values (REFERENCE-TVM §4.3) a VTA measurement produces; the vta layer does
/// not depend on engine/measure, which has the full enum with the same numbers.
inline constexpr int kVtaNoError = 0;
inline constexpr int kVtaInstantiationError = 1;
inline constexpr int kVtaCompileDevice = 3;
inline constexpr int kVtaWrongAnswer = 5;

/// The epilogue a task's measurement applies (file comment). tb::UserError for a non-VTA name.
std::vector<EpilogueOp> vtaTaskEpilogue(const std::string& taskName);

/// Checks that `config` instantiates for the task (checkConv2dSchedule / checkGroupConv2dSchedule /
/// checkDenseSchedule / checkAluSchedule of the workload its args describe, with vtaTaskEpilogue).
/// Throws tb::UserError with the packed operator's reason otherwise, or when the args are not the
/// task's.
void checkVtaConfig(const VtaConfig& cfg, const std::string& taskName, const nlohmann::ordered_json& args,
                    const autotvm::ConfigEntity& config);

/// The outcome of measuring one config.
struct VtaMeasureOutcome {
    int errorNo = kVtaNoError;  ///< TVM MeasureErrorNO
    std::string errorMsg;
    double seconds = 0;         ///< simulated seconds (0 on error)
    std::uint64_t cycles = 0;   ///< simulated cycles
    SimStats stats;             ///< the run's counters (zero on error)
    std::size_t instructions = 0;
    bool ok() const { return errorNo == kVtaNoError; }
};

/// TVM's stats() names -> values of `s`.
std::map<std::string, std::uint64_t> statsMap(const SimStats& s);

/// Measures configs of VTA tasks on the simulator of one VtaConfig (file comment). Keeps, per
/// task (name + args + seed), the operands, the reference output and the config indices already
/// verified. Not thread safe.
class VtaSimMeasurer {
public:
    /// Throws tb::UserError when `cfg` is invalid.
    explicit VtaSimMeasurer(VtaConfig cfg);
    const VtaConfig& config() const { return m_cfg; }

    /// Measures `config` of the task (taskName, args) with operands of `seed`. Never throws for a
    /// config the operator refuses (INSTANTIATION_ERROR); throws tb::UserError when the task is
    /// not a VTA task, its args are malformed, its packed shapes' BATCH/BLOCK are not this
    /// VTA's, or an operand would exceed 2^26 elements.
    VtaMeasureOutcome measure(const std::string& taskName, const nlohmann::ordered_json& args,
                              const autotvm::ConfigEntity& config, std::uint32_t seed = 1);

private:
    struct Case;
    Case& caseFor(const std::string& taskName, const nlohmann::ordered_json& args, std::uint32_t seed);

    VtaConfig m_cfg;
    std::map<std::string, std::shared_ptr<Case>> m_cases;
};

/// "tunebench.vta_program" and the version this build writes and reads.
inline constexpr const char* kVtaProgramFormat = "tunebench.vta_program";
inline constexpr int kVtaProgramVersion = 1;
/// The file suffix of an uploaded VTA program.
inline constexpr const char* kVtaProgramSuffix = ".vta.json";

/// A VTA program (file comment).
struct VtaProgram {
    std::string target;
    std::string model;
    std::string taskName;
    nlohmann::ordered_json args;
    nlohmann::ordered_json config;  ///< TVM's config dict
    std::uint32_t seed = 1;

    /// The one-line JSON text.
    std::string toText() const;
    /// Parses a program. Throws tb::UserError naming the problem: not JSON, another format or
    /// version, a missing, mistyped or unknown key.
    static VtaProgram fromText(std::string_view text);
};

}  // namespace tb::vta
