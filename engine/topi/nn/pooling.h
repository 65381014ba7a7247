// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file nn/pooling.h
/// \brief Pooling as TVM's C++ topi declares it (include/tvm/topi/nn/pooling.h): windowed
/// max/avg pooling (`pool_impl_nd`) and adaptive/global pooling (`adaptive_pool_impl`).
///
/// Relay's `max_pool2d`, `avg_pool2d`, `global_avg_pool2d` and adaptive pools lower through these
/// C++ computes (REFERENCE-ZOO §3), so the resnet stem task and the head pool task print as
///   `pad_temp(ax0, ...) = tir.if_then_else(..., p0[...], -3.40282e+38f)` (C++ topi::pad, only
///   when some padding is non-zero), `pool_max(ax0, ...) max= pad_temp[ax0, ((ax1*2) + rv0), ...]`;
///   `pool_sum` + `pool_avg` with the count_include_pad divisor of REFERENCE-ZOO §5.5; and
///   `adaptive_pool_sum(...) += p0[ax0, ((ax1*7) + rv0), ...]` + `adaptive_pool_avg = (sum /
///   (float32(select((bool)1, ...) - ...)*float32(...)))` with the raw-Select window extents.
/// Layouts are strings in which 'H' and 'W' (and 'D' for 3-D) name the pooled dims ("NCHW",
/// "NHWC", "NCHW8c", ...). Bad arguments throw UserError naming the operator.

#include <string>
#include <vector>

#include "engine/te/operation.h"

namespace tb::topi::nn {

enum class PoolType { Avg, Max };

/// TVM `topi::nn::pool2d(x, kernel, stride, dilation, padding, type, ceil_mode, layout,
/// count_include_pad)`. `kernel`, `stride`, `dilation`: {h, w} (or one value); `padding`: {top,
/// left, bottom, right} (or {h, w}, or one value). Output extent per pooled dim:
/// `(in + before + after - (k-1)*d - 1) / s + 1` (ceil_mode adds s-1 to `after`).
te::Tensor pool2d(const te::Tensor& x, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                  const std::vector<int64_t>& dilation, const std::vector<int64_t>& padding, PoolType type,
                  bool ceilMode = false, const std::string& layout = "NCHW", bool countIncludePad = true);

/// TVM `topi::nn::pool_impl_nd`: pooling over the dims `axes` of x with per-dim kernel, stride,
/// dilation and padding `{begin..., end...}` (2 * axes.size() values).
te::Tensor poolNd(const te::Tensor& x, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                  const std::vector<int64_t>& dilation, const std::vector<int64_t>& padding, PoolType type,
                  bool ceilMode, const std::vector<int>& axes, bool countIncludePad);

/// Stage names of an adaptive pool. TVM >= 0.9 uses these defaults; older releases (and the
/// logs they wrote, e.g. seeds/000) named both avg stages "tensor".
struct AdaptivePoolNames {
    std::string sum = "adaptive_pool_sum";
    std::string avg = "adaptive_pool_avg";
    std::string max = "adaptive_pool_max";
};

/// TVM `topi::nn::adaptive_pool(x, output_size, type, layout)`: window i of a dim of extent n
/// with output size o is `[floor(i*n/o), ceil((i+1)*n/o))`. Supported when every output size
/// divides its input extent (all windows equal, which includes global pooling); otherwise
/// UserError (our reduce axes have constant extents).
te::Tensor adaptivePool(const te::Tensor& x, const std::vector<int64_t>& outputSize, PoolType type,
                        const std::string& layout = "NCHW", const AdaptivePoolNames& names = {});

/// TVM `topi::nn::global_pool(x, type, layout)` = adaptive_pool(x, {1, 1}, type, layout):
/// [N, H, W, C] -> [N, 1, 1, C] for "NHWC". Relay `global_avg_pool2d` / `global_max_pool2d`.
te::Tensor globalPool(const te::Tensor& x, PoolType type, const std::string& layout = "NCHW",
                      const AdaptivePoolNames& names = {});

}  // namespace tb::topi::nn
