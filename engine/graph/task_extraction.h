// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file task_extraction.h
/// \brief From a network to its tuning tasks: TVM's `auto_scheduler.extract_tasks`
/// (python/tvm/auto_scheduler/relay_integration.py), REFERENCE-ZOO §0 and §2.
///
/// The graph goes through the Relay pipeline (passes.h: optimizeForTasks) with the target's
/// AlterOpLayout rules (x86, cuda, mali or generic OpenCL: OpStrategy), is partitioned by
/// FuseOps (fuse_ops.h), and every fused group is lowered op by op through the op registry into a
/// te ComputeDAG whose placeholders are the group's params `p0, p1, ...`. A group whose DAG has a
/// `Reduce` stage is a task (with `includeSimpleTasks`, every group whose DAG can be built);
/// groups containing an op TVM lowers to an extern (x86 `concatenate`) give none. Tasks with the
/// same workload key merge; the weight is the number of groups that map to the key (TVM's use
/// count of structurally equal primitive functions). Keys are byte-identical with TVM v0.14's.
///
/// GPU targets (TVM's strategies with the auto-scheduler enabled, strategy/{cuda,mali}.py):
/// NHWC convolutions, depthwise convolutions, dense, pools and softmax take the same TOPI computes
/// as on x86, so their keys are the x86 ones; the differences are the winograd rules (passes.h
/// alterOpLayout: every 3x3 stride-1 conv, tile size by input height), concatenate (a plain compute,
/// not x86's te.extern, so it is a simple task), and NCHW (no NCHWc rewrite; Mali's NCHW template
/// is not implemented and raises UserError). mobilenet NHWC on `opencl -device=mali` gives seed
/// 003's 22 tasks; resnet-18 NHWC on `cuda` the 24 tasks of TVM's CI log
/// (gallery/how_to/tune_with_autoscheduler/ci_logs/resnet-18-NHWC-B1-cuda.json).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/graph/fuse_ops.h"
#include "engine/graph/graph.h"
#include "engine/graph/passes/passes.h"
#include "engine/te/compute_dag.h"

