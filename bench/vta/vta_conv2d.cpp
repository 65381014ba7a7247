// SPDX-License-Identifier: Apache-2.0
// vta_conv2d: simulated GOPS of resnet-18's conv2d_packed.vta workloads and of mobilenet-like
// group_conv2d_packed.vta layers (vta_task.h mobilenetGroupConv2dWorkloads) on the VTA simulator, for
// TVM's fallback config and for the best of N random configs of the AutoTVM space, against the
// cycle model's peak (BATCH*BLOCK_IN*BLOCK_OUT MACs per cycle at the target's clock).
//
//   vta_conv2d [N=10] [seed=1] [vta_config.json]
//
// Workloads: resnet-18 C2..C11 of TVM's test_benchmark_topi_conv2d.py (batch BATCH, the first
// 7x7 layer stays on the CPU in TVM), epilogue >> 8, + bias, clip [0, 127] as that test. Random
// configs are drawn uniformly from conv2d_packed.vta's space; configs that do not instantiate
// (SRAM, micro-op dependences, 2-D DMA, thread tails) are counted and redrawn, up to 200*N draws.
// The fallback is TVM's FallbackConfigEntity: every tile 1, no virtual threads (index 0). Every
// output reported is checked bit for bit against the int8 reference. Times are simulated (cycle
// model), not measured; "wall" is how long the simulator itself took.
// The grouped layers' GOPS count the MACs actually done (C/groups per output), not TVM's add_flop
// (which counts all C); their configs come from group_conv2d_packed.vta's space.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "engine/support/error.h"
#include "engine/vta/packed_ops.h"
#include "engine/vta/simulator.h"
#include "engine/vta/vta_config.h"
#include "engine/vta/vta_schedule.h"
#include "engine/vta/vta_task.h"

using namespace tb::vta;

