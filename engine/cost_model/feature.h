// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file feature.h
/// \brief Per-store program features for the learned cost model (Ansor §5.2; TVM
/// src/auto_scheduler/feature.cc, DEFAULT_FEATURE_VEC_LEN = 164).
///
/// A lowered kernel is described by one 164-float vector per buffer-store statement; the model
/// predicts a score per store and sums them (pack-sum). Layout (REFERENCE-TVM §2.2):
///   [0, 57)    computation: 16 op counters (float mad/addsub/mul/divmod/cmp/math/other, the same
///              7 for int, bool ops, selects) x the enclosing loop product; for vectorize, unroll and
///              parallel: count, product and innermost length of such loops + an 8-way one-hot of the
///              innermost one's position {none, inner/middle/outer spatial, inner/middle/outer reduce,
///              mixed}; 8 GPU thread-binding slots (zero on CPU);
///   [57, 147)  the 5 most-touched buffers (by lines, then bytes) x 18: access type one-hot (read,
///              write, read-write), bytes, unique bytes, cache lines, unique lines, reuse type one-hot
///              (loop multiple read, serial multiple read-write, no reuse), reuse distance in
///              iterations and bytes, reuse count, the four per-reuse ratios, innermost stride;
///   [147, 157) arithmetic intensity (flops / unique bytes) sampled at 10 points of the loop nest;
///   [157, 161) allocation: bytes, element product, outer loop product, inner product;
///   [161, 164) outer loop product, number of enclosing loops, auto_unroll_max_step.
/// Numeric values go through log2p(x) = sign(x) * log2(|x| + 1); one-hots stay 0/1. Our values
/// follow TVM's definitions on our loop IR; they are not bit-identical to TVM's (no model transfer).

#include <cmath>
#include <vector>

#include "engine/lower/loop_ir.h"

namespace tb::cost_model {

inline constexpr int kFeatureLength = 164;

/// One feature row per BufferStore of `f`, in program order. Cache line size in bytes.
std::vector<std::vector<float>> extractPerStoreFeatures(const lower::LoweredFunc& f, int cacheLineBytes = 64);

/// TVM's log2p.
inline float log2p(double x) { return float(x < 0 ? -std::log2(-x + 1) : std::log2(x + 1)); }

}  // namespace tb::cost_model
