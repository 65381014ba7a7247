// SPDX-License-Identifier: Apache-2.0
// The window offscreen, fed by the real session (mlp, random cost model, sandboxed runner) and a
// real in-process tracker: the task table fills, the chart plots and exports (CSV) what it was fed,
// the DAG view draws, the tracker panel lists the local device, the language menu switches to
// Chinese, the log inspector reads TVM's logs in both formats, the setup panel validates targets and
// carries every job setting.
#include <QAbstractItemModelTester>
#include <QAction>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>

#include <cmath>

#include "app/session/trackermonitor.h"
#include "app/session/tuningsession.h"
#include "widgets/dagview.h"
#include "widgets/latencychart.h"
#include "widgets/loginspector.h"
#include "widgets/mainwindow.h"
#include "widgets/models/devicequeuemodel.h"
#include "widgets/models/measurementmodel.h"
#include "widgets/models/tasktablemodel.h"
#include "widgets/setupwidget.h"
#include "widgets/trackerpanel.h"

using namespace tb;

namespace {

bool waitFor(QSignalSpy& spy, int count = 1, int timeoutMs = 300000) {
    QDeadlineTimer deadline(timeoutMs);
    while (spy.size() < count && !deadline.hasExpired())
        if (!spy.wait(int(std::max<qint64>(1, deadline.remainingTime())))) break;
    return spy.size() >= count;
}

// True when the CSV file at `path` is `header` followed by one line per row of `rows`, each field
// the row's value as written with 6 significant digits (QTextStream's default); logs the first
// difference otherwise.
bool csvMatches(const QString& path, const QString& header, const QList<QList<double>>& rows) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return false;
    const QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    if (lines.isEmpty() || lines[0] != header) {
        qWarning() << "header" << (lines.isEmpty() ? QString() : lines[0]) << "expected" << header;
        return false;
    }
    if (lines.size() - 1 != rows.size()) {
        qWarning() << lines.size() - 1 << "rows, expected" << rows.size();
        return false;
    }
    const int columns = int(header.count(QLatin1Char(',')) + 1);
    for (int r = 0; r < rows.size(); ++r) {
        const QStringList fields = lines[r + 1].split(QLatin1Char(','));
        if (fields.size() != columns || rows[r].size() != columns) {
            qWarning() << "row" << r << "has" << fields.size() << "fields:" << lines[r + 1];
            return false;
        }
        for (int c = 0; c < columns; ++c) {
            bool ok = false;
            const double got = fields[c].toDouble(&ok), want = rows[r][c];
            if (!ok || std::abs(got - want) > 1e-5 * std::max(1.0, std::abs(want))) {
                qWarning() << "row" << r << "column" << c << "is" << fields[c] << "expected" << want;
                return false;
            }
        }
    }
    return true;
}

QAction* findAction(QMenuBar* bar, const QString& text) {
    for (QAction* menu : bar->actions())
        if (menu->menu())
            for (QAction* a : menu->menu()->actions())
                if (a->text() == text) return a;
    return nullptr;
}

}  // namespace

class TestWidgets : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testWindowFedByRealSession() {
        QTemporaryDir dir;
        session::TuningSession s;
        widgets::MainWindow w(&s, nullptr);
        // Every live model (and the sorting proxy in front of the task table) under the tester,
        // fed by the batches of a real run.
        using Tester = QAbstractItemModelTester;
        Tester t1(w.taskModel(), Tester::FailureReportingMode::QtTest);
        Tester t2(w.measurementModel(), Tester::FailureReportingMode::QtTest);
        Tester t3(w.taskView()->model(), Tester::FailureReportingMode::QtTest);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        session::TuningJob job;
        job.network = QStringLiteral("mlp");
        job.trials = 16;
        job.perRound = 8;
        job.costModel = QStringLiteral("random");
        job.minRepeatMs = 1;
        job.logPath = dir.filePath(QStringLiteral("window.json"));
        w.setJob(job);
        QCOMPARE(w.job().network, QStringLiteral("mlp"));
        QCOMPARE(w.job().costModel, QStringLiteral("random"));
        QCOMPARE(w.job().minRepeatMs, 1);

