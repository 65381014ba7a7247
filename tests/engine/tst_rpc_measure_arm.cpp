// SPDX-License-Identifier: Apache-2.0
// The emulated ARM board end to end: a tracker on 127.0.0.1, two AArch64 device servers
// (tools/arm, cross-compiled) running under qemu-aarch64-static and registered as one key, and
// RPCRunner measuring kernels compiled for `llvm -mtriple=aarch64-linux-gnu -mattr=+neon`, linked
// into shared libraries with ld.lld and dlopen()ed on the board. Each kernel's output is compared
// on the board with the te interpreter's (the check blob): a matmul lowered with lowerComputeDag,
// a parallel + NEON-vectorized matmul (tb_rt_parallel_for provided by the server: a 2-thread pool
// on one board, serial on the other), softmax (expf
// from the board's libm, tb_rt_alloc); a wrong expectation must come back WRONG_ANSWER and a
// crashing kernel RUNTIME_DEVICE without taking the board down. Nothing is skipped: without qemu
// or the cross-compiled server the test fails and says what is missing.
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QtTest>

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "engine/codegen/codegen_llvm.h"
#include "engine/codegen/target.h"
#include "engine/lower/lower_dag.h"
#include "engine/lower/loop_ir.h"
#include "engine/lower/simplify.h"
#include "engine/measure/builder.h"
#include "engine/measure/rpc_runner.h"
#include "engine/rpc/socket.h"
#include "engine/rpc/tracker.h"
#include "engine/rpc/tracker_client.h"
#include "engine/te/compute_dag.h"
#include "engine/te/interpreter.h"
#include "engine/topi/nn/softmax.h"
#include "tests/engine/test_util.h"

using namespace tb;
using measure::MeasureErrorNo;
using te::Expr;
using te::Var;
using test::randomData;

namespace {

const char* const kArmTarget = "llvm -mtriple=aarch64-linux-gnu -mattr=+neon";
const char* const kQemu = "qemu-aarch64-static";

te::ComputeDAG matmulDag(int64_t M, int64_t N, int64_t K) {
    auto A = te::placeholder({M, K}, "A");
    auto B = te::placeholder({K, N}, "B");
    auto k = te::reduceAxis(K, "k");
    auto C = te::compute(
        {M, N}, {"i", "j"}, [&](const std::vector<Var>& v) { return te::sum(A(v[0], k.var) * B(k.var, v[1]), {k}); },
        "C");
    return te::ComputeDAG({A, B, C});
}

// C = A x B with the rows in parallel (tb_rt_parallel_for) and 4-wide NEON vectors along j,
// accumulating in a local buffer: the shape of code the sketch rules produce for a CPU.
lower::LoweredFunc parallelVectorMatmul(int64_t M, int64_t N, int64_t K) {
    using namespace lower;
    const int64_t vec = 4;
    auto A = makeBuffer("A", {M, K}), B = makeBuffer("B", {K, N}), C = makeBuffer("C", {M, N});
    auto L = makeBuffer("C.local", {vec}, BufferScope::Local);
    Var i("i"), jo("j.outer"), ji("j.inner"), k("k");
    Expr j = jo * te::intImm(vec) + ji;
    Stmt init = makeFor(ji, vec, ForKind::Vectorized, makeStore(L, {ji}, te::floatImm(0.0)));
    Stmt upd =
        makeFor(k, K, ForKind::Serial,
                makeFor(ji, vec, ForKind::Vectorized,
                        makeStore(L, {ji}, bufferLoad(L, {ji}) + bufferLoad(A, {i, k}) * bufferLoad(B, {k, j}))));
    Stmt wb = makeFor(ji, vec, ForKind::Vectorized, makeStore(C, {i, j}, bufferLoad(L, {ji})));
    LoweredFunc f;
    f.name = "mm_par_vec";
    f.args = {A, B, C};
    f.body = makeFor(i, M, ForKind::Parallel,
                     makeFor(jo, N / vec, ForKind::Serial, makeAllocate(L, makeSeq({init, upd, wb}))));
    return simplify(f);
}

// A store 4 TiB away from the output: SIGSEGV on the board.
lower::LoweredFunc wildStore() {
    using namespace lower;
    auto A = makeBuffer("A", {64}), C = makeBuffer("C", {64});
    Var i("i");
    LoweredFunc f;
    f.name = "wild";
    f.args = {A, C};
    f.body = makeFor(i, 64, ForKind::Serial, makeStore(C, {i - te::intImm(int64_t(1) << 40)}, bufferLoad(A, {i})));
    return f;
}

// A CheckSpec with random inputs for the DAG's placeholders and the interpreter's outputs.
std::shared_ptr<measure::CheckSpec> interpreterCheck(const te::ComputeDAG& dag, unsigned seed) {
    auto c = std::make_shared<measure::CheckSpec>();
    std::vector<te::Buffer> ins;
    for (const auto& t : dag.inputs()) {
        te::Buffer b = te::Buffer::zeros(t.shape());
        b.data = randomData(b.numElements(), seed++);
        ins.push_back(b);
        c->inputs.push_back(b.data);
        c->expected.push_back({});
    }
    for (const auto& out : te::evaluate(dag, ins)) {
        c->inputs.push_back({});
        c->expected.push_back(out.data);
    }
    return c;
}

std::string describe(const measure::MeasureResult& r) {
    return std::string(measure::errorName(r.errorNo)) + ": " + r.errorMsg;
}

}  // namespace

