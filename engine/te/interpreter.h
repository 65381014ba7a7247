// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file interpreter.h
/// \brief The reference interpreter: evaluates any te ComputeDAG on float32 host buffers.
///
/// This is the oracle of every correctness test in the project. Compiled kernels, whole networks,
/// ONNX conformance cases and the PP-OCR models are all checked against what this file computes, so
/// it favours plain, exact semantics over speed, and is fast only where it can stay exact.
///
/// Semantics (one definition, used by both evaluation paths below):
/// - Every compute op is materialized over its full domain, in stage order (producers first).
///   Spatial points are visited in row-major order of the op's axes; reduce axes in row-major order
///   of the Reduce's axis list (the last axis innermost). That order is the accumulation order.
/// - Float math runs in double and is rounded to float32 only when stored (and by an explicit
///   `Cast` to float32). Reductions accumulate in double. float32*float32 products are exact in
///   double, so `sum(a*b)` differs from exact arithmetic only by the double roundings of the sum.
/// - Integer math runs in int64 with TVM's semantics: `Div`/`Mod` on ints are truncdiv/truncmod,
///   `FloorDiv`/`FloorMod` round towards minus infinity; dividing by zero is an InternalError.
///   Bools are 0/1. `Cast` float->int truncates towards zero (NaN or out of range: InternalError).
/// - `max(a, b)` is `a > b ? a : b` and `min(a, b)` is `a < b ? a : b` (TVM's LLVM lowering), also
///   as the Max/Min combiners (`acc = max(acc, value)`); their identities are TVM's min_value /
///   max_value of the dtype (e.g. -3.40282e+38f, not -inf).
/// - `tir.if_then_else`, `Select`, `&&` and `||` evaluate only what the taken branch needs, so a
///   padded read `if_then_else(in_bounds, x[i - 1], 0f)` never loads out of bounds. (Compiled code
///   may evaluate both arms of a `Select`; the interpreter does not check the untaken one.)
/// - `tir.round` rounds half away from zero (TVM lowers it to `llvm.round`), `tir.nearbyint` half
///   to even; `tir.sigmoid(x)` is `1 / (1 + exp(-x))` and `tir.rsqrt(x)` `1 / sqrt(x)` (TVM's
///   legalization); float `Mod` is `fmod` (LLVM `frem`). Supported intrinsics (all "tir."): exp,
///   exp2, exp10, log, log2, log10, log1p, sqrt, rsqrt, tanh, sigmoid, fabs, erf, floor, ceil,
///   round, nearbyint, trunc, sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, pow,
///   atan2, fmod, copysign, hypot, isnan, isinf, isfinite, likely, if_then_else. Any other is an
///   InternalError when the op is compiled (before any point is evaluated).
/// - A load whose index lies outside the tensor (checked per dimension, not just the flat
///   offset) throws tb::InternalError naming the stage, the tensor, the index and the shape.
/// - Compute ops have one output (TVM's multi-output computes are not supported: InternalError).
/// - Every buffer holds float32. Ops of an int or bool dtype store their values converted to float
///   (exact for |v| <= 2^24); float64 ops are rounded to float32 on store. Loads of such tensors
///   convert back (float -> int truncates).
///
/// How it runs: each op body is compiled once into a compact node array (variables in slots, every
/// integer sub-expression that is affine in the loop variables folded into one dot product, loads
/// proven in bounds over the whole iteration box flattened to a single affine offset and left
/// unchecked). Nodes are evaluated for batches of 128 consecutive output points at a time, so the
/// interpretive dispatch is paid per batch; lazy operands narrow the batch to the points that take
/// them. A top-level Reduce whose source is a left-deep product of 1..3 such loads (conv2d,
/// depthwise, dense, pooling, winograd transforms) runs as a tight loop over the innermost reduce
/// axis with precomputed offsets, four output points interleaved; every point still sees the
/// exact scalar sequence of operations, so its results are bit-identical to the general path. The
/// spatial domain is split into contiguous chunks run on the engine thread pool when the work is
/// large, which does not change any result either. When several loads are out of bounds, which one is reported
/// is deterministic for a given thread count.
///
/// Typical cost on one core: ~1 ns per multiply-add in conv2d/dense reductions, ~5-20 ns per
/// output point for padding and elementwise stages.

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "engine/te/compute_dag.h"
#include "engine/te/operation.h"

namespace tb::te {

/// A dense row-major float32 tensor on the host. `data.size()` must equal the product of `shape`
/// (1 for a 0-d tensor). A plain aggregate: `Buffer{{2, 3}, {1, 2, 3, 4, 5, 6}}`.
struct Buffer {
    std::vector<int64_t> shape;
    std::vector<float> data;

    /// A zero-filled buffer of `shape` (every extent must be >= 0).
    static Buffer zeros(std::vector<int64_t> shape);
    /// Product of the extents (1 for a 0-d tensor).
    int64_t numElements() const;
    /// Element at a full multi-index (row-major). Throws InternalError on a wrong rank or an index
    /// out of range.
    float at(const std::vector<int64_t>& index) const;
    float& at(const std::vector<int64_t>& index);
};

/// Knobs of one evaluation. The defaults are what tests and the graph executor want.
struct EvalOptions {
    /// Chunks one op's spatial domain is split into, run on the engine thread pool
    /// (support/thread_pool.h); 0 = min(2, hardware threads). 1 = the calling thread only.
    int numThreads = 0;
    /// An op is split over threads only when (spatial points x reduce points) reaches this.
    int64_t parallelThreshold = int64_t(1) << 16;
    /// Use the specialized product-of-loads reduction loop when it applies. Turning it off gives the
    /// general path everywhere (the results are identical; tests compare the two).
    bool specialize = true;
};

/// Buffers keyed by the operation that produces them (output 0 of the op).
using BufferMap = std::unordered_map<Operation, Buffer>;

/// Evaluate `dag`: `inputs` are given in `dag.inputs()` order and must match their placeholders'
/// shapes exactly; the result holds one buffer per `dag.outputs()` tensor, in that order.
/// Intermediate buffers are released as soon as their last consumer has run.
/// Throws UserError on a wrong input count, a shape mismatch, or a data size that does not match
/// the shape; InternalError on an out-of-bounds load or an unsupported expression.
std::vector<Buffer> evaluate(const ComputeDAG& dag, const std::vector<Buffer>& inputs,
                             const EvalOptions& options = {});

/// Evaluate the ops that `outputs` depend on. `given` supplies buffers for operations that are not
/// to be computed: every placeholder reached must be in it, and a compute op found in it is taken
/// as is (not recomputed, its producers not visited), so a graph executor can chain subgraphs.
/// Returns a buffer for every compute op evaluated by this call (intermediates included, for
/// debugging), keyed by operation; the `given` buffers are not copied into the result.
/// Throws UserError for a missing placeholder or a given buffer whose shape differs from its op's;
/// InternalError as evaluate() does.
BufferMap evaluateTensors(const std::vector<Tensor>& outputs, const BufferMap& given,
                          const EvalOptions& options = {});

}  // namespace tb::te
