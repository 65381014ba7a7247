// SPDX-License-Identifier: Apache-2.0
#pragma once
// Workload keys as people read them. A key names its task by a DAG hash (or a function name) and
// the task's arguments; the arguments (the shapes of the tensors) are what tells the eighteen
// "vm_mod_fused_nn_conv2d_add_nn_relu" tasks of a network apart, so tables show them beside the
// description, as TVM shows a task's workload key beside it.

#include <QString>

namespace tb::models {

/// The arguments of a workload key, compact. auto_scheduler keys list the shape of every input and
/// output tensor, `["<md5>", [1, 56, 56, 64], [3, 3, 64, 64], [1, 1, 1, 64], [1, 56, 56, 64]]`, and
/// give "1×56×56×64, 3×3×64×64, 64 → 1×56×56×64" (the last tensor is the output; an input of rank 3
/// or more whose dimensions are all 1 but the last, a bias or scale, shows that one); older flat keys and
/// registered functions, `["matmul_add", 1024, 1024, 1024, "float32"]`, give
/// "1024, 1024, 1024, float32"; AutoTVM keys, `["conv2d_nchw.x86", ["TENSOR", [1, 3, 224, 224],
/// "float32"], [2, 2], ...]`, give "1×3×224×224, …, (2, 2), …". Empty when the key is not a JSON list.
QString workloadArgsText(const QString& workloadKey);

/// The name part of a workload key: the function or task name, or a DAG hash cut to 8 digits
/// followed by "…". The whole key when it is not a JSON list.
QString workloadNameText(const QString& workloadKey);

/// "<description>  <args>": a task as the task table shows it. `description` empty: the key's
/// name part is used.
QString workloadLabel(const QString& description, const QString& workloadKey);

}  // namespace tb::models
