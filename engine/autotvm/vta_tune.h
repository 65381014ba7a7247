// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file vta_tune.h
/// \brief Tuning VTA's packed operators with the AutoTVM tuners, measured on the VTA simulator.
///
/// What it is: the AutoTVM tasks `conv2d_packed.vta`, `group_conv2d_packed.vta`, `dense_packed.vta`,
/// `add.vta` and `multiply.vta` (args and target as TVM writes them, vta/vta_task.h) and two measure functions
/// (task.h MeasureFunction) that run a config's instruction stream on the bit-exact simulator
/// (vta/vta_program.h VtaSimMeasurer): in this process (vtaSimMeasureFunction), or on a VTA
/// device server reached through an RPC tracker (vtaRpcMeasureFunction), as TVM's seed 004 measures
/// with RPCRunner(env.TARGET, host, port, number=5, timeout=60). Why: on a VTA the cost of a config
/// is the accelerator's time, not the host's; TVM measures it on the board (or reads the
/// simulator's clock); here the cost is the cycle model's time at the target's clock.
///
/// Costs are SIMULATED seconds (cycles / clock), in TVM's record format: a record of a VTA task
/// is a TVM record whose costs were measured on a simulated board. Per config:
/// - a config the packed operator refuses (SRAM, micro-op dependences, 2-D DMA, thread splits) is
///   INSTANTIATION_ERROR with the refusal's message (on the RPC path before anything is uploaded,
///   as TVM's builder fails before its runner);
/// - otherwise costs = the simulated seconds (one value in process: the simulation is
///   deterministic; `repeat` equal values through RPC, as the server answers a TVM timer request),
///   allCost = the host time spent; MeasureResult::deviceCounters = TVM's simulator stats()
///   (inp_load_nbytes, ..., alu_counter) of the run, on both paths (the RPC reply carries them in
///   TuneBench's own session protocol, beside TVM's fields; records never carry them);
/// - the first time a config index is measured its output is compared bit for bit with the int8
///   reference (packed_ops.h), a difference is WRONG_ANSWER.
/// Operands are random (packed_ops.h random*Operands, the seed given), the epilogues are those of
/// vta_program.h (TVM's VTA benchmarks; seed 004's clip + cast for the ALU tasks).
///
/// Tuners: any of tuner.h. The XGBoost tuner's "itervar"/"curve" features walk the template's
/// TIR loop nest, which VTA tasks do not have here (their lowering goes straight to VTA
/// instructions), so use knob features ("xgb_knob"); vtaTunerName maps the names.

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/autotvm/task.h"
#include "engine/measure/rpc_runner.h"
#include "engine/autotvm/tuner.h"
#include "engine/graph/graph.h"
#include "engine/vta/vta_config.h"
#include "engine/vta/vta_program.h"
#include "engine/vta/vta_schedule.h"

