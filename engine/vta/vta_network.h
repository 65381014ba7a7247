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
/// The run. TVM fuses every elementwise chain after a packed op into one function and offloads it
/// when it ends in a cast to int8 (VTA's store narrows to 8 bits; a chain with an int32 result
/// stays on the CPU). Here, on the simulator (a fresh vta::Simulator per kernel):
/// - every packed conv2d whose single-consumer chain is the requantize epilogue (add of a packed
///   per-channel constant once, nn.relu, add/right_shift by a scalar, clip) ending in cast int8
///   runs as conv2d_packed.vta (packed_ops.h runConv2dPacked) with that chain as its EpilogueOp
///   list;
/// - every other add/multiply node of the packed region (not float32, rank > 4: the seed's
///   filter) whose single-consumer chain (add/right_shift/multiply by a scalar, add/multiply of a
///   packed per-channel constant, nn.relu, clip) ends in cast int8 runs as one add.vta /
///   multiply.vta kernel (runAluPacked): the add/multiply itself with its rhs a tensor of the
///   lhs's shape, a per-channel constant (AluWorkload::rhsBroadcast) or a scalar (written out to
///   the lhs's shape, as seed 004 merges it), the rest of the chain as its epilogue;
/// - everything else runs on the host integer interpreter (runIntGraph), and every conv2d /
///   add / multiply left there is reported with its reason.
/// The configs come from a VtaConfigLookup per (template, workload); without one, or when the
/// looked-up config does not instantiate for the fused kernel, TVM's fallback (index 0 of the
/// space, every tile 1).
///
/// ## The chains of the packed resnet-18 (relay.testing resnet v2, quantize, graph_pack)
/// Read from Graph::print of the packed graph (tst_vta_network prints the placement). 8 residual
/// units, unit = bn1 + relu, conv1, bn2 + relu, conv2, shortcut (a 1x1 conv in the first unit of
/// every stage, dim_match False; identity otherwise), residual add:
/// - conv epilogues, on VTA with their conv (20): conv1 + add(bias, bn2 folded) + relu +
///   add(round) + right_shift + clip [-127, 127] + cast int8; conv2 and the 1x1 shortcut +
///   add(round) + right_shift + clip + cast int8 (requantized to the residual add's scale);
/// - a unit's bn1: cast int32, left_shift (host: before the head), then add(per-channel shift) +
///   relu + add(round) + right_shift + clip + cast int8. With an identity shortcut (unit 2 of each
///   stage) it ends in cast int8: on VTA as add.vta with a per-channel rhs (4 kernels). In a
///   transition unit (first unit of stages 2-4) the clip's int32 value feeds conv1's and the
///   shortcut's casts (2 consumers): host. Unit 1's bn1 is float32 (before the first quantized
///   conv): host;
/// - the residual add of two int32 casts: before an identity-shortcut unit, add + clip whose value
///   feeds two casts: host (4 units); before a transition unit, the add flows through the next
///   unit's left_shift and bn1 into the 2-consumer clip: host (3 units); the last unit's add +
///   clip + cast int8: on VTA as add.vta with two full int32 operands (1 kernel);
/// - the final bn1 before global_avg_pool: cast int32, multiply(per-channel scale) +
///   add(per-channel shift) + relu + add(round) + right_shift + clip + cast int8: on VTA as
///   multiply.vta with a per-channel rhs and the shift as AddChannel in its epilogue (1 kernel).
/// So 6 ALU kernels; of the 53 packed int32 add/multiply nodes 40 run on VTA (28 in conv
/// epilogues: bias + rounding add of the 8 conv1, rounding add of the 8 conv2 and 4 shortcuts;
/// 12 in the ALU kernels: 4 x (head + rounding add), the residual add, multiply + shift +
/// rounding add) and 13 on the host; the 7 float32 ones (bn_data, conv0's bias, unit 1's bn1
/// scale and shift, the dense's input scale and bias) stay on the host too.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
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
    int filtered = 0;   ///< occurrences left by the rank > 4 and non-float filter
    /// After the filter, deduplicated by (name, args) before the scalar merge, first-occurrence
    /// order: TVM's extract_from_program returns each (name, args) once, so these are the seed's
    /// "Extracted N alu tasks" (tensors as extracted: a scalar rhs keeps shape ()).
    std::vector<VtaNetTask> unmerged;
    std::vector<VtaNetTask> tasks;  ///< after the merge and dedupe, in first-occurrence order
};

