// SPDX-License-Identifier: Apache-2.0
// bench_kernels: the code generator against the machine's FP32 FMA peak, in one run.
//
//   peak      12 independent chains of 512-bit FMAs per thread (ANCHORS.md "Physical limits")
//   matmul    1024^3, hand-written loop-IR schedule: parallel over 32-column panels of a packed B
//             ([N/32][K][32], pre-transformed as Ansor's layout rewrite does inside a network),
//             8x32 register tile in a local accumulator (16 zmm), k innermost
//   conv2d    3x3, 1x56x56x64 -> 64, NHWC, pad 1 (the padding stage is part of the kernel), weights
//             HWIO, parallel over output rows, 8 x-positions x 32 channels register tile
// Timings use TVM's evaluator (measure/timer.h; number 1 grown to min_repeat_ms 200, repeat 5,
// best and median reported). Threads: TB_NUM_THREADS (default: all cores). Results are checked
// against plain C++ loops on a sample of outputs before timing.
//
// Usage: bench_kernels [--quick]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include <immintrin.h>

#include "engine/codegen/codegen_llvm.h"
#include "engine/codegen/jit.h"
#include "engine/lower/simplify.h"
#include "engine/measure/timer.h"
#include "engine/support/thread_pool.h"

using namespace tb;
using namespace tb::lower;
using te::Expr;
using te::Var;

namespace {

Expr c(int64_t v) { return te::intImm(v); }

// ---- peak -----------------------------------------------------------------------------------

__attribute__((target("avx512f,fma"), noinline)) float fmaChains(int64_t iters) {
    __m512 acc[12];
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(float(i) * 1e-3f);
    const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    for (int64_t k = 0; k < iters; ++k) {
#pragma GCC unroll 12
        for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    }
    __m512 s = acc[0];
    for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, acc[i]);
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, s);
    float r = 0;
    for (float x : lanes) r += x;
    return r;
}

// GFLOP/s of the FMA loop on `threads` threads (each runs the chains).
double peakGflops(int threads) {
    const int64_t iters = 20'000'000;
    volatile float sink = 0;
    auto run = [&] {
        ThreadPool::global().parallelForRange(threads, [&](int64_t b, int64_t e) {
            for (int64_t t = b; t < e; ++t) sink = sink + fmaChains(iters);
        });
    };
    measure::TimerOptions o;
    o.number = 1;
    o.repeat = 3;
    o.minRepeatMs = 0;
    auto costs = measure::timeEvaluate(run, o);
    const double best = *std::min_element(costs.begin(), costs.end());
    return double(threads) * double(iters) * 12 * 16 * 2 / best / 1e9;
}

// ---- kernels -------------------------------------------------------------------------------

LoweredFunc matmulSchedule(int64_t M, int64_t N, int64_t K) {
    const int64_t TI = 8, TJ = 32;
    auto A = makeBuffer("A", {M, K}), Bp = makeBuffer("B_packed", {N / TJ, K, TJ}), C = makeBuffer("C", {M, N});
    auto L = makeBuffer("C.local", {TI, TJ}, BufferScope::Local);
    Var jo("j.outer"), io("i.outer"), ii("i.inner"), ji("j.inner"), k("k");
    Expr i = io * c(TI) + ii, j = jo * c(TJ) + ji;
    Stmt init = makeFor(ii, TI, ForKind::Unrolled, makeFor(ji, TJ, ForKind::Vectorized, makeStore(L, {ii, ji}, te::floatImm(0.0))));
    Stmt upd = makeFor(k, K, ForKind::Serial,
                       makeFor(ii, TI, ForKind::Unrolled,
                               makeFor(ji, TJ, ForKind::Vectorized,
                                       makeStore(L, {ii, ji}, bufferLoad(L, {ii, ji}) + bufferLoad(A, {i, k}) * bufferLoad(Bp, {jo, k, ji})))));
    Stmt wb = makeFor(ii, TI, ForKind::Unrolled, makeFor(ji, TJ, ForKind::Vectorized, makeStore(C, {i, j}, bufferLoad(L, {ii, ji}))));
    Stmt body = makeFor(jo, N / TJ, ForKind::Parallel,
                        makeFor(io, M / TI, ForKind::Serial, makeAllocate(L, makeSeq({init, upd, wb}))));
    LoweredFunc f;
    f.name = "matmul_1024";
    f.args = {A, Bp, C};
    f.body = body;
    return simplify(f);
}