class TestRpcMeasureArm : public QObject {
    Q_OBJECT

    std::unique_ptr<rpc::Tracker> m_tracker;
    std::vector<std::unique_ptr<QProcess>> m_boards;
    std::string m_key;

    measure::RpcRunnerOptions runnerOptions() const {
        measure::RpcRunnerOptions o;
        o.trackerHost = "127.0.0.1";
        o.trackerPort = m_tracker->port();
        o.key = m_key;
        o.target = codegen::Target::parse(kArmTarget);
        o.timeoutS = 60;  // emulated: generous
        o.number = 1;
        o.repeat = 2;
        o.minRepeatMs = 20;
        o.requestTimeoutS = 60;
        o.ioTimeoutS = 30;
        return o;
    }

    int freeServers() const {
        try {
            rpc::ConnectOptions co;
            co.retryTimeoutMs = 0;
            auto t = rpc::TrackerSession::connect("127.0.0.1", m_tracker->port(), co);
            const auto s = t.summary();
            int listed = 0;
            for (const auto& srv : s.servers) listed += srv.key == "server:" + m_key;
            const auto* q = s.queue(m_key);
            return q ? int(std::min<long long>(listed, q->free)) : 0;
        } catch (const rpc::RpcError&) {
            return -1;
        }
    }

