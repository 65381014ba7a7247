// SPDX-License-Identifier: Apache-2.0
// bench_kernels: our code generator against oneDNN and the machine's FP32 FMA peak, in one run.
//
//   peak      12 independent chains of 512-bit FMAs per thread (ANCHORS.md "Physical limits")
//   matmul    1024^3. Ours: hand-written loop-IR schedule, parallel over 32-column panels of a packed
//             B ([N/32][K][32], pre-transformed as Ansor's layout rewrite does inside a network),
//             8x32 register tile in a local accumulator (16 zmm), k innermost. oneDNN: dnnl::matmul
//             f32, A and C row-major, B in the format oneDNN picks (format_tag::any), reordered once
//             outside the timed region (so both sides use a pre-packed B).
//   conv2d    3x3, 1x56x56x64 -> 64, NHWC, pad 1. Ours: the padding stage is part of the kernel,
//             weights HWIO, parallel over output rows, 8 x-positions x 32 channels register tile.
//             oneDNN: convolution_forward f32 (direct), src/dst nhwc, weights format_tag::any
//             reordered once outside the timed region (padding is inside its kernel).
//   --log F   the best valid record of a TVM auto_scheduler log for resnet-18's "conv2d 3x3
//             56x56x64->64 + bias + relu" task (vm_mod_fused_nn_conv2d_add_nn_relu, 231612416 FLOP),
//             replayed, lowered and compiled by us, beside oneDNN's conv2d with bias and a ReLU
//             post-op (same formats as above) and the peak. Records match by the task's workload
//             key (or the key TVM < 0.8 gave it, so the 2021 sandbox log works too).
//   --peak-only  only the FMA peak on 1 and all threads ("peak GFLOPS threads=T: X" lines), for
//             scripts that put measured GFLOPS against it (bench/networks --profile).
//
// Every shape is timed on 1 thread and on all threads. Ours: "1 thread" runs the kernel inside a
// one-chunk job of the engine pool, where its parallel loops run serially (thread_pool.h); "all"
// is the pool, sized by TB_NUM_THREADS (default: all cores). oneDNN: its own CPU runtime (Debian's
// libdnnl is built with OpenMP: omp_set_num_threads(1 or all) before its primitives are created).
// OpenMP threads spin while they wait (OMP_WAIT_POLICY unset): fastest on an idle machine, but on a
// loaded one a spinning waiter takes the core its partner needs and oneDNN's all-thread times
// collapse (seen at 3-4x); set OMP_WAIT_POLICY=passive there, and record the load (`uptime`).
//
// Timing: TVM's evaluator (measure/timer.h): one warm-up call, `number` grown until a round lasts
// min_repeat_ms (200; 50 with --quick), repeat 5 (2) rounds; best and median per call reported.
// The sides of one row (ours, the peak loop, oneDNN) are timed round by round in alternation, so
// load drift hits all of them alike; the peak of a row is its best round. FLOPs are TVM's count
// (padding taps, bias and ReLU included) and the same for all sides of a row.
//
// Reading the ratios (all are speed ratios, GFLOP/s over GFLOP/s; higher is better for the first
// named): ours/peak and dnnl/peak = fraction of the FMA peak at the same thread count (ANCHORS.md:
// the target is >= 95%, as oneDNN reaches); ours/dnnl = oneDNN's time / our time: 1.00 = parity,
// 0.80 = we take 25% longer, > 1 = we are faster. On a shared machine trust ratios within one
// row, not absolute numbers, and re-run when a ratio to peak exceeds 100% (a load swing).
// Outputs are checked before timing: ours and oneDNN against plain C++ loops on 256 sampled outputs
// and against each other on every output; the replayed record and oneDNN's conv+bias+relu against
// the te interpreter on every output. A failed check prints MISMATCH and makes the exit status 1.
//
// Usage: bench_kernels [--quick] [--log FILE] [--peak-only]
//   exit status 0 ok, 1 a check failed, 2 bad usage or --log has no usable record.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>

#include <immintrin.h>

