// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file nn/pad.h
/// \brief Constant padding and dilation as TVM's *Python* topi builds them
/// (python/tvm/topi/nn/pad.py, python/tvm/topi/nn/dilate.py).
///
/// Every Python convolution pads its input through `topi.nn.pad`, so this stage is the first line of
/// most task DAGs (`pad_temp`, `PaddedInput`, `data_pad`). Its printed form is hashed into the
/// workload key, so the rule is reproduced exactly: a dim with zero padding on both sides keeps its
/// index; every other dim contributes `(i >= before)` and `(i < before + extent)` (both, even when
/// one side is 0), left-folded with `&&`, and reads `(i - before)`. With no padded dim the stage is a
/// plain copy. (The C++ `topi::pad` used by pooling and Relay `nn.pad` differs: see nn.h.)

#include <cstdint>
#include <string>
#include <vector>

#include "engine/te/operation.h"

namespace tb::topi::nn {

/// TVM `topi.nn.pad(data, pad_before, pad_after, pad_value, name)`.
/// \param data        any rank n, any layout.
/// \param padBefore   n values, elements added before each dim (>= 0).
/// \param padAfter    n values, elements added after each dim (>= 0); empty means = padBefore.
/// \param padValue    fill value, converted to data's dtype (0 prints as `0f`).
/// \param name        stage name ("PadInput" by default; convolutions pass "pad_temp", "data_pad", ...).
/// \param attrs       op attributes (winograd's data_pad carries none that the auto-scheduler reads).
/// \return a tensor of shape `data + before + after`, axes `i0, i1, ...`, tag "injective,pad".
/// Throws UserError for a size mismatch or a negative amount.
te::Tensor pad(const te::Tensor& data, const std::vector<int64_t>& padBefore, std::vector<int64_t> padAfter = {},
               double padValue = 0.0, const std::string& name = "PadInput",
               const std::map<std::string, te::AttrValue>& attrs = {});

/// TVM `topi.nn.dilate(data, strides, dilation_value, name)`: inserts `stride - 1` copies of
/// `dilationValue` between neighbouring elements of each dim. Output extent `(d - 1) * s + 1`;
/// dims with stride != 1 read `floordiv(i, s)` under the condition `(floormod(i, s) == 0)`.
/// Axes `i0, ...`, tag "injective,dilate". Throws UserError for a size mismatch or stride < 1.
te::Tensor dilate(const te::Tensor& data, const std::vector<int64_t>& strides, double dilationValue = 0.0,
                  const std::string& name = "DilatedInput");

}  // namespace tb::topi::nn