namespace tb::autotvm {

/// The conv2d_packed.vta / dense_packed.vta task of a workload: target vta::vtaTargetString(cfg),
/// args vta::conv2dTaskArgs / denseTaskArgs, the template's space, flop = 2 x MACs; no Template
/// (tmpl is null: the task cannot be instantiated as a TIR program, only measured by
/// vtaSimMeasureFunction). Throws tb::UserError when the workload is invalid for cfg.
Task makeVtaConv2dTask(const vta::VtaConfig& cfg, const vta::Conv2dWorkload& wl);
/// The group_conv2d_packed.vta task of a grouped workload: args vta::groupConv2dTaskArgs, space
/// vta::groupConv2dConfigSpace, flop = 2 x the MACs actually done (GroupConv2dWorkload::macs; not
/// TVM's add_flop, which ignores the groups). Throws tb::UserError for an invalid workload.
Task makeVtaGroupConv2dTask(const vta::VtaConfig& cfg, const vta::GroupConv2dWorkload& wl);
Task makeVtaDenseTask(const vta::VtaConfig& cfg, const vta::DenseWorkload& wl);
/// The add.vta / multiply.vta task of a workload (vta::aluTaskArgs; `scalarRhs`: the rhs as a
/// scalar, shape []), flop = one operation per output element (TVM counts the add/multiply only).
/// Throws tb::UserError when the workload is invalid for cfg or cfg's target has no ALU-only
/// operators (vta::vtaTargetHasAluOps: sim and intelfocl).
Task makeVtaAluTask(const vta::VtaConfig& cfg, const vta::AluWorkload& wl, bool scalarRhs = false);

/// One task of a network as seed 004 tunes it.
struct VtaNetworkTask {
    Task task;
    std::string workload;  ///< the workload in words (vta::workloadStr: "conv2d_packed 1x64x56x56 -> 64 ...")
    int count = 0;         ///< occurrences in the packed graph (the merged tasks' together)
};
/// Seed 004's task list of a network.
struct VtaNetworkTasks {
    int extracted = 0;  ///< tasks of the requested ops before the filter
    int filtered = 0;   ///< after the packed (rank > 4) and non-float filter ("Extracted N alu tasks")
    std::vector<VtaNetworkTask> tasks;  ///< after the scalar-rhs merge and dedupe, first-occurrence order
};

/// Seed 004's compile_network + extract_from_program + filter + merge: graph::quantize of the
/// float NCHW `network` (qconfig global_scale 8.0, skip_conv_layers [0]), vta::graphPack between
/// nn.max_pool2d and nn.global_avg_pool2d at cfg's BATCH / BLOCK_OUT / WGT_WIDTH,
/// vta::extractVtaTasks for `ops` (a subset of {"add", "multiply", "conv2d"}), each task made
/// with makeVtaConv2dTask / makeVtaAluTask. Throws tb::UserError when the network does not
/// quantize or pack (quantize.h, graph_pack.h name the node), for an unknown op, or for ALU ops
/// on a target without them (vta::vtaTargetHasAluOps).
VtaNetworkTasks extractVtaNetworkTasks(const vta::VtaConfig& cfg, const graph::Graph& network,
                                       const std::set<std::string>& ops);

/// The records seed 004's log_to_file writes for one measured config: makeRecord, and when the
/// task's args are two equal operands a second record with rhs = ["TENSOR", [], dtype]
/// (vta::scalarRhsArgs). Any task, like the seed's callback.
std::vector<record::AutoTvmRecord> logToFileRecords(const Task& task, const ConfigEntity& config,
                                                    const measure::MeasureResult& result);

/// The simulated measurement described above, for tasks made by makeVta*Task with the same cfg
/// (the task's workload is read back from its args). `seed` picks the operands. Throws
/// tb::UserError when a task is not a VTA task or its target's model is not cfg's.
MeasureFunction vtaSimMeasureFunction(const vta::VtaConfig& cfg, std::uint32_t seed = 1);

/// The program a VTA device server measures for (task, config) (vta/vta_program.h): target, the
/// model read from the task's target string (-model=...), task name, args, config dict, seed.
/// Throws tb::UserError when the task is not a VTA task or its target names no -model.
vta::VtaProgram makeVtaProgram(const Task& task, const ConfigEntity& config, std::uint32_t seed = 1);

/// TVM's RPCRunner for VTA tasks: every config is checked here (vta::checkVtaConfig; a refusal is
/// INSTANTIATION_ERROR, not uploaded), then its program (makeVtaProgram) is measured by an
/// RpcRunner with `options` (key, tracker, number, repeat, timeout...; rpc_runner.h: a device
/// is requested from the tracker per batch, the program uploaded as `<name>.vta.json` and run;
/// device and network failures are error records). The device is a `tunebench-cli rpc-server
/// --device vta` (measure/vta_sim_executor.h); a server simulating another VTA model answers
/// COMPILE_DEVICE naming both models. Throws tb::UserError for bad options (RpcRunner) or, when
/// called, for a task whose target is not cfg's.
MeasureFunction vtaRpcMeasureFunction(const vta::VtaConfig& cfg, const measure::RpcRunnerOptions& options,
                                      std::uint32_t seed = 1);

/// The tuner name to give makeTuner for a VTA task: "xgb" -> "xgb_knob", "xgb_rank" ->
/// "xgb_rank_knob", "xgb_rank_binary" -> "xgb_rank_binary_knob" (see the file comment), "grid" ->
/// "gridsearch"; other names unchanged. tb::UserError for an xgb tuner with itervar or curve
/// features.
std::string vtaTunerName(const std::string& name);

/// makeTuner(vtaTunerName(name), task, seed), except that the xgb tuners get `planSize` (TVM's
/// plan_size, 64 by default: the model is first fitted after that many measurements, so a
/// smaller one lets a short run use it). tb::UserError for a planSize < 1 or a bad name.
std::unique_ptr<Tuner> makeVtaTuner(const std::string& name, const Task& task, std::uint64_t seed = 0,
                                    int planSize = 64);

}  // namespace tb::autotvm