#include "engine/codegen/codegen_llvm.h"
#include "engine/codegen/jit.h"
#include "engine/graph/task_extraction.h"
#include "engine/graph/zoo.h"
#include "engine/lower/lower_state.h"
#include "engine/lower/simplify.h"
#include "engine/measure/timer.h"
#include "engine/record/record_io.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/support/error.h"
#include "engine/support/thread_pool.h"
#include "engine/te/interpreter.h"

#ifdef TB_HAVE_DNNL
#include <dlfcn.h>

#include <oneapi/dnnl/dnnl.hpp>
#endif

using namespace tb;
using namespace tb::lower;
using te::Expr;
using te::Var;

namespace {

Expr c(int64_t v) { return te::intImm(v); }

bool g_failed = false;  // a correctness check failed: exit status 1

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

constexpr int64_t kPeakIters = 2'000'000;  // one call: about 13 ms per thread at 60 GFLOP/s

// One call of the FMA loop on `threads` threads of the engine pool (each runs the chains); it does
// peakFlop(threads) FLOPs. Timed beside the kernels in every row, so load drift hits it too.
std::function<void()> peakLoop(int threads) {
    return [threads] {
        static volatile float sink = 0;
        ThreadPool::global().parallelForRange(threads, [&](int64_t b, int64_t e) {
            for (int64_t t = b; t < e; ++t) sink = sink + fmaChains(kPeakIters);
        });
    };
}
double peakFlop(int threads) { return double(threads) * double(kPeakIters) * 12 * 16 * 2; }

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

// ---- timing ---------------------------------------------------------------------------------

struct Timing {
    double best = 0, median = 0;
};

// Times each of `sides` with TVM's evaluator semantics (see the file comment), the rounds of the
// sides interleaved: round r of side 0, round r of side 1, ... Each side keeps its grown `number`
// from round to round as timeEvaluate does within one call; its warm-up call comes before its
// first round only.
std::vector<Timing> timeAlternating(const std::vector<std::function<void()>>& sides, bool quick) {
    const int repeat = quick ? 2 : 5;
    const double minRepeatMs = quick ? 50 : 200;
    std::vector<std::vector<double>> costs(sides.size());
    std::vector<int> number(sides.size(), 1);
    for (int r = 0; r < repeat; ++r)
        for (size_t s = 0; s < sides.size(); ++s) {
            measure::TimerOptions o;
            o.number = number[s];
            o.repeat = 1;
            o.minRepeatMs = minRepeatMs;
            o.skipWarmup = r > 0;
            const double t = measure::timeEvaluate(sides[s], o).front();
            costs[s].push_back(t);
            number[s] = std::max(number[s], int(minRepeatMs / (t * 1e3)) + 1);
        }
    std::vector<Timing> out;
    for (auto& v : costs) {
        std::sort(v.begin(), v.end());
        out.push_back({v.front(), v[v.size() / 2]});
    }
    return out;
}

// f run with the engine pool restricted to the calling thread: a one-chunk job runs inline and
// marks the thread as a pool worker, so the kernel's parallel loops (tb_rt_parallel_for) run
// serially inside it (thread_pool.h, nested parallelism).
std::function<void()> onOneThread(std::function<void()> f) {
    return [f = std::move(f)] { ThreadPool::global().parallelFor(1, [&](int64_t) { f(); }); };
}

// ---- checks ---------------------------------------------------------------------------------

// The larger error; a NaN (an output never written, or garbage) counts as infinitely wrong.
double worse(double maxErr, double err) { return std::isnan(err) ? INFINITY : std::max(maxErr, err); }

// Prints one check line; a max error above tol * max(|reference|, 1) is a MISMATCH.
void reportCheck(const std::string& what, double maxErr, double maxRef, const std::string& extra = {}) {
    const bool ok = maxErr <= 1e-4 * std::max(maxRef, 1.0);
    if (!ok) g_failed = true;
    std::printf("check %-56s max abs error %.2e (|ref| <= %.1f)%s  %s\n", what.c_str(), maxErr, maxRef, extra.c_str(),
                ok ? "ok" : "MISMATCH");
}

// Max abs difference and max |b| over two whole arrays (b is the reference).
void compareAll(const std::string& what, const std::vector<float>& a, const std::vector<float>& b) {
    double maxErr = 0, maxRef = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        maxErr = worse(maxErr, std::fabs(double(a[i]) - double(b[i])));
        maxRef = std::max(maxRef, double(std::fabs(b[i])));
    }
    if (a.size() != b.size()) maxErr = INFINITY;
    reportCheck(what, maxErr, maxRef);
}

