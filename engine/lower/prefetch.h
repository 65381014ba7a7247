// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file prefetch.h
/// \brief Weight prefetch: while a parallel loop's iteration computes on its block of a weight,
/// software prefetches bring the block its next iteration reads into the L2 cache.
///
/// Why: inside a network a kernel's weights arrive from DRAM (the other kernels' weights and
/// activations have passed through the caches since its last call; measure_policy.h). A tuned
/// conv2d reads its weight block once from DRAM, at the pace of its first pass over the block, and
/// then reuses it from L2: the DRAM stream and the FMAs take turns instead of overlapping.
/// Measured on the 2-core Xeon VM (issue 15): resnet-18 at 2 threads ran 2.2 ms (19%) slower in the
/// network than the sum of its kernels timed warm, 46.8 MB of weights being 2.0 ms of DRAM time at
/// 23.7 GB/s; mobilenet's 7x7 1024->1024 1x1 conv ran 0.58 ms with its weights flushed against
/// 0.34 ms warm, at 7 GB/s. The hardware prefetchers follow a stream only a few lines ahead and
/// only within a 4 KiB page; they cannot know the next block before the loop asks for it.
/// TVM has a `prefetch` schedule primitive that Ansor never uses; oneDNN's JIT kernels prefetch
/// the next block of weights in their inner loops the same way.
///
/// The rule, for every Parallel loop P (outermost; its iterations are the blocks a thread runs in
/// turn, thread_pool.h gives each thread a contiguous range) and every weight W read in its body:
///   - block: the flat element range [lo, hi] of W read by one iteration of a loop X, from the
///     ranges of the loops inside X (Analyzer::bound), X at its first and at its second value. X is
///     P when P's block qualifies, else the outermost serial loop of the nest around W's deepest
///     load whose block does (a P with as many iterations as threads gives each thread one block
///     of several MB; the loops inside then stream sub-blocks). A block qualifies when it moves
///     with X, is at least 4 KiB and at most 1 MiB (half of a 2 MiB L2: the current and the next
///     block both fit), and is dense (at most twice the elements the loads' loops can touch); W is
///     left alone when none does;
///   - placement: the lines of the next block (X + 1) are spread evenly over the iterations of the
///     loops inside X around W's deepest load: at the start of the body of the deepest loop L whose
///     iteration count N (the product of the extents from X's body down to L, vectorized loops
///     excluded) does not exceed the block's cache lines; each iteration prefetches
///     m = ceil(lines / N) consecutive lines (at most 16); the last iterations may run up to
///     N * m - lines lines past the block (into the one after it), never clamped: a clamp costs a
///     compare and a select per prefetch in the loop, an unclamped one is one instruction;
///   - the prefetch is a hint for L2 (llvm.prefetch read, locality 2: `prefetcht1` on x86,
///     `prfm pldl2keep` on AArch64) that never faults, so X + 1 past the end is harmless.
/// Only codegen calls it, on the loop nest it is about to emit (after unrolling), so the cost
/// model's features and the printed IR (the kernel cache key) do not see the prefetches; codegen
/// adds whether they were inserted to its cache key. TB_PREFETCH=0 turns the pass off (A/B runs).

#include <vector>

#include "engine/lower/loop_ir.h"

namespace tb::lower {

struct PrefetchOptions {
    int64_t lineBytes = 64;              ///< cache line (bytes)
    int64_t minBlockBytes = 4096;        ///< smaller blocks are left to the hardware prefetchers
    int64_t maxBlockBytes = 1 << 20;     ///< larger blocks would evict the current one from L2
    int64_t maxLinesPerIteration = 16;   ///< more would be a burst, not a stream
};

/// `body` with prefetches of the next parallel iteration's block of each of `weights` (buffers
/// bound as kernel arguments) inserted as described in the file comment; `body` unchanged when no
/// weight qualifies. `inserted`, when given, receives the number of prefetch statements inserted
/// (in the IR, not executed). Never throws for an unanalysable nest: it skips it.
Stmt insertWeightPrefetch(const Stmt& body, const std::vector<Buffer>& weights, const PrefetchOptions& options = {},
                          int* inserted = nullptr);

/// False when the environment sets TB_PREFETCH=0 (read once per process).
bool weightPrefetchEnabled();

}  // namespace tb::lower
