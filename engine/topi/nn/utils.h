// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file nn/utils.h
/// \brief Padding arithmetic shared by the convolution computes (python/tvm/topi/nn/utils.py).
///
/// TVM's Python convolutions accept `padding` as one int, one int per spatial dim, or explicit
/// begin/end values, and turn it into per-side amounts with `get_pad_tuple` (2-D) or
/// `get_pad_tuple_generic` (N-D). The split matters for the printed DAG: the begin amount appears
/// in the `pad_temp` conditions and index shifts, so it must be computed exactly as TVM does.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tb::topi::nn {

/// Per-side padding of a 2-D window: top, left, bottom, right (elements).
struct PadTuple {
    int64_t top = 0, left = 0, bottom = 0, right = 0;
};

/// TVM `get_pad_tuple(padding, kernel)`: `padding` is `{p}` (all sides p), `{ph, pw}` (ph top and
/// bottom, pw left and right) or `{top, left, bottom, right}`. Throws UserError naming `op` for any
/// other size or a negative value. (TVM's "SAME"/"VALID" strings: pass `samePadding()` or `{0}`.)
PadTuple getPadTuple(const std::vector<int64_t>& padding, const char* op);

/// The `padding` that TVM's "SAME" string means for a (dilated) kernel of `kernel` elements per
/// spatial dim: total k-1 per dim, the extra element at the end. Returns `{begin..., end...}`.
std::vector<int64_t> samePadding(const std::vector<int64_t>& kernel);

/// TVM `get_pad_tuple_generic(padding, kernel)` for `dims` spatial dims: `padding` has 1, dims or
/// 2*dims values (`{p}`, one symmetric value per dim, or all begins then all ends). Returns
/// (begin per dim, end per dim). Throws UserError naming `op` otherwise.
std::pair<std::vector<int64_t>, std::vector<int64_t>> getPadTupleGeneric(const std::vector<int64_t>& padding,
                                                                         size_t dims, const char* op);

}  // namespace tb::topi::nn
