// SPDX-License-Identifier: Apache-2.0
// vta_gemm: simulated throughput of a blocked int8 GEMM on the VTA simulator against the cycle
// model's peak (BATCH*BLOCK_IN*BLOCK_OUT MACs per cycle), and how fast the simulator itself runs.
//
//   vta_gemm [config.json]
//
// C[M][N] = A[M][K] x B[N][K]^T (int8 x int8 -> int32, then >> 8 and narrowed to int8), tiled in
// output tiles of mt x nt blocks and reduction tiles of kt blocks; input and weight tiles are
// double-buffered across reduction steps, accumulator tiles across output tiles, so loads,
// GEMMs and stores overlap through the dependence tokens. The output is checked against a plain
// loop. Times are simulated (cycle model at the target's clock), not measured.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "engine/support/error.h"
#include "engine/vta/command_builder.h"
#include "engine/vta/simulator.h"
#include "engine/vta/vta_config.h"

using namespace tb::vta;

namespace {

struct Shape {
    int MB, KB, NB;  // matrix sizes in blocks (rows in BATCH units)
    int mt, kt, nt;  // tile sizes in blocks
};

struct Outcome {
    RunReport report;
    double wallMs = 0;
    bool correct = false;
};

Outcome runGemm(const VtaConfig& cfg, const Shape& s) {
    const int bat = cfg.batch(), blk = cfg.blockIn();
    const int M = s.MB * bat, K = s.KB * blk, N = s.NB * blk;
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> d(-128, 127);
    std::vector<int8_t> A(size_t(M) * K), B(size_t(N) * K);
    for (auto& x : A) x = int8_t(d(rng));
    for (auto& x : B) x = int8_t(d(rng));
    // Packed layouts: A as [MB][KB] input elements, B as [NB][KB] weight elements, C as [MB][NB].
    std::vector<int8_t> aPacked, bPacked;
    for (int mb = 0; mb < s.MB; ++mb)
        for (int kb = 0; kb < s.KB; ++kb)
            for (int b = 0; b < bat; ++b)
                for (int k = 0; k < blk; ++k) aPacked.push_back(A[size_t(mb * bat + b) * K + size_t(kb * blk + k)]);
    for (int nb = 0; nb < s.NB; ++nb)
        for (int kb = 0; kb < s.KB; ++kb)
            for (int o = 0; o < blk; ++o)
                for (int k = 0; k < blk; ++k) bPacked.push_back(B[size_t(nb * blk + o) * K + size_t(kb * blk + k)]);

    Simulator sim(cfg);
    CommandBuilder cb(sim);
    const uint32_t aAddr = sim.dram().alloc(aPacked.size()), bAddr = sim.dram().alloc(bPacked.size());
    sim.dram().writeArray(aAddr, aPacked);
    sim.dram().writeArray(bAddr, bPacked);
    const uint32_t cAddr = sim.dram().alloc(size_t(M) * N);
    const uint32_t inpTile = uint32_t(s.mt * s.kt), wgtTile = uint32_t(s.nt * s.kt), accTile = uint32_t(s.mt * s.nt);
    const auto t0 = std::chrono::steady_clock::now();
    int kStep = 0, outTile = 0;
    for (int mo = 0; mo < s.MB; mo += s.mt) {
        for (int no = 0; no < s.NB; no += s.nt, ++outTile) {
            const uint32_t accBase = uint32_t(outTile % 2) * accTile;
            // Compute: wait until the store of this accumulator slot's previous tile is done.
            if (outTile >= 2) cb.depPop(kStoreStage, kComputeStage);
            UopKernel reset;
            for (int m = 0; m < s.mt; ++m)
                for (int n = 0; n < s.nt; ++n) reset.pushGemm(accBase + uint32_t(m * s.nt + n), 0, 0, true);
            cb.pushGemmOp(reset);
            for (int ko = 0; ko < s.KB; ko += s.kt, ++kStep) {
                const uint32_t slot = uint32_t(kStep % 2);
                // Load: wait until the GEMM that read this slot two steps ago is done.
                if (kStep >= 2) cb.depPop(kComputeStage, kLoadStage);
                cb.loadBuffer2D(aAddr, uint32_t(mo * s.KB + ko), uint32_t(s.kt), uint32_t(s.mt), uint32_t(s.KB), 0, 0, 0, 0,
                                slot * inpTile, MemId::Inp);
                cb.loadBuffer2D(bAddr, uint32_t(no * s.KB + ko), uint32_t(s.kt), uint32_t(s.nt), uint32_t(s.KB), 0, 0, 0, 0,
                                slot * wgtTile, MemId::Wgt);
                cb.depPush(kLoadStage, kComputeStage);
                cb.depPop(kLoadStage, kComputeStage);
                UopKernel mm;
                mm.loopBegin(uint32_t(s.kt), 0, 1, 1);
                for (int m = 0; m < s.mt; ++m)
                    for (int n = 0; n < s.nt; ++n)
                        mm.pushGemm(accBase + uint32_t(m * s.nt + n), slot * inpTile + uint32_t(m * s.kt),
                                    slot * wgtTile + uint32_t(n * s.kt));
                mm.loopEnd();
                cb.pushGemmOp(mm);
                cb.depPush(kComputeStage, kLoadStage);
            }
            UopKernel shr;
            shr.loopBegin(accTile, 1, 1, 0);
            shr.pushAlu(AluOpcode::Shr, accBase, accBase, true, 8);
            shr.loopEnd();
            cb.pushAluOp(shr);
            cb.depPush(kComputeStage, kStoreStage);
            cb.depPop(kComputeStage, kStoreStage);
            cb.storeBuffer2D(accBase, MemId::Out, cAddr, uint32_t(mo * s.NB + no), uint32_t(s.nt), uint32_t(s.mt), uint32_t(s.NB));
            cb.depPush(kStoreStage, kComputeStage);
        }
    }
    for (int i = 0; i < std::min(kStep, 2); ++i) cb.depPop(kComputeStage, kLoadStage);
    for (int i = 0; i < std::min(outTile, 2); ++i) cb.depPop(kStoreStage, kComputeStage);
    Outcome out;
    out.report = cb.synchronize();
    out.wallMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const auto cPacked = sim.dram().readArray<int8_t>(cAddr, size_t(M) * N);
    out.correct = true;
    for (int m = 0; m < M && out.correct; ++m)
        for (int n = 0; n < N; ++n) {
            int32_t c = 0;
            for (int k = 0; k < K; ++k) c += int32_t(A[size_t(m) * K + k]) * B[size_t(n) * K + k];
            const size_t packed = (size_t(m / bat) * size_t(s.NB) + size_t(n / blk)) * size_t(bat * blk) +
                                  size_t(m % bat) * size_t(blk) + size_t(n % blk);
            if (cPacked[packed] != int8_t(c >> 8)) {
                out.correct = false;
                break;
            }
        }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const VtaConfig cfg = argc > 1 ? VtaConfig::fromFile(argv[1]) : VtaConfig::forTarget("pynq");
        const CycleModel model = CycleModel::forConfig(cfg);
        const double peakGops = 2.0 * double(cfg.peakMacsPerCycle()) * model.clockMhz * 1e-3;
        std::printf("VTA %s, %d MHz, %d-byte bus: peak %lld MACs/cycle = %.1f GOPS (simulated)\n", cfg.model().c_str(),
                    cfg.fpgaFreqMhz(), cfg.busBytes(), static_cast<long long>(cfg.peakMacsPerCycle()), peakGops);
        std::printf("%-22s %-12s %10s %9s %7s %7s %25s %9s %9s %s\n", "M x K x N", "tile m/k/n", "cycles", "sim ms",
                    "GOPS", "%peak", "busy load/compute/store", "wall ms", "MMAC/s", "check");
        const Shape shapes[] = {
            {1, 64, 64, 1, 16, 8},     // batch-1 GEMV: weight-bandwidth bound
            {16, 64, 64, 16, 16, 8},   // 16 rows
            {64, 64, 64, 32, 16, 8},   // 64 rows, larger output tiles
            {64, 64, 64, 64, 8, 8},    // 64 rows, whole row range per tile
            {64, 64, 64, 8, 16, 8},    // 64 rows, small output tiles: more weight reloads
        };
        for (const Shape& s : shapes) {
            const Outcome o = runGemm(cfg, s);
            const RunReport& r = o.report;
            const double gops = 2.0 * double(r.macs) / r.timeSeconds() * 1e-9;
            char dims[64], tile[32], busy[64];
            std::snprintf(dims, sizeof dims, "%d x %d x %d", s.MB * cfg.batch(), s.KB * cfg.blockIn(), s.NB * cfg.blockOut());
            std::snprintf(tile, sizeof tile, "%d/%d/%d", s.mt, s.kt, s.nt);
            std::snprintf(busy, sizeof busy, "%.0f%%/%.0f%%/%.0f%%", 100.0 * double(r.busyCycles[0]) / double(r.cycles),
                          100.0 * double(r.busyCycles[1]) / double(r.cycles), 100.0 * double(r.busyCycles[2]) / double(r.cycles));
            std::printf("%-22s %-12s %10llu %9.3f %7.2f %6.1f%% %25s %9.1f %9.1f %s\n", dims, tile,
                        static_cast<unsigned long long>(r.cycles), r.timeMs(), gops, 100.0 * gops / peakGops, busy, o.wallMs,
                        double(r.macs) / (o.wallMs * 1e3), o.correct ? "ok" : "WRONG");
        }
    } catch (const tb::UserError& e) {
        std::fprintf(stderr, "vta_gemm: %s\n", e.what());
        return 1;
    }
    return 0;
}
