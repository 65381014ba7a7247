// SPDX-License-Identifier: Apache-2.0
// The session bridge in AutoTVM mode, driving the real engine headlessly on the zoo's mlp (its
// dense layers give dense_nopack.x86 / dense_pack.x86 tasks): the tasks are extracted and tuned one
// after another, the rows carry trials / n_trial and Current/Best GFLOPS, the per-trial best-so-far
// curve never falls, the best config is printed as TVM prints a ConfigEntity, every measured config
// is one AutoTVM v0.2 record in the log, the best config's loop nest reaches the DAG view, stop
// and pause act after a batch, and a bad tuner name fails the job. With a VTA target (issue 14,
// seed 004): the quantized, graph-packed resnet-18's VTA tasks are tuned on the simulator, in
// process and on a VTA device the fleet starts (`rpc-server --device vta`), with simulated GOPS
// and the simulator's counters per trial.
#include <QFile>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "app/session/trackermonitor.h"
#include "app/session/tuningsession.h"
#include "tests/session/fleetwait.h"
#include "tests/signalwait.h"

using namespace tb;
using tb::test::waitFor;
using session::AutotvmTaskRow;
using session::AutotvmTrial;
using session::TuningSession;

// Generous timeouts (tests/signalwait.h): the machine is shared with other builds.
namespace {

session::TuningJob autotvmJob(const QString& logPath, const QString& tuner, int nTrial) {
    session::TuningJob j;
    j.autotvm = true;
    j.network = QStringLiteral("mlp");
    j.batch = 1;
    j.tuner = tuner;
    j.nTrial = nTrial;
    j.number = 2;
    j.minRepeatMs = 1;
    j.logPath = logPath;
    return j;
}

QList<QJsonArray> readRecords(const QString& path) {
    QList<QJsonArray> out;  // the "input" of each v0.2 record: [target, task name, args, kwargs]
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return out;
    while (!f.atEnd()) {
        const QByteArray line = f.readLine().trimmed();
        if (line.isEmpty()) continue;
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        if (o.value(QStringLiteral("version")).toDouble() != 0.2) return {};
        out.append(o.value(QStringLiteral("input")).toArray());
    }
    return out;
}

QList<AutotvmTrial> allTrials(const QSignalSpy& spy) {
    QList<AutotvmTrial> out;
    for (const auto& args : spy) out += args.at(0).value<QList<AutotvmTrial>>();
    return out;
}

/// The latest row of every task, from tasksAdded then every tasksUpdated.
QHash<int, AutotvmTaskRow> latestRows(const QSignalSpy& added, const QSignalSpy& updated) {
    QHash<int, AutotvmTaskRow> rows;
    for (const QSignalSpy* spy : {&added, &updated})
        for (const auto& args : *spy)
            for (const auto& r : args.at(0).value<QList<AutotvmTaskRow>>()) rows[r.id] = r;
    return rows;
}

}  // namespace

