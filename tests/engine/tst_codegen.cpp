// SPDX-License-Identifier: Apache-2.0
// Code generation end to end: lowered DAGs and hand-written loop nests compiled with LLVM, loaded
// in process and compared numerically against straightforward C++ loops; target parsing; AArch64
// object emission; the kernel cache.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>

#include "engine/codegen/codegen_llvm.h"
#include "engine/codegen/jit.h"
#include "engine/codegen/kernel_runtime.h"
#include "engine/codegen/target.h"
#include "engine/lower/lower_dag.h"
#include "engine/lower/simplify.h"
#include "engine/support/error.h"
#include "engine/te/compute_dag.h"
#include "tests/engine/test_util.h"

using namespace tb;
using te::Expr;
using te::Var;
using test::randomData;

namespace {

// Compile for the host, load, run on `bufs` (one vector per argument).
void compileAndRun(const lower::LoweredFunc& f, std::vector<std::vector<float>>& bufs,
                   codegen::CompiledKernel* out = nullptr) {
    auto k = codegen::compile(f, codegen::Target::host());
    auto loaded = codegen::LoadedKernel::load(k.object, k.name);
    std::vector<float*> ptrs;
    for (auto& b : bufs) ptrs.push_back(b.data());
    QCOMPARE(loaded->run(ptrs), 0);
    if (out) *out = std::move(k);
}

float maxRelErr(const std::vector<float>& a, const std::vector<float>& b) {
    float m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]) / std::max(1.f, std::abs(b[i])));
    return m;
}

te::ComputeDAG matmulDag(int64_t M, int64_t N, int64_t K) {
    auto A = te::placeholder({M, K}, "A");
    auto B = te::placeholder({K, N}, "B");
    auto k = te::reduceAxis(K, "k");
    auto C = te::compute({M, N}, {"i", "j"},
                         [&](const std::vector<Var>& v) { return te::sum(A(v[0], k.var) * B(k.var, v[1]), {k}); }, "C");
    return te::ComputeDAG({A, B, C});
}

std::vector<float> refMatmul(const std::vector<float>& A, const std::vector<float>& B, int64_t M, int64_t N, int64_t K) {
    std::vector<float> C(size_t(M * N), 0.f);
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double s = 0;
            for (int64_t k = 0; k < K; ++k) s += double(A[size_t(i * K + k)]) * B[size_t(k * N + j)];
            C[size_t(i * N + j)] = float(s);
        }
    return C;
}

// C[i, j] = sum_k A[i, k] * B[k, j] with j split by `vec` (guarded when N % vec != 0), j.inner of
// kind `inner`, i of kind `outer`, and an optional local accumulator row (cache_write-like).
lower::LoweredFunc handMatmul(int64_t M, int64_t N, int64_t K, int64_t vec, lower::ForKind outer,
                              lower::ForKind inner, bool localAcc) {
    using namespace lower;
    auto A = makeBuffer("A", {M, K}), B = makeBuffer("B", {K, N}), C = makeBuffer("C", {M, N});
    Var i("i"), jo("j.outer"), ji("j.inner"), k("k"), c("c");
    const int64_t nOuter = (N + vec - 1) / vec;
    Expr j = jo * te::intImm(vec) + ji;
    auto guard = [&](Stmt s) { return N % vec ? makeIf(j < te::intImm(N), s) : s; };
    Stmt body;
    if (!localAcc) {
        Stmt init = makeFor(ji, vec, inner, guard(makeStore(C, {i, j}, te::floatImm(0.0))));
        Stmt upd = makeFor(k, K, ForKind::Serial,
                           makeFor(ji, vec, inner,
                                   guard(makeStore(C, {i, j}, bufferLoad(C, {i, j}) + bufferLoad(A, {i, k}) * bufferLoad(B, {k, j})))));
        body = makeFor(jo, nOuter, ForKind::Serial, makeSeq({init, upd}));
    } else {
        auto L = makeBuffer("C.local", {vec}, BufferScope::Local);
        Stmt init = makeFor(ji, vec, inner, makeStore(L, {ji}, te::floatImm(0.0)));
        Stmt upd = makeFor(k, K, ForKind::Serial,
                           makeFor(ji, vec, inner,
                                   guard(makeStore(L, {ji}, bufferLoad(L, {ji}) + bufferLoad(A, {i, k}) * bufferLoad(B, {k, j})))));
        Stmt wb = makeFor(ji, vec, inner, guard(makeStore(C, {i, j}, bufferLoad(L, {ji}))));
        body = makeFor(jo, nOuter, ForKind::Serial, makeAllocate(L, makeSeq({init, upd, wb})));
    }
    LoweredFunc f;
    f.name = "hand_matmul";
    f.args = {A, B, C};
    f.body = makeFor(i, M, outer, body);
    return simplify(f);
}

}  // namespace