namespace {

struct Measured {
    double gops = 0;
    uint64_t cycles = 0;
    double wallS = 0;
    bool correct = false;
};

// The two templates' entry points, picked by the workload's type.
tb::autotvm::ConfigSpace spaceOf(const VtaConfig& cfg, const Conv2dWorkload& wl) { return conv2dConfigSpace(wl, cfg); }
tb::autotvm::ConfigSpace spaceOf(const VtaConfig& cfg, const GroupConv2dWorkload& wl) { return groupConv2dConfigSpace(wl, cfg); }
Conv2dOperands operandsOf(const VtaConfig& cfg, const Conv2dWorkload& wl, uint32_t seed) {
    return randomConv2dOperands(cfg, wl, true, seed);
}
Conv2dOperands operandsOf(const VtaConfig& cfg, const GroupConv2dWorkload& wl, uint32_t seed) {
    return randomGroupConv2dOperands(cfg, wl, true, seed);
}
std::vector<int8_t> referenceOf(const VtaConfig& cfg, const Conv2dWorkload& wl, const Conv2dOperands& ops) {
    return conv2dPackedReference(cfg, wl, conv2dEpilogue(true), ops);
}
std::vector<int8_t> referenceOf(const VtaConfig& cfg, const GroupConv2dWorkload& wl, const Conv2dOperands& ops) {
    return groupConv2dPackedReference(cfg, wl, conv2dEpilogue(true), ops);
}
void checkOf(const VtaConfig& cfg, const Conv2dWorkload& wl, const Conv2dSchedule& s) {
    checkConv2dSchedule(cfg, wl, s, conv2dEpilogue(true));
}
void checkOf(const VtaConfig& cfg, const GroupConv2dWorkload& wl, const Conv2dSchedule& s) {
    checkGroupConv2dSchedule(cfg, wl, s, conv2dEpilogue(true));
}
PackedOpResult runOf(Simulator& sim, const Conv2dWorkload& wl, const Conv2dSchedule& s, const Conv2dOperands& ops) {
    return runConv2dPacked(sim, wl, s, conv2dEpilogue(true), ops);
}
PackedOpResult runOf(Simulator& sim, const GroupConv2dWorkload& wl, const Conv2dSchedule& s, const Conv2dOperands& ops) {
    return runGroupConv2dPacked(sim, wl, s, conv2dEpilogue(true), ops);
}

template <class W>
Measured measure(const VtaConfig& cfg, const W& wl, const Conv2dSchedule& s, const Conv2dOperands& ops,
                 const std::vector<int8_t>& ref) {
    Simulator sim(cfg);
    const auto t0 = std::chrono::steady_clock::now();
    const PackedOpResult r = runOf(sim, wl, s, ops);
    Measured m;
    m.wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    m.cycles = r.report.cycles;
    m.gops = 2.0 * double(wl.macs()) / r.report.timeSeconds() * 1e-9;
    m.correct = r.output == ref;
    return m;
}

// One table: fallback and best of n random valid configs per workload (file comment).
template <class Named>
void benchTable(const VtaConfig& cfg, const std::vector<Named>& workloads, int n, uint32_t seed, double peakGops,
                std::mt19937_64& rng) {
    std::printf("%-4s %-66s %6s %10s %8s %6s %10s %8s %6s  %-66s %s\n", "wl", "workload", "space", "valid/drawn",
                "fb GOPS", "%peak", "best cyc", "GOPS", "%peak", "best config", "check");
    for (const auto& w : workloads) {
        const auto space = spaceOf(cfg, w.wl);
        const Conv2dOperands ops = operandsOf(cfg, w.wl, seed);
        const auto ref = referenceOf(cfg, w.wl, ops);
        const Measured fallback = measure(cfg, w.wl, Conv2dSchedule::fromConfig(space.get(0)), ops, ref);
        std::uniform_int_distribution<int64_t> pick(0, space.size() - 1);
        int valid = 0, drawn = 0;
        Measured best;
        std::string bestConfig = "-";
        bool allCorrect = fallback.correct;
        double wall = fallback.wallS;
        while (valid < n && drawn < 200 * n) {
            ++drawn;
            const int64_t index = pick(rng);
            const Conv2dSchedule s = Conv2dSchedule::fromConfig(space.get(index));
            try {
                checkOf(cfg, w.wl, s);
            } catch (const tb::UserError&) {
                continue;
            }
            ++valid;
            const Measured m = measure(cfg, w.wl, s, ops, ref);
            allCorrect = allCorrect && m.correct;
            wall += m.wallS;
            if (m.gops > best.gops) {
                best = m;
                bestConfig = "#" + std::to_string(index) + " " + s.str();
            }
        }
        char valids[32];
        std::snprintf(valids, sizeof valids, "%d/%d", valid, drawn);
        std::printf("%-4s %-66s %6lld %10s %8.2f %5.1f%% %10llu %8.2f %5.1f%%  %-66s %s (wall %.1f s)\n", w.name.c_str(),
                    w.wl.str().c_str(), static_cast<long long>(space.size()), valids, fallback.gops,
                    100.0 * fallback.gops / peakGops, static_cast<unsigned long long>(best.cycles), best.gops,
                    100.0 * best.gops / peakGops, bestConfig.c_str(), allCorrect ? "ok" : "WRONG", wall);
        std::fflush(stdout);
    }
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const int n = argc > 1 ? std::atoi(argv[1]) : 10;
        const uint32_t seed = argc > 2 ? uint32_t(std::atoi(argv[2])) : 1u;
        const VtaConfig cfg = argc > 3 ? VtaConfig::fromFile(argv[3]) : VtaConfig::forTarget("pynq");
        TB_USER_CHECK(n > 0) << "vta_conv2d: N must be positive";
        const CycleModel model = CycleModel::forConfig(cfg);
        const double peakGops = 2.0 * double(cfg.peakMacsPerCycle()) * model.clockMhz * 1e-3;
        std::printf("VTA %s, %.0f MHz: peak %lld MACs/cycle = %.1f GOPS (simulated); best of %d random configs, seed %u\n",
                    cfg.model().c_str(), model.clockMhz, static_cast<long long>(cfg.peakMacsPerCycle()), peakGops, n, seed);
        std::mt19937_64 rng(seed);
        benchTable(cfg, resnet18Conv2dWorkloads(cfg), n, seed, peakGops, rng);
        benchTable(cfg, mobilenetGroupConv2dWorkloads(cfg), n, seed, peakGops, rng);
    } catch (const tb::UserError& e) {
        std::fprintf(stderr, "vta_conv2d: %s\n", e.what());
        return 1;
    }
    return 0;
}