        QSignalSpy finished(&s, &session::TuningSession::tuningFinished);
        QSignalSpy failed(&s, &session::TuningSession::tuningFailed);
        QSignalSpy dags(&s, &session::TuningSession::dagAvailable);
        QSignalSpy measured(&s, &session::TuningSession::measurementsAvailable);
        QSignalSpy latency(&s, &session::TuningSession::latencyPointAdded);
        QVERIFY(w.startButton()->isEnabled());
        QTest::mouseClick(w.startButton(), Qt::LeftButton);  // one click tunes
        QVERIFY(!w.startButton()->isEnabled());
        QVERIFY2(waitFor(finished), qPrintable(failed.isEmpty() ? QStringLiteral("timeout") : failed[0][0].toString()));
        QVERIFY(w.startButton()->isEnabled());

        // The table: one row per task, every task measured.
        const auto* tm = w.taskModel();
        QVERIFY(tm->rowCount() >= 2);
        QCOMPARE(w.taskView()->model()->rowCount(), tm->rowCount());
        for (int r = 0; r < tm->rowCount(); ++r) {
            QVERIFY(tm->data(tm->index(r, models::TaskTableModel::DescriptionColumn)).toString().startsWith(QStringLiteral("vm_mod_fused_")));
            QVERIFY(tm->data(tm->index(r, models::TaskTableModel::LatencyColumn)).toString() != QStringLiteral("-"));
            QVERIFY(tm->data(tm->index(r, models::TaskTableModel::TrialsColumn)).toInt() > 0);
        }
        // Every measured candidate is in the history table.
        int rows = 0;
        for (const auto& a : measured) rows += int(a[0].value<QList<session::MeasureRow>>().size());
        QCOMPARE(w.measurementModel()->rowCount(), rows);

        // The chart: the estimated total latency curve has points, so has the selected task's scatter.
        QCOMPARE(w.chart()->view(), widgets::LatencyChart::View::TotalVsTrials);
        QVERIFY(w.chart()->pointCount() > 0);
        w.chart()->setView(widgets::LatencyChart::View::Candidates);
        QVERIFY(w.chart()->pointCount() > 0);
        w.chart()->setView(widgets::LatencyChart::View::TotalVsTime);
        QVERIFY(w.chart()->pointCount() > 0);
        // The CSV export holds exactly what was fed to the chart: every latency point of the run, in
        // order; in the candidates view, every measurement of the selected task.
        const QString csv = dir.filePath(QStringLiteral("chart.csv"));
        QVERIFY(w.chart()->exportCsv(csv));
        QList<QList<double>> expected;
        for (const auto& a : latency) {
            const auto p = a[0].value<session::LatencyPoint>();
            expected.append({double(p.trials), p.elapsedS, p.estimatedMs, p.partialMs, double(p.tasksWithCost), double(p.tasks)});
        }
        QVERIFY(!expected.isEmpty());
        QVERIFY(expected.last()[2] > 0);  // the run ended with every task measured
        QVERIFY(csvMatches(csv, QStringLiteral("trials,elapsed_s,estimated_total_latency_ms,measured_tasks_latency_ms,measured_tasks,tasks"), expected));
        w.chart()->setView(widgets::LatencyChart::View::Candidates);
        QVERIFY(w.chart()->exportCsv(csv));
        expected.clear();
        for (const auto& a : measured)
            for (const auto& r : a[0].value<QList<session::MeasureRow>>())
                if (r.taskId == w.selectedTask())
                    expected.append({double(r.taskId), double(r.trial), r.costMs, r.gflops, double(r.errorNo), r.predicted});
        QVERIFY(!expected.isEmpty());
        QVERIFY(csvMatches(csv, QStringLiteral("task,trial,cost_ms,gflops,error_no,predicted"), expected));

