// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file task_args.h
/// \brief The arguments of an AutoTVM task as TVM serializes them in records
/// (python/tvm/autotvm/task/task.py `serialize_args`), read back for a template.
///
/// An AutoTVM task is (template name, args): the args are the operator's inputs and attributes
/// in the order the TOPI compute takes them, e.g. for `conv2d_NCHWc.x86`
/// `[["TENSOR", [1, 3, 224, 224], "float32"], ["TENSOR", [64, 3, 7, 7], "float32"], [2, 2],
/// [3, 3, 3, 3], [1, 1], "NCHW", "NCHW", "float32"]`. Tensors are `["TENSOR", shape, dtype]`,
/// attributes plain JSON (ints, lists, strings, null). A template reads its args through this
/// class so that a malformed record fails with a message naming the task and the argument.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/topi/nn/utils.h"

namespace tb::autotvm {

/// A serialized tensor argument: static shape and dtype.
struct TensorArg {
    std::vector<std::int64_t> shape;
    std::string dtype;
};

/// Read access to a task's serialized args. Every accessor throws tb::UserError naming the task
/// and the argument position when the value has another form.
class TaskArgs {
public:
    TaskArgs(std::string taskName, nlohmann::ordered_json args);

    const std::string& taskName() const { return m_taskName; }
    std::size_t size() const { return m_args.size(); }
    const nlohmann::ordered_json& raw(std::size_t i) const;
    const nlohmann::ordered_json& json() const { return m_args; }

    /// Argument i as `["TENSOR", shape, dtype]` (shape of integers; dynamic dims are refused).
    TensorArg tensor(std::size_t i) const;
    /// Argument i is null (an absent bias, a default out_dtype).
    bool isNull(std::size_t i) const;
    /// Argument i as an int or a list of ints (an int becomes a one-element list).
    std::vector<std::int64_t> ints(std::size_t i) const;
    /// Argument i as an int or a pair (strides, dilation): an int v gives (v, v).
    std::pair<std::int64_t, std::int64_t> intPair(std::size_t i) const;
    /// Argument i as a string.
    std::string str(std::size_t i) const;
    /// Argument i as TVM `get_pad_tuple(padding, kernel)` reads it: an int, 2 or 4 ints, or the
    /// strings "VALID" / "SAME" (SAME: kernel-1 in total, the odd element on top/left). `kernelH`
    /// and `kernelW` are the (dilated) kernel extents.
    topi::nn::PadTuple padding(std::size_t i, std::int64_t kernelH, std::int64_t kernelW) const;

    /// Throws tb::UserError unless there are at least `n` arguments.
    void requireAtLeast(std::size_t n) const;

private:
    std::string where(std::size_t i) const;
    std::string m_taskName;
    nlohmann::ordered_json m_args;
};

/// Python's floor division `a // b` for b > 0 (TVM's output-size formulas).
std::int64_t floorDiv(std::int64_t a, std::int64_t b);

}  // namespace tb::autotvm
