// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file image/resize.h
/// \brief 2-D image resize (python/tvm/topi/image/resize.py `resize2d`), what Relay `image.resize2d`
/// and so ONNX `Resize` / `Upsample` lower to.
///
/// One injective stage `resize(i0, i1, i2, i3)`: for each output pixel the source coordinate
/// `in = f(out)` is computed in float32 by the coordinate transformation mode, then either rounded
/// (nearest_neighbor) or bilinearly interpolated from the four clamped neighbours (linear):
///   half_pixel:          (out + 0.5) * in_size / out_size - 0.5
///   align_corners:       (in_size - 1) / (out_size - 1) * out
///   asymmetric:          in_size / out_size * out
///   pytorch_half_pixel:  half_pixel when out_size > 1, else 0
///   tf_half_pixel_for_nn:(out + 0.5) * in_size / out_size
/// Nearest rounding: "round" (tir.round), "round_prefer_floor" (ceil(x - 0.5)), "round_prefer_ceil"
/// (floor(x + 0.5)), "floor" (floor(x + 1e-5)), "ceil" (ceil(x - 1e-5)); "" picks "round" for
/// align_corners and "floor" otherwise, as TVM does. Neighbour indices are clamped to the image.
/// Unknown modes, bad layouts or sizes throw UserError. (tf_crop_and_resize and cubic are not
/// provided.)

#include <string>
#include <vector>

#include "engine/te/operation.h"

namespace tb::topi::image {

/// Resize the H and W dims of a 4-D "NCHW" or "NHWC" tensor to `size` = {out_h, out_w}.
/// `method`: "nearest_neighbor" or "linear".
te::Tensor resize2d(const te::Tensor& data, const std::vector<int64_t>& size, const std::string& layout = "NCHW",
                    const std::string& method = "linear",
                    const std::string& coordinateTransformationMode = "half_pixel",
                    const std::string& roundingMethod = "");

}  // namespace tb::topi::image
