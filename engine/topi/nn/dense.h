// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file nn/dense.h
/// \brief Matrix products (python/tvm/topi/nn/dense.py `matmul`/`dense`,
/// python/tvm/topi/nn/batch_matmul.py `batch_matmul`).
///
/// Relay `nn.dense` on x86 with the auto-scheduler lowers through `dense.generic` = `topi.nn.dense`
/// = `matmul(data, weight, transpose_b=True)`: the classifier task of every CNN,
/// `T_matmul_NT(i, j) += (p0[i, k]*p1[j, k])` with reduce axis `k`, tag "dense" and the weight marked
/// `layout_free_placeholders`. Shape mismatches throw UserError naming the operator.

#include <string>

#include "engine/te/operation.h"

namespace tb::topi::nn {

/// TVM `topi.nn.matmul(a, b, bias, transpose_a, transpose_b)`: a [M, K] (or [K, M] when
/// transposeA), b [K, N] (or [N, K] when transposeB) -> [M, N]. Stage `T_matmul_<NN|NT|TN|TT>(i, j)`,
/// tag "dense" for NT and "matmul" otherwise; b is layout-free. With a bias ([N]) a second stage
/// `compute(i, j) = (T_matmul..[i, j] + bias[j])` (TVM's default stage name) is added.
te::Tensor matmul(const te::Tensor& a, const te::Tensor& b, const te::Tensor& bias = te::Tensor(),
                  bool transposeA = false, bool transposeB = false);

/// TVM `topi.nn.dense(data, weight, bias)` = matmul(data, weight, bias, false, true):
/// data [M, K], weight [N, K] -> [M, N] (`T_matmul_NT`).
te::Tensor dense(const te::Tensor& data, const te::Tensor& weight, const te::Tensor& bias = te::Tensor());

/// TVM `topi.nn.batch_matmul(a, b, transpose_a=False, transpose_b=True)`: a [B, M, K] (or [B, K, M]),
/// b [B, N, K] (or [B, K, N]) -> [max(Ba, Bb), M, N]; a batch extent of 1 broadcasts (index 0).
/// Stage `T_batch_matmul_<NN|NT|TN|TT>(b, i, j)`, reduce `k`, tag "batch_matmul", b layout-free.
te::Tensor batchMatmul(const te::Tensor& a, const te::Tensor& b, bool transposeA = false, bool transposeB = true);

}  // namespace tb::topi::nn
