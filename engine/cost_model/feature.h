// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file feature.h
/// \brief Per-store program features for the learned cost model (Ansor §5.2; TVM
/// src/auto_scheduler/feature.cc, DEFAULT_FEATURE_VEC_LEN = 164), plus 12 of ours (group 6).
///
/// A lowered kernel is described by one 176-float vector per buffer-store statement (TVM's 164, then ours); the model
/// predicts a score per store and sums them (pack-sum). Layout (REFERENCE-TVM §2.2), each value as
/// TVM's PerStoreFeatureExtractor defines it (names are TVM's):
///   [0, 57)    computation: 16 op counters of the stored value, loads' indices included (float
///              mad/addsub/mul/divmod/cmp/math_func/other_func, the same 7 for int, bool ops,
///              selects; binary ops typed by their first operand, calls by their result; MAD is never
///              detected) x outer_prod; for vectorize, unroll and parallel: count, product (0 when
///              there is none) and length of the innermost such loop + an 8-way one-hot of that
///              loop's position {none, inner/middle/outer spatial, inner/middle/outer reduce, mixed};
///              is_gpu and the blockIdx.{x,y,z}, threadIdx.{x,y,z} and vthread lengths around the store
///              (0 and log2p(1) = 1 on a CPU; on a GPU 1 and the lengths of the GpuStoreContext);
///   [57, 147)  per buffer the store touches, the 5 with the most cache lines (then bytes) x 18:
///              access type one-hot (read, write, read-write), bytes (outer_prod x element size),
///              unique bytes (region touched by all loops), lines (outer_prod / product of the inner
///              loops that do not move the access x min(1, stride x element / line)), unique lines
///              (unique bytes / the contiguous run: innermost dimension touched whole, capped at a
///              line), reuse type one-hot (loop multiple read, serial multiple read-write, no reuse),
///              reuse distance in iterations and bytes, reuse count, the four per-reuse ratios (x 2
///              without reuse), stride along the innermost loop;
///   [147, 157) arithmetic intensity: float ops / bytes touched by the loops from the innermost
///              outwards, as a function of those loops' float ops, sampled at 10 evenly spaced op
///              counts (linear interpolation);
///   [157, 161) allocation of the stored buffer: bytes, elements x outer product at the
///              allocation, that outer product, outer_prod / that outer product;
///   [161, 164) outer_prod (product of the enclosing loop extents), number of enclosing loops,
///              auto_unroll_max_step.
///   [164, 176) ours, not TVM's (CPU only; zeros on a GPU): the straight-line block that codegen emits
///              for the store, on the loop kinds codegen sees (lower::unrollLoops applied, so the
///              auto-unroll pragma's effect is visible). The block is the Unrolled/Vectorized loops
///              inside the innermost Serial/Parallel loop (the hot loop). Values: block size (its
///              iterations), vector lanes, accumulator vectors (a store that reads its own buffer:
///              distinct stored elements / min(lanes, fmaLanes)), vector loads per vector FMA, FMA-pipe
///              efficiency of the block (its vector FMAs / 2 over its estimated cycles), hot-loop
///              extent, accumulator run (iterations of the serial loops from the hot loop outwards
///              that leave the stored element in place: an accumulator is loaded and stored once
///              per run, in registers in between), number of loaded buffers read contiguously /
///              broadcast / strided along the vector lanes (in a block without lanes every load
///              counts as broadcast), whether the store is contiguous, and last (kCyclesFeature) the
///              estimated cycles of the store on the busiest core: cycles per block x blocks, the
///              parallel loops split in whole chunks over `numCores`. Cycles per block are those of
///              a core with two FMA pipes of `fmaLanes` floats, two load ports and one store port
///              (Zen 4 and AVX2 cores: 8; Xeons with two 512-bit pipes: 16): max(FMAs / 2, loads /
///              2, stores), a broadcast load costing one load whatever the width (so on a 16-lane
///              core a block that broadcasts one input per FMA is load-bound); accumulators beyond 28 vector registers
///              cost a load and a store each. Added to them, the cache refills: for L1 (32 KiB, 64
///              B/cycle from L2) and L2 (1 MiB, 32 B/cycle from L3), the innermost loop whose
///              footprint (bytes its whole range touches, as group 3 counts them) exceeds the cache
///              refills its body's footprint in every iteration; at least the whole footprint once.
///              Why: TVM's features describe memory traffic per buffer but not what the register
///              block does, which is what separates the fast
///              schedules of a compute-bound kernel (on our conv logs, held-out pairwise accuracy
///              of the model rose from 0.66 to 0.71 and online from 0.54 to 0.68), and their cycle
///              estimate ranks untrained states better than chance (estimatedCycles below).
/// Numeric values go through log2p(x) = sign(x) * log2(|x| + 1); one-hots stay 0/1. Regions are
/// the ranges of the index expressions with the loops outside a level held at one iteration (TVM
/// ComputeRegion), unions over several reads of one buffer; touched regions accumulate over the
/// stores inside a loop as TVM's for_touch_regions_ do (the serial reuse and the reuse distance in
/// bytes read them).
///
/// Where we differ from TVM v0.14, on purpose: (1) one row per store statement; TVM keeps one row
/// per buffer, adding the op counts of its stores and keeping the other values of the last one (a
/// reduction's init and update stores are one row there, two here); (2) the position one-hot is
/// computed (TVM's GetAnnotationPosEncoding is commented out and it always writes "mixed"); (3) the
/// lines' reduce ratio multiplies the extents of the inner loops that do not move the access (TVM
/// multiplies the innermost loop's extent once per such loop) and the unique lines use the
/// buffer's own region (TVM reuses the region of whichever buffer its hash map visited last). The
/// values are not bit-identical to TVM's (other lowering, no model transfer).
///
/// Thread safety: a pure function of its argument; call it from any number of threads.