LoweredFunc conv2dSchedule(int64_t H, int64_t W, int64_t CI, int64_t CO) {
    const int64_t R = 3, TX = 8, TC = 32;
    auto D = makeBuffer("data", {1, H, W, CI}), Kw = makeBuffer("kernel", {R, R, CI, CO}), O = makeBuffer("conv2d_nhwc", {1, H, W, CO});
    auto P = makeBuffer("pad_temp", {1, H + 2, W + 2, CI}, BufferScope::Global);
    auto L = makeBuffer("conv.local", {TX, TC}, BufferScope::Local);
    // Stage 1: padding, parallel over padded rows, channels vectorized.
    Var py("i1"), px("i2"), pc("i3");
    Expr inb = te::logicalAnd(te::logicalAnd(py >= c(1), py < c(H + 1)), te::logicalAnd(px >= c(1), px < c(W + 1)));
    Stmt pad = makeFor(py, H + 2, ForKind::Parallel,
                       makeFor(px, W + 2, ForKind::Serial,
                               makeFor(pc, CI, ForKind::Vectorized,
                                       makeStore(P, {c(0), py, px, pc},
                                                 te::ifThenElse(inb, bufferLoad(D, {c(0), py - c(1), px - c(1), pc}), te::floatImm(0.0))))));
    // Stage 2: the convolution.
    Var y("yy"), xo("xx.outer"), xi("xx.inner"), co("ff.outer"), ci("ff.inner"), ry("ry"), rx("rx"), rc("rc");
    Expr x = xo * c(TX) + xi, f = co * c(TC) + ci;
    Stmt init = makeFor(xi, TX, ForKind::Unrolled, makeFor(ci, TC, ForKind::Vectorized, makeStore(L, {xi, ci}, te::floatImm(0.0))));
    Stmt upd = makeFor(ry, R, ForKind::Serial,
                       makeFor(rx, R, ForKind::Serial,
                               makeFor(rc, CI, ForKind::Serial,
                                       makeFor(xi, TX, ForKind::Unrolled,
                                               makeFor(ci, TC, ForKind::Vectorized,
                                                       makeStore(L, {xi, ci},
                                                                 bufferLoad(L, {xi, ci}) + bufferLoad(P, {c(0), y + ry, x + rx, rc}) *
                                                                                               bufferLoad(Kw, {ry, rx, rc, f})))))));
    Stmt wb = makeFor(xi, TX, ForKind::Unrolled,
                      makeFor(ci, TC, ForKind::Vectorized, makeStore(O, {c(0), y, x, f}, bufferLoad(L, {xi, ci}))));
    Stmt conv = makeFor(y, H, ForKind::Parallel,
                        makeFor(co, CO / TC, ForKind::Serial,
                                makeFor(xo, W / TX, ForKind::Serial, makeAllocate(L, makeSeq({init, upd, wb})))));
    LoweredFunc fn;
    fn.name = "conv2d_nhwc_3x3";
    fn.args = {D, Kw, O};
    fn.body = makeAllocate(P, makeSeq({pad, conv}));
    return simplify(fn);
}

std::vector<float> randomData(size_t n, unsigned seed) {
    std::vector<float> v(n);
    measure::fillRandom(v.data(), n, seed);
    return v;
}

struct Timing {
    double best = 0, median = 0;
};

Timing timeKernel(const codegen::LoadedKernel& k, std::vector<std::vector<float>>& bufs, bool quick) {
    std::vector<void*> args;
    for (auto& b : bufs) args.push_back(b.data());
    measure::TimerOptions o;
    o.number = 1;
    o.repeat = quick ? 2 : 5;
    o.minRepeatMs = quick ? 50 : 200;
    auto costs = measure::timeEvaluate([&] { k(args.data()); }, o);
    std::sort(costs.begin(), costs.end());
    return {costs.front(), costs[costs.size() / 2]};
}

