// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file lower_dag.h
/// \brief Lowering of an unscheduled ComputeDAG (TVM's `tvm.lower` of a default `te.create_schedule`).
///
/// Every compute op becomes its own root loop nest, in stage order, over its spatial axes (then its
/// reduce axes). A reduction `C[i, j] = sum(A[i, k] * B[k, j], k)` becomes
/// ```
/// for (i, 0, n) { for (j, 0, m) {
///   C[i, j] = 0f
///   for (k, 0, l) { C[i, j] = (C[i, j] + (A[i, k]*B[k, j])) } } }
/// ```
/// (init = the reduction's `init` or the combiner's identity: 0, lowest, highest float). A reduction
/// condition becomes an IfThenElse around the update. Ops that are neither io tensors nor
/// placeholders (intermediate stages such as `pad_temp`, softmax's max/sum) get a Global Allocate
/// around the whole body. The function's arguments are `dag.tensors()` in order.
///
/// This is the reference lowering used by tests and as the "no schedule" baseline; the schedule
/// layer's State lowering produces the same IR with split/fused/annotated loops and cache stages.

#include <map>
#include <string>

#include "engine/lower/loop_ir.h"
#include "engine/te/compute_dag.h"

namespace tb::lower {

/// Lower `dag` without a schedule (see the file comment). Throws InternalError for multi-output
/// compute ops (none in the zoo). The result is already simplified.
LoweredFunc lowerComputeDag(const te::ComputeDAG& dag, const std::string& name = "default_function");

/// Rewrite te loads of the operations in `bufferOf` into buffer loads, recursively (the building
/// block every lowering needs: a compute body reads producer tensors, a kernel reads buffers).
/// Throws InternalError for a load of an operation missing from the map.
te::Expr bindLoads(const te::Expr& e, const std::map<const te::OperationNode*, Buffer>& bufferOf);

/// The value a reduction of kind `k` over `t` starts from (TVM CommReducer identity_element):
/// 0 for sum, the lowest value of `t` for max, the highest for min. Used for a Reduce without
/// its own `init`, here and in lower_state.h.
te::Expr reduceIdentity(te::ReduceKind k, te::DType t);

/// Indices into `dag.tensors()` (so into a lowered function's args) of the weights: placeholders
/// some compute op lists as `layout_free_placeholders` (conv2d / dense / winograd kernels). The
/// lowerings fill LoweredFunc::weightArgs with it (codegen prefetches them, prefetch.h).
std::vector<int> weightArgIndices(const te::ComputeDAG& dag);

/// One step of a reduction of kind `k`: acc + v, max(acc, v) or min(acc, v).
te::Expr reduceCombine(te::ReduceKind k, te::Expr acc, te::Expr v);

}  // namespace tb::lower