namespace tb::graph {

/// One search task.
struct ExtractedTask {
    std::string workloadKey;  ///< `["<md5>", [shape], ...]` (TVM json.dumps form)
    te::ComputeDAG dag;       ///< io tensors: params in DFS discovery order, then the output
    int weight = 0;           ///< occurrences in the network
    double flop = 0;          ///< FLOPs of one occurrence (TVM FlopEstimator), -1 if uncountable
    /// TVM-style function name of the first occurrence, e.g. "vm_mod_fused_nn_conv2d_add_nn_relu".
    std::string desc;
    /// The graph nodes (after optimizeForTasks) that are the roots of this task's groups. For a
    /// direct alternative (alternativeOf >= 0): the nodes of the graph optimized without winograd.
    std::vector<NodeId> groupRoots;
    /// -1, or (TaskExtractionOptions::winogradAlternatives) the index in the task list of the
    /// winograd task this direct conv2d task is the alternative of: the same convolutions (and
    /// fused epilogue), computed directly. The network runs whichever of the two is faster
    /// (runtime::BuildOptions::winograd), so the task scheduler counts the pair once, at the
    /// faster one's latency (tuning::SchedulerTask::alternativeOf).
    int alternativeOf = -1;
    /// Indices into `dag.tensors()` of the placeholders bound to constants of the network (the
    /// weights, biases and scales of the first occurrence; LoweredGroup::constantArgs). The rest
    /// are activations: the data input, a residual input, the output. The measurement policy
    /// flushes only these (tuning/measure_policy.h).
    std::vector<int> constantArgs;
};

struct TaskExtractionOptions {
    /// TVM target string (a `-host=...` in it is ignored). `llvm ...`: the x86 rules of
    /// REFERENCE-ZOO §3; the target only sets the SIMD width of the NCHWc fallback blocking (16
    /// lanes for AVX-512 CPUs such as `-mcpu=skylake-avx512`, `cascadelake`, `icelake-server`,
    /// `sapphirerapids`, `znver4`; 8 otherwise). `cuda ...`, `opencl -device=mali ...`,
    /// `opencl ...`: the cuda, mali and generic-OpenCL rules (OpStrategy). UserError for other kinds.
    std::string target = "llvm -mcpu=core-avx2";
    /// TVM `include_simple_tasks`: also make tasks of groups without a reduction.
    bool includeSimpleTasks = false;
    /// false: no winograd rewrite of NHWC 3x3 convolutions (AlterLayoutOptions::winograd).
    bool winograd = true;
    /// With `winograd`: also extract, for each winograd task, the direct conv2d task of the same
    /// convolutions (ExtractedTask::alternativeOf), appended after TVM's tasks (whose order and IDs
    /// do not change). Not a TVM option: TVM fixes winograd by a shape rule (x86: 64 < CO < 512);
    /// whether winograd wins depends on the machine, e.g. its transformed weights are 4x (6x6 / 3x3)
    /// larger, which costs where the weights come cold from DRAM (resnet-50's 14x14x256 convs).
    bool winogradAlternatives = false;
};

/// One fused group that TVM's rule makes a winograd convolution, and the same group when the graph
/// is optimized with every such convolution direct.
struct WinogradDirectPair {
    std::string winogradKey;  ///< workload key of the group under the rule
    te::ComputeDAG direct;    ///< the group lowered direct (its conv2d task's DAG)
    std::string directName;   ///< FuseOps name of the direct group, e.g. "fused_nn_conv2d_add_nn_relu"
    NodeId directRoot = -1;   ///< its root in the graph optimized without winograd
    std::vector<int> directConstantArgs;  ///< LoweredGroup::constantArgs of the direct group
};

/// The winograd groups of `ruleGraph` (the network `g` optimized under TVM's rule `ao`, partitioned
/// into `ruleGroups`), in graph order, each paired with its direct group. The two optimized graphs
/// partition alike, group for group, except for those convolutions; empty when they do not (then
/// no pairing is known) or when no group is winograd. Only the paired groups are lowered.
std::vector<WinogradDirectPair> winogradDirectPairs(const Graph& g, const Graph& ruleGraph,
                                                    const std::vector<FusedGroup>& ruleGroups,
                                                    const AlterLayoutOptions& ao);

/// The pass options implied by a target string (see TaskExtractionOptions::target): the strategy
/// family from the kind and TVM's keys (a `mali` key -> Mali; cuda -> Cuda; other opencl ->
/// GpuGeneric; llvm -> X86 with its SIMD lanes). UserError for another kind.
AlterLayoutOptions alterOptionsForTarget(const std::string& target);

/// A group lowered to te.
struct LoweredGroup {
    te::ComputeDAG dag;
    bool hasReduce = false;
    bool extern_ = false;  ///< contains an op TVM lowers to te.extern on x86 (no DAG in TVM)
    /// Indices into `dag.tensors()` of the placeholders whose group param is a Constant node of the
    /// graph (weights, biases, folded batch-norm scales), ascending.
    std::vector<int> constantArgs;
};

/// The compute an op strategy picked for one op node, given its input tensors, or nullopt for the
/// op registry's lowering (TVM select_implementation: e.g. AutoTVM's dense_pack.x86 compute for an
/// nn.dense, autotvm/apply_history_best.h).
using OpImplementation = std::function<std::optional<te::Tensor>(const Node& op, const std::vector<te::Tensor>& inputs)>;

/// Lowers one fused group of `g` (params become placeholders p0, p1, ... of their types), each op
/// through `implementation` when it returns a tensor, else through the op registry.
/// Throws UserError when an op of the group has no lowering.
LoweredGroup lowerGroup(const Graph& g, const FusedGroup& group, const OpImplementation& implementation = {});

/// The op implementations a GPU strategy family uses where they differ from the op registry's
/// lowering (nn.conv2d on generic OpenCL: winograd with the weight transform in the task; on Mali:
/// UserError for NCHW), or an empty function for x86 and cuda.
OpImplementation gpuImplementation(const AlterLayoutOptions& target);

/// The tasks of an already optimized graph (no passes run), in order of first occurrence, lowered
/// with the x86 strategies.
std::vector<ExtractedTask> extractTasksFromOptimized(const Graph& optimized, bool includeSimpleTasks = false);
/// The same, lowered with the strategies of `target.strategy` (gpuImplementation; concatenate is a
/// te.extern, so never a task, on x86 only).
std::vector<ExtractedTask> extractTasksFromOptimized(const Graph& optimized, const AlterLayoutOptions& target,
                                                     bool includeSimpleTasks = false);

/// The whole of `auto_scheduler.extract_tasks`: optimizeForTasks then extractTasksFromOptimized.
/// Task order is the network order of first occurrence (TVM's is a hash-map order).
std::vector<ExtractedTask> extractTasks(const Graph& g, const TaskExtractionOptions& options = {});

/// The workload key TVM < 0.8 gave the same subgraph: logs written then (e.g. the 2021 resnet-18
/// sandbox log) hash a print where every input is named `placeholder`, topi's conv2d_nhwc stages are
/// `PaddedInput` / `Conv2dOutput`, and C++ pool stages are `tensor`; shapes are unchanged. Lets those
/// logs be matched to (and replayed on) our tasks.
std::string legacyTvmWorkloadKey(const te::ComputeDAG& dag);

}  // namespace tb::graph
