// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file kernel_roofline.h
/// \brief A compiled network's per-kernel profile on the roofline: for every kernel (one per fused
/// group, i.e. per task), its calls, time, FLOPs, compulsory bytes, GFLOP/s, GB/s, arithmetic
/// intensity and bound against the machine's measured roofs (measure/roofline.h,
/// measure/machine_peak.h).
///
/// Why here: the profile (GraphRuntime::profile) knows times, the executable graph knows every
/// kernel's argument tensors, and both `tunebench-cli compile --profile` and the window's "Compile &&
/// benchmark" show the same rows, so the aggregation is done once, in the engine.

#include <map>
#include <string>
#include <vector>

#include "engine/measure/roofline.h"
#include "engine/runtime/graph_runtime.h"

namespace tb::runtime {

/// One kernel of a profile, all its calls together.
struct KernelRoofline {
    std::string name;               ///< the first call's node name (the fused group)
    std::string func;               ///< kernel symbol
    std::string outputShape;        ///< "1x56x56x128": tells apart the kernels of one fused name
    int calls = 0;                  ///< calls per network run
    double totalMs = 0;             ///< time of all calls of one run (ms)
    measure::RooflinePoint point;   ///< one call: FLOPs, compulsory bytes, seconds (mean over calls)
    measure::RooflineVerdict verdict;
};

/// The compulsory traffic of Op node `node` of `g`: its distinct argument tensors (inputs and
/// weights) read once, its output written once, float32. Throws tb::UserError when `node` is not an
/// Op node of g.
measure::KernelTraffic nodeTraffic(const ExecGraph& g, int node);

/// Rows of `profile` (GraphRuntime::profile of a runtime over `g`), one per kernel symbol, sorted by
/// totalMs descending, classified against `peak`.
std::vector<KernelRoofline> kernelRoofline(const ExecGraph& g, const std::vector<KernelProfile>& profile,
                                           const measure::MachinePeak& peak);

/// The rows as a text table, one line per kernel after a header and the roofs' line:
/// kernel (name and output shape), calls, ms (all calls of a run), % of the sum, GFLOP/s, GB/s, MB per call (compulsory),
/// FLOP/B, the verdict ("compute-bound at 71% of peak") and, when `schedule` maps the kernel's
/// symbol, that text (e.g. "tuned"). Ends with a newline.
std::string kernelRooflineText(const std::vector<KernelRoofline>& rows, const measure::MachinePeak& peak,
                               const std::map<std::string, std::string>& schedule = {});

}  // namespace tb::runtime
