// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file gpu_limits.h
/// \brief What the GPU kernels of a loop State use — threads per block, virtual threads, shared
/// and local memory, vector widths — read from the State itself, and the check TVM makes before a
/// GPU candidate is scored (TVM feature.cc runs tir.transform.VerifyGPUCode with the task's
/// HardwareParams; a state that fails it gets no features and is never measured).
///
/// Why on the State: TVM lowers every candidate to find out; the search here needs the answer for
/// thousands of states per generation, and everything VerifyGPUCode looks at is already fixed by
/// the State once its bounds are inferred: every root stage is one kernel (a thread block grid),
/// the loops bound to threadIdx.* give the block's threads, loops bound to vthread are unrolled
/// into each thread (InjectVirtualThread), `.shared` / `.local` cache stages allocate exactly the
/// region bound inference gives them, and a vectorized loop loads `extent` lanes at once.
///
/// The rules (TVM src/tir/analysis/verify_gpu_code.cc, with the five limits feature.cc passes):
/// - threadIdx.x * threadIdx.y * threadIdx.z <= max_threads_per_block, and every loop of a kernel
///   bound to one threadIdx tag has the same extent (TVM: "Extent of threadIdx.x does not match");
/// - the shared-memory bytes of a kernel (sum of its `.shared` stages' regions) <=
///   max_shared_memory_per_block; its local bytes (`.local` stages) <= max_local_memory_per_block;
/// - a vectorized loop moves extent * element bytes <= vector_unit_bytes (TVM max_vector_bytes);
/// - (beyond VerifyGPUCode, as InitThreadBind checks) the product of the vthread extents around any
///   stage <= max_vthread_extent;
/// - (what TVM's build rejects: "Did you forget to bind?") every root compute stage binds a loop to
///   blockIdx.* or threadIdx.*.
/// A limit of 0 in HardwareParams is not checked (CPU defaults).

#include <cstdint>
#include <string>
#include <vector>

#include "engine/schedule/loop_state.h"
#include "engine/support/hardware_params.h"

namespace tb::search {

/// The thread extents around one stage's stores, as TVM's feature extractor sees them at a store:
/// the innermost loop bound to each blockIdx/threadIdx tag, and the product of all vthread loops.
/// 1 where nothing is bound.
struct GpuThreadExtents {
    int64_t blockX = 1, blockY = 1, blockZ = 1;
    int64_t threadX = 1, threadY = 1, threadZ = 1;
    int64_t vthread = 1;
    bool bound = false;  ///< some loop around the stage is bound to a thread axis
};

/// Per stage id: the extents around it (its own loops, then the loops of the stages it is attached
/// in, up to the attach point). `state` must be bound-inferred (a loop without a range counts 1).
std::vector<GpuThreadExtents> gpuThreadExtents(const State& state);

/// Bytes of one element of a dtype (bool 1, int32/float32 4, int64/float64 8).
int dtypeBytes(te::DType t);

/// What one kernel (a root stage and the stages attached in it) uses.
struct GpuKernelUsage {
    int rootStage = -1;
    int64_t threadsPerBlock = 1;  ///< product of the threadIdx.{x,y,z} extents
    int64_t maxVthread = 1;       ///< largest product of vthread extents around a stage
    int64_t sharedBytes = 0;      ///< sum over the `.shared` stages of their region's bytes
    int64_t localBytes = 0;       ///< sum over the `.local` stages of their region's bytes
    int64_t maxVectorBytes = 0;   ///< largest vectorized loop extent x element bytes
    bool bound = false;           ///< the root stage binds a loop to blockIdx.* or threadIdx.*
    std::string threadMismatch;   ///< non-empty when two loops bound to one threadIdx tag differ
};

/// The usage of every kernel of a bound-inferred state, in root-stage order. Throws what
/// inferSymbolicBounds throws (tb::UserError) for a state whose attachments are invalid.
std::vector<GpuKernelUsage> gpuKernelUsage(const State& state);

/// Empty when every kernel of `state` (bound-inferred) respects `hw` by the rules above; else
/// the first violation in words, e.g. "T_relu: 2048 threads per block > max_threads_per_block 1024".
std::string verifyGpuState(const State& state, const HardwareParams& hw);

}  // namespace tb::search