struct MatmulRef {
    const std::vector<float>&A, &B;
    int64_t N, K;
    double operator()(int64_t i, int64_t j) const {
        double ref = 0;
        for (int64_t kk = 0; kk < K; ++kk) ref += double(A[size_t(i * K + kk)]) * B[size_t(kk * N + j)];
        return ref;
    }
};

// conv2d 3x3 pad 1 NHWC (batch 1) with HWIO weights, optional bias and ReLU, at one output point.
struct ConvRef {
    const std::vector<float>&D, &Kw;
    const std::vector<float>* bias;
    bool relu;
    int64_t H, W, CI, CO;
    double operator()(int64_t y, int64_t x, int64_t o) const {
        double ref = 0;
        for (int64_t dy = 0; dy < 3; ++dy)
            for (int64_t dx = 0; dx < 3; ++dx)
                for (int64_t cc = 0; cc < CI; ++cc) {
                    const int64_t iy = y + dy - 1, ix = x + dx - 1;
                    if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                    ref += double(D[size_t((iy * W + ix) * CI + cc)]) * Kw[size_t(((dy * 3 + dx) * CI + cc) * CO + o)];
                }
        if (bias) ref += (*bias)[size_t(o)];
        return relu ? std::max(ref, 0.0) : ref;
    }
};

void checkMatmulSamples(const std::string& what, const MatmulRef& ref, const std::vector<float>& C, int64_t M) {
    double maxErr = 0, maxRef = 0;
    std::mt19937 rng(3);
    for (int s = 0; s < 256; ++s) {
        const int64_t i = rng() % M, j = rng() % ref.N;
        const double r = ref(i, j);
        maxErr = worse(maxErr, std::abs(r - C[size_t(i * ref.N + j)]));
        maxRef = std::max(maxRef, std::abs(r));
    }
    reportCheck(what + " (256 samples)", maxErr, maxRef);
}

void checkConvSamples(const std::string& what, const ConvRef& ref, const std::vector<float>& O) {
    double maxErr = 0, maxRef = 0;
    std::mt19937 rng(6);
    for (int s = 0; s < 256; ++s) {
        const int64_t y = rng() % ref.H, x = rng() % ref.W, o = rng() % ref.CO;
        const double r = ref(y, x, o);
        maxErr = worse(maxErr, std::abs(r - O[size_t((y * ref.W + x) * ref.CO + o)]));
        maxRef = std::max(maxRef, std::abs(r));
    }
    reportCheck(what + " (256 samples)", maxErr, maxRef);
}

// ---- oneDNN ---------------------------------------------------------------------------------

#ifdef TB_HAVE_DNNL
// One oneDNN primitive with its arguments bound to our buffers (user memory, no copies) except the
// weights, which are reordered once into the format the primitive asked for.
struct DnnlOp {
    dnnl::engine eng{dnnl::engine::kind::cpu, 0};
    dnnl::stream strm{eng};
    dnnl::primitive prim;
    std::unordered_map<int, dnnl::memory> args;
    std::string impl;  // pd.impl_info_str(): which kernel oneDNN chose (e.g. brg:avx512_core)
    void run() {
        prim.execute(strm, args);
        strm.wait();
    }
    // Weights given in `userDesc` at `data`, reordered into `wantDesc`.
    dnnl::memory packWeights(const dnnl::memory::desc& userDesc, float* data, const dnnl::memory::desc& wantDesc) {
        dnnl::memory user(userDesc, eng, data);
        if (userDesc == wantDesc) return user;
        dnnl::memory packed(wantDesc, eng);
        dnnl::reorder(user, packed).execute(strm, user, packed);
        strm.wait();
        return packed;
    }
};

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

