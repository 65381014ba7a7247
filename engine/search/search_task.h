// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file search_task.h
/// \brief A search task: one compute DAG to tune for one target (TVM `auto_scheduler.SearchTask`).
///
/// Task extraction (graph/) produces one per distinct fused subgraph; the sketch policy searches
/// schedules for it, the measurer times them, and the task scheduler splits the trial budget
/// between the tasks of a network. Hardware parameters (support/hardware_params.h) steer the search
/// rules (parallelism goal `16 * numCores`, vector width) as in TVM; the tuner fills them with
/// measure::defaultHardwareParams(target) unless the job gives them.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/schedule/layout_rewrite.h"
#include "engine/support/hardware_params.h"
#include "engine/te/compute_dag.h"

namespace tb::search {

struct SearchTask {
    std::shared_ptr<const te::ComputeDAG> dag;
    std::string workloadKey;   ///< TVM's key (dag->workloadKey() for extracted tasks)
    std::string desc;          ///< e.g. "vm_mod_fused_nn_conv2d_add_nn_relu"
    std::string target;        ///< TVM target string, e.g. "llvm -mcpu=znver4"
    HardwareParams hardware;   ///< what the search rules assume and the records carry
    /// How measured states read layout-free weights (layout_rewrite.h; TVM SearchTask's
    /// layout_rewrite_option, written into every record): RewriteForPreTransformed times the kernel
    /// with its weight already in the state's layout, as a network compiled with the record runs it.
    LayoutRewriteOption layoutRewrite = LayoutRewriteOption::NoRewrite;
    /// Measurement policy (tuning/measure_policy.h, chosen by buildTuner): candidates timed with the
    /// CPU caches flushed before each repeat (true) or warm (false); nullopt = the runner's setting.
    std::optional<bool> cacheFlush;
    std::string cacheFlushReason;  ///< why, for tables: "flush: network weights 46.8 MB > LLC 33.6 MB"
    /// The arguments a flush evicts (indices into dag->tensors(), so into the kernel's arguments):
    /// empty = TVM's cache_flush_cpu_non_first_arg, every argument but the first. The `auto` policy
    /// sets the network's constants here (the weights), so that activations stay warm as they do
    /// in the network (tuning/measure_policy.h).
    std::vector<int> flushArgs;
    double flop() const { return dag ? dag->flopCount() : 0; }
};

}  // namespace tb::search
