// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file memory_plan.h
/// \brief Static memory planning of a compiled network's intermediate tensors (TVM's
/// GraphPlanMemory, src/relay/backend/graph_plan_memory.cc, reduced to one device).
///
/// A compiled network runs its kernels in a fixed topological order, so the lifetime of every
/// intermediate tensor is known before the first run: it is born when the kernel that writes it
/// runs and dies after the last kernel that reads it. Tensors whose lifetimes do not overlap can
/// share one buffer ("storage"). The planner walks the kernels in order and gives each new tensor
/// the best-fitting free storage (the smallest one at least as large; otherwise the largest free
/// one, grown), or a new storage when none is free, then frees the storages whose last reader has
/// run. A kernel's output is allocated before its inputs are freed, so the output never aliases an
/// input (kernels require non-aliasing arguments, codegen/kernel_abi.h). Pinned tensors (graph
/// inputs, constants, graph outputs) get storages of their own for the whole run.
///
/// The graph executor (graph_runtime.h) allocates each storage once, 64-byte aligned, and reuses
/// them for every run, so a run allocates nothing.

#include <cstdint>
#include <vector>

namespace tb::runtime {

/// One tensor to place. Steps are kernel indices in execution order.
struct PlanTensor {
    int64_t bytes = 0;   ///< size in bytes (> 0)
    int defStep = -1;    ///< kernel that writes it (-1: exists before the first kernel, e.g. an input)
    int lastUse = -1;    ///< last kernel that reads it (-1: never read)
    bool pinned = false; ///< keep a storage of its own for the whole run (inputs, constants, outputs)
};

/// Where every tensor lives.
struct MemoryPlan {
    std::vector<int> storageOf;         ///< storage id per tensor (same index as the input)
    std::vector<int64_t> storageBytes;  ///< size of each storage, bytes
    int64_t plannedBytes = 0;           ///< sum of storageBytes over unpinned storages
    int64_t naiveBytes = 0;             ///< sum of bytes over unpinned tensors (one buffer each)
};

/// Plans `tensors` (see the file comment). Throws InternalError for a non-positive size or a tensor
/// read before it is written (lastUse < defStep with lastUse >= 0).
MemoryPlan planMemory(const std::vector<PlanTensor>& tensors);

}  // namespace tb::runtime