// Sets the thread count of oneDNN's CPU runtime for primitives created and run afterwards on this
// thread. Returns false when it cannot (a sequential or TBB build): oneDNN then runs as built.
bool setDnnlThreads(int n) {
    const dnnl_version_t* v = dnnl_version();
    if (v->cpu_runtime == DNNL_RUNTIME_OMP) {
        // libgomp arrives as libdnnl's dependency; look it up instead of linking an OpenMP runtime.
        auto setThreads = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
        if (!setThreads) return false;
        setThreads(n);
        return true;
    }
    return v->cpu_runtime == DNNL_RUNTIME_SEQ && n == 1;
}

std::string dnnlRuntimeName() {
    const dnnl_version_t* v = dnnl_version();
    const char* rt = v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : v->cpu_runtime == DNNL_RUNTIME_TBB ? "TBB"
                     : v->cpu_runtime == DNNL_RUNTIME_SEQ ? "sequential" : "other";
    const char* wait = std::getenv("OMP_WAIT_POLICY");
    char buf[128];
    std::snprintf(buf, sizeof buf, "oneDNN %d.%d.%d (%s CPU runtime%s%s)", v->major, v->minor, v->patch, rt,
                  v->cpu_runtime == DNNL_RUNTIME_OMP ? ", OMP_WAIT_POLICY=" : "",
                  v->cpu_runtime != DNNL_RUNTIME_OMP ? "" : wait ? wait : "unset");
    return buf;
}

std::unique_ptr<DnnlOp> dnnlMatmul(int64_t M, int64_t N, int64_t K, float* A, float* B, float* C) {
    auto op = std::make_unique<DnnlOp>();
    dnnl::memory::desc a({M, K}, dt::f32, tag::ab), bUser({K, N}, dt::f32, tag::ab), bAny({K, N}, dt::f32, tag::any),
        cm({M, N}, dt::f32, tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, bAny, cm), op->eng);
    op->args = {{DNNL_ARG_SRC, dnnl::memory(a, op->eng, A)},
                {DNNL_ARG_WEIGHTS, op->packWeights(bUser, B, pd.weights_desc())},
                {DNNL_ARG_DST, dnnl::memory(cm, op->eng, C)}};
    op->prim = dnnl::matmul(pd);
    op->impl = pd.impl_info_str();
    return op;
}

// conv2d 3x3 stride 1 pad 1, batch 1, src/dst NHWC, weights given HWIO; with `bias` (CO floats) and
// `relu` for the fused conv2d+bias+relu.
std::unique_ptr<DnnlOp> dnnlConv(int64_t H, int64_t W, int64_t CI, int64_t CO, float* D, float* Kw, float* bias, bool relu,
                                 float* O) {
    auto op = std::make_unique<DnnlOp>();
    dnnl::memory::desc src({1, CI, H, W}, dt::f32, tag::nhwc), dst({1, CO, H, W}, dt::f32, tag::nhwc),
        wUser({CO, CI, 3, 3}, dt::f32, tag::hwio), wAny({CO, CI, 3, 3}, dt::f32, tag::any), b({CO}, dt::f32, tag::a);
    dnnl::primitive_attr attr;
    if (relu) {
        dnnl::post_ops po;
        po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
        attr.set_post_ops(po);
    }
    auto makePd = [&](dnnl::algorithm alg) {
        auto d = bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, src, wAny, b, dst, {1, 1}, {1, 1},
                                                        {1, 1})
                      : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, src, wAny, dst, {1, 1}, {1, 1},
                                                        {1, 1});
        return dnnl::convolution_forward::primitive_desc(d, attr, op->eng);
    };
    dnnl::convolution_forward::primitive_desc pd;
    try {
        pd = makePd(dnnl::algorithm::convolution_direct);
    } catch (const dnnl::error&) {
        pd = makePd(dnnl::algorithm::convolution_auto);
    }
    op->args = {{DNNL_ARG_SRC, dnnl::memory(src, op->eng, D)},
                {DNNL_ARG_WEIGHTS, op->packWeights(wUser, Kw, pd.weights_desc())},
                {DNNL_ARG_DST, dnnl::memory(dst, op->eng, O)}};
    if (bias) op->args.insert({DNNL_ARG_BIAS, dnnl::memory(b, op->eng, bias)});
    op->prim = dnnl::convolution_forward(pd);
    op->impl = pd.impl_info_str();
    return op;
}
#endif