        // The DAG view draws the selected (first) task's stages and reads.
        QVERIFY(waitFor(dags, 1, 60000));
        QTRY_VERIFY_WITH_TIMEOUT(w.dagView()->nodeCount() > 0, 60000);
        const session::DagSnapshot& d = w.dagView()->dag();
        QCOMPARE(d.taskId, w.selectedTask());
        QCOMPARE(w.dagView()->nodeCount(), int(d.stages.size()));
        QCOMPARE(w.dagView()->edgeCount(), int(d.edges.size()));
        QVERIFY(w.dagView()->edgeCount() > 0);
        // Best schedules arrive with the rounds: wait for the loop nest of the measured best.
        QTRY_VERIFY_WITH_TIMEOUT(!w.dagView()->dag().loopNest.isEmpty(), 60000);
        // Text tabs are filled when shown.
        auto* loops = qobject_cast<QPlainTextEdit*>(w.dagView()->tabs()->widget(widgets::DagView::LoopNestTab));
        QVERIFY(loops);
        w.dagView()->tabs()->setCurrentIndex(widgets::DagView::LoopNestTab);
        QVERIFY(loops->toPlainText().contains(QStringLiteral("for")));
        auto* ir = qobject_cast<QPlainTextEdit*>(w.dagView()->tabs()->widget(widgets::DagView::LlvmIrTab));
        QVERIFY(ir && ir->toPlainText().isEmpty());
        w.dagView()->tabs()->setCurrentIndex(widgets::DagView::LlvmIrTab);
        QVERIFY(ir->toPlainText().contains(QStringLiteral("define")));
        w.dagView()->tabs()->setCurrentIndex(widgets::DagView::GraphTab);

