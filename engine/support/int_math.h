// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file int_math.h
/// \brief Floor division, floor modulo and ceiling division of 64-bit integers.
///
/// C++ `/` and `%` truncate toward zero, but te index expressions use TVM's `floordiv` /
/// `floormod` (include/tvm/tir/op.h: round toward negative infinity, the remainder takes the sign
/// of the divisor), and a split of a loop of extent e by a factor f has ceil(e / f) outer
/// iterations (te PassDownDomain). The constant folder (te/expr.cpp), the interpreter, the
/// simplifier, bound inference and the transform steps all need exactly these semantics, so they
/// are defined once, here. Header-only and constexpr: the interpreter calls them per element.

#include <cstdint>

namespace tb {

/// floor(a / b), rounded toward negative infinity: floorDiv(7, 2) == 3, floorDiv(-7, 2) == -4,
/// floorDiv(7, -2) == -4. b must not be 0 (undefined behaviour, as for `/`), nor may the quotient
/// overflow (a == INT64_MIN, b == -1).
constexpr int64_t floorDiv(int64_t a, int64_t b) {
    const int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// a - floorDiv(a, b) * b: the remainder with the sign of b (floorMod(-7, 2) == 1,
/// floorMod(7, -2) == -1). Same preconditions as floorDiv.
constexpr int64_t floorMod(int64_t a, int64_t b) { return a - floorDiv(a, b) * b; }

/// ceil(a / b), rounded toward positive infinity: ceilDiv(7, 2) == 4, ceilDiv(-7, 2) == -3,
/// ceilDiv(0, 2) == 0. Same preconditions as floorDiv (and a != INT64_MIN).
constexpr int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

static_assert(floorDiv(-7, 2) == -4 && floorDiv(7, -2) == -4 && floorDiv(-7, -2) == 3 && floorDiv(6, 3) == 2);
static_assert(floorMod(-7, 2) == 1 && floorMod(7, -2) == -1 && floorMod(-6, 3) == 0);
static_assert(ceilDiv(7, 2) == 4 && ceilDiv(8, 2) == 4 && ceilDiv(-7, 2) == -3 && ceilDiv(0, 5) == 0);

}  // namespace tb