// ---- the table ------------------------------------------------------------------------------

struct Row {
    int threads;
    std::string text;
};
std::vector<Row> g_rows;  // printed together at the end, grouped by thread count

void printTable() {
    std::printf("\n%-30s %3s %10s %9s %10s %9s %9s %9s %9s %9s %9s %9s\n", "shape", "thr", "ours ms", "(median)", "oneDNN ms",
                "(median)", "peak GF/s", "ours GF/s", "dnnl GF/s", "ours/peak", "dnnl/peak", "ours/dnnl");
    std::stable_sort(g_rows.begin(), g_rows.end(), [](const Row& a, const Row& b) { return a.threads < b.threads; });
    for (const auto& r : g_rows) std::printf("%s\n", r.text.c_str());
}

// One row: ours, oneDNN (or n/a), the peak and the three speed ratios.
void addRow(const std::string& shape, int threads, double flop, const std::optional<Timing>& ours,
            const std::optional<Timing>& dnnl, double peak) {
    auto ms = [](const std::optional<Timing>& t, char* buf, size_t n) {
        if (t)
            std::snprintf(buf, n, "%10.3f (%7.3f)", t->best * 1e3, t->median * 1e3);
        else
            std::snprintf(buf, n, "%10s %9s", "n/a", "");
    };
    char o[48], d[48];
    ms(ours, o, sizeof o);
    ms(dnnl, d, sizeof d);
    const double go = ours ? flop / ours->best / 1e9 : NAN, gd = dnnl ? flop / dnnl->best / 1e9 : NAN;
    auto num = [](double v, const char* fmt, char* buf, size_t n) {
        if (std::isnan(v))
            std::snprintf(buf, n, "%9s", "n/a");
        else
            std::snprintf(buf, n, fmt, v);
    };
    char s[5][16];
    num(go, "%9.1f", s[0], 16);
    num(gd, "%9.1f", s[1], 16);
    num(100.0 * go / peak, "%8.1f%%", s[2], 16);
    num(100.0 * gd / peak, "%8.1f%%", s[3], 16);
    num(go / gd, "%9.2f", s[4], 16);
    char line[256];
    std::snprintf(line, sizeof line, "%-30s %3d %s %s %9.1f %s %s %s %s %s", shape.c_str(), threads, o, d, peak, s[0], s[1], s[2],
                  s[3], s[4]);
    g_rows.push_back({threads, line});
}

// Times ours (on `threads` threads, see onOneThread), the peak loop and oneDNN (when given) in
// alternation and adds their row.
void timeRow(const std::string& shape, int threads, double flop, const std::function<void()>& ours,
             const std::function<void()>& dnnl, bool quick) {
    std::vector<std::function<void()>> sides = {threads == 1 ? onOneThread(ours) : ours, peakLoop(threads)};
    if (dnnl) sides.push_back(dnnl);
    const auto t = timeAlternating(sides, quick);
    std::optional<Timing> d;
    if (dnnl) d = t[2];
    addRow(shape, threads, flop, t[0], d, peakFlop(threads) / t[1].best / 1e9);
}

// ---- --log: the tuned conv2d+bias+relu record ------------------------------------------------

struct TunedConv {
    graph::ExtractedTask task;
    record::MeasureRecord rec;
    int line = 0;
    int matching = 0, valid = 0;
    size_t total = 0;
    bool legacyKey = false;
};

constexpr const char* kTaskDesc = "vm_mod_fused_nn_conv2d_add_nn_relu";
constexpr double kTaskFlop = 231612416;

