// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file transform.h
/// \brief Injective layout/shape operators (include/tvm/topi/transform.h): reshape, transpose,
/// expand_dims, squeeze, concatenate, split, strided_slice, layout_transform.
///
/// These never form a tuning task by themselves (no reduction), but they appear inside fused
/// groups and in `include_simple_tasks` mode, and the graph executor runs them, so their index
/// expressions follow TVM's C++ definitions: output axes `ax0, ax1, ...`, stage names `T_reshape`,
/// `T_transpose`, `T_expand_dims`, `T_squeeze`, `T_concat`, `T_split`, `T_strided_slice`,
/// `T_layout_trans`. Every function throws UserError naming the operator for bad arguments.

#include <optional>
#include <string>
#include <vector>

#include "engine/te/operation.h"

namespace tb::topi {

/// TVM `topi::reshape`: `T_reshape(ax...) = x[unravel(ravel(ax..., newShape), x.shape)]`
/// (flat index `((ax0*d1) + ax1)...`, then `floormod`/`floordiv` per input dim, folded).
/// `newShape` must have x's element count; one entry may be -1 (inferred).
te::Tensor reshape(const te::Tensor& x, std::vector<int64_t> newShape, const std::string& name = "T_reshape");

/// TVM `topi::transpose(x, axes)`: output dim i is input dim axes[i]; empty axes reverse the dims.
te::Tensor transpose(const te::Tensor& x, std::vector<int> axes = {}, const std::string& name = "T_transpose");

/// TVM `topi::expand_dims(x, axis, num_newaxis)`: inserts `numNewAxis` unit dims before `axis`
/// (axis in [-ndim-1, ndim]). Tag "broadcast".
te::Tensor expandDims(const te::Tensor& x, int axis, int numNewAxis = 1, const std::string& name = "T_expand_dims");

/// TVM `topi::squeeze(x, axis)`: removes the listed unit dims (nullopt: every unit dim). Listing a
/// dim whose extent is not 1 is a UserError.
te::Tensor squeeze(const te::Tensor& x, const std::optional<std::vector<int>>& axis = std::nullopt,
                   const std::string& name = "T_squeeze");

/// TVM `topi::concatenate(inputs, axis)`: nested `tir.if_then_else((ind >= 0), next[...], ...)`
/// with `ind = ((ax - s0) - s1)...`. All inputs need the same rank and equal extents off `axis`.
/// (On x86 Relay uses an extern concatenate instead, which never forms a task.)
te::Tensor concatenate(const std::vector<te::Tensor>& inputs, int axis = 0, const std::string& name = "T_concat");

/// TVM `topi::split(x, indices, axis)`: pieces `[0, i0), [i0, i1), ..., [ik, n)` along `axis`
/// (indices strictly increasing, inside (0, n)). Every piece is a stage named `name`.
std::vector<te::Tensor> split(const te::Tensor& x, const std::vector<int64_t>& indices, int axis,
                              const std::string& name = "T_split");
/// Split into `sections` equal pieces (TVM `topi::split_sections`); the extent must divide.
std::vector<te::Tensor> splitSections(const te::Tensor& x, int sections, int axis, const std::string& name = "T_split");

/// TVM `topi::strided_slice` with static begin/end/stride on the leading dims ("end" slice mode,
/// positive strides only): `T_strided_slice(ax...) = x[((ax*stride) + begin), ...]`. begin/end are
/// clamped to [0, extent]; negative values count from the end.
te::Tensor stridedSlice(const te::Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> end,
                        std::vector<int64_t> strides = {}, const std::string& name = "T_strided_slice");

/// TVM `topi::layout_transform(src, src_layout, dst_layout)` for layouts made of primal axes
/// (upper case) and split sub-axes with a factor (`NCHW`, `NCHW8c`, `NHWC`, `OIHW8i8o`, ...):
/// `T_layout_trans(ax...) = tir.if_then_else(<src index in range>, src[<src index>], 0f)`, with the
/// source index `((C*8) + c)` / `floordiv(C, 8)` / `floormod(C, 8)` as the BijectiveLayout gives it.
/// Returns `src` itself when the layouts are equal. UserError for unparsable or incompatible
/// layouts, a rank that does not match `srcLayout`, or a split factor that does not divide.
te::Tensor layoutTransform(const te::Tensor& src, const std::string& srcLayout, const std::string& dstLayout,
                           const std::string& name = "T_layout_trans");

}  // namespace tb::topi
