// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file quantize.h
/// \brief relay.quantize.quantize: float32 network -> int8/int32 network (TVM's automatic
/// quantization), the first compiler step of TVM's VTA flow (seed 004, tune_alu_vta.py).
///
/// Why: VTA computes int8 x int8 -> int32. TVM quantizes a float network with
/// `relay.quantize.quantize(mod, params)` under `qconfig(global_scale=8.0, skip_conv_layers=[0])`
/// and graph-packs the result (engine/vta/graph_pack.h). The realized graph must have TVM's ops
/// in TVM's places, because task extraction reads the packed conv2d/add/multiply from it.
///
/// The pipeline, as python/tvm/relay/quantize/quantize.py (v0.14) runs it:
/// 1. prerequisite_optimize: SimplifyInference, FoldConstant, FoldScaleAxis, CanonicalizeOps,
///    FoldConstant (passes.h);
/// 2. partition (_partition.py, partition.cc): conv2d/clip/relu/max_pool2d/add/multiply chains
///    are marked; where a marked value leaves them it gets `annotation.cast_hint(int8)` +
///    `annotation.stop_fusion`; global_avg_pool2d's input always does;
/// 3. annotate (_annotate.py, annotate.cc): `simulated_quantize` nodes of kind INPUT / WEIGHT /
///    ACTIVATION by TVM's per-op rules, the conv counter for skip_conv_layers, stop after
///    global_avg_pool2d, a value with several consumers re-quantized as INPUT;
/// 4. calibrate (_calibrate.py, global_scale mode): dom_scale = scale / 2^(nbit - 1) with
///    scale = global_scale for INPUT/ACTIVATION and the power of two >= max|w| for WEIGHT; clip
///    bounds +-(2^(nbit-1) - 1);
/// 5. realize (realize.cc): simulated_quantize -> multiply/round/clip (float input) or
///    add round-bias/right_shift/clip, left_shift/clip, or clip (integer input); conv2d ->
///    int8 x int8 conv2d with out_dtype int32; add -> UnifyDTypeScale (casts, shifts to the
///    smaller scale); max_pool2d casts to int8, avg pools to int32; values leaving the integer
///    part are dequantized (cast float32, multiply by the scale);
/// 6. FoldConstant: every op with constant inputs is evaluated (weights become int8 constants).
///
/// The realized graph's nodes all carry the "dtype" attr (int_interpreter.h explains why);
/// run it with runIntGraph. Only the modes of the defaults below are implemented (global_scale
/// calibration, power2 weight scale, UPWARD rounding, no simulation, no partition_conversions);
/// other values are a tb::UserError.

#include <vector>

#include "engine/graph/graph.h"

namespace tb::graph {

/// TVM's qconfig fields used here, with TVM's defaults except skip_conv_layers (the seed's [0]).
struct QConfig {
    int nbitInput = 8, nbitWeight = 8, nbitActivation = 32;
    std::string dtypeInput = "int8", dtypeWeight = "int8", dtypeActivation = "int32";
    std::string calibrateMode = "global_scale";
    double globalScale = 8.0;
    std::string weightScale = "power2";
    bool skipDenseLayer = true;
    std::vector<int> skipConvLayers = {0};
    bool doSimulation = false;
    bool roundForShift = true;
    std::string rounding = "UPWARD";
};

/// prerequisite_optimize (step 1 above).
Graph quantizePrerequisite(const Graph& g);

/// The whole quantize(mod, params) (steps 1-6) of a float32 graph with constant weights.
/// Throws tb::UserError for an unsupported config mode, or where TVM's rules raise (e.g. an add
/// or multiply of annotated operands the rules do not cover).
Graph quantize(const Graph& g, const QConfig& cfg = {});

/// Steps 2-4 only (the graph with calibrated simulated_quantize nodes whose attrs are kind
/// 1 INPUT / 2 WEIGHT / 3 ACTIVATION, dom_scale, clip_min, clip_max), for tests and inspection.
Graph quantizeAnnotated(const Graph& optimized, const QConfig& cfg = {});

/// Op counts ("nn.conv2d" -> n); with `byDType`, keys are "op:dtype" of the node's "dtype" attr.
std::map<std::string, int> opHistogram(const Graph& g, bool byDType = false);

}  // namespace tb::graph
