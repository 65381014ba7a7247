// SPDX-License-Identifier: Apache-2.0
// The window offscreen, fed by the real session (mlp, random cost model, sandboxed runner) and a
// real in-process tracker: the task table fills, the chart plots and exports (CSV) what it was fed,
// the DAG view draws, the tracker panel lists the local device, the language menu switches to
// Chinese, the log inspector reads TVM's logs in both formats, the setup panel validates targets and
// carries every job setting.
#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeWidget>
#include <QtTest>

#include <cmath>
#include <memory>
#include <optional>

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

// Answers the next modal file dialog by choosing `path` (polls until one opens; rejects it if it
// is still open after the answer, gives up after 10 s); its name filters land in `filters`.
void answerNextFileDialog(const QString& path, QStringList* filters = nullptr) {
    auto* timer = new QTimer(qApp);
    const QDeadlineTimer deadline(10000);
    auto answered = std::make_shared<std::optional<QPointer<QFileDialog>>>();
    QObject::connect(timer, &QTimer::timeout, timer, [timer, path, filters, deadline, answered] {
        if (answered->has_value()) {
            if (QFileDialog* d = answered->value(); d && d->isVisible())
                QMetaObject::invokeMethod(d, "reject");  // the answer did not close it
        } else if (auto* d = qobject_cast<QFileDialog*>(QApplication::activeModalWidget())) {
            if (filters) *filters = d->nameFilters();
            // selectFile() leaves the focused name field alone while the dialog is shown: type it.
            auto* name = d->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"));
            QVERIFY(name);
            name->setText(path);
            *answered = d;
            QMetaObject::invokeMethod(d, "accept");  // a protected slot
            return;
        } else if (!deadline.hasExpired()) {
            return;
        }
        timer->stop();
        timer->deleteLater();
    });
    timer->start(50);
}

// Makes `dir` the working directory (where generated log names live) until destroyed.
struct WorkingDirectory {
    explicit WorkingDirectory(const QString& dir) : old(QDir::currentPath()) { QDir::setCurrent(dir); }
    ~WorkingDirectory() { QDir::setCurrent(old); }
    QString old;
};

