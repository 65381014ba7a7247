// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file nn/conv2d_transpose.h
/// \brief Transposed 2-D convolution in NCHW (python/tvm/topi/nn/conv2d_transpose.py) and the x86
/// form Relay uses (python/tvm/topi/x86/conv2d_transpose.py, x86/conv2d.py `conv2d_nchw`).
///
/// A transposed conv is a plain conv on the input dilated by the stride (`data_dilate`) and padded
/// by `k - 1 - pad` (`data_pad`), with the kernel flipped and its I/O swapped (`kernel_transform(o,
/// i, h, w) = p1[i, o, (3 - h), (3 - w)]` for 4x4). The x86 version then runs that conv through
/// the NCHWc template (`data_vec`, `kernel_vec`, `conv2d_NCHWc`, `output_unpack`, REFERENCE-ZOO
/// §5.5, dcgan), with block sizes from AutoTVM's fallback config. Shapes: data [N, CI, H, W],
/// kernel IOHW [CI, CO, KH, KW], output [N, CO, (H-1)*s - pt - pb + KH + opad, ...].

#include <utility>
#include <vector>

#include "engine/te/operation.h"

namespace tb::topi::nn {

/// `conv2d_transpose_nchw_preprocess`: returns (`data_pad`, `kernel_transform`). `stride` and
/// `outputPadding` have 1 or 2 values (output padding < stride); `padding` 1, 2 or 4.
std::pair<te::Tensor, te::Tensor> conv2dTransposeNchwPreprocess(const te::Tensor& data, const te::Tensor& kernel,
                                                                const std::vector<int64_t>& stride,
                                                                const std::vector<int64_t>& padding,
                                                                const std::vector<int64_t>& outputPadding = {0});

/// Generic `topi.nn.conv2d_transpose_nchw`: preprocess, then `compute(b, c, h, w) +=
/// (data_pad[b, dc, (h + dh), (w + dw)]*kernel_transform[c, dc, dh, dw])` (TVM's default stage name
/// "compute", tag "conv2d_transpose_nchw").
te::Tensor conv2dTransposeNchw(const te::Tensor& data, const te::Tensor& kernel, const std::vector<int64_t>& stride,
                               const std::vector<int64_t>& padding, const std::vector<int64_t>& outputPadding = {0});

namespace x86 {

/// AutoTVM's fallback channel blocks for conv2d_NCHWc on x86 (`conv2d_avx_common._fallback_schedule`):
/// oc_bn = largest divisor of outChannels <= simdLanes; ic_bn = largest divisor of inChannels <=
/// oc_bn. simdLanes = fp32 lanes of the target (8 for AVX2, 16 for AVX-512).
std::pair<int64_t, int64_t> fallbackChannelBlocks(int64_t inChannels, int64_t outChannels, int64_t simdLanes = 8);

/// `topi.x86.conv2d_nchw` outside tuning: packs data [N, C, H, W] and an OIHW kernel into `data_vec`
/// (bs, c, h, w, vc) and `kernel_vec` (occ, icc, k_h, k_w, icb, ocb), runs nn::conv2dNCHWc and
/// unpacks with `output_unpack`. `icBlock`/`ocBlock` must divide the channel counts.
te::Tensor conv2dNchw(const te::Tensor& data, const te::Tensor& kernel, const std::vector<int64_t>& stride,
                      const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t icBlock,
                      int64_t ocBlock);

/// `topi.x86.conv2d_transpose_nchw`: preprocess, then x86::conv2dNchw with stride 1, no padding,
/// and the given (or fallback) blocks. Pass icBlock = ocBlock = 0 for the fallback with `simdLanes`.
te::Tensor conv2dTransposeNchw(const te::Tensor& data, const te::Tensor& kernel, const std::vector<int64_t>& stride,
                               const std::vector<int64_t>& padding, const std::vector<int64_t>& outputPadding = {0},
                               int64_t icBlock = 0, int64_t ocBlock = 0, int64_t simdLanes = 8);

}  // namespace x86

}  // namespace tb::topi::nn
