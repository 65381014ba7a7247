// SPDX-License-Identifier: Apache-2.0
// Measurement: LocalBuilder error mapping and LocalRunner's sandbox worker. Candidates that crash,
// hang, write out of bounds or compute the wrong answer must each cost exactly one error record,
// and the runner must keep measuring good candidates afterwards.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <QtTest>

#include <signal.h>
#include <sys/resource.h>

#include "engine/codegen/codegen_llvm.h"
#include "engine/lower/loop_ir.h"
#include "engine/measure/builder.h"
#include "engine/measure/local_runner.h"
#include "engine/measure/timer.h"
#include "engine/measure/worker_protocol.h"
#include "engine/support/error.h"
#include "tests/engine/test_measure_util.h"

using namespace tb;
using measure::MeasureErrorNo;
using te::Expr;
using te::Var;
using namespace tb::test;

namespace {

// A store 4 TiB below the output buffer: SIGSEGV in the worker.
std::shared_ptr<lower::LoweredFunc> wildStore() { return vectorAdd(kN, false, -(int64_t(1) << 40)); }

measure::RunnerOptions fastOptions() {
    measure::RunnerOptions o;
    o.timeoutS = 3;
    o.number = 2;
    o.repeat = 3;
    o.minRepeatMs = 0;
    o.numThreads = 1;
    return o;
}

}  // namespace