    bool waitForBoards(int n) {
        for (int i = 0; i < 600; ++i) {  // bounded: 60 s
            if (freeServers() == n) return true;
            for (auto& b : m_boards)
                if (b->state() == QProcess::NotRunning) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return false;
    }

    QByteArray boardLogs() const {
        QByteArray all;
        for (auto& b : m_boards) all += b->readAll();
        return all;
    }

private Q_SLOTS:
    void initTestCase() {
        const QString qemu = QStandardPaths::findExecutable(QLatin1String(kQemu));
        QVERIFY2(!qemu.isEmpty(),
                 "qemu-aarch64-static is missing: the emulated ARM board cannot run "
                 "(apt-get install qemu-user-static; TOOLCHAIN.md pitfall 9)");
        QVERIFY2(QFileInfo::exists(QStringLiteral("/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1")),
                 "/usr/aarch64-linux-gnu is missing: install libc6-dev-arm64-cross (the board's libraries)");
        const QString server = QStringLiteral(TB_DEVICE_SERVER_PATH);
#ifdef TB_DEVICE_SERVER_MISSING
        QFAIL("the AArch64 device server was not built: " TB_DEVICE_SERVER_MISSING);
#endif
        QVERIFY2(QFileInfo(server).isExecutable(),
                 qPrintable(QStringLiteral(
                                "the AArch64 device server %1 is not built (target tunebench-device-server-aarch64)")
                                .arg(server)));

        rpc::TrackerOptions to;
        to.host = "127.0.0.1";
        to.port = 0;
        m_tracker = std::make_unique<rpc::Tracker>(to);
        m_tracker->start();
        m_key = "rasp4b-64-test" + std::to_string(getpid());
        for (int i = 0; i < 2; ++i) {
            auto p = std::make_unique<QProcess>();
            p->setProcessChannelMode(QProcess::MergedChannels);
            p->start(qemu, {QStringLiteral("-L"), QStringLiteral("/usr/aarch64-linux-gnu"), server,
                            QStringLiteral("--tracker"), QStringLiteral("127.0.0.1:%1").arg(m_tracker->port()),
                            QStringLiteral("--key"), QString::fromStdString(m_key), QStringLiteral("--host"),
                            QStringLiteral("127.0.0.1"), QStringLiteral("--port"), QStringLiteral("0"),
                            QStringLiteral("--threads"), i == 0 ? QStringLiteral("2") : QStringLiteral("1")});
            QVERIFY2(p->waitForStarted(10000), qPrintable(p->errorString()));
            m_boards.push_back(std::move(p));
        }
        QVERIFY2(waitForBoards(2), qPrintable(QStringLiteral("the two emulated boards did not register:\n") +
                                              QString::fromUtf8(boardLogs())));
    }

    void cleanupTestCase() {
        for (auto& b : m_boards) {
            b->terminate();
            if (!b->waitForFinished(10000)) {
                b->kill();
                b->waitForFinished(5000);
            }
        }
        m_boards.clear();
        if (m_tracker) m_tracker->stop();
    }

    void testKernelsOnTheBoardMatchTheInterpreter() {
        const int64_t M = 24, N = 32, K = 20;
        const te::ComputeDAG mm = matmulDag(M, N, K);
        auto x = te::placeholder({3, 50}, "x");
        const te::ComputeDAG sm({x, topi::nn::softmax(x)});
        const auto mmCheck = interpreterCheck(mm, 1);
        auto mmWrong = std::make_shared<measure::CheckSpec>(*mmCheck);
        mmWrong->expected[2][17] += 0.5f;

        auto fn = [](lower::LoweredFunc f) { return std::make_shared<lower::LoweredFunc>(std::move(f)); };
        // Candidates 0 and 1 start on different boards (the latch below), so the parallel kernel runs
        // once with the 2-thread pool and once serially.
        std::vector<measure::MeasureInput> inputs(7);
        inputs[0].func = fn(parallelVectorMatmul(M, N, K));
        inputs[0].check = mmCheck;
        inputs[1] = inputs[0];
        inputs[2].func = fn(lower::lowerComputeDag(mm, "mm_default"));
        inputs[2].check = mmCheck;
        inputs[3].func = fn(lower::lowerComputeDag(sm, "softmax"));
        inputs[3].check = interpreterCheck(sm, 7);
        inputs[4].func = inputs[2].func;
        inputs[4].check = mmWrong;
        inputs[5].func = fn(wildStore());
        inputs[6] = inputs[2];

        measure::LocalBuilder builder(codegen::Target::parse(kArmTarget));
        const auto builds = builder.build(inputs);
        for (const auto& b : builds) {
            QVERIFY2(b.errorNo == MeasureErrorNo::NoError, b.errorMsg.c_str());
            QVERIFY(!b.kernel->runsOnHost);
        }
        // Both boards must be measuring at the same time at some point (n_parallel = 2 devices).
        std::mutex mu;
        std::condition_variable cv;
        std::set<std::string> running;
        std::map<int, std::string> where;
        auto o = runnerOptions();
        o.onEvent = [&](const measure::RpcRunnerEvent& e) {
            if (e.kind != measure::RpcRunnerEvent::Kind::Running) return;
            std::unique_lock<std::mutex> lock(mu);
            where[e.candidate] = e.server;
            running.insert(e.server);
            cv.notify_all();
            cv.wait_for(lock, std::chrono::seconds(60), [&] { return running.size() >= 2; });
        };
        auto runner = measure::makeRpcRunner(o);
        const auto t0 = std::chrono::steady_clock::now();
        const auto res = runner->run(inputs, builds);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QCOMPARE(res.size(), inputs.size());
        const MeasureErrorNo expected[] = {MeasureErrorNo::NoError,     MeasureErrorNo::NoError,
                                           MeasureErrorNo::NoError,     MeasureErrorNo::NoError,
                                           MeasureErrorNo::WrongAnswer, MeasureErrorNo::RuntimeDevice,
                                           MeasureErrorNo::NoError};
        for (size_t i = 0; i < res.size(); ++i) {
            const QByteArray what = QByteArray::number(qulonglong(i)) + " on " + where[int(i)].c_str() + ": " +
                                    describe(res[i]).c_str() + "\nboard logs:\n" + boardLogs();
            QVERIFY2(res[i].errorNo == expected[i], what.constData());
            if (res[i].ok()) {
                QCOMPARE(res[i].costs.size(), size_t(2));
                for (double c : res[i].costs) QVERIFY2(c > 0 && c < 1, what.constData());
            }
        }
        QVERIFY2(QString::fromStdString(res[4].errorMsg).contains(QStringLiteral("element 17")),
                 res[4].errorMsg.c_str());
        QVERIFY2(QString::fromStdString(res[5].errorMsg).contains(QStringLiteral("signal")), res[5].errorMsg.c_str());
        QCOMPARE(int(running.size()), 2);
        QVERIFY2(where[0] != where[1], "the parallel kernel did not run on both boards");
        qInfo(
            "emulated board, %s: matmul %lldx%lldx%lld default %.1f us, parallel+neon %.1f us (%s) / %.1f us (%s), "
            "softmax 3x50 %.1f us; batch of %zu candidates in %.2f s wall",
            kArmTarget, (long long)M, (long long)N, (long long)K, res[2].meanCost() * 1e6, res[0].meanCost() * 1e6,
            where[0].c_str(), res[1].meanCost() * 1e6, where[1].c_str(), res[3].meanCost() * 1e6, res.size(), wall);
        // The boards are still there after the crash, free for the next round.
        QVERIFY2(waitForBoards(2), "a board did not come back after the batch");
    }

    void testThroughput() {
        // Many small candidates over both boards: every one succeeds; requests/s is reported.
        const te::ComputeDAG mm = matmulDag(16, 16, 16);
        const auto check = interpreterCheck(mm, 3);
        std::vector<measure::MeasureInput> inputs(16);
        auto f = std::make_shared<lower::LoweredFunc>(lower::lowerComputeDag(mm, "mm16"));
        for (auto& in : inputs) {
            in.func = f;
            in.check = check;
        }
        measure::LocalBuilder builder(codegen::Target::parse(kArmTarget));
        const auto builds = builder.build(inputs);
        auto o = runnerOptions();
        o.number = 1;
        o.repeat = 1;
        o.minRepeatMs = 0;
        measure::RpcRunner runner(o);
        const auto t0 = std::chrono::steady_clock::now();
        const auto res = runner.run(inputs, builds);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        for (const auto& r : res) QVERIFY2(r.ok(), describe(r).c_str());
        const auto st = runner.stats();
        QCOMPARE(st.candidates, 16LL);
        QCOMPARE(st.sessionsLost, 0LL);
        qInfo(
            "emulated boards: %zu candidates (link + upload + fork + dlopen + check + time) in %.2f s = %.1f "
            "requests/s "
            "over %lld sessions; ld.lld total %.2f s",
            res.size(), wall, double(res.size()) / wall, st.sessions, st.linkSeconds);
    }
};

QTEST_APPLESS_MAIN(TestRpcMeasureArm)
#include "tst_rpc_measure_arm.moc"
