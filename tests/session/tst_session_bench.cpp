// SPDX-License-Identifier: Apache-2.0
// The window's "Compile && benchmark" through the session bridge (issue 21: "the same from the
// window" as `tunebench-cli compile --runner rpc --tracker H:P --key K --bench`): the zoo's mlp is
// compiled with the job's log and benchmarked here (local runner), and on a device of a key of an
// in-process tracker (rpc runner) whose server runs the network call with the device server's own
// function (runtime::runNetworkRequest, as tests/engine/tst_device_bench); a key no device has is a
// clear log line and a failed status, and the session stays usable. GPU targets (issue 18): mlp for
// `opencl` on this machine's OpenCL device (PoCL), and for `opencl -device=mali` on a GPU device
// server of the tracker (measure::GpuExecutor, what `tunebench-cli rpc-server --device opencl` and
// the emulated Mali boards serve), which gets the network's GPU module and checks it there.
#include <QDeadlineTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

#include <chrono>
#include <memory>
#include <thread>

#include "app/session/tuningsession.h"
#include "engine/measure/gpu_executor.h"
#include "engine/rpc/rpc_server.h"
#include "engine/rpc/tracker.h"
#include "engine/rpc/tracker_client.h"
#include "engine/support/thread_pool.h"
#include "tests/engine/test_network_executor.h"
#include "tests/engine/test_rpc_util.h"

using namespace tb;
using session::TuningSession;

namespace {

constexpr int kTimeoutMs = 300000;  // generous: the machine is shared with other builds

session::TuningJob mlpJob(const QString& logPath) {
    session::TuningJob j;
    j.network = QStringLiteral("mlp");
    j.layout = QStringLiteral("NHWC");
    j.logPath = logPath;
    j.trackerRetryTimeoutS = 5;
    return j;
}

struct Outcome {
    bool finished = false;
    QString status;
    bool ok = false;
    QString log;
    QList<session::RooflineSnapshot> rooflines;  ///< rooflineAvailable, before benchmarkFinished
};

// Runs compileAndBenchmark(job) and collects what the window would show.
Outcome benchmark(TuningSession& s, const session::TuningJob& job) {
    QSignalSpy lines(&s, &TuningSession::logMessage);
    QSignalSpy started(&s, &TuningSession::benchmarkStarted);
    QSignalSpy finished(&s, &TuningSession::benchmarkFinished);
    QSignalSpy roofline(&s, &TuningSession::rooflineAvailable);
    s.compileAndBenchmark(job);
    Outcome o;
    if (started.size() != 1 || !s.benchmarking()) return o;
    QDeadlineTimer deadline(kTimeoutMs);
    while (finished.isEmpty() && !deadline.hasExpired()) finished.wait(1000);
    if (finished.isEmpty()) return o;
    QCoreApplication::processEvents();  // nothing is queued after benchmarkFinished, but be sure
    o.finished = true;
    o.status = finished[0][0].toString();
    o.ok = finished[0][1].toBool();
    for (const auto& a : lines) o.log += a[0].toString() + QLatin1Char('\n');
    for (const auto& a : roofline) o.rooflines.append(a[0].value<session::RooflineSnapshot>());
    return o;
}

// The log's check against the host interpreter and the status line of a network run and timed on
// this machine (local runner).
void verifyLocalRun(const Outcome& o) {
    QVERIFY2(o.log.contains(QRegularExpression(QStringLiteral(
                 "check output 0 \\([0-9x]+\\) against the host interpreter: .*\\(ok, tolerance 0.0001\\)"))),
             qPrintable(o.log));
    QVERIFY2(o.status.contains(QRegularExpression(QStringLiteral(
                 "^Benchmark on this machine: median [0-9]+\\.[0-9]{3} ms, max error [0-9.e+-]+ \\(ok\\)$"))),
             qPrintable(o.status));
}

// `job` with the rpc runner on the in-process tracker at 127.0.0.1:`port` (the key set by the caller).
void toRpc(session::TuningJob& job, int port) {
    job.runner = QStringLiteral("rpc");
    job.trackerHost = QStringLiteral("127.0.0.1");
    job.trackerPort = port;
}

// The log's "Execution time on <server> (<key>):" + TVM's summary, and the status line, of a
// network that ran on a device of `key` and passed its check there.
void verifyDeviceTiming(const Outcome& o, const QString& key) {
    QVERIFY2(o.log.contains(QRegularExpression(
                 QStringLiteral("Execution time on 127\\.0\\.0\\.1:[0-9]+ \\(server:%1\\):\nExecution time summary:\n mean \\(ms\\)")
                     .arg(key))),
             qPrintable(o.log));
    QVERIFY2(o.status.contains(QRegularExpression(
                 QStringLiteral("^Benchmark on server:%1 \\(127\\.0\\.0\\.1:[0-9]+\\): median [0-9]+\\.[0-9]{3} ms, max error [0-9.e+-]+ \\(ok\\)$")
                     .arg(key))),
             qPrintable(o.status));
}

}  // namespace

