// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file roofline.h
/// \brief Where a kernel stands on this machine's roofline: its arithmetic intensity (FLOP per byte
/// of memory traffic), its speed, and whether it is bound by the FMA peak or by memory bandwidth and
/// how close it runs to that bound (Williams, Waterman, Patterson, CACM 2009).
///
/// Why: a tuning tool reports GFLOP/s per task (TVM's "Speed (GFLOPS)" column), which says nothing
/// about how far a task is from what the machine allows: 40 GFLOP/s is poor for a 3x3 convolution
/// (compute-bound) and excellent for a depthwise one (memory-bound). This turns the three numbers a
/// profile has (FLOPs, bytes, time) into that statement, e.g. "compute-bound at 71% of peak" or
/// "memory-bound at 83% of bandwidth", against the roofs of machine_peak.h.
///
/// Bytes are the compulsory traffic of one call: every input tensor (activations and weights) read
/// once and the output written once, in their element type. Real traffic is at least that (a tile
/// re-read from memory adds to it; a tensor still in cache from the previous kernel subtracts, which
/// is why a warm kernel may run above "100% of bandwidth": bandwidth is the DRAM triad's). FLOPs are
/// TVM's FlopEstimator count (te::ComputeDAG::flopCount).

#include <cstdint>
#include <string>

#include "engine/measure/machine_peak.h"
#include "engine/te/compute_dag.h"

namespace tb::measure {

/// Compulsory memory traffic of one kernel call (bytes).
struct KernelTraffic {
    int64_t inputBytes = 0;   ///< every input tensor (activations + weights) once
    int64_t outputBytes = 0;  ///< every output tensor once
    int64_t total() const { return inputBytes + outputBytes; }
};

/// The bytes of one tensor: numElements x the size of its dtype.
int64_t tensorBytes(const te::Tensor& t);

/// The traffic of `dag`: its placeholders (inputs and weights) and its outputs, each numElements x
/// the size of its dtype.
KernelTraffic dagTraffic(const te::ComputeDAG& dag);

/// The roof a kernel is under: compute (intensity >= the ridge) or memory; Unknown without FLOPs,
/// bytes or time.
enum class RooflineBound { Unknown, Compute, Memory };

/// "compute", "memory" or "unknown".
const char* rooflineBoundName(RooflineBound b);

/// One kernel call as measured.
struct RooflinePoint {
    double flop = 0;     ///< FLOPs of one call
    double bytes = 0;    ///< compulsory bytes of one call (KernelTraffic::total)
    double seconds = 0;  ///< time of one call (s)
    double flopsPerSecond() const { return seconds > 0 ? flop / seconds : 0; }
    double bytesPerSecond() const { return seconds > 0 ? bytes / seconds : 0; }
    /// FLOP per byte (0 without bytes).
    double intensity() const { return bytes > 0 ? flop / bytes : 0; }
};

/// A point against the machine's roofs.
struct RooflineVerdict {
    RooflineBound bound = RooflineBound::Unknown;
    /// The roof at the point's intensity: min(peak, intensity x bandwidth) (FLOP/s).
    double attainableFlopsPerSecond = 0;
    /// Achieved / attainable: for a compute-bound kernel its FLOP/s over the peak, for a memory-bound
    /// one its bytes/s over the bandwidth (the same ratio). 0 when Unknown.
    double fraction = 0;
};

/// Classifies `p` against `peak` (both roofs must be positive, else Unknown).
RooflineVerdict classifyRoofline(const RooflinePoint& p, const MachinePeak& peak);

/// "compute-bound at 71% of peak", "memory-bound at 83% of bandwidth", or "-" for Unknown; a
/// memory-bound kernel faster than the DRAM roof ran from cache: "memory-bound at 140% of
/// bandwidth (in cache)".
std::string rooflineVerdictText(const RooflineVerdict& v);

}  // namespace tb::measure
