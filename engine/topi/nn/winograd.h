// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file nn/winograd.h
/// \brief Winograd F(4x4, 3x3) and F(2x2, 3x3) convolution in NHWC, the auto-scheduler's clean form
/// (python/tvm/topi/nn/conv2d.py `_conv2d_winograd_nhwc_impl`, winograd_util.py, utils.py
/// `const_matrix`).
///
/// On x86 with the auto-scheduler, every NHWC 3x3 stride-1 conv with 64 < CO < 512 is rewritten to
/// `conv2d_winograd_nhwc(..., pre_computed=True)` with a [6, 6, CO, CI] weight (REFERENCE-ZOO §3,
/// resnet's 28x28 and 14x14 convs). The stages, in print order, are `data_pad`, `input_tile`, `B`,
/// `data_pack`, (weight), `bgemm`, `A`, `inverse`, `conv2d_winograd`, with nH = nW = ceil(H/4) and
/// P = N*nH*nW printed literally. The transform matrices are `const_matrix` stages printed as one
/// nested `select` per element, outermost = last element. `data_pack` and `inverse` carry the attr
/// `auto_scheduler_simplify_const_tensor_indices`; `bgemm` marks a pre-computed weight layout-free.
/// The tile size m is 4 on x86; TVM's GPU strategies pick it from the input height (cuda
/// `_infer_tile_size`: 4 when H % 8 == 0, else 2; mali `_pick_tile_size`: 4 when H % 4 == 0, else
/// 2), giving alpha = m + 2 = 6 or 4 and nH = ceil(OH / m).

#include <string>
#include <vector>

#include "engine/te/operation.h"

namespace tb::topi::nn {

/// TVM `topi.utils.const_matrix(matrix, name)`: a [rows, cols] compute stage `name(i, j) =
/// select(((floormod(i, rows) == rows-1) && (floormod(j, cols) == cols-1)), v, select(...,
/// 0f))` holding `values` (row-major, rounded to float32), attr const_matrix.
te::Tensor constMatrix(const std::vector<double>& values, int64_t rows, int64_t cols, const std::string& name);

/// The Cook-Toom matrices of TVM's `winograd_transform_matrices(tile_size, kernel_size)` (points
/// 0, -1, 1, 1/2, -2 for m = 4; 0, -1, 1 for m = 2): A [alpha, m], B [alpha, alpha], G [alpha, r],
/// row-major. Only r = 3 with m = 4 (alpha = 6) or m = 2 (alpha = 4) is provided; anything else
/// throws UserError.
struct WinogradMatrices {
    int64_t m = 4, r = 3, alpha = 6;
    std::vector<double> A, B, G;
};
WinogradMatrices winogradMatrices(int64_t tileSize = 4, int64_t kernelSize = 3);

/// `topi.nn.conv2d_winograd_nhwc(data, weight, strides, padding, dilation, pre_computed)`:
/// data [N, H, W, CI]; weight HWIO [3, 3, CI, CO] (pre_computed = false; adds a `kernel_pack`
/// stage with G) or [alpha, alpha, CO, CI] (pre_computed = true, the Relay form) -> [N, OH, OW, CO],
/// with tile size `tileSize` (4 or 2, alpha = tileSize + 2).
/// Requires a 3x3 kernel, stride 1 and dilation 1 (UserError otherwise). `padding`: 1, 2 or 4 values.
te::Tensor conv2dWinogradNhwc(const te::Tensor& data, const te::Tensor& weight, const std::vector<int64_t>& padding,
                              bool preComputed = true, int64_t tileSize = 4);

/// `topi.nn.conv2d_winograd_weight_transform(kernel, tile_size)`: kernel OIHW [CO, CI, 3, 3] ->
/// [alpha, alpha, CO, CI], stage `transform_weight(eps, nu, co, ci) += ((p[co, ci, r_kh, r_kw]*G[eps, r_kh])
/// *G[nu, r_kw])`. Relay applies it to `transpose(w_HWIO, [3, 2, 0, 1])` and folds the result into
/// the pre-computed weight of conv2dWinogradNhwc.
te::Tensor conv2dWinogradWeightTransform(const te::Tensor& kernel, int64_t tileSize = 4);

}  // namespace tb::topi::nn
