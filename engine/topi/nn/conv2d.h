// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file nn/conv2d.h
/// \brief 2-D convolutions as TVM's Python topi declares them (python/tvm/topi/nn/conv2d.py):
/// the generic N-D `conv` behind conv2d_nhwc / conv2d_nchw / group convs / conv3d, and the
/// blocked `conv2d_NCHWc` that x86 uses for every NCHW network.
///
/// The convolution is the heaviest stage of most tasks and its printed form is hashed into the
/// workload key, so the structure is TVM's to the character:
/// - `pad_temp` = `topi.nn.pad(input, ...)` (a plain copy when nothing is padded);
/// - output axes named from `nn, ff, yy, xx, zz` permuted into the data layout (NHWC: nn, yy, xx,
///   ff); reduce axes `rc` (input channels of a group) and `ry, rx, rz` (kernel dims in order),
///   ordered as the data layout orders C and the spatial dims (NHWC: ry, rx, rc; NCHW: rc, ry, rx);
/// - the data index `(yy*stride + ry*dilation)` with TVM's folding (`(yy + ry)` at stride 1) and,
///   for groups > 1, the channel `((floordiv(ff, K/g)*(C/g)) + rc)`;
/// - stage/tag name `[group_]conv<d>d_<layout lower case>`; only conv2d_nhwc marks its weight
///   `layout_free_placeholders` (auto_scheduler_should_rewrite_layout).
///
/// Argument conventions for every function here: `stride`/`dilation` are one value or one per
/// spatial dim; `padding` as in nn/utils.h (1, dims or 2*dims values for `conv`; 1, 2 or 4 for the
/// 2-D wrappers, `{top, left, bottom, right}`). All shapes are static. Bad ranks, mismatched
/// channels, non-dividing groups or an empty output throw UserError naming the operator.

#include <string>
#include <vector>

#include "engine/te/operation.h"

namespace tb::topi::nn {

/// TVM `topi.nn.conv(inp, filt, stride, padding, dilation, groups, data_layout, kernel_layout)`.
/// \param inp          (d+2)-D input in `dataLayout` (letters N, C and d spatial letters, e.g. "NHWC").
/// \param filt         (d+2)-D weight in `kernelLayout` (O, I = C/groups, spatial letters, e.g. "HWIO");
///                     an empty kernelLayout takes TVM's default for the data layout.
/// \param autoSchedulerRewriteLayout  mark `filt` as layout-free (conv2d_nhwc passes true).
/// \return output in `dataLayout` with C = O.
te::Tensor conv(const te::Tensor& inp, const te::Tensor& filt, const std::vector<int64_t>& stride,
                const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups,
                const std::string& dataLayout, const std::string& kernelLayout = "",
                bool autoSchedulerRewriteLayout = false);

/// `topi.nn.conv2d_nhwc`: input [N, H, W, C], weight HWIO [KH, KW, C, K] -> [N, OH, OW, K].
/// Stages `pad_temp`, `conv2d_nhwc(nn, yy, xx, ff) += (pad_temp[nn, (yy*S + ry*D), (xx*S + rx*D),
/// rc]*p1[ry, rx, rc, ff])`; weight layout-free.
te::Tensor conv2dNhwc(const te::Tensor& input, const te::Tensor& weight, const std::vector<int64_t>& stride,
                      const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation = {1});

/// `topi.nn.conv2d_nchw`: input [N, C, H, W], weight OIHW [K, C, KH, KW] -> [N, K, OH, OW];
/// `conv2d_nchw(nn, ff, yy, xx) += (pad_temp[nn, rc, ..]*p1[ff, rc, ry, rx])`, reduce rc, ry, rx.
te::Tensor conv2dNchw(const te::Tensor& input, const te::Tensor& weight, const std::vector<int64_t>& stride,
                      const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation = {1});

/// `topi.nn.group_conv2d_nhwc`: weight [KH, KW, C/groups, K]; stage `group_conv2d_nhwc`.
te::Tensor groupConv2dNhwc(const te::Tensor& input, const te::Tensor& weight, const std::vector<int64_t>& stride,
                           const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation,
                           int64_t groups);

/// `topi.nn.group_conv2d_nchw`: weight [K, C/groups, KH, KW]; stage `group_conv2d_nchw`.
/// (x86 Relay picks the AutoTVM template `group_conv2d_nchw.x86` instead; this is the generic form.)
te::Tensor groupConv2dNchw(const te::Tensor& input, const te::Tensor& weight, const std::vector<int64_t>& stride,
                           const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation,
                           int64_t groups);

/// `topi.nn.conv2d_NCHWc` (used by x86 `conv2d_NCHWc.x86` and AlterOpLayout, REFERENCE-ZOO §5.4):
/// data [N, C/ic_bn, H, W, ic_bn], kernel [K/oc_bn, C/(ic_bn*groups), KH, KW, ic_bn, oc_bn] ->
/// [N, K/oc_bn, OH, OW, oc_bn]. Stages `data_pad` (only when padded) and
/// `conv2d_NCHWc(n, oc_chunk, oh, ow, oc_block) += (data_pad[n, floordiv(ic, ic_bn), (oh + kh),
/// (ow + kw), floormod(ic, ic_bn)]*p1[oc_chunk, floordiv(ic, ic_bn), kh, kw, floormod(ic, ic_bn),
/// oc_block])`, reduce ic, kh, kw.
te::Tensor conv2dNCHWc(const te::Tensor& data, const te::Tensor& kernel, const std::vector<int64_t>& stride,
                       const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation = {1});

/// `topi.nn.unpack_NCHWc_to_nchw`: `output_unpack(n, c, h, w) = packed[n, floordiv(c, bn), h, w,
/// floormod(c, bn)]`, tag "injective,unpack_nchwc". Input must be 5-D.
te::Tensor unpackNCHWcToNchw(const te::Tensor& packed);

/// The output extent of a convolution along one dim: (in + before + after - ((k-1)*d + 1)) / s + 1.
int64_t convOutputExtent(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBefore,
                         int64_t padAfter);

}  // namespace tb::topi::nn