void report(const char* name, double flop, const Timing& t, double peak) {
    const double g = flop / t.best / 1e9;
    std::printf("%-28s %9.3f ms (median %8.3f)  %7.1f GFLOP/s  %5.1f%% of peak\n", name, t.best * 1e3, t.median * 1e3, g,
                100.0 * g / peak);
}

}  // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    const int threads = ThreadPool::global().numThreads();
    const auto target = codegen::Target::host();
    std::printf("target: %s\nthreads: %d (TB_NUM_THREADS)\n", target.str().c_str(), threads);
    if (!__builtin_cpu_supports("avx512f")) {
        std::printf("this benchmark's peak loop needs AVX-512F\n");
        return 1;
    }
    const double peak1 = peakGflops(1);
    const double peakN = threads > 1 ? peakGflops(threads) : peak1;
    std::printf("%-28s %7.1f GFLOP/s (1 thread)  %7.1f GFLOP/s (%d threads)\n", "peak fp32 fma (12x512-bit)", peak1, peakN, threads);

    // matmul 1024^3
    {
        const int64_t M = 1024, N = 1024, K = 1024;
        auto f = matmulSchedule(M, N, K);
        auto ck = codegen::compile(f, target);
        auto k = codegen::LoadedKernel::load(ck.object, ck.name);
        auto A = randomData(size_t(M * K), 1), B = randomData(size_t(K * N), 2);
        std::vector<float> Bp(B.size());
        for (int64_t jo = 0; jo < N / 32; ++jo)
            for (int64_t kk = 0; kk < K; ++kk)
                for (int64_t ji = 0; ji < 32; ++ji) Bp[size_t((jo * K + kk) * 32 + ji)] = B[size_t(kk * N + jo * 32 + ji)];
        std::vector<std::vector<float>> bufs = {A, Bp, std::vector<float>(size_t(M * N))};
        std::vector<void*> args = {bufs[0].data(), bufs[1].data(), bufs[2].data()};
        k->function()(args.data());
        double maxErr = 0;
        std::mt19937 rng(3);
        for (int s = 0; s < 256; ++s) {
            const int64_t i = rng() % M, j = rng() % N;
            double ref = 0;
            for (int64_t kk = 0; kk < K; ++kk) ref += double(A[size_t(i * K + kk)]) * B[size_t(kk * N + j)];
            maxErr = std::max(maxErr, std::abs(ref - bufs[2][size_t(i * N + j)]));
        }
        std::printf("matmul check: max abs error %.2e on 256 samples (compile %.0f ms)\n", maxErr, ck.compileSeconds * 1e3);
        report("matmul 1024^3", 2.0 * M * N * K, timeKernel(*k, bufs, quick), peakN);
    }
    // conv2d 3x3 56x56x64 -> 64
    {
        const int64_t H = 56, W = 56, CI = 64, CO = 64;
        auto f = conv2dSchedule(H, W, CI, CO);
        auto ck = codegen::compile(f, target);
        auto k = codegen::LoadedKernel::load(ck.object, ck.name);
        auto D = randomData(size_t(H * W * CI), 4), Kw = randomData(size_t(9 * CI * CO), 5);
        std::vector<std::vector<float>> bufs = {D, Kw, std::vector<float>(size_t(H * W * CO))};
        std::vector<void*> args = {bufs[0].data(), bufs[1].data(), bufs[2].data()};
        k->function()(args.data());
        double maxErr = 0;
        std::mt19937 rng(6);
        for (int s = 0; s < 256; ++s) {
            const int64_t y = rng() % H, x = rng() % W, o = rng() % CO;
            double ref = 0;
            for (int64_t dy = 0; dy < 3; ++dy)
                for (int64_t dx = 0; dx < 3; ++dx)
                    for (int64_t cc = 0; cc < CI; ++cc) {
                        const int64_t iy = y + dy - 1, ix = x + dx - 1;
                        if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                        ref += double(D[size_t((iy * W + ix) * CI + cc)]) * Kw[size_t(((dy * 3 + dx) * CI + cc) * CO + o)];
                    }
            maxErr = std::max(maxErr, std::abs(ref - bufs[2][size_t((y * W + x) * CO + o)]));
        }
        std::printf("conv2d check: max abs error %.2e on 256 samples (compile %.0f ms)\n", maxErr, ck.compileSeconds * 1e3);
        // TVM's FLOP count for this task includes the padding taps: 2 * 56*56*64 * 64*3*3.
        report("conv2d 3x3 56x56x64->64", 2.0 * H * W * CO * CI * 9, timeKernel(*k, bufs, quick), peakN);
    }
    return 0;
}