const QString kPpocrDir = QStringLiteral("../shared/data/models/ppocr/");

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

    // Issue 16.1: choosing an ONNX model with dynamic inputs (PP-OCR rec declares x [?, 3, 48, ?])
    // prefills the input shapes with its input name and static dims; a missing or wrong binding is
    // refused with this model's example, not a generic one.
    void testSetupPrefillsOnnxInputShapes() {
        widgets::SetupWidget w({QStringLiteral("mobilenet")}, [](const QString&) { return QString(); });
        auto* onnx = w.findChild<QLineEdit*>(QStringLiteral("OnnxPath"));
        auto* shapes = w.findChild<QLineEdit*>(QStringLiteral("InputShapes"));
        auto* hint = w.findChild<QLabel*>(QStringLiteral("ShapesHint"));
        auto* error = w.findChild<QLabel*>(QStringLiteral("ShapesError"));
        auto* browse = w.findChild<QPushButton*>(QStringLiteral("OnnxBrowse"));
        QVERIFY(onnx && shapes && hint && error && browse);
        QVERIFY(!shapes->isEnabled());
        const QString rec = QFileInfo(kPpocrDir + QStringLiteral("ch_PP-OCRv4_rec_infer.onnx")).absoluteFilePath();
        QVERIFY(QFileInfo::exists(rec));
        answerNextFileDialog(rec);
        browse->click();
        QCOMPARE(w.job().onnxPath, rec);
        QVERIFY(shapes->isEnabled());
        QCOMPARE(shapes->text(), QStringLiteral("x=1,3,48,320"));
        QCOMPARE(w.job().shapes, QStringList{QStringLiteral("x=1,3,48,320")});
        QVERIFY(w.isValid());
        QVERIFY(error->isHidden());
        QVERIFY(!hint->isHidden());
        QVERIFY2(hint->text().contains(QStringLiteral("x float [?, 3, 48, ?]")), qPrintable(hint->text()));
        QVERIFY(hint->toolTip().contains(QStringLiteral("p2o.DynamicDimension.0")));

        shapes->clear();
        QVERIFY(!w.isValid());
        QVERIFY(!error->isHidden());
        QVERIFY2(error->text().contains(QStringLiteral("[?, 3, 48, ?]")) && error->text().contains(QStringLiteral("x=1,3,48,320")),
                 qPrintable(error->text()));
        shapes->setText(QStringLiteral("x=1,3,640,640"));  // the static height is 48
        QVERIFY(!w.isValid());
        QVERIFY2(error->text().contains(QStringLiteral("x=1,3,48,320")), qPrintable(error->text()));
        shapes->setText(QStringLiteral("x=1,3,48,?"));
        QVERIFY(!w.isValid());
        shapes->setText(QStringLiteral("image=1,3,48,320"));
        QVERIFY(!w.isValid());
        QVERIFY2(error->text().contains(QStringLiteral("'image'")), qPrintable(error->text()));
        shapes->setText(QStringLiteral("x=2,3,48,640"));
        QVERIFY(w.isValid());
        QVERIFY(error->isHidden());
        QCOMPARE(w.job().shapes, QStringList{QStringLiteral("x=2,3,48,640")});

        // The detector's height and width are both dynamic.
        onnx->setText(QFileInfo(kPpocrDir + QStringLiteral("ch_PP-OCRv4_det_infer.onnx")).absoluteFilePath());
        QCOMPARE(shapes->text(), QStringLiteral("x=1,3,640,640"));
        QVERIFY(w.isValid());
        // A job that names the model without shapes (`tunebench --onnx`) gets them prefilled too.
        session::TuningJob j = w.job();
        j.shapes.clear();
        w.setJob(j);
        QCOMPARE(w.job().shapes, QStringList{QStringLiteral("x=1,3,640,640")});
        // Back to the zoo: no shapes.
        onnx->clear();
        QVERIFY(!shapes->isEnabled());
        QVERIFY(hint->isHidden());
        QVERIFY(w.job().shapes.isEmpty());
    }

    // Issue 16.2: the log name follows the network (zoo or ONNX) until the user names it; choosing
    // another network no longer leaves Resume ticked on the previous network's log.
    void testSetupLogNameFollowsNetwork() {
        const QString det = QFileInfo(kPpocrDir + QStringLiteral("ch_PP-OCRv4_det_infer.onnx")).absoluteFilePath();
        QTemporaryDir dir;
        WorkingDirectory cwd(dir.path());
        QFile old(QStringLiteral("tunebench_mobilenet.json"));
        QVERIFY(old.open(QIODevice::WriteOnly));
        old.write("{\"i\": []}\n");
        old.close();

        widgets::SetupWidget w({QStringLiteral("mobilenet"), QStringLiteral("mlp")}, [](const QString&) { return QString(); });
        auto* onnx = w.findChild<QLineEdit*>(QStringLiteral("OnnxPath"));
        auto* network = w.findChild<QComboBox*>(QStringLiteral("Network"));
        auto* log = w.findChild<QLineEdit*>(QStringLiteral("LogPath"));
        QVERIFY(onnx && network && log);
        session::TuningJob j;
        j.network = QStringLiteral("mobilenet");
        j.logPath = QStringLiteral("tunebench_mobilenet.json");
        j.resume = true;
        w.setJob(j);
        QCOMPARE(w.job().logPath, QStringLiteral("tunebench_mobilenet.json"));
        QVERIFY(w.job().resume);

        onnx->setText(det);
        QCOMPARE(w.job().logPath, QStringLiteral("tunebench_ch_PP-OCRv4_det_infer.json"));
        QVERIFY(!w.job().resume);  // that log does not exist
        onnx->clear();
        network->setCurrentText(QStringLiteral("mlp"));
        QCOMPARE(w.job().logPath, QStringLiteral("tunebench_mlp.json"));
        network->setCurrentText(QStringLiteral("mobilenet"));
        QCOMPARE(w.job().logPath, QStringLiteral("tunebench_mobilenet.json"));
        QVERIFY(w.job().resume);  // its own log is offered again

        // `tunebench --onnx det.onnx` starts with the zoo default's generated name: it follows too.
        j.onnxPath = det;
        w.setJob(j);
        QCOMPARE(w.job().logPath, QStringLiteral("tunebench_ch_PP-OCRv4_det_infer.json"));

        // A name typed by hand stays.
        log->selectAll();
        QTest::keyClicks(log, QStringLiteral("mine.json"));
        QCOMPARE(w.job().logPath, QStringLiteral("mine.json"));
        onnx->clear();
        network->setCurrentText(QStringLiteral("mlp"));
        QCOMPARE(w.job().logPath, QStringLiteral("mine.json"));
        // So does one a job names.
        j.onnxPath.clear();
        j.logPath = QStringLiteral("/nonexistent/r18.json");
        w.setJob(j);
        network->setCurrentText(QStringLiteral("mobilenet"));
        QCOMPARE(w.job().logPath, QStringLiteral("/nonexistent/r18.json"));
    }

    // Issue 16.2: Start without Resume on a log that already holds records asks (append as TVM,
    // resume, cancel); cancel starts nothing, resume ticks Resume; an empty log is not asked about.
    void testStartWithoutResumeOnExistingLogAsks() {
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("records.json"));
        QVERIFY(QFile::copy(QStringLiteral("../shared/data/logs/ansor/tvmsandbox_resnet-18-NHWC-B1-llvm.json"), log));
        QFile f(log);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const int lines = int(QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts).size());
        f.close();
        QVERIFY(lines > 0);

        session::TuningSession s;
        widgets::MainWindow w(&s, nullptr);
        session::TuningJob j = w.job();
        j.network = QStringLiteral("mlp");
        j.logPath = log;
        j.resume = false;
        w.setJob(j);
        QVERIFY(!w.job().resume);
        int asked = 0;
        int askedRecords = 0;
        QString askedPath;
        auto answer = widgets::SetupWidget::LogChoice::Cancel;
        w.setupWidget()->setLogChoiceAsker([&](const QString& path, int records) {
            ++asked;
            askedPath = path;
            askedRecords = records;
            return answer;
        });
        QSignalSpy states(&s, &session::TuningSession::stateChanged);
        w.startTuning();
        QCOMPARE(asked, 1);
        QCOMPARE(askedPath, log);
        QCOMPARE(askedRecords, lines);
        QCOMPARE(states.size(), 0);
        QCOMPARE(s.state(), session::TuningSession::State::Idle);

        answer = widgets::SetupWidget::LogChoice::Append;
        QVERIFY(w.setupWidget()->confirmStart());
        QCOMPARE(asked, 2);
        QVERIFY(!w.job().resume);
        answer = widgets::SetupWidget::LogChoice::Resume;
        QVERIFY(w.setupWidget()->confirmStart());
        QCOMPARE(asked, 3);
        QVERIFY(w.job().resume);
        QVERIFY(w.setupWidget()->confirmStart());  // resuming: nothing to ask
        QCOMPARE(asked, 3);

        const QString empty = dir.filePath(QStringLiteral("empty.json"));
        QFile e(empty);
        QVERIFY(e.open(QIODevice::WriteOnly));
        e.close();
        j.logPath = empty;
        w.setJob(j);
        QVERIFY(w.setupWidget()->confirmStart());
        QCOMPARE(asked, 3);
    }

    // Issue 16.16: the log field has a Browse button (a save dialog for .json / .log files).
    void testSetupLogBrowse() {
        widgets::SetupWidget w({QStringLiteral("mobilenet")}, [](const QString&) { return QString(); });
        auto* browse = w.findChild<QPushButton*>(QStringLiteral("LogBrowse"));
        QVERIFY(browse);
        QVERIFY(!browse->text().isEmpty());
        QTemporaryDir dir;
        const QString chosen = dir.filePath(QStringLiteral("chosen.json"));
        QStringList filters;
        answerNextFileDialog(chosen, &filters);
        browse->click();
        QCOMPARE(w.job().logPath, chosen);
        QVERIFY2(!filters.isEmpty() && filters[0].contains(QStringLiteral("*.json")) && filters[0].contains(QStringLiteral("*.log")),
                 qPrintable(filters.join(QLatin1Char('|'))));
        // A chosen name no longer follows the network.
        w.findChild<QLineEdit*>(QStringLiteral("OnnxPath"))
            ->setText(QFileInfo(kPpocrDir + QStringLiteral("ch_PP-OCRv4_det_infer.onnx")).absoluteFilePath());
        QCOMPARE(w.job().logPath, chosen);
    }

    // Issue 16.16: the target drop-down is wide enough for the longest preset (aarch64).
    void testSetupTargetPopupFitsPresets() {
        widgets::SetupWidget w({QStringLiteral("mobilenet")}, [](const QString&) { return QString(); });
        w.resize(300, 800);
        w.show();
        auto* target = w.findChild<QComboBox*>(QStringLiteral("Target"));
        QVERIFY(target);
        target->setFixedWidth(target->fontMetrics().horizontalAdvance(QStringLiteral("llvm -mcpu=core-avx2")));
        const int aarch64 = target->findText(QStringLiteral("llvm -mtriple=aarch64-linux-gnu -mattr=+neon"));
        QVERIFY(aarch64 > 0);
        target->showPopup();
        QAbstractItemView* view = target->view();
        QTRY_VERIFY(view->isVisible());
        QVERIFY(target->width() < view->sizeHintForColumn(0));  // the field alone would cut it
        QVERIFY2(view->viewport()->width() >= view->sizeHintForColumn(0),
                 qPrintable(QStringLiteral("%1 < %2").arg(view->viewport()->width()).arg(view->sizeHintForColumn(0))));
        QCOMPARE(target->itemData(aarch64, Qt::ToolTipRole).toString(), target->itemText(aarch64));
        target->hidePopup();
    }
};

QTEST_MAIN(TestWidgets)
#include "tst_widgets.moc"