class TestCodegen : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testWorkspaceReusesFreedBlocks() {
        // A kernel's scratch buffers come from a per-thread cache: the block freed by one call is the
        // one the next call gets (no new mapping and page faults for a 39 MB buffer every call), a
        // request reuses only a block at most twice its size, and blocks are 64-byte aligned.
        void* a = codegen::workspaceAlloc(39u << 20);
        QCOMPARE(reinterpret_cast<uintptr_t>(a) % 64, uintptr_t(0));
        std::memset(a, 1, 39u << 20);
        codegen::workspaceFree(a);
        void* b = codegen::workspaceAlloc(39u << 20);
        QCOMPARE(b, a);
        void* c = codegen::workspaceAlloc(1000);  // the big block is in use: a new one
        QVERIFY(c != a);
        codegen::workspaceFree(b);
        void* d = codegen::workspaceAlloc(1000);  // 1000 B must not take the 39 MB block
        QVERIFY(d != a);
        void* e = codegen::workspaceAlloc(30u << 20);  // within 2x: it does
        QCOMPARE(e, a);
        codegen::workspaceFree(c);
        codegen::workspaceFree(d);
        codegen::workspaceFree(e);
        codegen::workspaceFree(nullptr);
    }

    void testTargetParse_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("triple");
        QTest::addColumn<QString>("cpu");
        QTest::addColumn<QString>("canonical");
        QTest::addRow("aarch64 neon") << "llvm -mtriple=aarch64-linux-gnu -mattr=+neon" << "aarch64-linux-gnu" << "generic"
                                      << "llvm -keys=arm_cpu,cpu -mattr=+neon -mcpu=generic -mtriple=aarch64-linux-gnu";
        QTest::addRow("x86 skylake keys") << "llvm -keys=cpu -mcpu=skylake-avx512 -mtriple=x86_64-linux-gnu -num-cores=4"
                                          << "x86_64-linux-gnu" << "skylake-avx512"
                                          << "llvm -keys=cpu -mcpu=skylake-avx512 -mtriple=x86_64-linux-gnu -num-cores=4";
        QTest::addRow("a72 with model") << "llvm  -mcpu=cortex-a72 -mtriple=aarch64-linux-gnu   -model=rk3399"
                                        << "aarch64-linux-gnu" << "cortex-a72"
                                        << "llvm -keys=arm_cpu,cpu -mcpu=cortex-a72 -model=rk3399 -mtriple=aarch64-linux-gnu";
    }
    void testTargetParse() {
        QFETCH(QString, text);
        QFETCH(QString, triple);
        QFETCH(QString, cpu);
        QFETCH(QString, canonical);
        auto t = codegen::Target::parse(text.toStdString());
        QCOMPARE(QString::fromStdString(t.mtriple), triple);
        QCOMPARE(QString::fromStdString(t.mcpu), cpu);
        QCOMPARE(QString::fromStdString(t.str()), canonical);
        QCOMPARE(codegen::Target::parse(t.str()), t);
    }

    void testTargetHost() {
        auto t = codegen::Target::host();
        QVERIFY(t.runsOnHost());
        QVERIFY(!t.mcpu.empty());
        QVERIFY(t.vectorBits() >= 128);
        QCOMPARE(codegen::Target::parse(t.str()), t);
        // The string records and `compile` carry for this CPU ("llvm -keys=cpu -mcpu=<host cpu>",
        // tuning::resolveTarget) means the same vector ISA when parsed again. LLVM 16 names Zen 5
        // "generic", which parsed again is SSE2: the host's CPU name must be one LLVM knows.
        const auto recorded = codegen::Target::parse("llvm -keys=cpu -mcpu=" + t.mcpu);
        QVERIFY2(recorded.vectorBits() == t.vectorBits(),
                 qPrintable(QStringLiteral("host %1: %2 bits, re-parsed: %3 bits")
                                .arg(QString::fromStdString(t.mcpu)).arg(t.vectorBits()).arg(recorded.vectorBits())));
        QCOMPARE(recorded.hasFeature("fma"), t.hasFeature("fma"));
        auto a = codegen::Target::parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon");
        QVERIFY(!a.runsOnHost());
        QCOMPARE(a.vectorBits(), 128);
        QVERIFY(a.hasFeature("neon"));
        QCOMPARE(codegen::Target::parse("llvm -mcpu=skylake-avx512 -mtriple=x86_64-linux-gnu").vectorBits(), 512);
        QCOMPARE(codegen::Target::parse("llvm -mcpu=haswell -mtriple=x86_64-linux-gnu").vectorBits(), 256);
    }

    void testTargetErrors_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("mentions");
        QTest::addRow("empty") << "" << "empty target";
        QTest::addRow("kind") << "vulkan -from_device=0" << "unsupported target kind 'vulkan'";
        QTest::addRow("no dash") << "llvm mcpu=znver4" << "expected an option";
        QTest::addRow("no value") << "llvm -mcpu" << "has no '=value'";
        QTest::addRow("unknown option") << "llvm -foo=bar" << "unknown option -foo";
        QTest::addRow("bad mattr") << "llvm -mattr=avx2" << "must start with '+' or '-'";
        QTest::addRow("bad number") << "llvm -num-cores=four" << "non-negative integer";
        QTest::addRow("bad triple") << "llvm -mtriple=nonsense-unknown-none" << "does not know the triple";
        QTest::addRow("bad cpu") << "llvm -mcpu=pentium9000 -mtriple=x86_64-linux-gnu" << "does not know the CPU 'pentium9000'";
        // A quoted value is still one word: str() would print the space unquoted (fuzz_target).
        QTest::addRow("space in a quoted value") << "llvm -mattr=\"+avx2 -device=x\"" << "the value of -mattr contains a space";
        QTest::addRow("quote in a quoted value") << "llvm -model=\"a'b\"" << "the value of -model contains a space, a quote";
    }
    void testTargetErrors() {
        QFETCH(QString, text);
        QFETCH(QString, mentions);
        try {
            codegen::Target::parse(text.toStdString());
            QFAIL("no error");
        } catch (const UserError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(mentions), e.what());
        }
    }

    void testLoweredMatmul() {
        const int64_t M = 19, N = 23, K = 17;
        auto f = lower::lowerComputeDag(matmulDag(M, N, K), "mm_naive");
        std::vector<std::vector<float>> bufs = {randomData(M * K, 1), randomData(K * N, 2), std::vector<float>(M * N, 7.f)};
        compileAndRun(f, bufs);
        QVERIFY(maxRelErr(bufs[2], refMatmul(bufs[0], bufs[1], M, N, K)) < 1e-5f);
    }

    void testVectorParallelVariants_data() {
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("vec");
        QTest::addColumn<bool>("localAcc");
        QTest::addRow("divisible") << 64 << 16 << false;
        QTest::addRow("divisible local acc") << 64 << 16 << true;
        QTest::addRow("guarded tail 40/16") << 40 << 16 << false;
        QTest::addRow("guarded tail local acc 37/8") << 37 << 8 << true;
    }
    void testVectorParallelVariants() {
        QFETCH(int, n);
        QFETCH(int, vec);
        QFETCH(bool, localAcc);
        const int64_t M = 33, N = n, K = 29;
        auto A = randomData(M * K, 3), B = randomData(K * N, 4);
        const auto ref = refMatmul(A, B, M, N, K);
        using lower::ForKind;
        std::vector<float> serialOut;
        const std::pair<ForKind, ForKind> variants[] = {{ForKind::Serial, ForKind::Serial},
                                                        {ForKind::Serial, ForKind::Vectorized},
                                                        {ForKind::Parallel, ForKind::Serial},
                                                        {ForKind::Parallel, ForKind::Vectorized},
                                                        {ForKind::Parallel, ForKind::Unrolled}};
        for (auto [outer, inner] : variants) {
            auto f = handMatmul(M, N, K, vec, outer, inner, localAcc);
            std::vector<std::vector<float>> bufs = {A, B, std::vector<float>(size_t(M * N), -3.f)};
            codegen::CompiledKernel k;
            compileAndRun(f, bufs, &k);
            QVERIFY2(maxRelErr(bufs[2], ref) < 1e-5f, lower::forKindName(inner));
            if (serialOut.empty())
                serialOut = bufs[2];
            else
                QVERIFY2(std::memcmp(serialOut.data(), bufs[2].data(), serialOut.size() * 4) == 0,
                         qPrintable(QStringLiteral("%1/%2 differs from serial").arg(QLatin1String(lower::forKindName(outer)), QLatin1String(lower::forKindName(inner)))));
            const QString ir = QString::fromStdString(k.llvmIr);
            if (inner == ForKind::Vectorized)
                QVERIFY2(ir.contains(QStringLiteral("<%1 x float>").arg(vec)), "no explicit vector type in the IR");
            if (inner == ForKind::Vectorized && N % vec)
                QVERIFY2(ir.contains(QStringLiteral("llvm.masked.")), "guarded tail not masked");
            if (outer == ForKind::Parallel) {
                QVERIFY(ir.contains(QStringLiteral("tb_rt_parallel_for")));
                QVERIFY(ir.contains(QStringLiteral("hand_matmul_compute_par0")));
            }
        }
    }

    void testAvx512Code() {
        // An explicit AVX-512 CPU (compiled, not run): a 16-lane vectorized loop must use zmm registers.
        auto t = codegen::Target::parse("llvm -mcpu=skylake-avx512 -mtriple=x86_64-linux-gnu");
        auto k = codegen::compile(handMatmul(16, 64, 16, 16, lower::ForKind::Serial, lower::ForKind::Vectorized, false), t);
        QVERIFY(QString::fromStdString(k.assembly).contains(QStringLiteral("zmm")));
        QVERIFY(QString::fromStdString(k.assembly).contains(QStringLiteral("vfmadd")));
    }

    void testConv2dPadding() {
        // NHWC conv2d 3x3, pad 1, stride 1, as topi's conv2d_nhwc: pad_temp then a 3-axis reduction.
        const int H = 9, W = 7, CI = 5, CO = 6, R = 3;
        auto data = te::placeholder({1, H, W, CI}, "data");
        auto kernel = te::placeholder({R, R, CI, CO}, "kernel");
        auto pad = te::compute({1, H + 2, W + 2, CI}, {"i0", "i1", "i2", "i3"},
                               [&](const std::vector<Var>& v) {
                                   Expr inb = te::logicalAnd(te::logicalAnd(v[1] >= 1, v[1] < H + 1),
                                                             te::logicalAnd(v[2] >= 1, v[2] < W + 1));
                                   return te::ifThenElse(inb, data(v[0], v[1] - 1, v[2] - 1, v[3]), te::floatImm(0.0));
                               },
                               "pad_temp");
        auto ry = te::reduceAxis(R, "ry"), rx = te::reduceAxis(R, "rx"), rc = te::reduceAxis(CI, "rc");
        auto conv = te::compute({1, H, W, CO}, {"nn", "yy", "xx", "ff"},
                                [&](const std::vector<Var>& v) {
                                    return te::sum(pad(v[0], v[1] + ry.var, v[2] + rx.var, rc.var) * kernel(ry.var, rx.var, rc.var, v[3]),
                                                   {ry, rx, rc});
                                },
                                "conv2d_nhwc");
        auto f = lower::lowerComputeDag(te::ComputeDAG({data, kernel, conv}));
        QVERIFY(QString::fromStdString(f.print()).contains(QStringLiteral("allocate pad_temp")));
        std::vector<std::vector<float>> bufs = {randomData(H * W * CI, 5), randomData(R * R * CI * CO, 6),
                                                std::vector<float>(size_t(H * W * CO))};
        compileAndRun(f, bufs);
        const auto& D = bufs[0];
        const auto& Kw = bufs[1];
        std::vector<float> ref(size_t(H * W * CO));
        for (int64_t y = 0; y < H; ++y)
            for (int64_t x = 0; x < W; ++x)
                for (int64_t o = 0; o < CO; ++o) {
                    double s = 0;
                    for (int64_t dy = 0; dy < R; ++dy)
                        for (int64_t dx = 0; dx < R; ++dx)
                            for (int64_t c = 0; c < CI; ++c) {
                                int64_t iy = y + dy - 1, ix = x + dx - 1;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                s += double(D[size_t((iy * W + ix) * CI + c)]) * Kw[size_t(((dy * R + dx) * CI + c) * CO + o)];
                            }
                    ref[size_t((y * W + x) * CO + o)] = float(s);
                }
        QVERIFY(maxRelErr(bufs[2], ref) < 1e-5f);
    }

    void testSoftmaxExp() {
        // softmax over the last axis: max, exp(x - max), sum, divide (topi's four stages).
        const int64_t R = 7, Ncol = 37;
        auto x = te::placeholder({R, Ncol}, "x");
        auto k1 = te::reduceAxis(Ncol, "k");
        auto mx = te::compute({R}, {"i"}, [&](const std::vector<Var>& v) { return te::reduceMax(x(v[0], k1.var), {k1}); },
                              "T_softmax_maxelem");
        auto ex = te::compute({R, Ncol}, {"i", "j"}, [&](const std::vector<Var>& v) { return te::exp(x(v[0], v[1]) - mx(v[0])); },
                              "T_softmax_exp");
        auto k2 = te::reduceAxis(Ncol, "k");
        auto sm = te::compute({R}, {"i"}, [&](const std::vector<Var>& v) { return te::sum(ex(v[0], k2.var), {k2}); },
                              "T_softmax_expsum");
        auto out = te::compute({R, Ncol}, {"i", "j"}, [&](const std::vector<Var>& v) { return ex(v[0], v[1]) / sm(v[0]); },
                               "T_softmax_norm");
        auto f = lower::lowerComputeDag(te::ComputeDAG({x, out}));
        std::vector<std::vector<float>> bufs = {randomData(R * Ncol, 8, -5.f, 5.f), std::vector<float>(size_t(R * Ncol))};
        compileAndRun(f, bufs);
        for (int64_t r = 0; r < R; ++r) {
            double m = -1e30, s = 0;
            for (int64_t c = 0; c < Ncol; ++c) m = std::max(m, double(bufs[0][size_t(r * Ncol + c)]));
            for (int64_t c = 0; c < Ncol; ++c) s += std::exp(double(bufs[0][size_t(r * Ncol + c)]) - m);
            for (int64_t c = 0; c < Ncol; ++c) {
                const double want = std::exp(double(bufs[0][size_t(r * Ncol + c)]) - m) / s;
                QVERIFY2(std::abs(bufs[1][size_t(r * Ncol + c)] - want) < 1e-6 + 1e-5 * want, qPrintable(QString::number(want)));
            }
        }
    }

    void testAArch64Object() {
        auto t = codegen::Target::parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon");
        auto k = codegen::compile(handMatmul(8, 32, 8, 4, lower::ForKind::Parallel, lower::ForKind::Vectorized, false), t);
        QVERIFY(!k.runsOnHost);
        QVERIFY(k.object.size() > 64);
        // ELF magic, 64-bit class, little endian, relocatable, machine EM_AARCH64 (183).
        QCOMPARE(int(k.object[0]), 0x7f);
        QCOMPARE(std::string(reinterpret_cast<const char*>(&k.object[1]), 3), std::string("ELF"));
        QCOMPARE(int(k.object[4]), 2);
        QCOMPARE(int(k.object[5]), 1);
        QCOMPARE(int(k.object[16] | (k.object[17] << 8)), 1);
        QCOMPARE(int(k.object[18] | (k.object[19] << 8)), 183);
        const QString as = QString::fromStdString(k.assembly);
        QVERIFY2(as.contains(QStringLiteral(".4s")), "no NEON 4 x float instructions");
        // And it refuses to load here.
        QVERIFY_THROWS_EXCEPTION(UserError, codegen::LoadedKernel::load(k.object, k.name));
    }

    void testKernelCache() {
        codegen::clearKernelCache();
        auto f = handMatmul(4, 16, 4, 16, lower::ForKind::Serial, lower::ForKind::Vectorized, false);
        auto a = codegen::compileCached(f, codegen::Target::host());
        auto b = codegen::compileCached(handMatmul(4, 16, 4, 16, lower::ForKind::Serial, lower::ForKind::Vectorized, false),
                                        codegen::Target::host());
        QCOMPARE(a.get(), b.get());
        QCOMPARE(codegen::kernelCacheSize(), size_t(1));
        auto c = codegen::compileCached(handMatmul(4, 16, 4, 8, lower::ForKind::Serial, lower::ForKind::Vectorized, false),
                                        codegen::Target::host());
        QVERIFY(c.get() != a.get());
        QCOMPARE(codegen::kernelCacheSize(), size_t(2));
    }

    // The LLVM pipeline: the kernel pipeline at -opt-level=3, LLVM's default<On> below, and the
    // explicit choice (options, then TB_LLVM_PIPELINE) over both; it is part of the cache key.
    void testPipelineChoice() {
        const auto host = codegen::Target::host();
        qunsetenv("TB_LLVM_PIPELINE");
        QCOMPARE(codegen::llvmPipeline(host), std::string(codegen::kernelPipeline()));
        auto o2 = host;
        o2.optLevel = 2;
        QCOMPARE(codegen::llvmPipeline(o2), std::string("default<O2>"));
        codegen::CompileOptions o;
        o.llvmPipeline = "default<O1>";
        QCOMPARE(codegen::llvmPipeline(host, o), std::string("default<O1>"));
        qputenv("TB_LLVM_PIPELINE", "default<O3>");
        QCOMPARE(codegen::llvmPipeline(host), std::string("default<O3>"));
        QCOMPARE(codegen::llvmPipeline(host, o), std::string("default<O1>"));
        qunsetenv("TB_LLVM_PIPELINE");

        codegen::clearKernelCache();
        auto f = handMatmul(4, 16, 4, 16, lower::ForKind::Serial, lower::ForKind::Vectorized, false);
        auto a = codegen::compileCached(f, host);
        codegen::CompileOptions llvmO3;
        llvmO3.llvmPipeline = "default<O3>";
        auto b = codegen::compileCached(f, host, llvmO3);
        QVERIFY(a.get() != b.get());
        QVERIFY(a->key != b->key);
        QCOMPARE(codegen::kernelCacheSize(), size_t(2));
    }

    // Every loop form codegen emits gives the same bits through the kernel pipeline as through
    // LLVM's default<O3> (both contract a*b+c to FMA the same way), and the kernel pipeline keeps
    // what makes them fast: the vectorized loops' explicit vectors, and the accumulator of a
    // reduction into the output in registers (no store inside the reduction loop).
    void testKernelPipelineMatchesO3() {
        const int64_t M = 33, N = 40, K = 257;  // a k loop too long to unroll fully
        auto A = randomData(M * K, 5), B = randomData(K * N, 6);
        using lower::ForKind;
        const std::pair<ForKind, ForKind> variants[] = {{ForKind::Serial, ForKind::Serial},
                                                        {ForKind::Serial, ForKind::Vectorized},
                                                        {ForKind::Parallel, ForKind::Vectorized},
                                                        {ForKind::Parallel, ForKind::Unrolled}};
        codegen::CompileOptions llvmO3;
        llvmO3.llvmPipeline = "default<O3>";
        for (bool localAcc : {false, true})
            for (auto [outer, inner] : variants) {
                auto f = handMatmul(M, N, K, 8, outer, inner, localAcc);
                std::vector<std::vector<float>> out;
                for (const auto& options : {codegen::CompileOptions{}, llvmO3}) {
                    auto k = codegen::compile(f, codegen::Target::host(), options);
                    auto loaded = codegen::LoadedKernel::load(k.object, k.name);
                    std::vector<float> a = A, b = B, c(size_t(M * N), -3.f);
                    QCOMPARE(loaded->run({a.data(), b.data(), c.data()}), 0);
                    out.push_back(std::move(c));
                    if (!options.llvmPipeline.empty()) continue;
                    const QString ir = QString::fromStdString(k.llvmIr);
                    if (inner == ForKind::Vectorized) QVERIFY(ir.contains(QStringLiteral("<8 x float>")));
                    if (inner == ForKind::Vectorized && !localAcc) {
                        // The blocks of the k loop (codegen names them for_body.k, unrolled
                        // copies for_body.k.N) store nothing: C's vector stays in a register.
                        const QStringList blocks = ir.split(QStringLiteral("\n\n"));
                        bool found = false;
                        for (const QString& bb : blocks) {
                            const QString label = bb.section(QLatin1Char(':'), 0, 0).trimmed();
                            if (label != QStringLiteral("for_body.k") && !label.startsWith(QStringLiteral("for_body.k."))) continue;
                            if (bb.contains(QStringLiteral("fadd")) || bb.contains(QStringLiteral("fmuladd"))) found = true;
                            QVERIFY2(!bb.contains(QStringLiteral("store ")), qPrintable(QStringLiteral("store in the reduction loop:\n") + bb));
                        }
                        QVERIFY2(found, qPrintable(QStringLiteral("no block of the k loop with an fadd in the kernel pipeline's IR:\n") + ir));
                    }
                }
                QVERIFY(maxRelErr(out[0], refMatmul(A, B, M, N, K)) < 1e-5f);
                QVERIFY2(std::memcmp(out[0].data(), out[1].data(), out[0].size() * 4) == 0,
                         qPrintable(QStringLiteral("%1/%2 acc %3: kernel pipeline and default<O3> differ")
                                        .arg(QLatin1String(lower::forKindName(outer)), QLatin1String(lower::forKindName(inner)))
                                        .arg(localAcc)));
            }
    }

    void testBadPipelineIsAUserError() {
        codegen::CompileOptions o;
        o.llvmPipeline = "function(no-such-pass)";
        try {
            codegen::compile(handMatmul(4, 16, 4, 16, lower::ForKind::Serial, lower::ForKind::Serial, false),
                             codegen::Target::host(), o);
            QFAIL("an unknown pass compiled");
        } catch (const UserError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("no-such-pass")), e.what());
        }
    }

    void testLoadErrors() {
        std::vector<uint8_t> junk(100, 0x42);
        QVERIFY_THROWS_EXCEPTION(UserError, codegen::LoadedKernel::load(junk, "f"));
        auto k = codegen::compile(handMatmul(4, 16, 4, 16, lower::ForKind::Serial, lower::ForKind::Serial, false),
                                  codegen::Target::host());
        QVERIFY_THROWS_EXCEPTION(UserError, codegen::LoadedKernel::load(k.object, "no_such_symbol"));
    }
};

QTEST_APPLESS_MAIN(TestCodegen)
#include "tst_codegen.moc"
