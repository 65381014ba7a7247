// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file printer.h
/// \brief Text of expressions exactly as TVM's legacy printer (`AsLegacyRepr`) writes them.
///
/// `(a + b)`, `(a - b)`, `(a*b)`, `(a/b)`, `(a % b)`, `floordiv(a, b)`, `floormod(a, b)`,
/// `min(a, b)`, `max(a, b)`, comparisons `(a >= b)`, `(a && b)`, `!a`, `select(c, t, f)`, loads
/// `name[i, j]`, calls `tir.exp(x)`, casts `float32(x)`; int32 immediates bare, other integer types
/// `(int64)0`, `(bool)1`; float32 immediates through `ostream <<` (6 significant digits) plus `f`.
/// These strings are hashed into workload keys (REFERENCE-ZOO §4.2), so they must not drift.

#include <string>

#include "engine/te/expr.h"

namespace tb::te {

/// The legacy-repr text of e.
std::string toString(const Expr& e);

/// A shape as TVM prints an Array of ints: `[1, 56, 56, 128]`.
std::string shapeToString(const std::vector<int64_t>& shape);

}  // namespace tb::te
