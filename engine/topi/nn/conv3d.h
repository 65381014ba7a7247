// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file nn/conv3d.h
/// \brief 3-D convolutions (python/tvm/topi/nn/conv3d.py), both thin wrappers of the generic
/// `conv` of nn/conv2d.h.
///
/// Naming follows TVM's generic conv literally: the spatial output axes are `yy, xx, zz` for D, H,
/// W and the reduce axes `ry, rx, rz` for KD, KH, KW (in that order), stage `conv3d_ncdhw` /
/// `conv3d_ndhwc`; neither marks its weight layout-free. `stride`/`dilation`: 1 or 3 values;
/// `padding`: 1, 3 or 6 values (begins then ends). UserError for bad ranks or channels.

#include <vector>

#include "engine/te/operation.h"

namespace tb::topi::nn {

/// `topi.nn.conv3d_ncdhw`: data [N, C, D, H, W], weight OIDHW [K, C/groups, KD, KH, KW].
te::Tensor conv3dNcdhw(const te::Tensor& data, const te::Tensor& weight, const std::vector<int64_t>& stride,
                       const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation = {1},
                       int64_t groups = 1);

/// `topi.nn.conv3d_ndhwc`: data [N, D, H, W, C], weight DHWIO [KD, KH, KW, C/groups, K].
te::Tensor conv3dNdhwc(const te::Tensor& data, const te::Tensor& weight, const std::vector<int64_t>& stride,
                       const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation = {1},
                       int64_t groups = 1);

}  // namespace tb::topi::nn
