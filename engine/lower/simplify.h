// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file simplify.h
/// \brief Arithmetic simplification of lowered loop nests (TVM's `arith::Analyzer` +
/// `tir.transform.Simplify`, reduced to what Ansor's lowered kernels need), and the unroll pass.
///
/// Lowering a schedule produces index expressions such as `floordiv(i.outer*16 + i.inner, 16)` or
/// guards such as `i.outer*16 + i.inner < 1024` whose truth follows from the loop ranges. Codegen
/// needs them in plain affine form (to recognise contiguous vector accesses) and without dead
/// guards (they block vectorization). The rules:
///   - constant folding, `x*1`, `x+0`, `x*0` (te's constructors, TVM's TryConstFold);
///   - integer sums are put in a canonical linear form `c1*t1 + c2*t2 + ... + c0` (terms in first
///     appearance order), which merges `(a*c1)*c2`, `(x + c1) + c2`, `x - x`, `(i*4 + j)*16`;
///   - `floordiv(L, c)` / `floormod(L, c)` of a linear form L with c > 0: the terms whose
///     coefficient is a multiple of c move out of the division; when the rest is proven to lie in
///     [0, c) from the variables' ranges, the division disappears (`floordiv(i*16 + j, 16) -> i`,
///     `floormod(i*16 + j, 16) -> j` for j in [0, 16)); truncating `/` and `%` follow the same rules
///     when both operands are proven non-negative;
///   - comparisons, `min`, `max`, `select` and `tir.if_then_else` decided from ranges;
///   - statements: guards proven true/false are removed, loops of extent 1 are replaced by their
///     body with the variable substituted (a blockIdx / threadIdx loop of extent 1 stays around
///     it: a launch dimension), loops of extent 0 disappear.
/// Float arithmetic is never re-associated (only TVM's exact folds apply), so results stay bitwise
/// identical to the unsimplified program.

#include <cstdint>
#include <map>
#include <optional>

#include "engine/lower/loop_ir.h"

namespace tb::lower {

/// An inclusive integer interval [min, max].
struct IntRange {
    int64_t min = 0;
    int64_t max = 0;
};

/// Known variable ranges plus the simplification rules above.
class Analyzer {
public:
    /// Declare v in [min, max] (inclusive). Rebinding replaces the previous range.
    void bind(const te::Var& v, IntRange range);
    /// Declare v in [min, min + extent - 1] (a loop's range); extent must be >= 1.
    void bindLoop(const te::Var& v, int64_t min, int64_t extent);
    void unbind(const te::Var& v);

    /// Simplified e (same value for every assignment of the bound variables within their ranges).
    te::Expr simplify(const te::Expr& e) const;
    /// Range of an integer expression, or nullopt when some part is unbounded/unknown.
    std::optional<IntRange> bound(const te::Expr& e) const;
    /// True when the bool expression is proven true for every assignment within the ranges.
    bool canProve(const te::Expr& cond) const;

private:
    std::map<const te::ExprNode*, IntRange> m_bounds;
    friend class SimplifyImpl;
};

/// Simplify an expression without variable ranges.
te::Expr simplify(const te::Expr& e);

/// Structural equality of two expressions (variables and buffers by identity).
bool exprEqual(const te::Expr& a, const te::Expr& b);

/// TVM's rewrite rules `floordiv(x, c)*c + floormod(x, c) -> x` and
/// `floormod(floordiv(x, c), b)*c + floormod(x, c) -> floormod(x, b*c)` on the terms of an integer
/// sum (repeated while they apply), then simplify(). Undoes the index split of a fused loop over a
/// dense buffer (a cooperative fetch's store index becomes linear in its vector lane). Not part
/// of simplify() (the CPU lowering's output stays as it is); used by the GPU source emitter.
te::Expr mergeDivMod(const te::Expr& e);

/// Simplify every expression of s, using the ranges of the loops that enclose each one (plus the
/// ranges already bound in `analyzer`), and drop dead guards / trivial loops.
Stmt simplify(const Stmt& s, const Analyzer& analyzer = Analyzer());
/// simplify() on a function body.
LoweredFunc simplify(const LoweredFunc& f);

/// TVM's UnrollLoop pass, driven by Ansor's `pragma_auto_unroll_max_step` attribute: inside an
/// AttrNode with that key and value N, every Serial loop with a constant extent whose unrolled
/// size (extent x number of statements its body executes per iteration, counted through inner
/// loops) is at most N becomes ForKind::Unrolled. Loops are considered innermost first, so an outer
/// loop is unrolled only when everything inside it is. Loops outside such an attribute, and
/// Parallel/Vectorized/ThreadBinding loops, are left alone (a vectorized or thread-bound loop counts
/// as one step of its body, as in TVM). The attributes themselves stay (codegen ignores them).
Stmt unrollLoops(const Stmt& s);

/// Explicit unrolling (TVM's UnrollLoop::Unroll under `pragma_unroll_explicit`, followed by TVM's
/// Simplify): every Unrolled loop with a constant extent is replaced by `extent` copies of its body,
/// copy k with the loop variable replaced by `min + k`, innermost loops first; then the whole
/// statement is simplified (simplify() above), so what depends only on the unrolled variables folds
/// in the loop IR rather than in LLVM: constant-matrix selects become constants, `x*0f` / `x + 0f`
/// fold as TVM folds them, and a store that folds to `b[i] = b[i]` disappears. Last, adjacent stores
/// to the same element are merged, `b[I] = v1; b[I] = b[I] + x` -> `b[I] = v1 + x` (only when the
/// second reads b once, at I; same operations in the same order), so an unrolled reduction reaches
/// LLVM as one expression per element instead of a load/store chain that LLVM's store forwarding,
/// limited to ~100 instructions per block, leaves in memory. A loop is expanded only
/// when extent x (stores in its expanded body, at least 1) <= maxStores; the others keep
/// ForKind::Unrolled (codegen runs them as serial loops). Why: unrolling while emitting LLVM IR left
/// every copy's index and select arithmetic to LLVM (5 MB of IR, 17-93 s of O3 for winograd tasks).
Stmt expandUnrolled(const Stmt& s, int64_t maxStores = 16384);

}  // namespace tb::lower
