// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file nn/flatten.h
/// \brief `batch_flatten` (include/tvm/topi/nn/flatten.h `topi::nn::flatten`).
///
/// Relay's `nn.batch_flatten` between the global pool and the dense layer of every CNN. It is
/// injective (never a task by default; in `include_simple_tasks` mode TVM prints it as
/// `tensor(ax0, ax1) = p0[ax0, 0, 0, floormod(ax1, 512)]`, REFERENCE-ZOO §7).

#include <string>

#include "engine/te/operation.h"

namespace tb::topi::nn {

/// [N, d1, d2, ...] -> [N, d1*d2*...]; stage `tensor(ax0, ax1)` reading
/// `x[ax0, ..., floormod(floordiv(ax1, dk), dk-1), floormod(ax1, dk)]` (constant-folded).
/// Throws UserError for a 0-d or 1-d input.
te::Tensor flatten(const te::Tensor& x, const std::string& name = "tensor");
/// Alias with Relay's name.
inline te::Tensor batchFlatten(const te::Tensor& x) { return flatten(x); }

}  // namespace tb::topi::nn
