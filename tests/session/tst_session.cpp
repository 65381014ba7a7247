// SPDX-License-Identifier: Apache-2.0
// The session bridge driving the real engine (task extraction, sketch search with the random cost
// model, LLVM builds, the sandboxed runner, the record log) on the zoo's mlp: the batched signals
// arrive in the GUI thread, stop and pause act between rounds, every measurement is in the log,
// DAG snapshots carry the lowered loop nest, and failures come back as tuningFailed.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include "app/session/trackermonitor.h"
#include "engine/measure/local_runner.h"
#include "engine/measure/machine_peak.h"
#include "app/session/tuningsession.h"
#include "tests/session/fleetwait.h"
#include "widgets/models/fleetmodel.h"

using namespace tb;
using session::TuningSession;

namespace {

constexpr int kRunTimeoutMs = 300000;  // generous: the machine is shared with other builds

session::TuningJob smallJob(const QString& logPath, int trials, int perRound = 8) {
    session::TuningJob j;
    j.network = QStringLiteral("mlp");
    j.layout = QStringLiteral("NHWC");
    j.batch = 1;
    j.trials = trials;
    j.perRound = perRound;
    j.costModel = QStringLiteral("random");
    j.minRepeatMs = 1;
    j.logPath = logPath;
    return j;
}

int countRows(const QSignalSpy& spy) {
    int n = 0;
    for (const auto& args : spy) n += int(args.at(0).value<QList<session::MeasureRow>>().size());
    return n;
}

// The records of a log, one JSON object per line (TVM v0.6: keys "i", "r", "v").
QList<QJsonObject> readRecords(const QString& path) {
    QList<QJsonObject> out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return out;
    while (!f.atEnd()) {
        const QByteArray line = f.readLine().trimmed();
        if (line.isEmpty()) continue;
        out.append(QJsonDocument::fromJson(line).object());
    }
    return out;
}

bool waitFor(QSignalSpy& spy, int count = 1, int timeoutMs = kRunTimeoutMs) {
    QDeadlineTimer deadline(timeoutMs);
    while (spy.size() < count && !deadline.hasExpired())
        if (!spy.wait(int(std::max<qint64>(1, deadline.remainingTime())))) break;
    return spy.size() >= count;
}

}  // namespace

