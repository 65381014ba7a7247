// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file task_extraction.h
/// \brief AutoTVM task extraction (TVM `autotvm.task.extract_from_program`, python/tvm/autotvm/task/
/// relay_integration.py, v0.14) with the x86, arm_cpu and mali op strategies (python/tvm/relay/op/
/// strategy/x86.py, arm_cpu.py, mali.py), for float32 NCHW conv2d and dense.
///
/// TVM lowers the program (AlterOpLayout disabled) while tracing: select_implementation calls the
/// compute of *every* implementation the op strategy offers, and each AutoTVM template compute
/// records one task (template, args); distinct tasks are kept in the order they are reached, i.e.
/// graph order, then strategy order per op. Per op:
///   x86 (`llvm ...`):
///   - `nn.conv2d` NCHW/OIHW, groups 1 -> `conv2d_NCHWc.x86` with args
///     [data, kernel, strides, padding (4 values), dilation, "NCHW", "NCHW", out_dtype]
///     (topi.x86.conv2d_nchw calls the conv2d_NCHWc template);
///   - depthwise NCHW -> `depthwise_conv2d_NCHWc.x86`, same arg form;
///   - `nn.dense` -> `dense_nopack.x86` (plevel 5), `dense_pack.x86` (plevel 10) with
///     [data, weight, null, out_dtype].
///   arm_cpu (`llvm -device=arm_cpu ...`, no DSP, float32):
///   - conv2d NCHW/OIHW, groups 1 -> `conv2d_nchw_spatial_pack.arm_cpu` [data, kernel, strides,
///     padding (4), dilation, out_dtype], `conv2d_NCHWc.x86` (conv2d_nchw.x86 is offered too), and
///     for 3x3 stride 1 dilation 1 `conv2d_nchw_winograd.arm_cpu` (same args as spatial_pack);
///   - depthwise NCHW -> `depthwise_conv2d_nchw.arm_cpu` (same args), and with multiplier 1,
///     dilation 1 `depthwise_conv2d_NCHWc.x86`;
///   - dense as on x86.
///   mali (`opencl -device=mali ...`, strategy/mali.py, float32):
///   - conv2d NCHW/OIHW, groups 1 -> `conv2d_nchw_spatial_pack.mali` (plevel 10) and, for 3x3
///     stride 1 dilation 1, `conv2d_nchw_winograd.mali` (plevel 5), args as arm_cpu's;
///   - depthwise NCHW -> `depthwise_conv2d_nchw.mali` (same args); other grouped convs: none
///     (TVM raises "group_conv2d is not supported for mali"; counted in skippedOps);
///   - `nn.dense` -> `dense.mali` with [data, weight, null, out_dtype].
/// Tasks whose templates cannot be instantiated here are listed apart (`notInstantiable`), in the
/// same order; ops with no AutoTVM template here (grouped convs, NHWC, other dtypes) are counted.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/graph/graph.h"

namespace tb::autotvm {

struct ExtractedTask {
    std::string taskName;
    nlohmann::ordered_json args;
};

struct ExtractedTasks {
    std::vector<ExtractedTask> tasks;  ///< distinct tasks whose templates run here, in TVM's order
    /// Distinct tasks TVM extracts whose templates have a space here but no instantiation
    /// (e.g. depthwise_conv2d_NCHWc.x86), in TVM's order.
    std::vector<ExtractedTask> notInstantiable;
    std::vector<ExtractedTask> all;  ///< both, in TVM's order (what extract_from_program returns)
    int skippedOps = 0;  ///< conv2d/dense ops with no AutoTVM template here
};

/// The AutoTVM x86 tasks of `graph` (see the file comment). Never throws for an unsupported op.
ExtractedTasks extractX86Tasks(const graph::Graph& graph);
/// The AutoTVM arm_cpu tasks of `graph` (see the file comment).
ExtractedTasks extractArmCpuTasks(const graph::Graph& graph);
/// The AutoTVM mali tasks of `graph` (see the file comment).
ExtractedTasks extractMaliTasks(const graph::Graph& graph);
/// True for an arm_cpu target (`-device=arm_cpu` or the `arm_cpu` key).
bool isArmCpuTarget(const std::string& target);
/// True for a Mali target: kind `opencl` with `-device=mali` or the `mali` key.
bool isMaliTarget(const std::string& target);
/// The relay op a task's template implements: "nn.dense" for the dense templates, else
/// "nn.conv2d" (TVM extract_from_program's `ops=` filter, e.g. the mobile GPU tutorial's
/// `ops=(relay.op.get("nn.conv2d"),)`).
std::string relayOpOf(const std::string& taskName);
/// extractMaliTasks for a Mali target, extractArmCpuTasks for an arm_cpu target, extractX86Tasks for
/// any other `llvm` target; UserError for another GPU target (`cuda ...`, plain `opencl ...`: no
/// templates for them yet).
ExtractedTasks extractTasks(const graph::Graph& graph, const std::string& target);

/// The args of TVM's conv2d_NCHWc.x86 task for an NCHW conv2d (what topi.x86.conv2d_nchw passes
/// the template): [["TENSOR", data NCHW, "float32"], ["TENSOR", kernel OIHW, "float32"], strides
/// (2), padding (4: top, left, bottom, right), dilation (2), "NCHW", "NCHW", "float32"], with
/// strides, padding and dilation from the conv's attrs.
nlohmann::ordered_json conv2dNCHWcTaskArgs(const std::vector<std::int64_t>& dataNCHW,
                                           const std::vector<std::int64_t>& kernelOIHW, const graph::Attrs& attrs);
/// The args of TVM's arm_cpu conv tasks (conv2d_nchw_spatial_pack, conv2d_nchw_winograd,
/// depthwise_conv2d_nchw): [data NCHW, kernel OIHW, strides (2), padding (4), dilation (2),
/// "float32"], from the conv's attrs.
nlohmann::ordered_json armCpuConvTaskArgs(const std::vector<std::int64_t>& dataNCHW,
                                          const std::vector<std::int64_t>& kernelOIHW, const graph::Attrs& attrs);

}  // namespace tb::autotvm
