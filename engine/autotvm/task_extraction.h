// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file task_extraction.h
/// \brief AutoTVM task extraction for x86 (TVM `autotvm.task.extract_from_program` with the x86
/// op strategies, python/tvm/relay/op/strategy/x86.py, v0.14), limited to the operators whose
/// templates run here.
///
/// TVM builds the program once with every AutoTVM implementation an op strategy offers and records
/// one task per distinct (template, args), in the order the ops are reached. On x86:
///   - `nn.conv2d` NCHW/OIHW, groups 1 -> `conv2d_NCHWc.x86` with args
///     [data, kernel, strides, padding (4 values), dilation, "NCHW", "NCHW", out_dtype]
///     (topi.x86.conv2d_nchw calls the conv2d_NCHWc template);
///   - `nn.dense` -> `dense_pack.x86` and `dense_nopack.x86` with [data, weight, null, out_dtype].
/// Depthwise and grouped convolutions (depthwise_conv2d_NCHWc.x86, group_conv2d_nchw.x86) and
/// NHWC layouts are skipped and counted, because their templates do not run here yet.

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
    std::vector<ExtractedTask> tasks;  ///< distinct, in graph order
    int skippedOps = 0;                ///< conv2d/dense ops whose templates do not run here
};

/// The AutoTVM x86 tasks of `graph` (see the file comment). Never throws for an unsupported op.
ExtractedTasks extractX86Tasks(const graph::Graph& graph);

/// The args of TVM's conv2d_NCHWc.x86 task for an NCHW conv2d (what topi.x86.conv2d_nchw passes
/// the template): [["TENSOR", data NCHW, "float32"], ["TENSOR", kernel OIHW, "float32"], strides
/// (2), padding (4: top, left, bottom, right), dilation (2), "NCHW", "NCHW", "float32"], with
/// strides, padding and dilation from the conv's attrs.
nlohmann::ordered_json conv2dNCHWcTaskArgs(const std::vector<std::int64_t>& dataNCHW,
                                           const std::vector<std::int64_t>& kernelOIHW, const graph::Attrs& attrs);

}  // namespace tb::autotvm
