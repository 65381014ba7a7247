// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file nn/softmax.h
/// \brief Softmax and log-softmax (python/tvm/topi/nn/softmax.py `softmax_common`, `log_softmax`).
///
/// The last task of every classifier: four stages over axis `axis` of x
///   `T_softmax_maxelem(i0) max= p0[i0, k]`, `T_softmax_exp(i0, i1) = tir.exp((p0[i0, i1] -
///   T_softmax_maxelem[i0]))`, `T_softmax_expsum(i0) += T_softmax_exp[i0, k]`,
///   `T_softmax_norm(i0, i1) = (T_softmax_exp[i0, i1]/T_softmax_expsum[i0])`
/// (axes `i0, i1, ...` from Python's `*indices` lambdas; both reduce axes are named `k`), tag
/// "softmax_output", attr axis on the last stage. An axis out of range throws UserError.

#include "engine/te/operation.h"

namespace tb::topi::nn {

/// TVM `topi.nn.softmax(x, axis)` (not fast_softmax); any rank >= 1.
te::Tensor softmax(const te::Tensor& x, int axis = -1);

/// TVM `topi.nn.log_softmax(x, axis)`: `T_softmax_maxelem`, then `compute` (the exp-sum, TVM's
/// default name) and `compute` = `((x - max) - tir.log(expsum))`, tag "log_softmax_output".
te::Tensor logSoftmax(const te::Tensor& x, int axis = -1);

}  // namespace tb::topi::nn
