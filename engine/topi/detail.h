// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file detail.h
/// \brief Internal helpers shared by the topi .cpp files (not part of the public topi API).
///
/// Argument checking with user-facing messages that name the operator (`topi.nn.conv2d_nhwc: ...`),
/// int32 index constants, and tuple expansion (`stride = 2` -> `(2, 2)`) as TVM's Python wrappers do.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/support/error.h"
#include "engine/te/operation.h"
#include "engine/te/printer.h"

namespace tb::topi::detail {

/// An int32 immediate: every index expression of the zoo is int32 (REFERENCE-ZOO §4.2).
inline te::Expr ci(int64_t v) { return te::intImm(v, te::DType::Int32); }

/// Throws UserError unless `t` is defined and has `rank` dimensions.
inline void checkRank(const te::Tensor& t, size_t rank, const char* op, const char* what) {
    TB_USER_CHECK(bool(t)) << op << ": input '" << what << "' is not defined";
    TB_USER_CHECK(t.ndim() == rank) << op << ": input '" << what << "' must be " << rank << "-D, got "
                                    << t.ndim() << "-D " << te::shapeToString(t.shape());
}

/// Expands a scalar-or-tuple argument: one value is repeated n times; n values are kept.
inline std::vector<int64_t> expandTuple(const std::vector<int64_t>& v, size_t n, const char* op,
                                        const char* what) {
    if (v.size() == 1) return std::vector<int64_t>(n, v[0]);
    TB_USER_CHECK(v.size() == n) << op << ": '" << what << "' needs 1 or " << n << " values, got "
                                 << te::shapeToString(v);
    return v;
}

/// Throws UserError unless every value is >= minValue.
inline void checkAtLeast(const std::vector<int64_t>& v, int64_t minValue, const char* op, const char* what) {
    for (int64_t x : v)
        TB_USER_CHECK(x >= minValue) << op << ": every '" << what << "' value must be >= " << minValue << ", got "
                                     << te::shapeToString(v);
}

/// Normalises a possibly negative axis into [0, ndim); throws UserError otherwise.
inline int normalizeAxis(int axis, size_t ndim, const char* op) {
    int n = int(ndim);
    TB_USER_CHECK(axis >= -n && axis < n) << op << ": axis " << axis << " is out of range for a " << n
                                          << "-D tensor";
    return axis < 0 ? axis + n : axis;
}

/// `[v0, v1, ...]` as loads need them.
inline std::vector<te::Expr> asExprs(const std::vector<te::Var>& vars) {
    return std::vector<te::Expr>(vars.begin(), vars.end());
}

}  // namespace tb::topi::detail