        // Selecting another row in the table shows that task's DAG.
        const int before = int(dags.size());
        w.taskView()->selectRow(1);
        const int wanted = w.taskView()->model()->index(1, 0).data(models::TaskTableModel::TaskIdRole).toInt();
        QCOMPARE(w.selectedTask(), wanted);
        QVERIFY(waitFor(dags, before + 1, 60000));
        QTRY_COMPARE_WITH_TIMEOUT(w.dagView()->dag().taskId, wanted, 60000);
        QVERIFY(w.dagView()->nodeCount() > 0);
    }

    void testCloseWhileTuningStopsFirst() {
        QTemporaryDir dir;
        session::TuningSession s;
        widgets::MainWindow w(&s, nullptr);
        session::TuningJob job;
        job.network = QStringLiteral("mlp");
        job.trials = 100000;
        job.perRound = 4;
        job.costModel = QStringLiteral("random");
        job.minRepeatMs = 1;
        job.logPath = dir.filePath(QStringLiteral("close.json"));
        w.setJob(job);
        w.show();
        QSignalSpy measured(&s, &session::TuningSession::measurementsAvailable);
        QSignalSpy finished(&s, &session::TuningSession::tuningFinished);
        w.startTuning();
        QVERIFY(waitFor(measured));
        // The first close only asks the session to stop; the window stays up and responsive.
        QVERIFY(!w.close());
        QVERIFY(w.isVisible());
        QCOMPARE(s.state(), session::TuningSession::State::Stopping);
        QVERIFY(waitFor(finished));
        QTRY_VERIFY(!w.isVisible());
        int rows = 0;
        for (const auto& a : measured) rows += int(a[0].value<QList<session::MeasureRow>>().size());
        QFile log(job.logPath);
        QVERIFY(log.open(QIODevice::ReadOnly));
        QCOMPARE(int(log.readAll().count('\n')), rows);
    }

    void testTrackerPanelShowsLocalDevice() {
        session::TuningSession s;
        session::TrackerMonitor monitor;
        widgets::MainWindow w(&s, &monitor);
        QAbstractItemModelTester tester(w.trackerPanel()->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy started(&monitor, &session::TrackerMonitor::localTrackerStarted);
        QSignalSpy queue(&monitor, &session::TrackerMonitor::queueChanged);
        monitor.startLocalFleet();
        QVERIFY(waitFor(started, 1, 30000));
        QVERIFY(started[0][1].toInt() > 0);
        QCOMPARE(monitor.localTrackerPort(), started[0][1].toInt());
        // The server registers asynchronously: wait for a SUMMARY that lists its key.
        const auto hasLocal = [&] {
            for (const auto& a : queue)
                for (const auto& k : a[0].value<session::DeviceQueueSnapshot>().keys)
                    if (k.key == QLatin1String("local")) return true;
            return false;
        };
        QDeadlineTimer deadline(30000);
        while (!hasLocal() && !deadline.hasExpired()) queue.wait(2000);
        QVERIFY(hasLocal());
        QCoreApplication::processEvents();
        const models::DeviceQueueModel* m = w.trackerPanel()->model();
        QCOMPARE(m->rowCount(), 1);
        QCOMPARE(m->data(m->index(0, models::DeviceQueueModel::KeyColumn)).toString(), QStringLiteral("local"));
        QCOMPARE(m->data(m->index(0, models::DeviceQueueModel::TotalColumn)).toInt(), 1);
        QCOMPARE(m->data(m->index(0, models::DeviceQueueModel::FreeColumn)).toInt(), 1);
        QCOMPARE(w.trackerPanel()->serverList()->topLevelItemCount(), 1);
        QCOMPARE(w.trackerPanel()->serverList()->topLevelItem(0)->text(1), QStringLiteral("server:local"));
        QVERIFY(w.trackerPanel()->statusText().contains(QString::number(monitor.localTrackerPort())));
        monitor.stopAll();
    }

    void testLanguageSwitch() {
        session::TuningSession s;
        widgets::MainWindow w(&s, nullptr);
        QCOMPARE(w.windowTitle(), QStringLiteral("TuneBench — auto-tuning workbench"));
        // Through the Language menu, as a user would.
        QAction* zh = findAction(w.menuBar(), QStringLiteral("简体中文"));
        QVERIFY(zh);
        zh->trigger();
        QCOMPARE(w.language(), QStringLiteral("zh_CN"));
        QCOMPARE(w.windowTitle(), QStringLiteral("TuneBench — 自动调优工作台"));
        QCOMPARE(w.taskModel()->headerData(models::TaskTableModel::LatencyColumn, Qt::Horizontal).toString(),
                 QStringLiteral("延迟 (ms)"));
        QCOMPARE(w.startButton()->text(), QStringLiteral("开始"));
        QVERIFY(findAction(w.menuBar(), QStringLiteral("退出(&Q)")));
        QAction* en = findAction(w.menuBar(), QStringLiteral("English"));
        QVERIFY(en);
        en->trigger();
        QCOMPARE(w.language(), QStringLiteral("en"));
        QCOMPARE(w.windowTitle(), QStringLiteral("TuneBench — auto-tuning workbench"));
        QCOMPARE(w.startButton()->text(), QStringLiteral("Start"));
    }

    void testLogInspector_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("format");
        QTest::addColumn<int>("workloads");
        QTest::addColumn<int>("records");
        QTest::addRow("ansor resnet-18") << QStringLiteral("../shared/data/logs/ansor/tvmsandbox_resnet-18-NHWC-B1-llvm.json")
                                         << QStringLiteral("auto_scheduler") << 24 << 1265;
        QTest::addRow("autotvm tophub arm") << QStringLiteral("../shared/data/logs/autotvm/tophub_arm_cpu_v0.08.log")
                                            << QStringLiteral("autotvm") << 258 << 1164;
        // The other shared logs: -1 = "at least one" (their exact counts are the record layer's tests).
        for (const char* f : {"ansor/tvm_ci_conv2d.json", "ansor/tvm_ci_matmul.json", "ansor/tvm_ci_sparse_dense.json"})
            QTest::addRow("%s", f) << QStringLiteral("../shared/data/logs/") + QLatin1String(f) << QStringLiteral("auto_scheduler") << -1 << -1;
        for (const char* f : {"autotvm/tophub_llvm_v0.04.log", "autotvm/tophub_mali_v0.06.log"})
            QTest::addRow("%s", f) << QStringLiteral("../shared/data/logs/") + QLatin1String(f) << QStringLiteral("autotvm") << -1 << -1;
    }
    void testLogInspector() {
        QFETCH(QString, path);
        QFETCH(QString, format);
        QFETCH(int, workloads);
        QFETCH(int, records);
        QVERIFY2(QFileInfo::exists(path), qPrintable(path));
        widgets::LogInspector inspector;
        inspector.show();
        QSignalSpy loaded(&inspector, &widgets::LogInspector::logLoaded);
        inspector.openLog(path);
        QVERIFY(waitFor(loaded, 1, 60000));
        const widgets::LogPane* pane = inspector.leftPane();
        QCOMPARE(pane->log().format, format);
        if (records >= 0)
            QCOMPARE(pane->log().records, records);
        else
            QVERIFY(pane->log().records > 0);
        if (workloads < 0) workloads = int(pane->log().workloads.size());
        QVERIFY(workloads > 0);
        QCOMPARE(pane->workloadTable()->rowCount(), workloads);
        QCOMPARE(int(pane->log().workloads.size()), workloads);
        QVERIFY(pane->errorTable()->rowCount() >= 1);
        QVERIFY(pane->plottedPoints() > 0);
        QVERIFY(inspector.statusText().contains(path));

        // Compare opens the right pane.
        QVERIFY(inspector.rightPane()->isHidden());
        inspector.openLog(path, true);
        QVERIFY(waitFor(loaded, 2, 60000));
        QVERIFY(!inspector.rightPane()->isHidden());
        QCOMPARE(inspector.rightPane()->workloadTable()->rowCount(), workloads);
    }

    void testLogInspectorBadFile() {
        widgets::LogInspector inspector;
        QSignalSpy loaded(&inspector, &widgets::LogInspector::logLoaded);
        inspector.openLog(QStringLiteral("/nonexistent/tuning.json"));
        QVERIFY(waitFor(loaded, 1, 60000));
        QCOMPARE(inspector.leftPane()->log().format, QStringLiteral("error"));
        QCOMPARE(inspector.leftPane()->workloadTable()->rowCount(), 0);
        QVERIFY(!inspector.statusText().isEmpty());
    }

    void testSetupValidatesTarget() {
        session::TuningSession s;
        widgets::MainWindow w(&s, nullptr);
        QVERIFY(w.startButton()->isEnabled());
        w.setupWidget()->setTargetText(QStringLiteral("llvm -mcpu=notacpu"));
        QVERIFY(!w.setupWidget()->isValid());
        QVERIFY(!w.startButton()->isEnabled());
        QVERIFY(w.setupWidget()->targetError().contains(QStringLiteral("notacpu")));
        w.setupWidget()->setTargetText(QStringLiteral("llvm -mcpu=znver4"));
        QVERIFY(w.setupWidget()->isValid());
        QVERIFY(w.startButton()->isEnabled());
        QCOMPARE(w.job().target, QStringLiteral("llvm -mcpu=znver4"));
    }

    // Every setting of a job (= every `tunebench-cli tune` option, tst_tuning_job) has a field in
    // the setup panel: a job with every field off its default comes back unchanged.
    void testSetupCarriesEveryOption() {
        widgets::SetupWidget w({QStringLiteral("mobilenet"), QStringLiteral("mlp")}, [](const QString&) { return QString(); });
        session::TuningJob j;
        j.network = QStringLiteral("mlp");
        j.onnxPath = QStringLiteral("/models/det.onnx");
        j.shapes = {QStringLiteral("x=1,3,640,640"), QStringLiteral("y=1,2")};
        j.batch = 4;
        j.layout = QStringLiteral("NCHW");
        j.winograd = false;
        j.target = QStringLiteral("llvm -mcpu=core-avx2");
        j.trials = 320;
        j.perRound = 16;
        j.earlyStopping = 200;
        j.strategy = QStringLiteral("round-robin");
        j.seed = 7;
        j.costModel = QStringLiteral("random");
        j.seedDefaultSchedule = false;
        j.taskIds = {2, 5};
        j.runner = QStringLiteral("rpc");
        j.trackerHost = QStringLiteral("10.0.0.7");
        j.trackerPort = 9191;
        j.deviceKey = QStringLiteral("rasp4b-64");
        j.number = 7;
        j.repeat = 5;
        j.minRepeatMs = 300;
        j.timeoutS = 2.5;
        j.cacheFlush = true;
        j.trackerRetryTimeoutS = 33;
        j.logPath = QStringLiteral("/nonexistent/r18.json");  // no file: resume is not offered
        j.latencyLogPath = QStringLiteral("/tmp/latency.tsv");
        w.setJob(j);
        QCOMPARE(w.job(), j);
        QVERIFY(w.isValid());
    }
};

QTEST_MAIN(TestWidgets)
#include "tst_widgets.moc"
