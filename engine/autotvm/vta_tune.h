// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file vta_tune.h
/// \brief Tuning VTA's packed operators with the AutoTVM tuners, measured on the VTA simulator.
///
/// What it is: the AutoTVM tasks `conv2d_packed.vta` and `dense_packed.vta` (args and target as
/// TVM writes them, vta/vta_task.h) and a measure function (task.h MeasureFunction) that runs a
/// config's instruction stream on the bit-exact simulator (vta/packed_ops.h). Why: on a VTA the
/// cost of a config is the accelerator's time, not the host's; TVM measures it on the board (or
/// reads the simulator's clock); here the cost is the cycle model's time at the target's clock.
///
/// Measurement (per config, one fresh Simulator each):
/// - a config the packed operator refuses (SRAM, micro-op dependences, 2-D DMA, thread splits:
///   checkConv2dSchedule / checkDenseSchedule) is INSTANTIATION_ERROR with the refusal's message;
/// - otherwise costs = {simulated seconds} (RunReport::timeSeconds: cycles / clock), allCost = the
///   host time the simulation took; the simulation is deterministic, so one repeat suffices;
/// - the first time a config index is measured its output is compared bit for bit with the int8
///   reference (packed_ops.h), a difference is WRONG_ANSWER.
/// Operands are random (packed_ops.h random*Operands, fixed seed), the epilogue is that of TVM's
/// VTA benchmarks: conv2d >> 8, + bias, clip [0, 127]; dense >> 8, clip [0, 127].
///
/// Tuners: any of tuner.h. The XGBoost tuner's "itervar"/"curve" features walk the template's
/// TIR loop nest, which VTA tasks do not have here (their lowering goes straight to VTA
/// instructions), so use knob features ("xgb_knob"); vtaTunerName maps the names.

#include <cstdint>
#include <memory>
#include <string>

#include "engine/autotvm/task.h"
#include "engine/autotvm/tuner.h"
#include "engine/vta/vta_config.h"
#include "engine/vta/vta_schedule.h"

namespace tb::autotvm {

/// The conv2d_packed.vta / dense_packed.vta task of a workload: target vta::vtaTargetString(cfg),
/// args vta::conv2dTaskArgs / denseTaskArgs, the template's space, flop = 2 x MACs; no Template
/// (tmpl is null: the task cannot be instantiated as a TIR program, only measured by
/// vtaSimMeasureFunction). Throws tb::UserError when the workload is invalid for cfg.
Task makeVtaConv2dTask(const vta::VtaConfig& cfg, const vta::Conv2dWorkload& wl);
Task makeVtaDenseTask(const vta::VtaConfig& cfg, const vta::DenseWorkload& wl);

/// The simulated measurement described above, for tasks made by makeVta*Task with the same cfg
/// (the task's workload is read back from its args). `seed` picks the operands. Throws
/// tb::UserError when a task is not a VTA task or its target's model is not cfg's.
MeasureFunction vtaSimMeasureFunction(const vta::VtaConfig& cfg, std::uint32_t seed = 1);

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
