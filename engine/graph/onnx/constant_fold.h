// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to the ONNX importer (engine/graph/onnx_import.cpp and engine/graph/onnx/): constant
// tensors known at import time. Builders (makeInts/makeFloats/makeFrom), numpy broadcasting,
// element-wise folding and the flat source-index helpers behind folded Gather/Transpose/Slice,
// so shape arithmetic (Shape -> Gather -> Concat -> Reshape chains) folds away as in TVM's
// ONNX frontend (python/tvm/relay/frontend/onnx.py with fold_constant).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace tb::graph::onnx_detail {

using CPtr = std::shared_ptr<const ConstantData>;
using Shape = std::vector<int64_t>;

/// "[d0, d1, ...]" for messages.
std::string shapeStr(const Shape& s);
/// Product of the extents s[from, to) (1 for an empty range); UserError when it overflows int64.
int64_t product(const Shape& s, size_t from = 0, size_t to = size_t(-1));

/// The most elements a constant computed at import (folded Range, ConstantOfShape, Expand,
/// Transpose, Slice, element-wise ops ...) may have: 2^26, 256 MiB of float32, far above any shape
/// computation or weight transform of a real model, far below what a hostile model could ask for.
inline constexpr int64_t kMaxFoldedElements = int64_t(1) << 26;
/// Element count of a constant of shape `s` about to be built at import; UserError naming the
/// shape when an extent is negative or the count exceeds kMaxFoldedElements.
int64_t foldedCount(const Shape& s);

bool isFloatData(const ConstantData& c);
/// Element k as a double, whatever the dtype.
double valueAt(const ConstantData& c, size_t k);

CPtr makeInts(Shape shape, std::vector<int64_t> v, DType t = DType::Int64);
CPtr makeFloats(Shape shape, std::vector<float> v);
/// A constant of `shape` and dtype `t` from doubles (ints truncated towards zero).
CPtr makeFrom(Shape shape, DType t, const std::vector<double>& v);
/// The same data with another shape (element count unchanged).
CPtr reshaped(const ConstantData& c, Shape shape);
/// Float32 version of a constant (graph constants are float; int shape tensors convert exactly).
CPtr asFloat(const CPtr& c);
/// The elements as int64 (floats truncated).
std::vector<int64_t> toInts(const ConstantData& c);

Shape rowMajorStrides(const Shape& s);
/// numpy broadcasting of two shapes; UserError when incompatible.
Shape broadcastShapes(const Shape& a, const Shape& b);
/// For each output element (row-major over `out`), the flat index into a tensor of shape `in`
/// broadcast to `out`.
std::vector<size_t> broadcastIndex(const Shape& in, const Shape& out);
/// Element-wise n-ary function on constants with numpy broadcasting.
CPtr foldElementwise(const std::vector<CPtr>& ins, DType outType,
                     const std::function<double(const std::vector<double>&)>& f);
/// Gathers the elements at `srcIndex` of `c` into a new constant of `shape`.
CPtr gatherFlat(const ConstantData& c, Shape shape, const std::vector<size_t>& srcIndex);
/// Source flat indices of a transpose of `in` by `perm`; sets *outShape.
std::vector<size_t> transposeIndex(const Shape& in, const std::vector<int64_t>& perm, Shape* outShape);

/// A normalized Slice: per axis start, step and count.
struct SliceSpec {
    std::vector<int64_t> begin, end, strides, axes;  // static, clamped, one entry per sliced axis
    Shape outShape;
};

/// ONNX Slice semantics: negative indices wrap, bounds clamp, axes/steps default; UserError on
/// mismatched lengths, repeated or out-of-range axes, or a zero step.
SliceSpec normalizeSlice(const Shape& in, std::vector<int64_t> starts, std::vector<int64_t> ends,
                         std::vector<int64_t> axes, std::vector<int64_t> steps);
/// Source flat indices of slicing a tensor of shape `in` by `s`.
std::vector<size_t> sliceIndex(const Shape& in, const SliceSpec& s);

}  // namespace tb::graph::onnx_detail