class TestSession : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testStaticHelpers() {
        const QStringList nets = TuningSession::networkNames();
        QVERIFY(nets.contains(QStringLiteral("mobilenet")));
        QVERIFY(nets.contains(QStringLiteral("mlp")));
        QVERIFY(nets.contains(QStringLiteral("resnet-18")));
    }

    void testValidateTarget_data() {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("host");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("mentions");
        QTest::addRow("host llvm") << QStringLiteral("llvm") << QString() << true << QString();
        QTest::addRow("znver4") << QStringLiteral("llvm -mcpu=znver4") << QString() << true << QString();
        QTest::addRow("aarch64 neon") << QStringLiteral("llvm -mtriple=aarch64-linux-gnu -mattr=+neon") << QString() << true << QString();
        QTest::addRow("empty") << QString() << QString() << false << QString();
        // GPU targets are tuned (the GPU search, measured on PoCL or a GPU device server).
        QTest::addRow("cuda kind") << QStringLiteral("cuda") << QString() << true << QString();
        QTest::addRow("cuda sm_90") << QStringLiteral("cuda -arch=sm_90") << QString() << true << QString();
        QTest::addRow("opencl") << QStringLiteral("opencl") << QString() << true << QString();
        QTest::addRow("mali with host") << QStringLiteral("opencl -device=mali") << QStringLiteral("llvm -mtriple=aarch64-linux-gnu")
                                        << true << QString();
        QTest::addRow("bad cuda arch") << QStringLiteral("cuda -arch=90") << QString() << false << QStringLiteral("-arch=90");
        QTest::addRow("host not llvm") << QStringLiteral("opencl -device=mali") << QStringLiteral("cuda") << false
                                       << QStringLiteral("host");
        QTest::addRow("bad host triple") << QStringLiteral("opencl") << QStringLiteral("llvm -mtriple=nosuch-arch")
                                         << false << QStringLiteral("nosuch-arch");
        QTest::addRow("unknown cpu") << QStringLiteral("llvm -mcpu=notacpu") << QString() << false << QStringLiteral("notacpu");
        QTest::addRow("no dash") << QStringLiteral("llvm mcpu=znver4") << QString() << false << QStringLiteral("mcpu");
    }
    void testValidateTarget() {
        QFETCH(QString, target);
        QFETCH(QString, host);
        QFETCH(bool, valid);
        QFETCH(QString, mentions);
        const QString err = TuningSession::validateTarget(target, host);
        QCOMPARE(err.isEmpty(), valid);
        if (!mentions.isEmpty()) QVERIFY2(err.contains(mentions), qPrintable(err));
        // GPU or not is a property of the target alone (a bad host does not make it a CPU target).
        const bool targetParses = TuningSession::validateTarget(target).isEmpty();
        QCOMPARE(TuningSession::isGpuTarget(target), targetParses && !target.startsWith(QLatin1String("llvm")));
    }

    // Issue 18: a GPU job from the window really tunes. mlp for `opencl` on this machine's OpenCL
    // device (PoCL): every trial is a record whose task names the opencl target and whose state binds
    // GPU threads, valid ones with positive costs; the DAG snapshot of a task shows the best state's
    // OpenCL C kernels with their launches.
    void testGpuTuningOnPocl() {
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("mlp_opencl.json"));
        TuningSession s;
        QSignalSpy measured(&s, &TuningSession::measurementsAvailable);
        QSignalSpy finished(&s, &TuningSession::tuningFinished);
        QSignalSpy failed(&s, &TuningSession::tuningFailed);
        session::TuningJob job = smallJob(log, 12, 6);
        job.target = QStringLiteral("opencl");
        job.repeat = 1;
        job.number = 1;
        s.start(job);
        QVERIFY2(waitFor(finished), qPrintable(failed.isEmpty() ? QStringLiteral("timeout") : failed[0][0].toString()));
        QCOMPARE(failed.size(), 0);

        const auto records = readRecords(log);
        QCOMPARE(records.size(), countRows(measured));
        QVERIFY(records.size() >= 6);
        int valid = 0;
        for (const QJsonObject& r : records) {
            const QJsonArray input = r.value(QStringLiteral("i")).toArray();
            const QString target = input[0].toArray()[1].toString();
            QVERIFY2(target.startsWith(QStringLiteral("opencl -keys=opencl,gpu")), qPrintable(target));
            // The state's steps bind loops to blockIdx / threadIdx (annotations 5..10, as TVM encodes them).
            bool bound = false;
            for (const QJsonValue& step : input[1].toArray()[1].toArray()) {
                const QJsonArray a = step.toArray();
                if (a[0].toString() == QLatin1String("AN") && a[3].toInt() >= 5 && a[3].toInt() <= 10) bound = true;
            }
            QVERIFY2(bound, qPrintable(QString::fromUtf8(QJsonDocument(input).toJson(QJsonDocument::Compact))));
            const QJsonArray result = r.value(QStringLiteral("r")).toArray();
            if (result[1].toInt() != 0) continue;
            ++valid;
            for (const QJsonValue& c : result[0].toArray()) QVERIFY(c.toDouble() > 0 && c.toDouble() < 10);
        }
        QVERIFY2(valid >= records.size() / 2, qPrintable(QStringLiteral("%1 of %2 valid").arg(valid).arg(records.size())));

        QSignalSpy dag(&s, &TuningSession::dagAvailable);
        s.requestDag(0);
        QVERIFY(waitFor(dag, 1, 60000));
        const auto d = dag[0][0].value<session::DagSnapshot>();
        QVERIFY2(d.error.isEmpty(), qPrintable(d.error));
        QCOMPARE(d.kernelLanguage, QStringLiteral("OpenCL C"));
        QVERIFY(!d.kernelFromDefault);  // task 0 was measured: its best state
        QVERIFY(d.bestMs > 0);
        QVERIFY(d.kernelSource.contains(QStringLiteral("__kernel void ")));
        QVERIFY(!d.kernelEntries.isEmpty());
        QCOMPARE(d.launches.size(), d.kernelEntries.size());
        for (int i = 0; i < d.kernelEntries.size(); ++i) {
            QVERIFY(d.kernelSource.contains(QStringLiteral("__kernel void ") + d.kernelEntries[i] + QLatin1Char('(')));
            QVERIFY2(d.launches[i].startsWith(d.kernelEntries[i] + QStringLiteral(" grid=(")), qPrintable(d.launches[i]));
        }
        QVERIFY(d.loopNest.contains(QStringLiteral("kernel")));
        QVERIFY(d.llvmIr.isEmpty());  // no LLVM for the device code
    }

    void testRunToCompletion() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString log = dir.filePath(QStringLiteral("mlp.json"));
        TuningSession s;
        QSignalSpy added(&s, &TuningSession::tasksAdded);
        QSignalSpy updated(&s, &TuningSession::tasksUpdated);
        QSignalSpy measured(&s, &TuningSession::measurementsAvailable);
        QSignalSpy latency(&s, &TuningSession::latencyPointAdded);
        QSignalSpy progress(&s, &TuningSession::progressChanged);
        QSignalSpy finished(&s, &TuningSession::tuningFinished);
        QSignalSpy failed(&s, &TuningSession::tuningFailed);
        QSignalSpy states(&s, &TuningSession::stateChanged);
        // Every signal is delivered in the thread that owns the session (the GUI thread).
        bool allInOwnerThread = true;
        connect(&s, &TuningSession::measurementsAvailable, this,
                [&] { allInOwnerThread = allInOwnerThread && QThread::currentThread() == s.thread(); });

        s.start(smallJob(log, 16));
        QCOMPARE(s.state(), TuningSession::State::Running);
        QVERIFY2(waitFor(finished), qPrintable(failed.isEmpty() ? QStringLiteral("timeout") : failed[0][0].toString()));
        QCOMPARE(failed.size(), 0);
        QCOMPARE(s.state(), TuningSession::State::Idle);
        QVERIFY(allInOwnerThread);

        // One tasksAdded with every task; updates always carry every row.
        QCOMPARE(added.size(), 1);
        const auto tasks = added[0][0].value<QList<session::TaskRow>>();
        QVERIFY(tasks.size() >= 2);
        for (int i = 0; i < tasks.size(); ++i) {
            QCOMPARE(tasks[i].id, i);
            QVERIFY(tasks[i].workloadKey.startsWith(QStringLiteral("[\"")));
            QVERIFY(tasks[i].description.startsWith(QStringLiteral("vm_mod_fused_")));
            QVERIFY(tasks[i].flop > 0);
            QCOMPARE(tasks[i].state, QStringLiteral("pending"));
        }
        QVERIFY(updated.size() >= 2);
        for (const auto& args : updated) QCOMPARE(args[0].value<QList<session::TaskRow>>().size(), tasks.size());
        const auto last = updated.last()[0].value<QList<session::TaskRow>>();
        for (const auto& t : last) {
            QCOMPARE(t.state, QStringLiteral("tuned"));
            QVERIFY(t.trials > 0);
            QVERIFY2(t.bestMs > 0, qPrintable(t.description));
            QVERIFY(t.gflops > 0);
        }

        // One measurement batch and one latency point per round; trials numbered 0..n-1.
        QVERIFY(measured.size() >= 2);
        QCOMPARE(latency.size(), measured.size());
        QList<int> trialIds;
        for (const auto& args : measured)
            for (const auto& r : args[0].value<QList<session::MeasureRow>>()) {
                trialIds.append(r.trial);
                QVERIFY(r.taskId >= 0 && r.taskId < tasks.size());
                if (r.errorNo == 0) QVERIFY(r.costMs > 0);
            }
        const int n = int(trialIds.size());
        QVERIFY(n >= 8 && n <= 16);
        for (int i = 0; i < n; ++i) QCOMPARE(trialIds[i], i);
        const auto lastPoint = latency.last()[0].value<session::LatencyPoint>();
        QCOMPARE(lastPoint.trials, n);
        QVERIFY(lastPoint.estimatedMs > 0);
        QVERIFY(!progress.isEmpty());
        QCOMPARE(progress.last()[0].toInt(), 1000 * n / 16);

        // Running -> Idle seen; the summary names the log.
        QVERIFY(states.size() >= 2);
        QVERIFY(finished[0][0].toString().contains(log));

        // Every measurement is a TVM record in the log, in order.
        const auto records = readRecords(log);
        QCOMPARE(records.size(), n);
        for (const auto& r : records) {
            QVERIFY(r.contains(QStringLiteral("i")));
            QVERIFY(r.contains(QStringLiteral("r")));
            QCOMPARE(r.value(QStringLiteral("v")).toString(), QStringLiteral("v0.6"));
        }

        // The DAG of a task of the finished job, with its best schedule lowered and compiled.
        QSignalSpy dag(&s, &TuningSession::dagAvailable);
        s.requestDag(0);
        QVERIFY(waitFor(dag, 1, 60000));
        const auto d = dag[0][0].value<session::DagSnapshot>();
        QCOMPARE(d.taskId, 0);
        QCOMPARE(d.jobId, s.jobId());
        QCOMPARE(d.workloadKey, tasks[0].workloadKey);
        QVERIFY(d.stages.size() >= 3);
        QCOMPARE(d.isPlaceholder.size(), d.stages.size());
        QCOMPARE(d.stageDetails.size(), d.stages.size());
        QVERIFY(d.isPlaceholder.first());
        QVERIFY(!d.edges.isEmpty());
        for (const auto& [src, dst] : d.edges) QVERIFY(src < dst);  // stage order is topological
        for (int i = 0; i < d.stages.size(); ++i) QVERIFY2(d.stageDetails[i].startsWith(d.stages[i]), qPrintable(d.stageDetails[i]));
        QVERIFY(d.dagText.contains(QStringLiteral("PLACEHOLDER")));
        QVERIFY2(d.error.isEmpty(), qPrintable(d.error));
        QVERIFY(d.bestMs > 0);
        QVERIFY(!d.stateText.isEmpty());
        QVERIFY(d.loopNest.contains(QStringLiteral("for")));
        QVERIFY(d.llvmIr.contains(QStringLiteral("define")));
        QVERIFY(!d.assembly.isEmpty());

        // Unknown tasks give nothing; the session can run another job afterwards.
        s.requestDag(999);
        s.requestDag(1);  // queued behind the first: only the latest request is built
        QVERIFY(waitFor(dag, 2, 60000));
        QCOMPARE(dag.last()[0].value<session::DagSnapshot>().taskId, 1);
    }

    void testStopMidRun() {
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("stop.json"));
        TuningSession s;
        QSignalSpy measured(&s, &TuningSession::measurementsAvailable);
        QSignalSpy finished(&s, &TuningSession::tuningFinished);
        QSignalSpy failed(&s, &TuningSession::tuningFailed);
        s.start(smallJob(log, 100000));
        QVERIFY(waitFor(measured));
        const int atStop = int(measured.size());
        s.stop();
        QCOMPARE(s.state(), TuningSession::State::Stopping);
        QVERIFY(waitFor(finished));
        QCOMPARE(failed.size(), 0);
        QCOMPARE(s.state(), TuningSession::State::Idle);
        QVERIFY(finished[0][0].toString().startsWith(QStringLiteral("Tuning stopped")));
        // Stopped between rounds: after stop() at most the round then running completed (plus a
        // report of the previous round that may have been on its way).
        QVERIFY(measured.size() <= atStop + 2);
        const int n = countRows(measured);
        QVERIFY(n < 100000);
        QCOMPARE(int(readRecords(log).size()), n);  // no record lost, none without a signal
    }

    void testPauseResumeThenShutdown() {
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("pause.json"));
        TuningSession s;
        QSignalSpy measured(&s, &TuningSession::measurementsAvailable);
        QSignalSpy paused(&s, &TuningSession::paused);
        QSignalSpy dag(&s, &TuningSession::dagAvailable);
        s.start(smallJob(log, 100000, 4));
        QVERIFY(waitFor(measured));
        s.pause();
        QCOMPARE(s.state(), TuningSession::State::Paused);
        QVERIFY(waitFor(paused));
        const int whilePaused = int(measured.size());
        // Parked between rounds: the worker is idle, DAG requests are still answered meanwhile
        // and no round runs.
        s.requestDag(0);
        QVERIFY(waitFor(dag, 1, 60000));
        QCOMPARE(int(measured.size()), whilePaused);
        s.resume();
        QCOMPARE(s.state(), TuningSession::State::Running);
        QVERIFY(waitFor(measured, whilePaused + 1));
        // Shutdown joins the worker after its current round: the log holds exactly what was
        // reported (queued reports of that last round are delivered afterwards).
        s.shutdown();
        QCOMPARE(s.state(), TuningSession::State::Idle);
        QCoreApplication::processEvents();
        QCOMPARE(int(readRecords(log).size()), countRows(measured));
    }

    void testResume() {
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("resume.json"));
        TuningSession s;
        QSignalSpy finished(&s, &TuningSession::tuningFinished);
        QSignalSpy failed(&s, &TuningSession::tuningFailed);
        s.start(smallJob(log, 16));
        QVERIFY(waitFor(finished));
        const int first = int(readRecords(log).size());
        QVERIFY(first > 0);

        QSignalSpy messages(&s, &TuningSession::logMessage);
        QSignalSpy latency(&s, &TuningSession::latencyPointAdded);
        QSignalSpy added(&s, &TuningSession::tasksAdded);
        auto job = smallJob(log, 32);
        job.resume = true;
        s.start(job);
        QVERIFY(waitFor(finished, 2));
        QCOMPARE(failed.size(), 0);
        bool sawResume = false;
        for (const auto& m : messages)
            if (m[0].toString().contains(QStringLiteral("Resumed from")) &&
                m[0].toString().contains(QStringLiteral("%1 records").arg(first)))
                sawResume = true;
        QVERIFY(sawResume);
        // Restored rows start with the old best latencies, and the curve continues from there.
        const auto rows = added[0][0].value<QList<session::TaskRow>>();
        for (const auto& r : rows) QVERIFY(r.bestMs > 0);
        QCOMPARE(latency.first()[0].value<session::LatencyPoint>().trials, first);
        QVERIFY(int(readRecords(log).size()) > first);
    }

    // The session's runner settings go through the worker into the runner it builds: the worker
    // reports the runner read back from the runner object, and candidates measured with cache
    // flushing on are valid records.
    void testRunnerSettingsReachRunner() {
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("flush.json"));
        TuningSession s;
        QSignalSpy messages(&s, &TuningSession::logMessage);
        QSignalSpy measured(&s, &TuningSession::measurementsAvailable);
        QSignalSpy finished(&s, &TuningSession::tuningFinished);
        QSignalSpy failed(&s, &TuningSession::tuningFailed);
        QSignalSpy added(&s, &TuningSession::tasksAdded);
        auto job = smallJob(log, 8, 8);
        job.cacheFlush = QStringLiteral("on");
        job.number = 2;
        job.repeat = 2;
        job.minRepeatMs = 2;
        job.abandonFactor = 3;
        s.start(job);
        QVERIFY2(waitFor(finished), qPrintable(failed.isEmpty() ? QStringLiteral("timeout") : failed[0][0].toString()));
        QString runner;
        for (const auto& m : messages)
            if (m[0].toString().startsWith(QStringLiteral("Runner: "))) runner = m[0].toString();
        QCOMPARE(runner, QStringLiteral("Runner: local sandbox (abandon at 3x best, 10 ms screen, whole within 1.1x best, "
                                         "%1-lane FMAs): number 2, repeat 2, min_repeat_ms 2, timeout 10 s, cache flush on "
                                         "(a flushed kernel: number 1, repeat 10, min_repeat_ms 0)")
                             .arg(measure::fullRateFmaLanes()));
        // Every task's row says how it is measured, and why.
        QCOMPARE(added.size(), 1);
        const auto rows = added[0][0].value<QList<session::TaskRow>>();
        QVERIFY(!rows.isEmpty());
        for (const auto& r : rows) {
            QCOMPARE(r.cacheFlush, QStringLiteral("flush"));
            QCOMPARE(r.cacheFlushReason, QStringLiteral("flush: --cache-flush on"));
        }
        int ok = 0;
        for (const auto& a : measured)
            for (const auto& r : a[0].value<QList<session::MeasureRow>>()) ok += r.errorNo == 0;
        QVERIFY(ok > 0);
        // Two repeats, flushed: a flushed kernel is timed one call per repeat over at least
        // RunnerOptions::flushRepeat (10) repeats, so ten costs per valid record, except a candidate
        // cut short because it ran slower than the best measured before it: after one call above 3x
        // (abandoned) or after its screening time above 1.1x (the default --screen); one cost, above
        // 1.1x the log's best.
        const qsizetype repeats = measure::RunnerOptions{}.flushRepeat;
        QCOMPARE(repeats, qsizetype(10));
        double best = 1e10;
        for (const auto& r : readRecords(log)) {
            const auto res = r.value(QStringLiteral("r")).toArray();
            const auto costs = res.at(0).toArray();
            if (res.at(1).toInt() != 0 || costs.size() != repeats) continue;
            double sum = 0;
            for (const auto& c : costs) sum += c.toDouble();
            best = std::min(best, sum / double(repeats));
        }
        QVERIFY(best < 1e10);
        for (const auto& r : readRecords(log)) {
            const auto res = r.value(QStringLiteral("r")).toArray();
            if (res.at(1).toInt() != 0) continue;
            const auto costs = res.at(0).toArray();
            QVERIFY2(costs.size() == repeats || (costs.size() == 1 && costs[0].toDouble() > 1.1 * best),
                     qPrintable(QStringLiteral("%1 costs, first %2 s, best %3 s").arg(costs.size()).arg(costs[0].toDouble()).arg(best)));
        }
    }

    // The embedded default's device: an in-process tracker with one sandboxed server of key
    // "local" (TrackerMonitor), measured through the RPC runner.
    void testRpcRunnerOnLocalFleet() {
        session::TrackerMonitor monitor;
        QSignalSpy started(&monitor, &session::TrackerMonitor::localTrackerStarted);
        QSignalSpy queue(&monitor, &session::TrackerMonitor::queueChanged);
        monitor.startLocalFleet();
        QVERIFY(waitFor(started, 1, 30000));
        const int port = started[0][1].toInt();
        const auto localIsFree = [&] {
            for (const auto& a : queue)
                for (const auto& k : a[0].value<session::DeviceQueueSnapshot>().keys)
                    if (k.key == QLatin1String("local") && k.free == 1) return true;
            return false;
        };
        QDeadlineTimer deadline(30000);
        while (!localIsFree() && !deadline.hasExpired()) queue.wait(2000);
        QVERIFY(localIsFree());

        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("rpc.json"));
        TuningSession s;
        QSignalSpy measured(&s, &TuningSession::measurementsAvailable);
        QSignalSpy finished(&s, &TuningSession::tuningFinished);
        QSignalSpy failed(&s, &TuningSession::tuningFailed);
        auto job = smallJob(log, 8, 8);
        job.runner = QStringLiteral("rpc");
        job.trackerHost = QStringLiteral("127.0.0.1");
        job.trackerPort = port;
        job.deviceKey = QStringLiteral("local");
        s.start(job);
        QVERIFY2(waitFor(finished), qPrintable(failed.isEmpty() ? QStringLiteral("timeout") : failed[0][0].toString()));
        int ok = 0;
        QString errors;
        for (const auto& a : measured)
            for (const auto& r : a[0].value<QList<session::MeasureRow>>()) {
                if (r.errorNo == 0)
                    ++ok;
                else
                    errors += r.errorMessage + QLatin1Char('\n');
            }
        QVERIFY2(ok > 0, qPrintable(errors));
        QCOMPARE(int(readRecords(log).size()), countRows(measured));
        monitor.stopAll();
    }

    // Issue 21, several sessions at once: one session measures mlp for a named x86-64 target in
    // the sandbox, another for the host CPU on a tracker's server, concurrently; each writes its own
    // log with its own target string, and stopping one leaves the other tuning.
    void testTwoSessionsDifferentTargetsAtOnce() {
        session::TrackerMonitor monitor;
        QSignalSpy started(&monitor, &session::TrackerMonitor::localTrackerStarted);
        monitor.startLocalFleet();
        QVERIFY(waitFor(started, 1, 30000));
        QTemporaryDir dir;
        auto jobA = smallJob(dir.filePath(QStringLiteral("x86-64.json")), 100000, 4);
        jobA.target = QStringLiteral("llvm -mcpu=x86-64");
        auto jobB = smallJob(dir.filePath(QStringLiteral("host-rpc.json")), 100000, 4);
        jobB.runner = QStringLiteral("rpc");
        jobB.trackerHost = QStringLiteral("127.0.0.1");
        jobB.trackerPort = started[0][1].toInt();
        jobB.deviceKey = QStringLiteral("local");
        TuningSession a, b;
        QSignalSpy measuredA(&a, &TuningSession::measurementsAvailable), measuredB(&b, &TuningSession::measurementsAvailable);
        QSignalSpy finishedA(&a, &TuningSession::tuningFinished), finishedB(&b, &TuningSession::tuningFinished);
        QSignalSpy failedA(&a, &TuningSession::tuningFailed), failedB(&b, &TuningSession::tuningFailed);
        a.start(jobA);
        b.start(jobB);
        QVERIFY(waitFor(measuredA));
        QVERIFY(waitFor(measuredB));
        QCOMPARE(a.state(), TuningSession::State::Running);
        QCOMPARE(b.state(), TuningSession::State::Running);
        a.stop();
        QVERIFY(waitFor(finishedA));
        QCOMPARE(b.state(), TuningSession::State::Running);  // stopping one stops only that one
        const int bAtAStop = int(measuredB.size());
        QVERIFY(waitFor(measuredB, bAtAStop + 1));
        b.stop();
        QVERIFY(waitFor(finishedB));
        QVERIFY(failedA.isEmpty() && failedB.isEmpty());
        // Each log holds exactly its session's records, under its session's target.
        const auto targets = [](const QString& path) {
            QStringList out;
            for (const QJsonObject& r : readRecords(path)) out.append(r[QLatin1String("i")].toArray()[0].toArray()[1].toString());
            return out;
        };
        const QStringList ta = targets(jobA.logPath), tb = targets(jobB.logPath);
        QCOMPARE(int(ta.size()), countRows(measuredA));
        QCOMPARE(int(tb.size()), countRows(measuredB));
        QVERIFY(!ta.isEmpty() && !tb.isEmpty());
        for (const QString& t : ta) QVERIFY2(t.contains(QLatin1String("-mcpu=x86-64")), qPrintable(t));
        for (const QString& t : tb) QVERIFY2(t.startsWith(QLatin1String("llvm")) && t != ta.first(), qPrintable(t));
        monitor.stopAll();
    }

    // Issue 21: a fleet of two device processes (`tunebench-cli rpc-server`, started by the
    // monitor's DeviceFleet) measures mlp through the RPC runner; at the first run one device is
    // stopped. Every step reaches the GUI thread as a fleet event (builds on "host", uploads and
    // runs on the devices' addresses, with the task of each candidate), the stopped device breaks
    // off (DeviceLost: the fleet model marks it, and only it), the fleet listing says it stopped,
    // and tuning finishes on the other device with valid measurements after the loss.
    void testFleetEventsAndADeviceStoppedMidRun() {
        session::TrackerMonitor monitor;
        QTemporaryDir logs;
        monitor.setFleetPaths(QStringLiteral(TB_CLI_PATH), {}, {}, logs.path());
        QSignalSpy queue(&monitor, &session::TrackerMonitor::queueChanged);
        QSignalSpy fleet(&monitor, &session::TrackerMonitor::fleetChanged);
        QSignalSpy started(&monitor, &session::TrackerMonitor::localTrackerStarted);
        monitor.startDeviceFleet(2, 0);
        QVERIFY(waitFor(started, 1, 30000));
        const int port = started[0][1].toInt();
        QVERIFY(tb::test::waitForServers(queue, QStringLiteral("local"), 2));
        QVERIFY(!fleet.isEmpty());
        QCOMPARE(fleet.last()[0].value<QList<session::FleetDeviceRow>>().size(), 2);

        QTemporaryDir dir;
        TuningSession s;
        models::FleetModel model;
        QList<session::FleetEvent> events;
        bool stopped = false;
        // Device 0 is stopped when a run starts on it once both devices have finished an upload:
        // stopping it at the very first run raced with the tracker's assignment (on a loaded
        // machine device 1 could start the first run while device 0 had finished nothing, and the
        // two-device check below then saw one device), and stopping it at a run of device 1 could
        // hit device 0 between two candidates, when no measurement notices the loss. Its address
        // is the one its log says it bound to.
        QString device0;
        {
            QFile f(fleet.last()[0].value<QList<session::FleetDeviceRow>>().value(0).log);
            QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(f.fileName()));
            const auto m = QRegularExpression(QStringLiteral("bind to (\\S+)")).match(QString::fromUtf8(f.readAll()));
            QVERIFY2(m.hasMatch(), qPrintable(f.fileName()));
            device0 = m.captured(1);
        }
        QSet<QString> uploaded;
        connect(&s, &TuningSession::fleetEventsAvailable, this, [&](const QList<session::FleetEvent>& batch) {
            QCOMPARE(QThread::currentThread(), thread());
            events += batch;
            model.addEvents(batch);
            for (const auto& e : batch) {
                if (e.kind == session::FleetEvent::Finished && e.phase == session::FleetEvent::Upload) uploaded.insert(e.device);
                if (!stopped && uploaded.size() == 2 && e.kind == session::FleetEvent::Started &&
                    e.phase == session::FleetEvent::Run && e.device == device0) {
                    stopped = true;
                    monitor.stopDevice(0);
                }
            }
        });
        QSignalSpy measured(&s, &TuningSession::measurementsAvailable);
        QSignalSpy finished(&s, &TuningSession::tuningFinished);
        QSignalSpy failed(&s, &TuningSession::tuningFailed);
        auto job = smallJob(dir.filePath(QStringLiteral("fleet.json")), 24, 8);
        job.runner = QStringLiteral("rpc");
        job.trackerHost = QStringLiteral("127.0.0.1");
        job.trackerPort = port;
        job.deviceKey = QStringLiteral("local");
        job.minRepeatMs = 300;  // each run lasts long enough for the stop to land mid-batch
        s.start(job);
        model.setJobId(s.jobId());
        QVERIFY2(waitFor(finished), qPrintable(failed.isEmpty() ? QStringLiteral("timeout") : failed[0][0].toString()));
        QCoreApplication::processEvents();  // the last drain
        QVERIFY(stopped);

        int builds = 0, runs = 0, uploads = 0, lost = 0;
        double lostAt = -1;
        QString lostDevice;
        QSet<QString> devices;
        for (const auto& e : events) {
            QCOMPARE(e.jobId, s.jobId());
            if (e.kind == session::FleetEvent::DeviceLost) {
                ++lost;
                lostDevice = e.device;
                lostAt = e.endS;
                continue;
            }
            QVERIFY(e.taskId >= 0);  // every candidate's workload key names a task of the job
            QVERIFY(e.startS >= 0);
            if (e.kind != session::FleetEvent::Finished) continue;
            QVERIFY(e.endS >= e.startS);
            if (e.phase == session::FleetEvent::Build) {
                ++builds;
                QCOMPARE(e.device, QStringLiteral("host"));
            } else {
                QVERIFY2(e.device.startsWith(QLatin1String("127.0.0.1:")), qPrintable(e.device));
                QCOMPARE(e.deviceKey, QStringLiteral("local"));
                devices.insert(e.device);
                (e.phase == session::FleetEvent::Run ? runs : uploads)++;
            }
        }
        QCOMPARE(builds, countRows(measured));  // one build per candidate
        QVERIFY(runs > 0 && uploads >= runs);
        QCOMPARE(devices.size(), 2);
        QCOMPARE(lost, 1);
        // The model marks exactly the device that broke off, and tuning went on elsewhere.
        int marked = 0;
        for (const auto& d : model.devices())
            if (d.lost) {
                ++marked;
                QCOMPARE(d.name, lostDevice);
            }
        QCOMPARE(marked, 1);
        bool okAfter = false;
        for (const auto& e : events)
            okAfter |= e.kind == session::FleetEvent::Finished && e.phase == session::FleetEvent::Run && e.errorNo == 0 &&
                       e.device != lostDevice && e.startS > lostAt;
        QVERIFY(okAfter);
        // The fleet listing: device 0 stopped, device 1 still running; the tracker lists one server.
        QTRY_VERIFY_WITH_TIMEOUT(fleet.last()[0].value<QList<session::FleetDeviceRow>>().value(0).pid < 0, 20000);
        const auto rows = fleet.last()[0].value<QList<session::FleetDeviceRow>>();
        QCOMPARE(rows[0].ended, QStringLiteral("stopped"));
        QVERIFY(rows[1].pid > 0);
        QTRY_VERIFY_WITH_TIMEOUT(tb::test::serversOfKey(queue, QStringLiteral("local")) == 1, 20000);
        monitor.stopAll();
    }

    void testFailures_data() {
        QTest::addColumn<QString>("network");
        QTest::addColumn<QString>("onnx");
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("mentions");
        QTest::addRow("unknown network") << QStringLiteral("nonet") << QString() << QString() << QStringLiteral("nonet");
        QTest::addRow("missing onnx file") << QString() << QStringLiteral("/nonexistent/model.onnx") << QString()
                                           << QStringLiteral("/nonexistent/model.onnx");
        QTest::addRow("bad target") << QStringLiteral("mlp") << QString() << QStringLiteral("llvm -mcpu=notacpu")
                                    << QStringLiteral("notacpu");
        QTest::addRow("cross target, local runner") << QStringLiteral("mlp") << QString()
                                                    << QStringLiteral("llvm -mtriple=aarch64-linux-gnu -mattr=+neon")
                                                    << QStringLiteral("RPC");
    }
    void testFailures() {
        QFETCH(QString, network);
        QFETCH(QString, onnx);
        QFETCH(QString, target);
        QFETCH(QString, mentions);
        QTemporaryDir dir;
        TuningSession s;
        QSignalSpy failed(&s, &TuningSession::tuningFailed);
        QSignalSpy finished(&s, &TuningSession::tuningFinished);
        auto job = smallJob(dir.filePath(QStringLiteral("x.json")), 8);
        job.network = network;
        job.onnxPath = onnx;
        job.target = target;
        s.start(job);
        QVERIFY(waitFor(failed, 1, 120000));
        QCOMPARE(finished.size(), 0);
        const QString msg = failed[0][0].toString();
        QVERIFY2(msg.startsWith(QStringLiteral("Could not start tuning: ")), qPrintable(msg));
        QVERIFY2(msg.contains(mentions), qPrintable(msg));
        QCOMPARE(s.state(), TuningSession::State::Idle);
    }
};

QTEST_GUILESS_MAIN(TestSession)
#include "tst_session.moc"
