// SPDX-License-Identifier: Apache-2.0
#include "engine/runtime/kernel_roofline.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "engine/runtime/network_eval.h"
#include "engine/support/error.h"

namespace tb::runtime {

measure::KernelTraffic nodeTraffic(const ExecGraph& g, int node) {
    TB_USER_CHECK(node >= 0 && size_t(node) < g.nodes.size() && g.nodes[size_t(node)].kind == ExecNode::Kind::Op)
        << "node " << node << " is not a kernel call of the graph";
    const ExecNode& n = g.nodes[size_t(node)];
    measure::KernelTraffic t;
    // The output is the kernel's node itself; a tensor passed twice is read once.
    for (int in : std::set<int>(n.inputs.begin(), n.inputs.end()))
        if (in != node) t.inputBytes += g.nodes[size_t(in)].numElements() * int64_t(sizeof(float));
    t.outputBytes = n.numElements() * int64_t(sizeof(float));
    return t;
}

std::vector<KernelRoofline> kernelRoofline(const ExecGraph& g, const std::vector<KernelProfile>& profile,
                                           const measure::MachinePeak& peak) {
    std::vector<KernelRoofline> rows;
    for (const KernelProfile& k : profile) {
        auto it = std::find_if(rows.begin(), rows.end(), [&](const KernelRoofline& r) { return r.func == k.func; });
        if (it == rows.end()) {
            KernelRoofline r;
            r.name = k.name;
            r.func = k.func;
            r.outputShape = shapeString(g.nodes[size_t(k.node)].shape);
            r.point.flop = k.flop;
            r.point.bytes = double(nodeTraffic(g, k.node).total());
            rows.push_back(std::move(r));
            it = rows.end() - 1;
        }
        it->calls += 1;
        it->totalMs += k.meanMs;
    }
    for (KernelRoofline& r : rows) {
        r.point.seconds = r.totalMs * 1e-3 / r.calls;
        r.verdict = measure::classifyRoofline(r.point, peak);
    }
    std::stable_sort(rows.begin(), rows.end(), [](const KernelRoofline& a, const KernelRoofline& b) { return a.totalMs > b.totalMs; });
    return rows;
}

std::string kernelRooflineText(const std::vector<KernelRoofline>& rows, const measure::MachinePeak& peak,
                               const std::map<std::string, std::string>& schedule) {
    double total = 0;
    for (const KernelRoofline& r : rows) total += r.totalMs;
    std::string s;
    char line[512];
    // A roof measured on a busy machine is too low (machine_peak.h): say so.
    char how[128] = "";
    if (!peak.quiet)
        std::snprintf(how, sizeof how, ", on a busy machine (load %.1f; best of %d runs, measured again next time)",
                      peak.loadAverage, peak.runs);
    std::snprintf(line, sizeof line,
                  "Roofs at %d threads (measured%s%s): FP32 FMA peak %.1f GFLOP/s, triad bandwidth %.1f GB/s, ridge %.2f "
                  "FLOP/B; bytes = inputs + weights + output once per call\n",
                  peak.threads, peak.fromCache ? ", cached" : "", how, peak.flopsPerSecond / 1e9,
                  peak.bytesPerSecond / 1e9, peak.ridgeIntensity());
    s += line;
    std::snprintf(line, sizeof line, "  %-48s %5s %9s %6s %9s %8s %8s %8s  %-45s %s\n", "kernel", "calls", "ms", "%",
                  "GFLOP/s", "GB/s", "MB", "FLOP/B", "bound", "schedule");
    s += line;
    for (const KernelRoofline& r : rows) {
        std::string name = r.name + " " + r.outputShape;
        if (name.size() > 48) name = r.name.substr(0, std::max<size_t>(48 - r.outputShape.size(), 8) - 4) + "... " + r.outputShape;
        const auto it = schedule.find(r.func);
        std::snprintf(line, sizeof line, "  %-48s %5d %9.4f %5.1f%% %9.2f %8.2f %8.3f %8.2f  %-45s %s\n", name.c_str(),
                      r.calls, r.totalMs, 100 * r.totalMs / std::max(total, 1e-12), r.point.flopsPerSecond() / 1e9,
                      r.point.bytesPerSecond() / 1e9, r.point.bytes / 1e6, r.point.intensity(),
                      measure::rooflineVerdictText(r.verdict).c_str(), it == schedule.end() ? "" : it->second.c_str());
        s += line;
    }
    return s;
}

}  // namespace tb::runtime