class TestMeasure : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testTimerCallCounts() {
        int calls = 0, flushes = 0;
        measure::TimerOptions o;
        o.number = 3;
        o.repeat = 4;
        o.minRepeatMs = 0;
        auto costs = measure::timeEvaluate([&] { ++calls; }, o, [&] { ++flushes; });
        QCOMPARE(costs.size(), size_t(4));
        QCOMPARE(calls, 1 + 3 * 4);  // warm-up + number x repeat
        QCOMPARE(flushes, 4);        // once per repeat
        for (double c : costs) QVERIFY(c >= 0);
    }

    void testTimerExtendsShortRound() {
        // A kernel of exactly 10 ms per call, number 3, min_repeat_ms 100, two rounds. TVM re-times
        // the 30 ms probe round with number = max(100 / 10 + 1, 3 * 1.618) = 11 (3 + 11 + 11 calls);
        // extendShortRound goes on with ceil(70 / 10) = 7 more calls instead (3 + 7, then 10). Every
        // round lasts >= min_repeat_ms and yields the time per call in both modes.
        QFETCH(bool, extend);
        QFETCH(int, wantCalls);
        measure::TimerOptions o;
        o.number = 3;
        o.repeat = 2;
        o.minRepeatMs = 100;
        o.extendShortRound = extend;
        int calls = 0;
        std::vector<double> roundMs;  // per timed stretch
        auto costs = measure::timeEvaluateRounds(
            [&](int n) {
                calls += n;
                roundMs.push_back(10.0 * n);
                return 10.0 * n;
            },
            o);
        QCOMPARE(costs.size(), size_t(2));
        for (double c : costs) QVERIFY(std::abs(c - 0.010) < 1e-12);
        QCOMPARE(calls, wantCalls);
        QVERIFY(roundMs.back() >= 100);  // the last round alone lasted min_repeat_ms
        // A clock that reads 0 (a coarse device timer) still ends: the calls grow until it ticks.
        int zeroCalls = 0;
        auto coarse = measure::timeEvaluateRounds(
            [&](int n) {
                zeroCalls += n;
                return zeroCalls >= 64 ? 200.0 : 0.0;
            },
            o);
        QCOMPARE(coarse.size(), size_t(2));
        QVERIFY(zeroCalls >= 64);
    }
    void testTimerExtendsShortRound_data() {
        QTest::addColumn<bool>("extend");
        QTest::addColumn<int>("wantCalls");
        QTest::addRow("extend") << true << 3 + 7 + 10;
        QTest::addRow("tvm") << false << 3 + 11 + 11;
    }

    void testTimerAbandonsSlowCall() {
        // abandonAboveS: after the warm-up one call is timed; slower than the limit, it is the only
        // result and nothing else runs. Faster, the usual rounds follow (the probe call is extra).
        using clock = std::chrono::steady_clock;
        int calls = 0;
        auto kernel = [&] {
            ++calls;
            const auto end = clock::now() + std::chrono::milliseconds(2);
            while (clock::now() < end) {
            }
        };
        measure::TimerOptions o;
        o.number = 2;
        o.repeat = 3;
        o.minRepeatMs = 0;
        o.abandonAboveS = 1e-3;
        auto slow = measure::timeEvaluate(kernel, o);
        QCOMPARE(slow.size(), size_t(1));
        QVERIFY2(slow[0] >= 2e-3, std::to_string(slow[0]).c_str());
        QCOMPARE(calls, 2);  // warm-up + the probe
        calls = 0;
        o.abandonAboveS = 1.0;
        auto full = measure::timeEvaluate(kernel, o);
        QCOMPARE(full.size(), size_t(3));
        QCOMPARE(calls, 1 + 1 + 2 * 3);
    }

    void testTimerScreensSlowCandidates() {
        // A fake clock at 1 ms per call, number 3, repeat 2, min_repeat_ms 100, a 10 ms screen.
        // Slower than the limit: the first round stops at 10 ms (3 calls, then 7 more) and its time
        // per call is the only result. Within the limit: the round goes on to 100 ms from where the
        // screen stopped, so the candidate pays exactly the calls it pays without a screen.
        int calls = 0;
        auto round = [&](int n) {
            calls += n;
            return 1.0 * n;
        };
        measure::TimerOptions o;
        o.number = 3;
        o.repeat = 2;
        o.minRepeatMs = 100;
        const auto plain = measure::timeEvaluateRounds(round, o);
        const int plainCalls = calls;
        QCOMPARE(plain.size(), size_t(2));
        QCOMPARE(plainCalls, 100 + 100);
        o.screenMs = 10;
        o.screenAboveS = 0.5e-3;
        calls = 0;
        const auto screened = measure::timeEvaluateRounds(round, o);
        QCOMPARE(screened.size(), size_t(1));
        QCOMPARE(screened[0], 1e-3);
        QCOMPARE(calls, 10);
        o.screenAboveS = 2e-3;
        calls = 0;
        const auto passed = measure::timeEvaluateRounds(round, o);
        QCOMPARE(passed, plain);
        QCOMPARE(calls, plainCalls);
    }

    void testTimerFastestSlice() {
        // A fake clock: 1 ms per call, but 2 ms while "another process holds the core", which it does
        // for the first 30 calls of every 100. TVM's round (slices 1) is the mean over its 100 ms,
        // 1.43 ms per call. Five slices of 20 ms: the first ones slow, then 20-call slices at 1 ms
        // per call, the result. The budget is the same minimum of 100 ms.
        int calls = 0;
        auto round = [&](int n) {
            double ms = 0;
            for (int k = 0; k < n; ++k, ++calls) ms += (calls % 100) < 30 ? 2.0 : 1.0;
            return ms;
        };
        measure::TimerOptions o;
        o.number = 3;
        o.repeat = 1;
        o.minRepeatMs = 100;
        auto mean = measure::timeEvaluateRounds(round, o);
        QCOMPARE(mean.size(), size_t(1));
        // 3 calls (6 ms), extended by 47 (27 slow, 20 fast: 80 ms), then 13, 5 and 2 fast: 100 ms.
        QCOMPARE(calls, 70);
        QCOMPARE(mean[0], 100e-3 / 70);
        o.slices = 5;
        calls = 0;
        auto sliced = measure::timeEvaluateRounds(round, o);
        QCOMPARE(sliced.size(), size_t(1));
        QCOMPARE(sliced[0], 1e-3);
        QVERIFY2(calls < 90, qPrintable(QString::number(calls)));  // the round stops at 100 ms
        // A kernel slower than a slice (30 ms per call): one call per slice, at least `number` calls,
        // and the result is the fastest call; its cost is the mean's (4 calls to reach 100 ms).
        int slowCalls = 0;
        auto slow = [&](int n) {
            double ms = 0;
            for (int k = 0; k < n; ++k, ++slowCalls) ms += slowCalls == 2 ? 29.0 : 30.0;
            return ms;
        };
        o.slices = 1;
        auto slowMean = measure::timeEvaluateRounds(slow, o);
        const int meanCalls = slowCalls;
        slowCalls = 0;
        o.slices = 5;
        auto slowSliced = measure::timeEvaluateRounds(slow, o);
        QCOMPARE(slowCalls, meanCalls);
        QCOMPARE(slowSliced[0], 29e-3);
        QVERIFY(slowMean[0] > 29.5e-3);
        // Screening applies to the first slice: 10 ms at 1 ms per call, then stop above 0.5 ms.
        o.screenMs = 10;
        o.screenAboveS = 0.5e-3;
        calls = 50;  // in the fast part of the fake core
        auto screened = measure::timeEvaluateRounds(round, o);
        QCOMPARE(screened.size(), size_t(1));
        QCOMPARE(screened[0], 1e-3);
        QCOMPARE(calls, 60);
    }

    void testRunnerTimesTheFastestSliceInTheWorker() {
        // TimerOptions::slices crosses the worker protocol, and a real run of a kernel of ~0.2 ms in
        // 5 slices of 6 ms gives one cost per round, the fastest slice's, close to the same kernel's
        // mean over whole 30 ms rounds.
        measure::detail::RunRequest req;
        req.timer.slices = 5;
        QCOMPARE(measure::detail::decodeRequest(measure::detail::encode(req)).timer.slices, 5);
        req.flushArgs = {2, 0};
        QCOMPARE(measure::detail::decodeRequest(measure::detail::encode(req)).flushArgs, (std::vector<int32_t>{2, 0}));
        // A request of the previous layout (magic "TBWR", no slices) is named as a version mismatch.
        std::string old = measure::detail::encode(req);
        const uint32_t v1 = 0x54425752;
        std::memcpy(old.data(), &v1, sizeof(v1));
        try {
            (void)measure::detail::decodeRequest(old);
            QFAIL("a request of another protocol version was decoded");
        } catch (const std::exception& e) {
            QVERIFY2(std::string(e.what()).find("another protocol version") != std::string::npos, e.what());
        }
        measure::LocalBuilder builder(codegen::Target::host());
        measure::RunnerOptions ro = fastOptions();
        ro.minRepeatMs = 30;
        ro.repeat = 3;
        std::vector<measure::MeasureInput> b{input(dependentAdds(200000))};
        const auto built = builder.build(b);
        measure::LocalRunner whole(ro);
        ro.slices = 5;
        measure::LocalRunner sliced(ro);
        const auto w = whole.run(b, built), s = sliced.run(b, built);
        QVERIFY(w[0].ok() && s[0].ok());
        QCOMPARE(s[0].costs.size(), size_t(3));
        const double wMin = *std::min_element(w[0].costs.begin(), w[0].costs.end());
        const double sMin = *std::min_element(s[0].costs.begin(), s[0].costs.end());
        QVERIFY2(sMin < 1.5 * wMin && sMin > 0.5 * wMin, qPrintable(QString::number(sMin / wMin)));
    }

    void testRunnerTimesAFlushedKernelOneCallPerRepeat() {
        // As TVM's LocalRunner: a kernel timed with the cache flush gets number 1 and min_repeat_ms
        // 0, so each repeat is one call right after a flush, over at least flushRepeat repeats. A
        // kernel that streams two 128 KiB arguments past the first (read B, write C) then finds
        // them in memory on every timed call, and is timed slower than warm, where all three fit
        // in L2 (so another test streaming through the L3 beside it cannot make warm cold); before,
        // a flushed round went on for min_repeat_ms of warm calls and timed about as fast.
        using namespace lower;
        const int64_t n = int64_t(1) << 15;  // floats: 128 KiB per buffer
        auto A = makeBuffer("A", {n}), B = makeBuffer("B", {n}), C = makeBuffer("C", {n});
        Var i("i");
        auto f = std::make_shared<LoweredFunc>();
        f->name = "stream";
        f->args = {A, B, C};
        f->body = makeFor(i, n, ForKind::Serial, makeStore(C, {i}, bufferLoad(A, {i}) + bufferLoad(B, {i})));
        measure::LocalBuilder builder(codegen::Target::host());
        std::vector<measure::MeasureInput> b{input(f)};
        const auto built = builder.build(b);
        measure::RunnerOptions ro = fastOptions();
        ro.number = 3;
        ro.repeat = 1;
        ro.minRepeatMs = 20;
        measure::LocalRunner warm(ro);
        ro.enableCpuCacheFlush = true;
        measure::LocalRunner flushed(ro);
        ro.repeat = 12;
        measure::LocalRunner flushed12(ro);
        // Alternate, so that a busy moment hits both; warm's fastest against cold's median.
        std::vector<double> w, c;
        for (int k = 0; k < 5; ++k) {
            const auto rw = warm.run(b, built), rc = flushed.run(b, built);
            QVERIFY(rw[0].ok() && rc[0].ok());
            QCOMPARE(rw[0].costs.size(), size_t(1));
            QCOMPARE(rc[0].costs.size(), size_t(ro.flushRepeat));
            w.push_back(rw[0].meanCost());
            c.push_back(*std::min_element(rc[0].costs.begin(), rc[0].costs.end()));
        }
        std::sort(w.begin(), w.end());
        std::sort(c.begin(), c.end());
        qInfo("flushed (median of 5, each its fastest repeat) %.4f ms, warm (fastest of 5) %.4f ms", c[2] * 1e3, w[0] * 1e3);
        QVERIFY2(c[2] > 1.2 * w[0], qPrintable(QStringLiteral("flushed %1 ms, warm %2 ms").arg(c[2] * 1e3).arg(w[0] * 1e3)));
        const auto r12 = flushed12.run(b, built);
        QVERIFY(r12[0].ok());
        QCOMPARE(r12[0].costs.size(), size_t(12));  // a larger repeat is kept
    }

    void testRunnerFlushesOnlyTheNamedArguments() {
        // MeasureInput::flushArgs (the `auto` policy's weights only, tuning/measure_policy.h): the
        // flush evicts the named arguments and no other. The kernel streams A and B (128 KiB each)
        // into C; D, one float, is never read. Flushing D alone times it as warm as no flush at all,
        // flushing A (which TVM's rule, every argument but the first, never flushes) as cold as
        // TVM's flush of B and C. Alternated, medians of 5; an index out of range is refused.
        using namespace lower;
        const int64_t n = int64_t(1) << 15;
        auto A = makeBuffer("A", {n}), B = makeBuffer("B", {n}), C = makeBuffer("C", {n}), D = makeBuffer("D", {1});
        Var i("i");
        auto f = std::make_shared<LoweredFunc>();
        f->name = "stream_d";
        f->args = {A, B, C, D};
        f->body = makeFor(i, n, ForKind::Serial, makeStore(C, {i}, bufferLoad(A, {i}) + bufferLoad(B, {i})));
        measure::LocalBuilder builder(codegen::Target::host());
        std::vector<measure::MeasureInput> in{input(f)};
        const auto built = builder.build(in);
        QVERIFY(built[0].kernel);
        measure::RunnerOptions ro = fastOptions();
        ro.number = 3;
        ro.repeat = 1;
        ro.minRepeatMs = 20;
        measure::LocalRunner runner(ro);
        auto timeWith = [&](std::optional<bool> flush, std::vector<int> args) {
            const measure::MeasureResult r = runner.runOne(*built[0].kernel, nullptr, flush, 0, 0, args);
            if (!r.ok()) qWarning("%s", r.errorMsg.c_str());
            return r.ok() ? *std::min_element(r.costs.begin(), r.costs.end()) : 1e9;
        };
        std::vector<double> warm, onlyD, onlyA, tvm;
        for (int k = 0; k < 5; ++k) {
            warm.push_back(timeWith(false, {}));
            onlyD.push_back(timeWith(true, {3}));
            onlyA.push_back(timeWith(true, {0}));
            tvm.push_back(timeWith(true, {}));
        }
        for (auto* v : {&warm, &onlyD, &onlyA, &tvm}) std::sort(v->begin(), v->end());
        qInfo("medians (us): warm %.2f, D flushed %.2f, A flushed %.2f, all but A flushed %.2f", warm[2] * 1e6, onlyD[2] * 1e6,
              onlyA[2] * 1e6, tvm[2] * 1e6);
        QVERIFY2(onlyA[2] > 1.2 * warm[2], qPrintable(QStringLiteral("A flushed %1, warm %2").arg(onlyA[2]).arg(warm[2])));
        QVERIFY2(tvm[2] > 1.2 * warm[2], qPrintable(QStringLiteral("TVM's flush %1, warm %2").arg(tvm[2]).arg(warm[2])));
        QVERIFY2(onlyD[2] * 1.2 < onlyA[2] && onlyD[2] * 1.2 < tvm[2],
                 qPrintable(QStringLiteral("D flushed %1, A flushed %2, TVM's %3").arg(onlyD[2]).arg(onlyA[2]).arg(tvm[2])));
        try {
            (void)runner.runOne(*built[0].kernel, nullptr, true, 0, 0, {4});
            QFAIL("a flush argument out of range was accepted");
        } catch (const std::exception& e) {
            QVERIFY2(std::string(e.what()).find("flush argument 4 of a kernel with 4 arguments") != std::string::npos, e.what());
        }
    }

    void testRunnerScreensAgainstTheBatchBest() {
        // Candidates of one workload key: a fast kernel, then one ~100x slower. With a screen
        // factor the slow one is cut after its screen (one cost) because the fast one, measured
        // earlier in the same batch, is the reference; the first candidate of a batch with no
        // bestCostS has no reference and is timed whole. Without a factor everything is whole.
        measure::LocalBuilder builder(codegen::Target::host());
        measure::RunnerOptions ro = fastOptions();
        ro.minRepeatMs = 30;
        ro.screenMs = 3;
        measure::LocalRunner runner(ro);
        auto batchOf = [](double factor, double bestCostS, std::vector<std::shared_ptr<lower::LoweredFunc>> fs) {
            std::vector<measure::MeasureInput> b;
            for (auto& f : fs) {
                b.push_back(input(f));
                b.back().workloadKey = "w";
                b.back().screenFactor = factor;
                b.back().bestCostS = bestCostS;
            }
            return b;
        };
        const auto fast = dependentAdds(2000), slow = dependentAdds(200000);
        auto run = [&](const std::vector<measure::MeasureInput>& b) { return runner.run(b, builder.build(b)); };
        auto r = run(batchOf(1.5, 0, {slow, fast, slow}));
        QVERIFY(r[0].ok() && r[1].ok() && r[2].ok());
        QCOMPARE(r[0].costs.size(), size_t(3));  // no reference yet: whole
        QCOMPARE(r[1].costs.size(), size_t(3));  // faster than the reference: whole
        QCOMPARE(r[2].costs.size(), size_t(1));  // > 1.5x the fast one: screened out
        QVERIFY(r[2].costs[0] > 20 * r[1].meanCost());
        // A reference from earlier batches (bestCostS) applies to the first candidate too.
        r = run(batchOf(1.5, r[1].meanCost(), {slow}));
        QCOMPARE(r[0].costs.size(), size_t(1));
        r = run(batchOf(0, r[0].costs[0] / 100, {slow, fast, slow}));
        for (auto& x : r) QCOMPARE(x.costs.size(), size_t(3));
    }

    void testTimerRejectsPreemptedSlices() {
        // A kernel that takes 0.2 ms, except while "another process holds the core": then 3 ms. The
        // fake switch counter moves during every 8th slice, and the kernel is slow in exactly
        // those, so the round must count only 0.2 ms calls: about 30 clean calls (6 ms) per 15 ms
        // preempted slice. Counting every slice would give ~0.59 ms per call. The bound 0.4 ms leaves
        // room for a real 10 ms preemption of this test among the ~120 clean calls of a round, and
        // the counter adds this process's real involuntary switches (what the timer counts without
        // a fake), so that a slice in which ctest's other jobs really preempted the busy loop is left
        // out as well: the fake ones are then never the only switches, which is the timer's case.
        using clock = std::chrono::steady_clock;
        auto busy = [](double ms) {
            const auto end = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double, std::milli>(ms));
            while (clock::now() < end) {
            }
        };
        long switches = 0;
        int calls = 0;
        bool preempted = false;
        int probes = 0;
        auto counter = [&]() -> long {
            // Probes come in pairs around a slice: the first of each pair decides whether the slice
            // is preempted (every 8th is), the second reports the switch.
            if (probes++ % 2 == 0) preempted = (probes / 2) % 8 == 7;
            else if (preempted) ++switches;
            rusage u{};
            getrusage(RUSAGE_SELF, &u);
            return switches + u.ru_nivcsw;
        };
        measure::TimerOptions o;
        o.number = 1;
        o.repeat = 2;
        o.minRepeatMs = 20;
        auto costs = measure::timeEvaluateUnpreempted([&] { ++calls, busy(preempted ? 3.0 : 0.2); }, o, counter);
        QCOMPARE(costs.size(), size_t(2));
        for (double c : costs) QVERIFY2(c >= 0.2e-3 && c < 0.4e-3, std::to_string(c).c_str());
        QVERIFY(switches > 0);  // preempted slices did happen, and were left out

        // Every slice preempted: the round stops at kPreemptedCap x min_repeat_ms and reports the
        // median slice (1 ms per call here).
        calls = 0;
        const auto t0 = clock::now();
        auto dirty = measure::timeEvaluateUnpreempted([&] { ++calls, busy(1.0); }, o, [n = 0L]() mutable { return n++; });
        const double wallMs = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
        QCOMPARE(dirty.size(), size_t(2));
        for (double c : dirty) QVERIFY2(c >= 1e-3 && c < 2e-3, std::to_string(c).c_str());
        QVERIFY2(wallMs >= 2 * measure::kPreemptedCap * o.minRepeatMs, std::to_string(wallMs).c_str());

        // The real counter (getrusage), through timeEvaluate: an undisturbed round equals the kernel's time.
        o.rejectPreempted = true;
        o.repeat = 1;
        auto real = measure::timeEvaluate([&] { busy(0.2); }, o);
        QCOMPARE(real.size(), size_t(1));
        QVERIFY2(real[0] >= 0.2e-3, std::to_string(real[0]).c_str());
    }

    void testFlushCacheInstruction() {
        // flushCache picks clflushopt exactly where the CPU reports it (the kernel's flag list in
        // /proc/cpuinfo), and evicting lines leaves their contents as they were (odd sizes included).
#if defined(__x86_64__)
        QFile info(QStringLiteral("/proc/cpuinfo"));
        QVERIFY(info.open(QIODevice::ReadOnly));
        bool listed = false;
        for (const QByteArray& line : info.readAll().split('\n'))
            if (line.startsWith("flags")) {
                listed = line.split(' ').contains("clflushopt");
                break;
            }
        QCOMPARE(measure::flushCacheUsesClflushopt(), listed);
#else
        QVERIFY(!measure::flushCacheUsesClflushopt());
#endif
        std::vector<float> v(100003);
        measure::fillRandom(v.data(), v.size(), 11);
        const std::vector<float> before = v;
        measure::flushCache(v.data(), v.size() * sizeof(float));
        measure::flushCache(v.data() + 1, 5);
        QVERIFY(v == before);
    }

    void testGuardedBufferCanary() {
        measure::GuardedBuffer b(10);
        QVERIFY(b.intact());
        QCOMPARE(reinterpret_cast<uintptr_t>(b.data()) % 64, uintptr_t(0));
        b.data()[9] = 5.f;
        QVERIFY(b.intact());
        b.data()[10] = 1.f;  // one past the end: inside the canary slack
        QVERIFY(!b.intact());
        measure::GuardedBuffer c(16);
        c.data()[-1] = 1.f;  // one before the start
        QVERIFY(!c.intact());
    }

    void testBuilderErrors() {
        codegen::clearKernelCache();
        measure::LocalBuilder builder(codegen::Target::host(), {15, 2, {false, false}});
        auto bad = vectorAdd();
        {
            // A body calling an intrinsic codegen does not know.
            using namespace lower;
            Var i("i");
            bad->body = makeFor(i, kN, ForKind::Serial,
                                makeStore(bad->args[2], {i}, te::call(te::DType::Float32, "tir.no_such_op", {bufferLoad(bad->args[0], {i})})));
        }
        std::vector<measure::MeasureInput> batch = {input(vectorAdd()), input(bad), measure::MeasureInput{}, input(vectorAdd(kN, true))};
        auto res = builder.build(batch);
        QCOMPARE(res.size(), size_t(4));
        QCOMPARE(res[0].errorNo, MeasureErrorNo::NoError);
        QVERIFY(res[0].kernel && !res[0].kernel->object.empty());
        QCOMPARE(res[1].errorNo, MeasureErrorNo::CompileHost);
        QVERIFY2(QString::fromStdString(res[1].errorMsg).contains(QStringLiteral("tir.no_such_op")), res[1].errorMsg.c_str());
        QCOMPARE(res[2].errorNo, MeasureErrorNo::InstantiationError);
        QCOMPARE(res[3].errorNo, MeasureErrorNo::NoError);

        // A limit far below any LLVM compile: every fresh candidate times out.
        codegen::clearKernelCache();
        measure::LocalBuilder hasty(codegen::Target::host(), {1e-4, 2, {false, false}});
        auto slow = hasty.build({input(endlessLoop())});
        QCOMPARE(slow[0].errorNo, MeasureErrorNo::BuildTimeout);
    }

    void testBuilderQueueKeepsOrder() {
        // More candidates than compile threads: results and Build events stay per candidate, in
        // batch order, whatever order the compiles end in.
        codegen::clearKernelCache();
        measure::LocalBuilder builder(codegen::Target::host(), {15, 2, {false, false}});
        std::vector<measure::MeasureEvent> events;
        builder.setEventSink([&](const measure::MeasureEvent& e) { events.push_back(e); });
        std::vector<measure::MeasureInput> batch;
        for (int i = 0; i < 7; ++i) batch.push_back(i % 3 == 1 ? measure::MeasureInput{} : input(vectorAdd(kN - i)));
        const auto res = builder.build(batch);
        QCOMPARE(res.size(), batch.size());
        QCOMPARE(events.size(), batch.size());
        for (size_t i = 0; i < res.size(); ++i) {
            QCOMPARE(res[i].errorNo, i % 3 == 1 ? MeasureErrorNo::InstantiationError : MeasureErrorNo::NoError);
            if (res[i].kernel) QVERIFY(QString::fromStdString(res[i].kernel->loweredIr).contains(QString::number(kN - int(i))));
            QCOMPARE(events[i].candidate, int(i));
            QCOMPARE(events[i].batch, 1LL);
            QCOMPARE(events[i].errorNo, res[i].errorNo);
        }
    }

    void testSandboxFailuresAreData() {
        measure::LocalBuilder builder(codegen::Target::host());
        measure::LocalRunner runner(fastOptions());
        auto wrong = std::make_shared<measure::CheckSpec>(*addCheck());
        std::vector<measure::MeasureInput> batch = {
            input(vectorAdd(), addCheck()),          // 0 good, checked
            input(wildStore()),                      // 1 SIGSEGV
            input(vectorAdd()),                      // 2 good again
            input(endlessLoop()),                    // 3 hangs
            input(vectorAdd(kN + 1)),                // 4 writes one element past C
            input(vectorAdd(kN, true), addCheck()),  // 5 computes A - B: wrong answer
            input(vectorAdd(), addCheck()),          // 6 good, checked
        };
        auto builds = builder.build(batch);
        for (auto& b : builds) QCOMPARE(b.errorNo, MeasureErrorNo::NoError);
        auto res = runner.run(batch, builds);
        QCOMPARE(res.size(), batch.size());
        const MeasureErrorNo want[] = {MeasureErrorNo::NoError,      MeasureErrorNo::RuntimeDevice, MeasureErrorNo::NoError,
                                       MeasureErrorNo::RunTimeout,   MeasureErrorNo::RuntimeDevice, MeasureErrorNo::WrongAnswer,
                                       MeasureErrorNo::NoError};
        for (size_t i = 0; i < res.size(); ++i) {
            QVERIFY2(res[i].errorNo == want[i], qPrintable(QStringLiteral("candidate %1: %2 (%3)")
                                                               .arg(i)
                                                               .arg(QLatin1String(measure::errorName(res[i].errorNo)))
                                                               .arg(QString::fromStdString(res[i].errorMsg))));
            QVERIFY(res[i].timestamp > 1.6e9);
            QVERIFY(res[i].allCost > 0);
            if (res[i].ok()) {
                QCOMPARE(res[i].costs.size(), size_t(3));
                for (double c : res[i].costs) QVERIFY(c > 0 && c < measure::kMaxFloat);
            } else {
                QCOMPARE(res[i].costs, std::vector<double>{measure::kMaxFloat});
                QCOMPARE(res[i].meanCost(), measure::kMaxFloat);
            }
        }
        QVERIFY(QString::fromStdString(res[1].errorMsg).contains(QStringLiteral("signal 11")));
        // C spans exactly one page, so the write past its end hits the guard page (a canary catches
        // writes that stay inside the slack of other sizes: testGuardedBufferCanary).
        const QString oob = QString::fromStdString(res[4].errorMsg);
        QVERIFY2(oob.contains(QStringLiteral("out-of-bounds")) || oob.contains(QStringLiteral("signal 11")), qPrintable(oob));
        QVERIFY(QString::fromStdString(res[5].errorMsg).contains(QStringLiteral("argument 2 element 0")));
        // First worker, then one fresh worker after each of: crash, timeout, OOB write, wrong answer.
        QCOMPARE(runner.workersStarted(), 5);
        QVERIFY(runner.workerPid() > 0);
    }

    void testWorkerKilledFromOutside() {
        // A worker that disappears between candidates (OOM killer, a user) is replaced transparently
        // after one RUNTIME_DEVICE record.
        measure::LocalBuilder builder(codegen::Target::host());
        measure::LocalRunner runner(fastOptions());
        auto builds = builder.build({input(vectorAdd())});
        QVERIFY(runner.run({input(vectorAdd())}, builds)[0].ok());
        ::kill(runner.workerPid(), SIGKILL);
        auto r1 = runner.runOne(*builds[0].kernel);
        QCOMPARE(r1.errorNo, MeasureErrorNo::RuntimeDevice);
        auto r2 = runner.runOne(*builds[0].kernel, addCheck().get());
        QVERIFY2(r2.ok(), r2.errorMsg.c_str());
    }

    void testBuildErrorsPassThroughAndForeignObjects() {
        measure::LocalRunner runner(fastOptions());
        measure::BuildResult failed;
        failed.errorNo = MeasureErrorNo::BuildTimeout;
        failed.errorMsg = "too slow";
        failed.timeCost = 2;
        auto r = runner.run({measure::MeasureInput{}}, {failed});
        QCOMPARE(r[0].errorNo, MeasureErrorNo::BuildTimeout);
        QCOMPARE(r[0].errorMsg, std::string("too slow"));
        QVERIFY(r[0].allCost >= 2);
        QCOMPARE(runner.workersStarted(), 0);  // nothing to run, no worker

        auto arm = codegen::compile(*vectorAdd(), codegen::Target::parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon"),
                                    {false, false});
        QCOMPARE(runner.runOne(arm).errorNo, MeasureErrorNo::CompileDevice);
        // Corrupted object bytes that claim to run here: the worker reports COMPILE_DEVICE.
        auto host = codegen::compile(*vectorAdd(), codegen::Target::host(), {false, false});
        auto broken = host;
        broken.object.resize(40);
        auto rb = runner.runOne(broken);
        QCOMPARE(rb.errorNo, MeasureErrorNo::CompileDevice);
        QVERIFY(runner.runOne(host, addCheck().get()).ok());
    }

    void testHardwareParams() {
        auto p = measure::defaultHardwareParams(codegen::Target::parse("llvm -mcpu=skylake-avx512 -mtriple=x86_64-linux-gnu -num-cores=4"));
        QCOMPARE(p, (HardwareParams{4, 64, 64, 0, 0, 0, 0, 0}));
        QCOMPARE(measure::defaultHardwareParams(codegen::Target::parse("llvm -mtriple=aarch64-linux-gnu")).vectorUnitBytes, 16);
        QVERIFY(measure::defaultHardwareParams(codegen::Target::host()).numCores >= 1);
        // TVM's GPU defaults (search_task.cc): an NVIDIA device's limits, and the fixed Mali ones.
        QCOMPARE(HardwareParams::gpu(49152, 1024, 32), (HardwareParams{-1, 16, 64, 49152, INT_MAX, 1024, 8, 32}));
        QCOMPARE(HardwareParams::mali(), (HardwareParams{-1, 16, 64, 32768, INT_MAX, 256, 1, 1}));
    }

    void testMissingWorker() {
        measure::RunnerOptions o;
        o.workerPath = "/nonexistent/tunebench-worker";
        QVERIFY_THROWS_EXCEPTION(UserError, measure::LocalRunner{o});
    }
};

QTEST_APPLESS_MAIN(TestMeasure)
#include "tst_measure.moc"
