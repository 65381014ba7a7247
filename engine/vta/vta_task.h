// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file vta_task.h
/// \brief How a VTA packed operator appears as an AutoTVM task: its target string, task name and
/// serialized args, as TVM writes them into tuning records, and back from a record to a workload
/// and its config space.
///
/// Why: tuning records and `log check` identify a task by (target, template name, args). TVM's
/// VTA flow (vta/python/vta/top/, TVM <= 0.18) extracts `conv2d_packed.vta` and
/// `dense_packed.vta` tasks from a graph-packed network, so their args are the packed tensors:
/// - conv2d_packed.vta: `[["TENSOR", [N/B, C/BI, H, W, B, BI], "int8"], ["TENSOR", [O/BO, C/BI,
///   KH, KW, BO, BI], "int8"], [sh, sw], [top, left, bottom, right], [1, 1] (dilation),
///   "NCHW{B}n{BI}c", "int32"]` (the compute signature conv2d_packed(data, kernel, strides,
///   padding, dilation, layout, out_dtype));
/// - group_conv2d_packed.vta (vta_group_conv2d.py, relay's strategy wrap_compute_conv2d with
///   has_groups): `[data as conv2d's, ["TENSOR", [O/BO, C/groups/BI, KH, KW, BO, BI], "int8"],
///   [sh, sw], [top, left, bottom, right], [1, 1], groups, "int32"]`
///   (group_conv2d_packed(data, kernel, strides, padding, dilation, group, out_dtype));
/// - dense_packed.vta: `[["TENSOR", [N/B, C/BI, B, BI], "int8"], ["TENSOR", [O/BO, C/BI, BO, BI],
///   "int8"], null (no bias), "int32"]` (dense_packed(data, weight, bias, out_dtype)).
/// - add.vta / multiply.vta (op.py add_packed(cfg, lhs, rhs) / multiply_packed, registered for the
///   "vta" strategy of relay's add/multiply when env.TARGET is sim or intelfocl; seed 004,
///   tune_alu_vta.py): `[["TENSOR", [N/B, C/BO, H, W, B, BO], "int32"|"int8"], ["TENSOR", <the
///   same shape, or [] for a scalar>, "int32"|"int8"]]`. Seed 004 merges a task whose rhs is a
///   scalar into the task with rhs = lhs (args[1] = args[0]) before tuning, and its log_to_file
///   writes every record of a task with lhs == rhs a second time with rhs = ["TENSOR", [], dtype]
///   (scalarRhsArgs), so that both relay forms find their config later. Both forms decode here.
/// The target is TVM's `tvm.target.vta(model=env.MODEL)`: "ext_dev -keys=vta,cpu -device=vta
/// -model=<TARGET>_<BITSTREAM>" (VtaConfig::model()). BATCH and BLOCK are read back from the
/// packed shapes, which is all a space depends on, so a record's space is rebuilt from its args
/// alone.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/autotvm/space.h"
#include "engine/vta/vta_config.h"
#include "engine/vta/vta_schedule.h"

