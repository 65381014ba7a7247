// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file lower_gpu.h
/// \brief Lowering of a State scheduled for a GPU (loops bound to blockIdx / threadIdx / vthread,
/// `shared` and `local` cache stages) into GPU kernels of the loop IR: what TVM's `tvm.lower` +
/// `tvm.build` do for a cuda / opencl target up to the device source (ScheduleOps with thread
/// bindings, InferBound's storage-scope relaxation, InjectVirtualThread, ThreadSync("shared"),
/// SplitHostDevice).
///
/// Where it sits: codegen_gpu_source.h turns the result into OpenCL C or CUDA C (a GpuModule); the
/// GPU runtime (measure/) compiles and launches it. The CPU path (lower_state.h + codegen_llvm.h)
/// never sees these constructs.
///
/// Design (how each GPU concept is lowered; TVM's own choice unless said otherwise):
///   - Thread bindings: `lowerStateThreaded` (lower_state.h) emits a bound loop as a For of kind
///     ThreadBinding tagged "blockIdx.x", "threadIdx.y", "vthread", ... (loop_ir.h). Two loops
///     bound to one axis in a kernel (the consumer's threadIdx.x and, nested in it, the cooperative
///     fetch's threadIdx.x) are the same hardware index, not nested loops. Every root
///     stage (a stage computed at the root, not inlined) must start with such loops: it becomes one
///     kernel (SplitHostDevice), launched after the previous one, with grid / block extents from its
///     blockIdx / threadIdx loops. A root stage whose outermost emitted loop is not bound (or that
///     has a non-bound loop outside a bound one) is a UserError, as TVM's VerifyMemory rejects such
///     a kernel ("Did you forget to bind?"): TVM's GPU sketches bind every root stage, padding
///     included, or inline it.
///     A blockIdx / threadIdx loop of extent 1 stays a bound loop (TVM keeps its thread_extent
///     attribute): a launch dimension of 1, e.g. one block when the tiles cover the whole output.
///   - Launch extents: per axis, the largest extent of the loops bound to it in the kernel. A
///     nested loop bound to the same axis with a smaller extent (a cooperative fetch over fewer
///     threads than the block has) runs guarded (`if (threadIdx.x < extent)`), as TVM's thread
///     extent merging does.
///   - Storage scopes: `shared` buffers live in the block's shared memory (one copy per block; the
///     emitter declares them at kernel scope), `local` buffers in each thread's registers. Bound
///     inference relaxes the thread axes a scope is shared across (infer_bound.h, TVM NeedRelax):
///     a shared stage attached inside threadIdx / vthread loops computes the region of every thread
///     and vthread of the block, and its own threadIdx-bound loop (cooperative fetching: the fused
///     loop split by the thread count, the inner part vectorized) spreads the copy over the threads.
///     A local stage covers one thread (one vthread) only; a global intermediate at the root the
///     whole tensor (a workspace buffer in global memory, written by its own kernel).
///   - Virtual threads (TVM InjectVirtualThread): a vthread loop on the kernel's outer chain is
///     moved inside the thread loops (they are parallel, so the order is free) and then pushed down
///     its body: every Local buffer allocated inside gets one copy per virtual thread (a leading
///     dimension indexed by the vthread), a statement that does not mention the vthread runs once
///     (the cooperative fetch of a shared tile, whose region covers every virtual thread by the
///     relaxation above), loops and guards that do not depend on it stay where they are, and a
///     store that mentions it becomes one copy per virtual thread (unrolled: independent work for
///     the thread's pipeline, as in TVM). A vectorized loop, guard or nested thread loop that uses
///     the vthread gets a serial loop over it instead. The result equals running the vthread loop
///     serially over the body with private local buffers (the virtual threads touch disjoint local
///     copies and output elements), without repeating the fetches and their barriers per vthread.
///     A vthread loop elsewhere (inside a stage's own nest) is simply a serial loop.
///   - Barriers (TVM ThreadSync on "shared"): walking each kernel in execution order, a Barrier is
///     placed before a statement that reads a shared buffer written since the last barrier (the
///     cooperative writes, before the reads), or writes a shared buffer read since then (before the
///     next overwrite). Loops are walked twice, so a loop body that reads a tile and then refetches
///     it gets a barrier at the start of the body as well. Granularity is the buffer (TVM compares
///     index sets): writes by different threads to one buffer are never ordered (they are disjoint
///     in every schedule Ansor makes), and a statement is a unit when it is a store, a guard, a
///     vectorized loop or a thread loop nested in the kernel (a stage's cooperative fetch, which
///     may be guarded), so barriers only land where every thread of the block arrives (outside
///     guards, in uniform loops: every extent is a constant).
///   - Cross-thread reduction (TVM LowerThreadAllreduce, Ansor's CrossThreadReduction sketch): a
///     reduce loop bound to threadIdx is lowered by lowerStateThreaded (lower_state.h) to, per
///     thread, a partial result over the serial reduce loops in a private accumulator, then a tree
///     reduction of the partials in a shared buffer `<stage>.red_buf` with a barrier after every
///     halving step (any thread count: a first step folds what lies above the largest power of two
///     below it), then the store of red_buf[0] by thread 0 (by every thread when the stage's buffer
///     is local). Those barriers are inside the thread loop, so that loop must span its launch
///     dimension (otherwise a UserError: guarded threads would skip the barrier). Warp shuffles are
///     not used (CUDA could; the shared-memory tree works for OpenCL and CUDA alike).
///   - `pragma_auto_unroll_max_step` is applied as on the CPU (unrollLoops in simplify.h marks the
///     loops Unrolled); the emitters write them as `#pragma unroll` loops. Loops the schedule
///     itself unrolls (an Unroll annotation, te `unroll`: the AutoTVM GPU templates) are expanded
///     and simplified first (expandUnrolled, TVM's UnrollLoop with explicit_unroll + Simplify), so
///     constant-matrix selects fold before the device compiler sees them.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/lower/loop_ir.h"
#include "engine/schedule/loop_state.h"
#include "engine/te/compute_dag.h"

