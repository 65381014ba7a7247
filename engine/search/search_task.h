// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file search_task.h
/// \brief A search task: one compute DAG to tune for one target (TVM `auto_scheduler.SearchTask`).
///
/// Task extraction (graph/) produces one per distinct fused subgraph; the sketch policy searches
/// schedules for it, the measurer times them, and the task scheduler splits the trial budget
/// between the tasks of a network. Hardware parameters steer the search rules (parallelism goal
/// `16 * numCores`, vector width) as in TVM (search_task.cc: CPU defaults num_cores =
/// MaxConcurrency(), vector_unit_bytes = 64, cache_line_bytes = 64).

#include <memory>
#include <string>

#include "engine/te/compute_dag.h"

namespace tb::search {

/// TVM HardwareParams (record order: num_cores, vector_unit_bytes, cache_line_bytes,
/// max_shared_memory_per_block, max_local_memory_per_block, max_threads_per_block,
/// max_vthread_extent, warp_size).
struct HardwareParams {
    int numCores = 1;
    int vectorUnitBytes = 64;
    int cacheLineBytes = 64;
    int maxSharedMemoryPerBlock = 0;
    int maxLocalMemoryPerBlock = 0;
    int maxThreadsPerBlock = 0;
    int maxVthreadExtent = 0;
    int warpSize = 0;
    /// CPU defaults for this machine (num_cores = hardware threads).
    static HardwareParams hostDefaults();
};

struct SearchTask {
    std::shared_ptr<const te::ComputeDAG> dag;
    std::string workloadKey;   ///< TVM's key (dag->workloadKey() for extracted tasks)
    std::string desc;          ///< e.g. "vm_mod_fused_nn_conv2d_add_nn_relu"
    std::string target;        ///< TVM target string, e.g. "llvm -mcpu=znver4"
    HardwareParams hardware;
    double flop() const { return dag ? dag->flopCount() : 0; }
};

}  // namespace tb::search