namespace tb::vta {

/// "conv2d_packed.vta" and "dense_packed.vta".
inline constexpr const char* kConv2dPackedTask = "conv2d_packed.vta";
inline constexpr const char* kDensePackedTask = "dense_packed.vta";
/// "group_conv2d_packed.vta".
inline constexpr const char* kGroupConv2dPackedTask = "group_conv2d_packed.vta";
/// "add.vta" and "multiply.vta" (the names aluTemplateName gives).
inline constexpr const char* kAddTask = "add.vta";
inline constexpr const char* kMultiplyTask = "multiply.vta";

/// TVM's VTA target string for `cfg`: "ext_dev -keys=vta,cpu -device=vta -model=sim_1x16_i8w8a32_15_15_18_17".
std::string vtaTargetString(const VtaConfig& cfg);

/// True for a target string of TVM's VTA form ("ext_dev ... -device=vta ...").
bool isVtaTargetString(const std::string& target);
/// The `-model=` value of a target string ("intelfocl_1x16_i8w8a32_15_15_18_17"), nullopt when it
/// has none. Records and VTA programs carry the model; a device or a run accepts only its own.
std::optional<std::string> vtaModelOfTarget(const std::string& target);
/// The VTA config a target string names, for the window and CLIs that take a target: TVM's
/// defaults of the TARGET in "-model=<TARGET>_<BITSTREAM>" (VtaConfig::forTarget), which must give
/// back exactly that model. Throws tb::UserError naming the problem when the string is not of
/// the VTA form, has no -model, names an unknown TARGET, or a model that is not the default
/// config of its TARGET (a custom vta_config.json must be given as a file instead).
VtaConfig vtaConfigFromTargetString(const std::string& target);

/// The record args of a conv2d_packed.vta / dense_packed.vta task (file comment). Throws
/// tb::UserError when the workload is invalid for `cfg`.
nlohmann::ordered_json conv2dTaskArgs(const VtaConfig& cfg, const Conv2dWorkload& wl);
nlohmann::ordered_json denseTaskArgs(const VtaConfig& cfg, const DenseWorkload& wl);

/// Reads the args back: the workload, and in `shapeCfg` (when given) the default config with
/// BATCH and BLOCK taken from the packed shapes. Throws tb::UserError naming the problem when the
/// args are not of that form (wrong arity, a tensor that is not int8 of rank 6 / 4, shapes that
/// disagree, a non-power-of-two BATCH or BLOCK, dilation other than 1, asymmetric padding).
Conv2dWorkload conv2dWorkloadFromArgs(const nlohmann::ordered_json& args, VtaConfig* shapeCfg = nullptr);
DenseWorkload denseWorkloadFromArgs(const nlohmann::ordered_json& args, VtaConfig* shapeCfg = nullptr);

/// The record args of a group_conv2d_packed.vta task (file comment). Throws tb::UserError when
/// the workload is invalid for `cfg` (GroupConv2dWorkload::validate).
nlohmann::ordered_json groupConv2dTaskArgs(const VtaConfig& cfg, const GroupConv2dWorkload& wl);
/// Reads them back (as conv2dWorkloadFromArgs). Throws tb::UserError naming the problem: wrong
/// arity, groups not a positive integer, out_dtype not int32, a kernel whose channel blocks times
/// groups are not the data's, and conv2dWorkloadFromArgs' errors.
GroupConv2dWorkload groupConv2dWorkloadFromArgs(const nlohmann::ordered_json& args, VtaConfig* shapeCfg = nullptr);

/// The record args of an add.vta / multiply.vta task (file comment): lhs and rhs packed tensors of
/// the workload's shape with dtype int8 or int32 (AluWorkload::lhsInt8 / rhsInt8); with
/// `scalarRhs` the rhs is ["TENSOR", [], dtype]; with AluWorkload::rhsBroadcast it is graph_pack's
/// per-channel constant ["TENSOR", [C/BLOCK, 1, 1, BATCH, BLOCK], dtype] (a batch-norm scale or
/// shift inside the packed region). Throws tb::UserError when the workload is invalid for `cfg`, or
/// for a scalar and per-channel rhs at once.
nlohmann::ordered_json aluTaskArgs(const VtaConfig& cfg, const AluWorkload& wl, bool scalarRhs = false);
/// Reads add.vta / multiply.vta args back (`taskName` picks the operation). A scalar rhs (shape
/// []) gives the workload of seed 004's merged task (rhs of the lhs's shape, the scalar's dtype);
/// `scalarRhs`, when given, tells which form was read. Throws tb::UserError naming the problem:
/// another task name, not two args, a tensor that is not int8/int32 (float32 ALU tasks stay on the
/// CPU in TVM, seed 004 filters them out), an lhs that is not a packed rank-6 tensor (TVM's
/// schedule_alu_packed offloads only those), an rhs shape that is neither the lhs's, the per-channel
/// (C/BLOCK, 1, 1, BATCH, BLOCK) (read as rhsBroadcast) nor [], a
/// non-power-of-two BATCH or BLOCK.
AluWorkload aluWorkloadFromArgs(const std::string& taskName, const nlohmann::ordered_json& args,
                                VtaConfig* shapeCfg = nullptr, bool* scalarRhs = nullptr);
/// Seed 004's record duplication: when `args` are two operands with args[0] == args[1], the args
/// with the rhs replaced by ["TENSOR", [], <lhs dtype>] (the scalar form relay extracts for
/// `x + const`); nullopt otherwise (other arity, operands that differ).
std::optional<nlohmann::ordered_json> scalarRhsArgs(const nlohmann::ordered_json& args);
/// True when TVM offloads add.vta / multiply.vta for this TARGET (op.py registers the ALU
/// strategies for sim and intelfocl only; seed 004 refuses any other: "ALU only op only available
/// for intelfocl target").
bool vtaTargetHasAluOps(const VtaConfig& cfg);

/// A workload with its name in TVM's benchmark ("C2").
struct NamedConv2dWorkload {
    std::string name;
    Conv2dWorkload wl;
};
/// resnet-18's conv2d_packed workloads C2..C11 of TVM's VTA benchmark
/// (vta/tests/python/integration/test_benchmark_topi_conv2d.py) at batch cfg.batch(); C1, the
/// first 7x7 layer, stays on the CPU in TVM's VTA flow.
std::vector<NamedConv2dWorkload> resnet18Conv2dWorkloads(const VtaConfig& cfg);

/// A grouped workload with a short name ("G1").
struct NamedGroupConv2dWorkload {
    std::string name;
    GroupConv2dWorkload wl;
};
/// Mobilenet-like 3x3 pad-1 grouped layers at batch cfg.batch() (C = O): G1 56x56x128 and G2 (its
/// stride-2 form), G3 28x28x256, G4 14x14x512, G6 7x7x1024 with groups = C/BLOCK (the packed
/// depthwise form: one channel block per group), G5 14x14x256 with two blocks per group
/// (resnext-like).
std::vector<NamedGroupConv2dWorkload> mobilenetGroupConv2dWorkloads(const VtaConfig& cfg);

/// An ALU workload with a short name ("add_64x56x56").
struct NamedAluWorkload {
    std::string name;
    AluWorkload wl;
};
/// The add and multiply of resnet-18's packed residual blocks after graph_pack, at batch
/// cfg.batch(): outputs (N/B, C/16, H, W, B, 16) for (C, H, W) = (64, 56, 56), (128, 28, 28),
/// (256, 14, 14), (512, 7, 7), int32 operands; per shape the add first ("add_64x56x56",
/// "multiply_64x56x56", ...).
std::vector<NamedAluWorkload> resnet18AluWorkloads(const VtaConfig& cfg);

/// True for the task names above.
bool isVtaTaskName(const std::string& taskName);
/// The config space of a VTA task from its record args (conv2dConfigSpace / denseConfigSpace of
/// the workload the args describe; aluConfigSpace for add.vta / multiply.vta). Throws tb::UserError for another task name or bad args.
autotvm::ConfigSpace vtaTaskSpace(const std::string& taskName, const nlohmann::ordered_json& args);

}  // namespace tb::vta