/// Extracts the tasks of `ops` (subset of {"add", "multiply", "conv2d"}) from a packed graph.
/// Throws tb::UserError for an unknown op name or a packed conv that is not a valid workload.
TaskExtraction extractVtaTasks(const graph::Graph& packed, const VtaConfig& cfg, const std::set<std::string>& ops);

/// A workload of a task of the run: conv2d_packed.vta's or add.vta / multiply.vta's (the latter's
/// per-channel rhs in AluWorkload::rhsBroadcast).
using VtaWorkload = std::variant<Conv2dWorkload, AluWorkload>;
/// Readable workload (Conv2dWorkload::str / AluWorkload::str).
std::string workloadStr(const VtaWorkload& wl);

/// The config for a task: given the template name ("conv2d_packed.vta", "add.vta",
/// "multiply.vta") and workload, an AutoTVM config of that template's space, or nullopt (then
/// TVM's fallback: index 0 of the space, every tile 1).
using VtaConfigLookup =
    std::function<std::optional<autotvm::ConfigEntity>(const std::string& taskName, const VtaWorkload& wl)>;

/// Per task of the run: one (template, args) as extractVtaTasks merges them.
struct VtaTaskTime {
    std::string name;         ///< "conv2d_packed.vta", "add.vta", "multiply.vta"
    VtaWorkload wl;
    std::string args;         ///< TVM's print of the args (VtaNetTask::argsString)
    int occurrences = 0;      ///< kernels run on VTA
    double seconds = 0;       ///< simulated, summed over occurrences
    uint64_t cycles = 0;
    bool tuned = false;       ///< a config came from the lookup and instantiated
    std::string schedule;     ///< the schedule used
    std::string note;         ///< why a looked-up config was not used (empty otherwise)
    /// Tuned tasks only: the fallback config (index 0) run on the same operands too, its simulated
    /// seconds summed over occurrences, and whether its output equals the tuned config's (a config
    /// changes time, never values).
    double fallbackSeconds = 0;
    bool fallbackOutputEqual = true;
};

/// A conv2d / add / multiply node left on the host, and why.
struct HostOp {
    std::string op;      ///< "nn.conv2d", "add", "multiply"
    std::string node;    ///< its name, or "%<id>"
    std::string reason;  ///< without the node name, so that reasons can be counted
};

/// The result of runNetworkOnVta.
struct VtaNetworkRun {
    std::vector<graph::HostTensor> outputs;
    std::vector<VtaTaskTime> tasks;   ///< conv and ALU tasks, first-occurrence order
    double vtaSeconds = 0;            ///< whole-network simulated VTA time
    SimStats stats;                   ///< summed counters (TVM's stats() names)
    double hostSeconds = 0;           ///< wall time of the host part (interpreter)
    int vtaConvs = 0, hostConvs = 0;  ///< packed convs run on VTA / left on the host
    int aluKernels = 0;               ///< add.vta / multiply.vta kernels run
    /// Nodes computed on VTA, by op (a conv's or ALU kernel's whole chain, casts included), and op
    /// nodes computed on the host, by op.
    std::map<std::string, int> vtaOps, hostOps;
    std::vector<HostOp> hostReasons;  ///< every conv2d / add / multiply left on the host
};

/// Options of runNetworkOnVta.
struct VtaRunOptions {
    VtaConfigLookup lookup;  ///< configs per task; empty: every task falls back
    /// Offload add/multiply chains. TVM registers add.vta/multiply.vta for the sim and intelfocl
    /// targets only (vta/python/vta/top/op.py); vtaTargetHasAluOps-style callers pass false for
    /// the others, then every add/multiply stays on the host with that reason.
    bool aluOps = true;
};

/// Runs a packed graph: packed conv2d and add/multiply chains on the simulator (file comment),
/// the rest on the host. Throws tb::UserError on bad inputs (runIntGraph's checks).
VtaNetworkRun runNetworkOnVta(const graph::Graph& packed, const VtaConfig& cfg,
                              const std::vector<graph::HostTensor>& inputs, const VtaRunOptions& options = {});

}  // namespace tb::vta
