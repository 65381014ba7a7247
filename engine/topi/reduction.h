// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file reduction.h
/// \brief Commutative reductions over axes (include/tvm/topi/reduction.h) and Relay's `mean`.
///
/// A reduction is one stage named `<input op name>_red` (e.g. `p0_red`) whose reduce axes are
/// named `k<dim>` after the input dims they consume, with tag "comm_reduce". With `keepdims` the
/// reduced dims stay as extent-1 axes. These are complex ops (they contain a Reduce), so a Relay
/// `mean`/`sum` is its own tuning task.

#include <optional>
#include <string>
#include <vector>

#include "engine/te/operation.h"

namespace tb::topi {

/// TVM `topi::sum(data, axis, keepdims)`: `axis` nullopt = all dims; negative values count from
/// the end; duplicates are removed and the axes sorted (GetRealAxis). Throws UserError for a 0-d
/// input or an axis out of range.
te::Tensor sum(const te::Tensor& data, const std::optional<std::vector<int>>& axis = std::nullopt,
               bool keepdims = false);
/// TVM `topi::max` / `topi::min` (`max=` / `min=` reductions, identity = lowest / highest value).
te::Tensor max(const te::Tensor& data, const std::optional<std::vector<int>>& axis = std::nullopt,
               bool keepdims = false);
te::Tensor min(const te::Tensor& data, const std::optional<std::vector<int>>& axis = std::nullopt,
               bool keepdims = false);

/// Relay `mean` (src/relay/op/tensor/reduce.cc `MeanCompute`): `topi::sum` then
/// `T_divide(...) = (<sum>[...]/<count>f)` with count = product of the reduced extents.
te::Tensor mean(const te::Tensor& data, const std::optional<std::vector<int>>& axis = std::nullopt,
                bool keepdims = false);

}  // namespace tb::topi
