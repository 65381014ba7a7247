// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file nn.h
/// \brief The C++ topi neural-network helpers of include/tvm/topi/nn.h: relu, leaky_relu, prelu
/// and the C++ `topi::pad` (plus `nn::biasAdd`, Relay's canonical form of `nn.bias_add`).
///
/// `T_relu` ends almost every task, and the C++ pad is the `pad_temp` stage of padded pooling and
/// of Relay's `nn.pad`. The C++ pad differs from the Python one (nn/pad.h) in two printed details:
/// the lower bound `(i >= before)` appears only when before != 0 and the upper bound
/// `(i < before + extent)` only when after != 0; the conditions are folded from a leading `true`
/// (which the constant folder drops) and the axes are `ax0, ax1, ...`.

#include <string>
#include <vector>

#include "engine/te/operation.h"

namespace tb::topi {

/// TVM `topi::relu`: `T_relu(ax...) = max(x[ax...], 0f)`; tag "elemwise". Any rank.
te::Tensor relu(const te::Tensor& x, const std::string& name = "T_relu");

/// TVM `topi::leaky_relu`: `select((x > 0f), x, (x*alpha))` (a raw Select); tag "elemwise".
te::Tensor leakyRelu(const te::Tensor& x, double alpha = 0.1, const std::string& name = "T_leaky_relu");

/// TVM `topi::prelu(x, slope, axis)`: `select((x > 0f), x, (x*slope[c]))` with c the index along
/// `axis`. `slope` must be 1-D with x.shape[axis] elements (UserError otherwise).
te::Tensor prelu(const te::Tensor& x, const te::Tensor& slope, int axis = 1, const std::string& name = "T_prelu");

/// TVM C++ `topi::pad(t, pad_before, pad_after, pad_value, name)` in "constant" mode.
/// `padBefore`/`padAfter` may be shorter than the rank (trailing dims unpadded); an empty
/// `padAfter` means symmetric. Output axes `ax0...`, tag "elemwise". UserError on bad sizes.
te::Tensor pad(const te::Tensor& t, const std::vector<int64_t>& padBefore, std::vector<int64_t> padAfter = {},
               const te::Expr& padValue = te::Expr(), const std::string& name = "T_pad");

namespace nn {
/// Relay `nn.bias_add(data, bias, axis)` after CanonicalizeOps
/// (src/relay/transforms/canonicalize_ops.cc): `add(data, expand_dims(bias, 1, ndim - axis - 1))`,
/// or `add(data, bias)` when the bias is already aligned (axis = last). `bias` must be 1-D with
/// data.shape[axis] elements. Stages: `T_expand_dims` (when needed), `T_add`.
te::Tensor biasAdd(const te::Tensor& data, const te::Tensor& bias, int axis = 1);
}  // namespace nn

}  // namespace tb::topi
