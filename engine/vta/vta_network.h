// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file vta_network.h
/// \brief A graph-packed quantized network on VTA: its AutoTVM tasks as seed 004 extracts them,
/// and an end-to-end run with the packed convolutions on the VTA simulator.
///
/// Why: seed 004 (tune_alu_vta.py) quantizes a network (graph::quantize), packs it
/// (graph_pack.h), extracts the add.vta/multiply.vta tasks, tunes them and evaluates the network.
///
/// Task extraction (autotvm.task.extract_from_program with ops add/multiply/conv2d on TVM's VTA
/// target): every add / multiply node gives an add.vta / multiply.vta task with args (lhs, rhs)
/// = ("TENSOR", shape, dtype) of its operands, every conv2d a conv2d_packed.vta task (packed convs
/// only: the float first conv takes a CPU template, which the seed never asks for). The seed's
/// filter then keeps tasks whose lhs has rank > 4 (packed) and is not float32, replaces a scalar
/// rhs (shape ()) by lhs, and deduplicates by (name, args).
///
/// The run: every packed conv2d whose output chain is the requantize epilogue TVM fuses into it
/// (add of a packed per-channel constant, nn.relu, add/right_shift by a scalar, clip, cast to
/// int8, each node with one consumer) runs on a fresh vta::Simulator through
/// packed_ops.h's runConv2dPacked with that chain as the EpilogueOp list; everything else runs
/// on the host integer interpreter (runIntGraph). The ALU tasks (add/multiply) run on the host:
/// the add.vta/multiply.vta templates end in clip [0, 127] + cast int8, which is not the graph's
/// int32 add/multiply, so running them through the template would change the output.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/autotvm/space.h"
#include "engine/graph/graph.h"
#include "engine/graph/int_interpreter.h"
#include "engine/vta/simulator.h"
#include "engine/vta/vta_config.h"
#include "engine/vta/vta_schedule.h"

namespace tb::vta {

/// One operand as a task arg: ("TENSOR", shape, dtype).
struct TensorArg {
    std::vector<int64_t> shape;
    std::string dtype;
    bool operator==(const TensorArg&) const = default;
    auto operator<=>(const TensorArg&) const = default;
};

/// One extracted task after the seed's filter and merge.
struct VtaNetTask {
    std::string name;                 ///< "conv2d_packed.vta", "add.vta", "multiply.vta"
    std::vector<TensorArg> tensors;   ///< (lhs, rhs) or (data, kernel), after the scalar merge
    std::optional<Conv2dWorkload> conv;
    /// For add/multiply: the workload of the lhs shape (rhs merged); `rhsBroadcast` when the rhs
    /// is a packed per-channel constant (C/BLOCK, 1, 1, B, BLOCK) rather than the lhs shape.
    std::optional<AluWorkload> alu;
    bool rhsScalar = false;
    bool rhsBroadcast = false;
    int count = 0;                    ///< occurrences in the graph
    std::vector<graph::NodeId> nodes;
    /// TVM's print of the args: (('TENSOR', (1, 4, 56, 56, 1, 16), 'int32'), ...).
    std::string argsString() const;
};

/// The counts the seed prints.
struct TaskExtraction {
    int extracted = 0;  ///< tasks of the requested ops before the filter
    int filtered = 0;   ///< after the rank > 4 and non-float filter ("Extracted N alu tasks")
    std::vector<VtaNetTask> tasks;  ///< after the merge and dedupe, in first-occurrence order
};

/// Extracts the tasks of `ops` (subset of {"add", "multiply", "conv2d"}) from a packed graph.
/// Throws tb::UserError for an unknown op name or a packed conv that is not a valid workload.
TaskExtraction extractVtaTasks(const graph::Graph& packed, const VtaConfig& cfg, const std::set<std::string>& ops);

/// The config for a task: given the template name and workload, an AutoTVM config or nullopt
/// (then TVM's fallback: index 0 of the space, every tile 1).
using VtaConfigLookup = std::function<std::optional<autotvm::ConfigEntity>(const std::string& taskName,
                                                                           const Conv2dWorkload& wl)>;

/// Per task of the run.
struct VtaTaskTime {
    std::string name;
    Conv2dWorkload wl;
    int occurrences = 0;
    double seconds = 0;       ///< simulated, summed over occurrences
    uint64_t cycles = 0;
    bool tuned = false;       ///< a config came from the lookup
    std::string schedule;     ///< the schedule used
};

/// The result of runNetworkOnVta.
struct VtaNetworkRun {
    std::vector<graph::HostTensor> outputs;
    std::vector<VtaTaskTime> tasks;   ///< conv2d_packed.vta tasks, first-occurrence order
    double vtaSeconds = 0;            ///< whole-network simulated VTA time
    SimStats stats;                   ///< summed counters (TVM's stats() names)
    double hostSeconds = 0;           ///< wall time of the host part (interpreter)
    int vtaConvs = 0, hostConvs = 0;  ///< packed convs run on VTA / left on the host
    std::vector<std::string> hostReasons;  ///< why a packed conv stayed on the host
};

/// Runs a packed graph: packed conv2d + epilogue on the simulator, the rest on the host. Throws
/// tb::UserError on bad inputs (runIntGraph's checks).
VtaNetworkRun runNetworkOnVta(const graph::Graph& packed, const VtaConfig& cfg,
                              const std::vector<graph::HostTensor>& inputs, const VtaConfigLookup& lookup = {});

}  // namespace tb::vta