class TestSessionBench : public QObject {
    Q_OBJECT

    std::unique_ptr<rpc::Tracker> m_tracker;
    std::unique_ptr<rpc::RpcServer> m_server, m_gpuServer;
    std::string m_key, m_gpuKey;
    QTemporaryDir m_cacheDir;

    bool waitForFree(const std::string& key, int seconds) const {
        for (int i = 0; i < seconds * 10; ++i) {
            try {
                rpc::ConnectOptions co;
                co.retryTimeoutMs = 0;
                const auto s = rpc::TrackerSession::connect("127.0.0.1", m_tracker->port(), co).summary();
                const auto* q = s.queue(key);
                if (q && q->free >= 1) return true;
            } catch (const rpc::RpcError&) {
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return false;
    }

private Q_SLOTS:
    void initTestCase() {
        // The measured roofs go to a cache file of this test, not the user's.
        QVERIFY(m_cacheDir.isValid());
        qputenv("TB_CACHE_DIR", m_cacheDir.path().toLocal8Bit());
        rpc::TrackerOptions to;
        to.host = "127.0.0.1";
        to.port = 0;
        m_tracker = std::make_unique<rpc::Tracker>(to);
        m_tracker->start();
        m_key = "winbench" + std::to_string(getpid());
        m_server = std::make_unique<rpc::RpcServer>(test::serverOptions(m_tracker->port(), m_key),
                                                    std::make_shared<test::HostNetworkExecutor>());
        m_server->start();
        QVERIFY(waitForFree(m_key, 30));
        m_gpuKey = "gpubench" + std::to_string(getpid());
        m_gpuServer = std::make_unique<rpc::RpcServer>(test::serverOptions(m_tracker->port(), m_gpuKey),
                                                       std::make_shared<measure::GpuExecutor>(gpu::GpuApi::OpenCL));
        m_gpuServer->start();
        QVERIFY(waitForFree(m_gpuKey, 30));
    }

    void cleanupTestCase() {
        m_gpuServer.reset();
        m_server.reset();
        m_tracker.reset();
    }

    // Local runner: compiled, run, checked against the interpreter and timed here; the log gets the
    // compile report and TVM's Execution time summary, the status the median and the check.
    void testLocal() {
        QTemporaryDir dir;
        TuningSession s;
        const Outcome o = benchmark(s, mlpJob(dir.filePath(QStringLiteral("none.json"))));
        QVERIFY2(o.finished, qPrintable(o.log));
        QVERIFY2(o.ok, qPrintable(o.status + QLatin1Char('\n') + o.log));
        QVERIFY2(o.log.contains(QLatin1String("without a tuning log")), qPrintable(o.log));
        QVERIFY2(o.log.contains(QRegularExpression(QStringLiteral(
                     "Execution time summary:\n mean \\(ms\\) +median \\(ms\\) +max \\(ms\\) +min \\(ms\\) +std \\(ms\\) *\n +[0-9.]+ +[0-9.]+"))),
                 qPrintable(o.log));
        verifyLocalRun(o);
        QVERIFY(!s.benchmarking());
        // The kernels on the roofline (`compile --profile`): one point per kernel of mlp, against
        // positive measured roofs at the pool's thread count, each with its FLOPs, bytes and bound.
        QCOMPARE(o.rooflines.size(), 1);
        const session::RooflineSnapshot& r = o.rooflines.front();
        QVERIFY(r.peakGflops > 0 && r.bandwidthGBs > 0);
        QCOMPARE(r.threads, ThreadPool::global().numThreads());
        QVERIFY(!r.kernels.isEmpty());
        int withFlop = 0;
        for (const session::RooflineKernel& k : r.kernels) {
            QVERIFY2(k.calls >= 1 && k.ms > 0 && k.bytes > 0, qPrintable(k.name));
            if (k.flop <= 0) continue;
            ++withFlop;
            QVERIFY2(k.bound == QLatin1String("compute") || k.bound == QLatin1String("memory"), qPrintable(k.name));
            QVERIFY(qAbs(k.intensity - k.flop / k.bytes) < 1e-9 * k.intensity);
            QVERIFY(qAbs(k.gflops - k.flop / (k.ms * 1e-3) / 1e9) < 1e-6 * k.gflops);
            QCOMPARE(k.bound == QLatin1String("memory"), k.intensity < r.peakGflops / r.bandwidthGBs);
        }
        QVERIFY(withFlop >= 1);  // mlp's dense layers
        QVERIFY2(o.log.contains(QRegularExpression(QStringLiteral("Roofs at [0-9]+ threads \\(measured"))), qPrintable(o.log));
    }

    // Rpc runner: exported, uploaded to the device of the key, run there, checked and timed; the
    // log gets the device steps and "Execution time on <server> (<key>):" + the summary.
    void testRpcDevice() {
        QTemporaryDir dir;
        TuningSession s;
        session::TuningJob job = mlpJob(dir.filePath(QStringLiteral("none.json")));
        toRpc(job, m_tracker->port());
        job.deviceKey = QString::fromStdString(m_key);
        const Outcome o = benchmark(s, job);
        QVERIFY2(o.finished, qPrintable(o.log));
        QVERIFY2(o.ok, qPrintable(o.status + QLatin1Char('\n') + o.log));
        QVERIFY2(o.log.contains(QLatin1String("Exported ")), qPrintable(o.log));
        QVERIFY2(o.log.contains(QRegularExpression(QStringLiteral("Ran on 127\\.0\\.0\\.1:[0-9]+ \\(server:%1\\)").arg(job.deviceKey))),
                 qPrintable(o.log));
        verifyDeviceTiming(o, job.deviceKey);
        QVERIFY(o.rooflines.isEmpty());  // profiled here only
    }

    // A GPU target, local runner: the network's OpenCL module runs on this machine's OpenCL device
    // (PoCL), checked against the interpreter and timed.
    void testGpuLocal() {
        QTemporaryDir dir;
        TuningSession s;
        session::TuningJob job = mlpJob(dir.filePath(QStringLiteral("none.json")));
        job.target = QStringLiteral("opencl");
        const Outcome o = benchmark(s, job);
        QVERIFY2(o.finished, qPrintable(o.log));
        QVERIFY2(o.ok, qPrintable(o.status + QLatin1Char('\n') + o.log));
        QVERIFY2(o.log.contains(QLatin1String("Compiled for opencl")), qPrintable(o.log));
        verifyLocalRun(o);
        QVERIFY(o.rooflines.isEmpty());  // the roofline is the CPU's
    }

    // A GPU target, rpc runner: the GPU device server of the key gets the network's module (not an
    // exported CPU library), runs it, checks it against the host interpreter's outputs and times it.
    void testGpuRpcDevice() {
        QTemporaryDir dir;
        TuningSession s;
        session::TuningJob job = mlpJob(dir.filePath(QStringLiteral("none.json")));
        job.target = QStringLiteral("opencl -device=mali");
        job.targetHost = QStringLiteral("llvm -mtriple=aarch64-linux-gnu");
        toRpc(job, m_tracker->port());
        job.deviceKey = QString::fromStdString(m_gpuKey);
        const Outcome o = benchmark(s, job);
        QVERIFY2(o.finished, qPrintable(o.log));
        QVERIFY2(o.ok, qPrintable(o.status + QLatin1Char('\n') + o.log));
        QVERIFY2(!o.log.contains(QLatin1String("Exported ")), qPrintable(o.log));
        QVERIFY2(o.log.contains(QLatin1String("Compiled for opencl")), qPrintable(o.log));
        verifyDeviceTiming(o, job.deviceKey);
    }

    // A key no device has: one clear error line, a failed status, and the session runs again.
    void testRpcNoDevice() {
        QTemporaryDir dir;
        TuningSession s;
        session::TuningJob job = mlpJob(dir.filePath(QStringLiteral("none.json")));
        job.runner = QStringLiteral("rpc");
        job.trackerPort = m_tracker->port();
        job.deviceKey = QStringLiteral("nosuchboard");
        const Outcome o = benchmark(s, job);
        QVERIFY2(o.finished, qPrintable(o.log));
        QVERIFY(!o.ok);
        QVERIFY2(o.log.contains(QRegularExpression(QStringLiteral("\nerror: [^\n]*nosuchboard"))), qPrintable(o.log));
        QVERIFY2(o.status.startsWith(QLatin1String("Benchmark failed: ")) && o.status.contains(QLatin1String("nosuchboard")),
                 qPrintable(o.status));
        QVERIFY(!s.benchmarking());
        // A second action is accepted after the failure, and refused while one runs.
        QSignalSpy lines(&s, &TuningSession::logMessage);
        QSignalSpy finished(&s, &TuningSession::benchmarkFinished);
        s.compileAndBenchmark(job);
        s.compileAndBenchmark(job);
        s.start(job);  // no tuning beside a benchmark
        QVERIFY(s.benchmarking());
        QCOMPARE(s.state(), TuningSession::State::Idle);
        QStringList said;
        for (const auto& a : lines) said << a[0].toString();
        QVERIFY2(said.contains(QLatin1String("A benchmark is already running.")), qPrintable(said.join(QLatin1Char('\n'))));
        QVERIFY2(said.contains(QLatin1String("A benchmark is running: tune when it has finished.")),
                 qPrintable(said.join(QLatin1Char('\n'))));
        QDeadlineTimer deadline(kTimeoutMs);
        while (finished.isEmpty() && !deadline.hasExpired()) finished.wait(1000);
        QCOMPARE(finished.size(), 1);
    }
};

QTEST_GUILESS_MAIN(TestSessionBench)
#include "tst_session_bench.moc"