namespace tb::lower {

/// One GPU kernel: a root stage's loop nest, from its outermost thread-bound loop in.
struct GpuKernel {
    std::string name;                      ///< `<function name>_kernel<k>`
    Stmt body;                             ///< ThreadBinding loops outermost; Barriers inserted
    std::array<int64_t, 3> grid{1, 1, 1};  ///< blockIdx.{x,y,z} extents
    std::array<int64_t, 3> block{1, 1, 1}; ///< threadIdx.{x,y,z} extents
    /// The global buffers the kernel reads or writes, as indices into GpuLoweredFunc::buffers()
    /// in increasing order (the kernel's parameter order).
    std::vector<int> params;
    int64_t sharedBytes = 0;  ///< bytes of the Shared buffers the kernel allocates
};

/// A State lowered for a GPU: the function's arguments, its global workspaces and its kernels.
struct GpuLoweredFunc {
    std::string name = "default_function";
    std::vector<Buffer> args;        ///< the ComputeDAG's tensors in order (inputs, then outputs)
    std::vector<Buffer> workspaces;  ///< root intermediates (Global), e.g. a padding stage at root
    std::vector<GpuKernel> kernels;  ///< launched in this order

    /// args then workspaces: what GpuKernel::params index.
    std::vector<Buffer> buffers() const;
    /// Text for humans and tests: one `// kernel name<<<grid, block>>>(params)` header per kernel
    /// followed by its loop nest (LoweredFunc::print's statement syntax).
    std::string print() const;
};

/// Lower `state` (its steps applied to `dag`, then `inferBound`) for a GPU: lowerStateThreaded,
/// then the kernel split, launch extents, unroll marking and barrier insertion described in the
/// file comment. Follows TVM's lower for cuda/opencl targets (see above for where it differs).
///
/// Errors (tb::UserError unless said): everything lowerState throws, except that GPU bindings are
/// accepted; a root stage whose loop nest does not start with blockIdx / threadIdx loops, or that
/// binds one inside a non-bound loop (message names the stage's buffer and says "Did you forget
/// to bind?"); an axis bound inside the kernel with a larger extent than the kernel's own outer
/// binding of it (the launch would not cover it); a stage attached outside every thread loop of
/// its kernel (a global buffer inside a kernel); a reduce loop bound to blockIdx or vthread; a
/// cross-thread reduction with a spatial loop of extent > 1 inside its reduce loops, a stage attached
/// at its thread-bound reduce loop, or a thread-bound reduce loop narrower than its launch dimension.
GpuLoweredFunc lowerStateGpu(const te::ComputeDAG& dag, const State& state,
                             const std::string& name = "default_function");

/// Barrier insertion alone (TVM ThreadSync("shared"), the rules of the file comment) on a kernel
/// body whose outermost loops are its block / thread loops.
Stmt insertBarriers(const Stmt& kernelBody);

/// "blockIdx.x" -> (true, 0), "threadIdx.z" -> (false, 2); nullopt-like (-1) dimension for
/// "vthread" and anything else.
struct ThreadAxis {
    bool block = false;
    int dim = -1;  ///< 0..2, or -1 for vthread / not a launch axis
};
ThreadAxis threadAxisOf(const std::string& tag);

}  // namespace tb::lower
