// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/roofline.h"

#include <algorithm>
#include <cstdio>

namespace tb::measure {

namespace {
int64_t dtypeBytes(te::DType t) {
    switch (t) {
        case te::DType::Bool: return 1;
        case te::DType::Int32:
        case te::DType::Float32: return 4;
        case te::DType::Int64:
        case te::DType::Float64: return 8;
    }
    return 4;
}
}  // namespace

int64_t tensorBytes(const te::Tensor& t) { return t.numElements() * dtypeBytes(t.dtype()); }

KernelTraffic dagTraffic(const te::ComputeDAG& dag) {
    KernelTraffic k;
    for (const te::Tensor& t : dag.inputs()) k.inputBytes += tensorBytes(t);
    for (const te::Tensor& t : dag.outputs()) k.outputBytes += tensorBytes(t);
    return k;
}

const char* rooflineBoundName(RooflineBound b) {
    switch (b) {
        case RooflineBound::Compute: return "compute";
        case RooflineBound::Memory: return "memory";
        case RooflineBound::Unknown: break;
    }
    return "unknown";
}

RooflineVerdict classifyRoofline(const RooflinePoint& p, const MachinePeak& peak) {
    RooflineVerdict v;
    if (p.flop <= 0 || p.bytes <= 0 || p.seconds <= 0 || peak.flopsPerSecond <= 0 || peak.bytesPerSecond <= 0) return v;
    const double memoryRoof = p.intensity() * peak.bytesPerSecond;
    v.bound = memoryRoof < peak.flopsPerSecond ? RooflineBound::Memory : RooflineBound::Compute;
    v.attainableFlopsPerSecond = std::min(memoryRoof, peak.flopsPerSecond);
    v.fraction = p.flopsPerSecond() / v.attainableFlopsPerSecond;
    return v;
}

std::string rooflineVerdictText(const RooflineVerdict& v) {
    if (v.bound == RooflineBound::Unknown) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s-bound at %.0f%% of %s%s", rooflineBoundName(v.bound), 100 * v.fraction,
                  v.bound == RooflineBound::Compute ? "peak" : "bandwidth",
                  v.bound == RooflineBound::Memory && v.fraction > 1 ? " (in cache)" : "");
    return buf;
}

}  // namespace tb::measure