#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/lower/loop_ir.h"
#include "engine/search/gpu_limits.h"

namespace tb::cost_model {

inline constexpr int kTvmFeatureLength = 164;
inline constexpr int kBlockFeatureLength = 12;
inline constexpr int kFeatureLength = kTvmFeatureLength + kBlockFeatureLength;
/// Index of the estimated cycles of a store (log2p) in a row.
inline constexpr int kCyclesFeature = kFeatureLength - 1;
/// Float lanes of one machine vector operation at full FMA throughput when the target's are not
/// known: AVX2, or AVX-512 on cores that split it in two halves (Zen 4). measure::fullRateFmaLanes()
/// measures this machine's (16 on cores with two 512-bit FMA pipes).
inline constexpr int kDefaultFmaLanes = 8;
/// Index of is_gpu in a row; blockIdx.x/y/z, threadIdx.x/y/z and vthread lengths follow it.
inline constexpr int kIsGpuFeature = 49;

/// The GPU facts of a kernel's stores: the thread extents around the stores of each buffer, keyed by
/// the buffer's name (the name of the stage that computes it: `conv2d_nchw`, `kernel.shared`).
/// TVM reads them from the thread_extent / virtual_thread attributes enclosing a store (the
/// innermost binding of each thread tag, the product of the vthreads); the State fixes the same
/// numbers (search/gpu_limits.h gpuThreadExtents), so they do not depend on how the lowering
/// spells thread bindings. A store of a buffer not in the map gets lengths 1.
struct GpuStoreContext {
    std::unordered_map<std::string, search::GpuThreadExtents> byBuffer;
};

/// The context of a bound-inferred GPU state: one entry per computed stage.
GpuStoreContext gpuStoreContext(const State& state);

/// One feature row (kFeatureLength floats) per BufferStore of `f`, in program order. Cache line size
/// in bytes. `gpu`: null for a CPU task (is_gpu 0); else is_gpu is 1, the thread lengths come from
/// it and group 6 stays zero. `numCores`: the cores the kernel's parallel loops run on (group 6).
/// `fmaLanes`: float lanes of one FMA at the target core's full FMA rate (group 6; 4, 8 or 16, see
/// measure::fullRateFmaLanes). Throws tb::InternalError for fmaLanes < 1.
std::vector<std::vector<float>> extractPerStoreFeatures(const lower::LoweredFunc& f, int cacheLineBytes = 64,
                                                        const GpuStoreContext* gpu = nullptr, int numCores = 1,
                                                        int fmaLanes = kDefaultFmaLanes);

/// The analytic estimate of a CPU kernel's run time, in core cycles of its busiest core: the sum of
/// its rows' kCyclesFeature (see group 6). Ignores caches and memory bandwidth, so it ranks
/// compute-bound schedules best; the XGBoost model uses it for its predictions before it has
/// trained (XGBModelParams::Warmup::Analytic). Throws if a row has the wrong length.
double estimatedCycles(const std::vector<std::vector<float>>& rows);

/// TVM's log2p.
inline float log2p(double x) { return float(x < 0 ? -std::log2(-x + 1) : std::log2(x + 1)); }

}  // namespace tb::cost_model