// Finds the best valid record of resnet-18's conv2d 3x3 56x56x64->64 + bias + relu in `path`.
// Prints the reason and returns nullopt when the log cannot be read or has no such record.
std::optional<TunedConv> findTunedConv(const std::string& path) {
    TunedConv t;
    record::LogContents<record::MeasureRecord> log;
    try {
        log = record::readMeasureRecords(path);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_kernels: --log: %s\n", e.what());
        return std::nullopt;
    }
    bool found = false;
    for (auto& task : graph::extractTasks(graph::makeNetwork("resnet-18", 1, "NHWC")))
        if (task.desc == kTaskDesc && std::abs(task.flop - kTaskFlop) < 0.5) {
            t.task = task;
            found = true;
            break;
        }
    if (!found) {
        std::fprintf(stderr, "bench_kernels: resnet-18 has no task %s with %.0f FLOP (task extraction changed?)\n", kTaskDesc,
                     kTaskFlop);
        return std::nullopt;
    }
    const std::string key = t.task.workloadKey, legacy = graph::legacyTvmWorkloadKey(t.task.dag);
    t.total = log.records.size();
    int best = -1;
    for (size_t r = 0; r < log.records.size(); ++r) {
        const auto& rec = log.records[r];
        if (rec.task.workloadKey != key && rec.task.workloadKey != legacy) continue;
        ++t.matching;
        if (!rec.valid()) continue;
        ++t.valid;
        if (best < 0 || rec.meanCost() < log.records[size_t(best)].meanCost()) best = int(r);
    }
    if (best < 0) {
        std::fprintf(stderr,
                     "bench_kernels: %s has no valid record for resnet-18's conv2d 3x3 56x56x64->64 + bias + relu\n"
                     "  (workload key %s; %d records of that workload, none valid; %zu records and %zu bad lines in the log)\n",
                     path.c_str(), key.c_str(), t.matching, t.total, log.badLines.size());
        return std::nullopt;
    }
    t.rec = log.records[size_t(best)];
    t.line = log.recordLines[size_t(best)];
    t.legacyKey = t.rec.task.workloadKey != key;
    return t;
}

// Replays, compiles, checks and times the tuned record beside oneDNN conv+bias+relu and the peak.
void benchTunedConv(const TunedConv& t, const codegen::Target& target, bool quick, const std::vector<int>& threadCounts) {
    const auto& dag = t.task.dag;
    std::printf("\n--log: best of %d valid / %d records for %s (%zu records in the log): line %d, logged %.3f ms%s\n", t.valid,
                t.matching, kTaskDesc, t.total, t.line, t.rec.meanCost() * 1e3, t.legacyKey ? " (TVM < 0.8 workload key)" : "");
    State s = inferBound(replaySteps(dag, stepsFromJson(t.rec.steps)));
    auto ck = codegen::compile(lower::lowerState(dag, s), target, codegen::CompileOptions{false, false, {}});
    auto k = codegen::LoadedKernel::load(ck.object, ck.name);

    // Arguments in dag.tensors() order: the inputs, then the output.
    const auto inputs = dag.inputs();
    std::vector<te::Buffer> in;
    std::vector<std::vector<float>> bufs;
    for (size_t i = 0; i < inputs.size(); ++i) {
        te::Buffer b = te::Buffer::zeros(inputs[i].shape());
        measure::fillRandom(b.data.data(), b.data.size(), 11 + i);
        in.push_back(b);
        bufs.push_back(b.data);
    }
    const auto outputs = dag.outputs();
    TB_CHECK(outputs.size() == 1) << "the conv2d+bias+relu task has one output";
    bufs.emplace_back(size_t(outputs[0].numElements()), std::numeric_limits<float>::quiet_NaN());
    std::vector<void*> args;
    for (auto& b : bufs) args.push_back(b.data());
    (*k)(args.data());
    const auto t0 = std::chrono::steady_clock::now();
    const auto expected = te::evaluate(dag, in);
    const double interpSec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char what[64];
    std::snprintf(what, sizeof what, "tuned record vs te interpreter (%.1f s)", interpSec);
    compareAll(what, bufs.back(), expected[0].data);

    // oneDNN reads the inputs as data [1,56,56,64] NHWC, kernel [3,3,64,64] HWIO, bias [.., 64]
    // (what the resnet-18 NHWC task holds); its output is checked against the interpreter's.
    std::optional<std::vector<float>> dnnlOut;
    [[maybe_unused]] const bool shapesAsExpected = inputs.size() == 3 && inputs[0].shape() == std::vector<int64_t>{1, 56, 56, 64} &&
                                  inputs[1].shape() == std::vector<int64_t>{3, 3, 64, 64} && inputs[2].numElements() == 64;
#ifdef TB_HAVE_DNNL
    if (!shapesAsExpected) std::printf("oneDNN: skipped, the task's inputs are not data/kernel HWIO/bias as expected\n");
#endif

    for (size_t ti = 0; ti < threadCounts.size(); ++ti) {
        const int n = threadCounts[ti];
        std::function<void()> dnnlRun;
#ifdef TB_HAVE_DNNL
        std::unique_ptr<DnnlOp> op;
        std::vector<float> out(bufs.back().size(), std::numeric_limits<float>::quiet_NaN());
        if (shapesAsExpected && setDnnlThreads(n)) {
            op = dnnlConv(56, 56, 64, 64, bufs[0].data(), bufs[1].data(), bufs[2].data(), true, out.data());
            op->run();
            if (ti == 0) compareAll("oneDNN conv+bias+relu vs te interpreter", out, expected[0].data);
            dnnlRun = [&] { op->run(); };
        }
#endif
        timeRow("tuned conv2d+bias+relu (log)", n, t.task.flop, [&] { (*k)(args.data()); }, dnnlRun, quick);
    }
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false, peakOnly = false;
    std::string logPath;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0) {
            quick = true;
        } else if (std::strcmp(argv[i], "--peak-only") == 0) {
            peakOnly = true;
        } else if (std::strcmp(argv[i], "--log") == 0 && i + 1 < argc) {
            logPath = argv[++i];
        } else {
            std::fprintf(stderr, "usage: bench_kernels [--quick] [--log FILE] [--peak-only]\n");
            return 2;
        }
    }
    const int threads = ThreadPool::global().numThreads();
    const auto target = codegen::Target::host();
    std::printf("target: %s\nthreads: 1 and %d (TB_NUM_THREADS)%s\n", target.str().c_str(), threads, quick ? "  [--quick]" : "");
    if (!__builtin_cpu_supports("avx512f")) {
        std::printf("this benchmark's peak loop needs AVX-512F\n");
        return 1;
    }
    if (peakOnly) {
        // Just the FMA peak (best of the rounds), one line per thread count, for scripts such as
        // bench/networks that put a profile's GFLOPS against it.
        for (int t : threads > 1 ? std::vector<int>{1, threads} : std::vector<int>{1}) {
            const Timing pk = timeAlternating({peakLoop(t)}, quick).front();
            std::printf("peak GFLOPS threads=%d: %.1f\n", t, peakFlop(t) / pk.best / 1e9);
        }
        return 0;
    }
    // Fail early on a log without the record (before minutes of timing).
    std::optional<TunedConv> tuned;
    if (!logPath.empty() && !(tuned = findTunedConv(logPath))) return 2;
