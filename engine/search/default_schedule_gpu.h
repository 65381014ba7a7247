// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file default_schedule_gpu.h
/// \brief The schedule a fused group gets on a GPU target when the tuning log has no record for it:
/// the GPU counterpart of default_schedule.h.
///
/// Why it exists: on a GPU every loop nest must be bound to blocks and threads before it can run at
/// all (TVM's VerifyMemory rejects an unbound nest: "Did you forget to bind?"), so the unscheduled
/// lowering that backs up the CPU path does not exist here. TVM falls back to its hand-written topi
/// schedules (`schedule_injective` for cuda / opencl: fuse every axis, split by the device's thread
/// limit, bind blockIdx.x / threadIdx.x). This file builds that schedule from the transform steps the
/// search uses, so it goes through the same replay -> inferBound -> GPU lowering path as a tuned
/// state:
///   1. Every non-output stage without reduction is inlined into its readers (GPU: also padding and
///      other non-strictly-inlineable stages, as Ansor's AlwaysInline does on GPUs).
///   2. A reduction whose only reader is the (element-wise) output with the same spatial axes, as
///      conv2d + bias + relu: the reduction gets a "local" cache-write stage (CHW), the original
///      stage, now a copy, is inlined, and the local stage is computed at the output's threadIdx.x
///      loop (CA): one kernel, each thread accumulating its output element in a register.
///   3. Every other remaining stage (the output, reductions read by several stages or through
///      a reshape) is computed at the root: its spatial axes are fused, split by
///      the threads per block and bound to blockIdx.x / threadIdx.x, its reduce loops stay serial
///      inside; each such stage is one kernel, in stage order. A reduction to a scalar (no spatial
///      axis) binds its fused reduce loops across the threads of one block instead (split by the
///      threads per block, the inner part on threadIdx.x: a cross-thread reduction, as TVM topi's
///      all-reduce schedule, which the GPU lowering turns into a shared-memory tree reduction).
/// The result trades speed for certainty (one output element per thread, no shared memory); it is
/// what untuned groups run on, never what the search returns.

#include "engine/schedule/loop_state.h"
#include "engine/support/hardware_params.h"
#include "engine/te/compute_dag.h"

namespace tb::search {

/// The GPU default schedule of `dag` for a device with `hw`'s limits (steps applied, not through
/// inferBound). threadIdx.x has min(hw.maxThreadsPerBlock, 256) threads (TVM's topi uses the
/// target's max_num_threads; 256 fits every device, Mali's limit included); a fused extent no larger
/// than that is bound whole to threadIdx.x (one block). Throws tb::UserError when hw has no thread limit or a
/// root stage has no axis at all (a scalar computed without reduction), InternalError when a step
/// does not apply.
State defaultGpuSchedule(const te::ComputeDAG& dag, const HardwareParams& hw);

}  // namespace tb::search
