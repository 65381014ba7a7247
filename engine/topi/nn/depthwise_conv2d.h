// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file nn/depthwise_conv2d.h
/// \brief Depthwise 2-D convolutions (python/tvm/topi/nn/depthwise_conv2d.py and the x86
/// `depthwise_conv2d_NCHWc` of python/tvm/topi/x86/depthwise_conv2d.py).
///
/// Each input channel c is convolved with its own `multiplier` filters; output channel
/// `c*multiplier + m`. Mobilenet's depthwise tasks are these stages: `PaddedInput` (topi.nn.pad)
/// and `DepthwiseConv2d(b, i, j, c) += (PaddedInput[b, (i*S + di*D), (j*S + dj*D), c]*p1[di, dj, c,
/// 0])` with reduce axes di, dj (the weight index `floordiv(c, M), floormod(c, M)` folds to `c, 0`
/// for multiplier 1). `stride`/`dilation`: 1 or 2 values; `padding`: 1, 2 or 4 values (nn/utils.h).
/// Bad ranks or mismatched channels throw UserError naming the operator.

#include <vector>

#include "engine/te/operation.h"

namespace tb::topi::nn {

/// `topi.nn.depthwise_conv2d_nhwc` with kernel layout HWOI: input [N, H, W, C], filter
/// [KH, KW, C, M] -> [N, OH, OW, C*M]; axes b, i, j, c; tag "depthwise_conv2d_nhwc".
te::Tensor depthwiseConv2dNhwc(const te::Tensor& input, const te::Tensor& filter, const std::vector<int64_t>& stride,
                               const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation = {1});

/// `topi.nn.depthwise_conv2d_nchw`: input [N, C, H, W], filter [C, M, KH, KW] -> [N, C*M, OH, OW];
/// axes b, c, i, j; tag "depthwise_conv2d_nchw".
te::Tensor depthwiseConv2dNchw(const te::Tensor& input, const te::Tensor& filter, const std::vector<int64_t>& stride,
                               const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation = {1});

/// x86 `depthwise_conv2d_NCHWc` (multiplier 1, REFERENCE-ZOO §5.5): data [N, C/bn, H, W, bn], filter
/// [K/obn, 1, KH, KW, 1, obn] -> [N, K/obn, OH, OW, obn]; `PaddedInput` only when padded;
/// `DepthwiseConv2d(b, oco, oh, ow, oci) += (PaddedInput[b, floordiv(((oco*obn) + oci), bn),
/// (oh + kh), (ow + kw), floormod(((oco*obn) + oci), bn)]*p1[oco, 0, kh, kw, 0, oci])`.
te::Tensor depthwiseConv2dNCHWc(const te::Tensor& data, const te::Tensor& filter,
                                const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                                const std::vector<int64_t>& dilation = {1});

}  // namespace tb::topi::nn