#ifdef TB_HAVE_DNNL
    std::printf("%s\n", dnnlRuntimeName().c_str());
#else
    std::printf("oneDNN: not available\n");
#endif

    std::vector<int> threadCounts = {1};
    if (threads > 1) threadCounts.push_back(threads);
    std::printf("peak: 12 chains of 512-bit FMAs per thread, timed in every row beside the kernels\n\n");

    // matmul 1024^3: data, our kernel, checks
    const int64_t M = 1024, N = 1024, K = 1024;
    auto mmK = [&] {
        auto ck = codegen::compile(matmulSchedule(M, N, K), target);
        return codegen::LoadedKernel::load(ck.object, ck.name);
    }();
    auto A = randomData(size_t(M * K), 1), B = randomData(size_t(K * N), 2);
    std::vector<float> Bp(B.size());
    for (int64_t jo = 0; jo < N / 32; ++jo)
        for (int64_t kk = 0; kk < K; ++kk)
            for (int64_t ji = 0; ji < 32; ++ji) Bp[size_t((jo * K + kk) * 32 + ji)] = B[size_t(kk * N + jo * 32 + ji)];
    const float nan = std::numeric_limits<float>::quiet_NaN();  // outputs start unwritten
    std::vector<float> Cours(size_t(M * N), nan), Cdnnl(size_t(M * N));
    std::vector<void*> mmArgs = {A.data(), Bp.data(), Cours.data()};
    (*mmK)(mmArgs.data());
    const MatmulRef mmRef{A, B, N, K};
    checkMatmulSamples("ours matmul vs plain loops", mmRef, Cours, M);

    // conv2d 3x3 56x56x64 -> 64: data, our kernel, checks
    const int64_t H = 56, W = 56, CI = 64, CO = 64;
    auto cvK = [&] {
        auto ck = codegen::compile(conv2dSchedule(H, W, CI, CO), target);
        return codegen::LoadedKernel::load(ck.object, ck.name);
    }();
    auto D = randomData(size_t(H * W * CI), 4), Kw = randomData(size_t(9 * CI * CO), 5), bias = randomData(size_t(CO), 7);
    std::vector<float> Oours(size_t(H * W * CO), nan), Odnnl(Oours.size()), Ocbr(Oours.size());
    std::vector<void*> cvArgs = {D.data(), Kw.data(), Oours.data()};
    (*cvK)(cvArgs.data());
    const ConvRef cvRef{D, Kw, nullptr, false, H, W, CI, CO};
    checkConvSamples("ours conv2d vs plain loops", cvRef, Oours);
    // TVM's FLOP count for this task includes the padding taps: 2 * 56*56*64 * 64*3*3.
    const double convFlop = 2.0 * H * W * CO * CI * 9;

    struct Shape {
        std::string shape;
        double flop;
        std::function<void()> ours;
    };
    for (size_t ti = 0; ti < threadCounts.size(); ++ti) {
        const int n = threadCounts[ti];
        std::vector<std::function<void()>> dnnlRun(2);
#ifdef TB_HAVE_DNNL
        std::unique_ptr<DnnlOp> mm, cv, cbr;
        if (setDnnlThreads(n)) {
            for (auto* v : {&Cdnnl, &Odnnl, &Ocbr}) std::fill(v->begin(), v->end(), nan);
            mm = dnnlMatmul(M, N, K, A.data(), B.data(), Cdnnl.data());
            cv = dnnlConv(H, W, CI, CO, D.data(), Kw.data(), nullptr, false, Odnnl.data());
            cbr = dnnlConv(H, W, CI, CO, D.data(), Kw.data(), bias.data(), true, Ocbr.data());
            mm->run();
            cv->run();
            cbr->run();
            std::printf("oneDNN %d thread(s): matmul %s, conv2d %s, conv2d+bias+relu %s\n", n, mm->impl.c_str(), cv->impl.c_str(),
                        cbr->impl.c_str());
            char what[64];
            std::snprintf(what, sizeof what, "oneDNN matmul, %d thr, vs plain loops", n);
            checkMatmulSamples(what, mmRef, Cdnnl, M);
            std::snprintf(what, sizeof what, "oneDNN matmul, %d thr, vs ours", n);
            compareAll(what, Cdnnl, Cours);
            std::snprintf(what, sizeof what, "oneDNN conv2d, %d thr, vs plain loops", n);
            checkConvSamples(what, cvRef, Odnnl);
            std::snprintf(what, sizeof what, "oneDNN conv2d, %d thr, vs ours", n);
            compareAll(what, Odnnl, Oours);
            std::snprintf(what, sizeof what, "oneDNN conv2d+bias+relu, %d thr, vs loops", n);
            checkConvSamples(what, ConvRef{D, Kw, &bias, true, H, W, CI, CO}, Ocbr);
            dnnlRun = {[&] { mm->run(); }, [&] { cv->run(); }};
        } else {
            std::printf("oneDNN: cannot set its thread count to %d; not timed at %d threads\n", n, n);
        }
#endif
        const std::vector<Shape> rows = {{"matmul 1024^3", 2.0 * M * N * K, [&] { (*mmK)(mmArgs.data()); }},
                                           {"conv2d 3x3 56x56x64->64 pad 1", convFlop, [&] { (*cvK)(cvArgs.data()); }}};
        for (size_t r = 0; r < rows.size(); ++r) timeRow(rows[r].shape, n, rows[r].flop, rows[r].ours, dnnlRun[r], quick);
    }

    if (tuned) benchTunedConv(*tuned, target, quick, threadCounts);
    printTable();
    if (g_failed) std::printf("\nA CHECK FAILED (MISMATCH above)\n");
    return g_failed ? 1 : 0;
}