class TestAutotvmSession : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testTunerNames() {
        const QStringList names = TuningSession::autotvmTunerNames();
        for (const char* n : {"xgb", "ga", "random", "gridsearch"}) QVERIFY(names.contains(QLatin1String(n)));
    }

    void testRunToCompletion() {
        QTemporaryDir dir;
        const QString logPath = dir.filePath(QStringLiteral("mlp_autotvm.log"));
        TuningSession s;
        QSignalSpy added(&s, &TuningSession::autotvmTasksAdded);
        QSignalSpy updated(&s, &TuningSession::autotvmTasksUpdated);
        QSignalSpy trials(&s, &TuningSession::autotvmTrialsAvailable);
        QSignalSpy progress(&s, &TuningSession::progressChanged);
        QSignalSpy finished(&s, &TuningSession::tuningFinished);
        QSignalSpy failed(&s, &TuningSession::tuningFailed);
        QSignalSpy auto_scheduler(&s, &TuningSession::tasksAdded);
        s.start(autotvmJob(logPath, QStringLiteral("random"), 3));
        QVERIFY(waitFor(finished));
        QCOMPARE(failed.size(), 0);
        QCOMPARE(auto_scheduler.size(), 0);
        QVERIFY2(finished[0][0].toString().startsWith(QStringLiteral("AutoTVM tuning finished: ")),
                 qPrintable(finished[0][0].toString()));
        QCOMPARE(s.state(), TuningSession::State::Idle);

        // mlp's three dense layers: dense_nopack.x86 and dense_pack.x86 each (TVM x86 strategy order), in graph order.
        QCOMPARE(added.size(), 1);
        const auto initial = added[0][0].value<QList<AutotvmTaskRow>>();
        QCOMPARE(initial.size(), 6);
        QCOMPARE(initial[0].taskName, QStringLiteral("dense_nopack.x86"));
        QCOMPARE(initial[1].taskName, QStringLiteral("dense_pack.x86"));
        QCOMPARE(initial[0].argsSummary, QStringLiteral("1×150528, 128×150528"));
        int budget = 0;
        for (const auto& r : initial) {
            QCOMPARE(r.state, QStringLiteral("pending"));
            QVERIFY(r.spaceSize > 3);
            QCOMPARE(r.nTrial, 3);
            QVERIFY(r.flop > 0);
            budget += r.nTrial;
        }

        const auto rows = latestRows(added, updated);
        for (const auto& r : rows) {
            QCOMPARE(r.state, QStringLiteral("tuned"));
            QCOMPARE(r.trials, r.nTrial);
            QVERIFY2(r.bestGflops > 0, qPrintable(r.taskName));
            QVERIFY(r.currentGflops >= 0 && r.currentGflops <= r.bestGflops);
            // TVM's str(ConfigEntity): "[('tile_y', [-1, 1]), ...],None,<index>".
            QVERIFY2(r.bestConfig.startsWith(QStringLiteral("[('")), qPrintable(r.bestConfig));
            QVERIFY2(r.bestConfig.endsWith(QStringLiteral("],None,%1").arg(r.bestIndex)), qPrintable(r.bestConfig));
            QVERIFY(!r.bestKnobs.isEmpty());
            for (const QString& k : r.bestKnobs) {
                QVERIFY2(k.contains(QStringLiteral(" = ")), qPrintable(k));
                QVERIFY2(r.bestConfig.contains(QStringLiteral("('%1', %2)").arg(k.section(QStringLiteral(" = "), 0, 0),
                                                                               k.section(QStringLiteral(" = "), 1))),
                         qPrintable(k));
            }
        }

        // One trial signal entry per measured config; the best-so-far curve never falls and ends at the row's best.
        const QList<AutotvmTrial> all = allTrials(trials);
        QCOMPARE(all.size(), budget);
        QHash<int, double> best;
        QHash<int, int> count;
        for (const auto& t : all) {
            QCOMPARE(t.trial, count[t.taskId]++);
            QVERIFY(t.bestGflops >= best.value(t.taskId, 0));
            QVERIFY(t.bestGflops >= t.gflops);
            best[t.taskId] = t.bestGflops;
        }
        for (const auto& r : rows) QCOMPARE(best.value(r.id), r.bestGflops);
        QCOMPARE(progress.last().at(0).toInt(), 1000);

        // The log: one v0.2 record per measured config, task by task in order.
        const QList<QJsonArray> records = readRecords(logPath);
        QCOMPARE(records.size(), budget);
        for (int i = 0; i < records.size(); ++i)
            QCOMPARE(records[i].at(1).toString(), initial[all[i].taskId].taskName);

        // The best config's program reaches the DAG view: its loop nest.
        QSignalSpy dag(&s, &TuningSession::dagAvailable);
        s.requestDag(1);
        QVERIFY(waitFor(dag, 1, 60000));
        const auto snap = dag[0][0].value<session::DagSnapshot>();
        QCOMPARE(snap.taskId, 1);
        QVERIFY2(snap.error.isEmpty(), qPrintable(snap.error));
        QVERIFY2(snap.loopNest.contains(QStringLiteral("for ")), qPrintable(snap.loopNest));
        QVERIFY(snap.description.startsWith(initial[1].taskName));
    }

    void testStopAndPauseAfterABatch() {
        QTemporaryDir dir;
        const QString logPath = dir.filePath(QStringLiteral("stop.log"));
        TuningSession s;
        QSignalSpy updated(&s, &TuningSession::autotvmTasksUpdated);
        QSignalSpy trials(&s, &TuningSession::autotvmTrialsAvailable);
        QSignalSpy paused(&s, &TuningSession::paused);
        QSignalSpy finished(&s, &TuningSession::tuningFinished);
        QSignalSpy failed(&s, &TuningSession::tuningFailed);
        s.start(autotvmJob(logPath, QStringLiteral("gridsearch"), 400));
        QVERIFY(waitFor(trials));
        s.pause();
        QVERIFY(waitFor(paused, 1, 60000));
        const int atPause = int(allTrials(trials).size());
        QTest::qWait(1500);
        QCOMPARE(int(allTrials(trials).size()), atPause);  // parked: nothing is measured
        s.resume();
        QVERIFY(waitFor(trials, trials.size() + 1));
        s.stop();
        QVERIFY(waitFor(finished));
        QCOMPARE(failed.size(), 0);
        QVERIFY2(finished[0][0].toString().startsWith(QStringLiteral("AutoTVM tuning stopped: ")),
                 qPrintable(finished[0][0].toString()));
        const int measured = int(allTrials(trials).size());
        QVERIFY(measured > atPause);
        QVERIFY(measured < 400);
        QCOMPARE(int(readRecords(logPath).size()), measured);  // every measured config is on disk
        const auto last = updated.last().at(0).value<QList<AutotvmTaskRow>>();
        QCOMPARE(last.size(), 1);
        QCOMPARE(last[0].state, QStringLiteral("stopped"));
    }

    // Issue 14: a VTA target tunes seed 004's tasks of the quantized, graph-packed resnet-18 (the
    // conv2d_packed.vta tasks and, intelfocl having ALU-only ops, the merged add.vta/multiply.vta
    // tasks) on the in-process simulator: rows are simulated, each trial brings TVM's simulator
    // counters, the records carry TVM's VTA target, and an lhs == rhs task is logged twice (seed
    // 004's log_to_file: the scalar-rhs form too).
    void testVtaTargetTunesSeed004Tasks() {
        const QStringList presets = TuningSession::vtaTargetPresets();
        QCOMPARE(presets.size(), 3);
        const QString intelfocl = presets[1];
        QVERIFY2(intelfocl.startsWith(QStringLiteral("ext_dev -keys=vta,cpu -device=vta -model=intelfocl_")),
                 qPrintable(intelfocl));
        QVERIFY(TuningSession::isVtaTarget(intelfocl));
        QVERIFY(TuningSession::validateTarget(intelfocl).isEmpty());
        QVERIFY(TuningSession::validateTarget(QStringLiteral("ext_dev -device=vta -model=intelfocl_junk")).contains(
            QStringLiteral("not the default config")));

        QTemporaryDir dir;
        const QString logPath = dir.filePath(QStringLiteral("vta.log"));
        session::TuningJob job = autotvmJob(logPath, QStringLiteral("random"), 2);
        job.network = QStringLiteral("resnet-18");
        job.target = intelfocl;
        TuningSession s;
        QSignalSpy added(&s, &TuningSession::autotvmTasksAdded);
        QSignalSpy updated(&s, &TuningSession::autotvmTasksUpdated);
        QSignalSpy trials(&s, &TuningSession::autotvmTrialsAvailable);
        QSignalSpy finished(&s, &TuningSession::tuningFinished);
        QSignalSpy failed(&s, &TuningSession::tuningFailed);
        s.start(job);
        QVERIFY(waitFor(finished, 1, 600000));
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed[0][0].toString()));
        const auto rows = latestRows(added, updated);
        // resnet-18's packed region: 11 distinct conv2d_packed workloads, 9 ALU tasks after the merge
        // (tst_vta_network derives both).
        int convs = 0, alus = 0;
        for (const auto& r : rows) {
            QVERIFY(r.simulated);
            QCOMPARE(r.state, QStringLiteral("tuned"));
            QCOMPARE(r.trials, 2);
            convs += r.taskName == QLatin1String("conv2d_packed.vta");
            alus += r.taskName == QLatin1String("add.vta") || r.taskName == QLatin1String("multiply.vta");
            if (r.bestIndex >= 0) {
                QVERIFY2(r.bestCounters.value(QStringLiteral("out_store_nbytes")) > 0, qPrintable(r.taskName));
                QVERIFY(r.bestGflops > 0);
            }
        }
        QCOMPARE(convs, 11);
        QCOMPARE(alus, 9);
        const QList<AutotvmTrial> all = allTrials(trials);
        QCOMPARE(all.size(), 40);
        int withCounters = 0;
        for (const auto& t : all) {
            if (t.errorNo != 0) continue;
            ++withCounters;
            const bool conv = rows[t.taskId].taskName == QLatin1String("conv2d_packed.vta");
            // A conv runs GEMMs (and its requantize epilogue on the ALU); an ALU task only ALU ops.
            QVERIFY(t.counters.value(QStringLiteral("alu_counter")) > 0);
            QCOMPARE(t.counters.value(QStringLiteral("gemm_counter")) > 0, conv);
        }
        QVERIFY(withCounters > 0);
        const QList<QJsonArray> records = readRecords(logPath);
        QVERIFY(records.size() > all.size());  // the scalar-rhs duplicates
        int scalar = 0;
        for (const auto& in : records) {
            QCOMPARE(in[0].toString(), intelfocl);
            const QJsonArray args = in[2].toArray();
            if (args.size() == 2 && args[1].toArray()[1].toArray().isEmpty()) ++scalar;
        }
        QCOMPARE(records.size(), all.size() + scalar);
    }

    // The same job measured on a VTA device of a tracker: the fleet starts `tunebench-cli
    // rpc-server --device vta --key intelfocl` registering with the monitor's local tracker, and
    // the window's runner "rpc" sends every config's VTA program there; the counters come back.
    void testVtaDeviceThroughTheTracker() {
        session::TrackerMonitor monitor;
        QTemporaryDir logs;
        monitor.setFleetPaths(QStringLiteral(TB_CLI_PATH), {}, {}, logs.path());
        QSignalSpy queue(&monitor, &session::TrackerMonitor::queueChanged);
        QSignalSpy fleet(&monitor, &session::TrackerMonitor::fleetChanged);
        QSignalSpy started(&monitor, &session::TrackerMonitor::localTrackerStarted);
        monitor.addVtaDevice();
        QVERIFY(waitFor(started, 1, 30000));
        const int port = started[0][1].toInt();
        QVERIFY(tb::test::waitForServers(queue, session::TrackerMonitor::vtaKey(), 1));
        const auto devices = fleet.last()[0].value<QList<session::FleetDeviceRow>>();
        QCOMPARE(devices.size(), 1);
        QVERIFY(devices[0].vta);
        QCOMPARE(devices[0].key, session::TrackerMonitor::vtaKey());

        QTemporaryDir dir;
        session::TuningJob job = autotvmJob(dir.filePath(QStringLiteral("vta_rpc.log")), QStringLiteral("random"), 1);
        job.network = QStringLiteral("resnet-18");
        job.target = TuningSession::vtaTargetPresets()[1];
        job.runner = QStringLiteral("rpc");
        job.trackerHost = QStringLiteral("127.0.0.1");
        job.trackerPort = port;
        job.deviceKey = QStringLiteral("intelfocl");
        job.timeoutS = 60;
        TuningSession s;
        QSignalSpy trials(&s, &TuningSession::autotvmTrialsAvailable);
        QSignalSpy finished(&s, &TuningSession::tuningFinished);
        QSignalSpy failed(&s, &TuningSession::tuningFailed);
        QSignalSpy log(&s, &TuningSession::logMessage);
        s.start(job);
        QVERIFY(waitFor(finished, 1, 600000));
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed[0][0].toString()));
        bool saidDevice = false;
        for (const auto& l : log) saidDevice = saidDevice || l[0].toString().contains(QStringLiteral("VTA device 'intelfocl'"));
        QVERIFY(saidDevice);
        const QList<AutotvmTrial> all = allTrials(trials);
        QCOMPARE(all.size(), 20);
        int measured = 0;
        for (const auto& t : all)
            if (t.errorNo == 0) {
                ++measured;
                QVERIFY(t.counters.value(QStringLiteral("alu_counter")) > 0);  // came back over RPC
            }
        QVERIFY(measured > 0);
        monitor.stopAll();
    }

    void testUnknownTunerFails() {
        QTemporaryDir dir;
        TuningSession s;
        QSignalSpy failed(&s, &TuningSession::tuningFailed);
        QSignalSpy finished(&s, &TuningSession::tuningFinished);
        s.start(autotvmJob(dir.filePath(QStringLiteral("x.log")), QStringLiteral("annealing"), 2));
        QVERIFY(waitFor(failed, 1, 120000));
        QCOMPARE(finished.size(), 0);
        QVERIFY2(failed[0][0].toString().contains(QStringLiteral("annealing")), qPrintable(failed[0][0].toString()));
        QCOMPARE(s.state(), TuningSession::State::Idle);
    }
};

QTEST_GUILESS_MAIN(TestAutotvmSession)
#include "tst_autotvm_session.moc"
