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
#include <QDialog>
#include <QDir>
#include <QFileDialog>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QSet>
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

#include "app/session/engineadapter.h"
#include "app/session/logloader.h"
#include "app/session/trackermonitor.h"
#include "app/session/tuningsession.h"
#include "widgets/dagview.h"
#include "widgets/fleettimeline.h"
#include "widgets/latencychart.h"
#include "widgets/loginspector.h"
#include "widgets/mainwindow.h"
#include "widgets/models/devicequeuemodel.h"
#include "widgets/models/fleetmodel.h"
#include "widgets/models/measurementmodel.h"
#include "widgets/models/tasktablemodel.h"
#include "widgets/rooflineview.h"
#include "widgets/sessionpage.h"
#include "widgets/setupwidget.h"
#include "widgets/trackerpanel.h"
#include "widgets/qcustomplot_include.h"
#include "engine/codegen/target.h"
#include "engine/graph/task_extraction.h"
#include "engine/graph/zoo.h"
#include "engine/measure/gpu_runner.h"

using namespace tb;

namespace {

bool waitFor(QSignalSpy& spy, int count = 1, int timeoutMs = 300000) {
    QDeadlineTimer deadline(timeoutMs);
    while (spy.size() < count && !deadline.hasExpired())
        if (!spy.wait(int(std::max<qint64>(1, deadline.remainingTime())))) break;
    return spy.size() >= count;
}

// True when the CSV file at `path` is `header` followed by one line per row of `rows`, each field
// the row's value as written with 6 significant digits (QTextStream's default), or empty where the
// row holds NaN (a value that does not exist); logs the first difference otherwise.
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
            const double want = rows[r][c];
            if (std::isnan(want)) {  // a value that does not exist is an empty field
                if (!fields[c].isEmpty()) {
                    qWarning() << "row" << r << "column" << c << "is" << fields[c] << "expected empty";
                    return false;
                }
                continue;
            }
            bool ok = false;
            const double got = fields[c].toDouble(&ok);
            if (!ok || std::abs(got - want) > 1e-5 * std::max(1.0, std::abs(want))) {
                qWarning() << "row" << r << "column" << c << "is" << fields[c] << "expected" << want;
                return false;
            }
        }
    }
    return true;
}

// The records of a TVM log, one JSON object per line.
QList<QJsonObject> readJsonLines(const QString& path) {
    QList<QJsonObject> out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return out;
    while (!f.atEnd())
        if (const QByteArray line = f.readLine().trimmed(); !line.isEmpty()) out.append(QJsonDocument::fromJson(line).object());
    return out;
}

session::TuningJob mlpJob(const QString& logPath, int trials, int perRound = 8) {
    session::TuningJob job;
    job.network = QStringLiteral("mlp");
    job.trials = trials;
    job.perRound = perRound;
    job.costModel = QStringLiteral("random");
    job.minRepeatMs = 1;
    job.logPath = logPath;
    return job;
}

QList<session::TaskRow> fakeTasks(int n) {
    QList<session::TaskRow> rows;
    for (int i = 0; i < n; ++i) {
        session::TaskRow r;
        r.id = i;
        r.description = QStringLiteral("vm_mod_fused_nn_dense_add");
        r.workloadKey = QStringLiteral("[\"0123456789abcdef0123456789abcdef\", [1, %1], [%1, %1], [1, %1]]").arg(64 << i);
        r.flop = 1e6;
        r.bestMs = 0.5;
        r.trials = 8;
        r.state = QStringLiteral("tuned");
        r.next = i == 0;
        rows.append(r);
    }
    return rows;
}

// The ticks an axis drew at its last replot.
QVector<double> ticks(QCPAxis* axis) {
    axis->parentPlot()->replot(QCustomPlot::rpImmediateRefresh);
    return axis->tickVector();
}

// A copy of `src`'s first `records` records with every workload key rewritten into TVM's older flat
// form (["hash", 1, 7, 7, 512, ...]): the same workloads, spelled differently.
bool writeFlatKeyCopy(const QString& src, const QString& dst, int records) {
    QFile in(src), out(dst);
    if (!in.open(QIODevice::ReadOnly) || !out.open(QIODevice::WriteOnly)) return false;
    int n = 0;
    while (!in.atEnd() && n < records) {
        const QByteArray line = in.readLine().trimmed();
        if (line.isEmpty() || line.startsWith('#')) continue;
        QJsonObject rec = QJsonDocument::fromJson(line).object();
        QJsonArray i = rec[QStringLiteral("i")].toArray();
        QJsonArray task = i[0].toArray();
        QJsonArray flat;
        for (const QJsonValue& v : QJsonDocument::fromJson(task[0].toString().toUtf8()).array()) {
            if (v.isArray())
                for (const QJsonValue& d : v.toArray()) flat.append(d);
            else
                flat.append(v);
        }
        task[0] = QString::fromUtf8(QJsonDocument(flat).toJson(QJsonDocument::Compact));
        i[0] = task;
        rec[QStringLiteral("i")] = i;
        out.write(QJsonDocument(rec).toJson(QJsonDocument::Compact) + '\n');
        ++n;
    }
    return n == records;
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

session::FleetEvent fleetEvent(int kind, int phase, const QString& device, const QString& key, int candidate, double startS,
                               double endS = -1, int errorNo = 0, quint64 jobId = 7) {
    session::FleetEvent e;
    e.kind = kind;
    e.phase = phase;
    e.jobId = jobId;
    e.taskId = candidate % 3;
    e.batch = 1;
    e.candidate = candidate;
    e.device = device;
    e.deviceKey = key;
    e.startS = startS;
    e.endS = endS;
    e.errorNo = errorNo;
    if (errorNo != 0) e.message = QStringLiteral("lost device %1 while running").arg(device);
    return e;
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
            // No estimate yet (estimatedMs < 0: some task unmeasured) is written as an empty field.
            const double estimated = p.estimatedMs < 0 ? std::nan("") : p.estimatedMs;
            expected.append({double(p.trials), p.elapsedS, estimated, p.partialMs, double(p.tasksWithCost), double(p.tasks)});
        }
        QVERIFY(!expected.isEmpty());
        QVERIFY(expected.last()[2] > 0);  // the run ended with every task measured
        QVERIFY(csvMatches(csv, QStringLiteral("trials,elapsed_s,estimated_total_latency_ms,measured_tasks_latency_ms,measured_tasks,tasks"), expected));
        w.chart()->setView(widgets::LatencyChart::View::Candidates);
        QVERIFY(w.chart()->exportCsv(csv));
        expected.clear();
        for (const auto& a : measured)
            for (const auto& r : a[0].value<QList<session::MeasureRow>>())
                if (r.taskId == w.selectedTask()) {
                    // A failed candidate has no cost and no throughput: empty fields.
                    const double nan = std::nan("");
                    expected.append({double(r.taskId), double(r.trial), r.errorNo == 0 ? r.costMs : nan,
                                     r.errorNo == 0 ? r.gflops : nan, double(r.errorNo), r.predicted});
                }
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
        auto* loops = w.dagView()->loopNestView();
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

    // The fleet timeline's model (issue 21): steps of a job become bars per device (the host's
    // builds first), a run left open is still running, a device that broke off is marked lost,
    // a timeout is counted, the per-key table adds the tracker's free/busy/pending and the runs
    // per minute, and events of another job are dropped. The strip draws one bar per step where
    // the model says, and its tooltip names task, candidate and duration.
    void testFleetTimelineModel() {
        using E = session::FleetEvent;
        const QString a = QStringLiteral("127.0.0.1:9091"), b = QStringLiteral("127.0.0.1:9092");
        const QString arm = QStringLiteral("rasp4b-64");
        widgets::FleetPanel panel;
        panel.resize(1000, 300);
        models::FleetModel* m = panel.model();
        models::FleetKeyStatsModel* stats = panel.statsModel();
        QAbstractItemModelTester tester(stats, QAbstractItemModelTester::FailureReportingMode::QtTest);
        m->setJobId(7);
        QSignalSpy changed(m, &models::FleetModel::changed);
        m->addEvents({fleetEvent(E::Started, E::Upload, a, arm, 0, 1.0), fleetEvent(E::Finished, E::Upload, a, arm, 0, 1.0, 1.5),
                      fleetEvent(E::Started, E::Run, a, arm, 0, 1.5), fleetEvent(E::Finished, E::Run, a, arm, 0, 1.5, 4.0),
                      fleetEvent(E::Finished, E::Build, QStringLiteral("host"), QStringLiteral("builder"), 0, 0.2, 0.9),
                      fleetEvent(E::Finished, E::Build, QStringLiteral("host"), QStringLiteral("builder"), 1, 0.2, 0.8),
                      fleetEvent(E::Started, E::Run, b, arm, 1, 1.6)});
        QCOMPARE(changed.size(), 1);  // one batch, one change
        QCOMPARE(m->devices().size(), 3);
        QCOMPARE(m->devices()[0].name, QStringLiteral("host"));  // builds on top
        QCOMPARE(m->devices()[1].name, a);
        QCOMPARE(m->devices()[2].name, b);
        QCOMPARE(m->devices()[0].bars.size(), 2);
        QCOMPARE(m->devices()[1].bars.size(), 2);  // upload + run, each closed
        QCOMPARE(m->devices()[1].bars[1].endS, 4.0);
        QCOMPARE(m->devices()[1].runs, 1);
        QCOMPARE(m->devices()[2].bars.size(), 1);
        QVERIFY(m->devices()[2].bars[0].endS < 0);  // still running
        QVERIFY(!m->devices()[2].lost);

        // Device b dies mid-run: marked; its candidate is recorded as an error; a timeout on a.
        m->addEvents({fleetEvent(E::DeviceLost, E::Run, b, arm, -1, 5.0, 5.0, 4),
                      fleetEvent(E::Finished, E::Run, b, arm, 1, 1.6, 5.0, 4),
                      fleetEvent(E::Started, E::Run, a, arm, 2, 5.0), fleetEvent(E::Finished, E::Run, a, arm, 2, 5.0, 15.0, 7),
                      fleetEvent(E::Started, E::Run, a, arm, 3, 20.0, -1, 0, 6)});  // another job's: dropped
        QVERIFY(m->devices()[2].lost);
        QCOMPARE(m->devices()[2].lostAtS, 5.0);
        QVERIFY(m->devices()[2].lostWhy.contains(b));
        QCOMPARE(m->devices()[2].bars.size(), 1);
        QCOMPARE(m->devices()[2].bars[0].errorNo, 4);
        QVERIFY(!m->devices()[1].lost);
        QCOMPARE(m->devices()[1].timeouts, 1);
        QCOMPARE(m->devices()[1].bars.size(), 3);
        QCOMPARE(m->latestS(), 15.0);
        QCOMPARE(m->runs(arm), 3);
        QCOMPARE(m->errors(arm), 2);
        QCOMPARE(m->lostDevices(arm), 1);
        QCOMPARE(m->runsPerMinute(arm), 3 * 60.0 / 15.0);  // 3 runs in the job's first 15 s

        // The tracker's queue joins in: busy = total - free; a key no device measured on is listed.
        session::DeviceQueueSnapshot q;
        q.tracker = QStringLiteral("127.0.0.1:9190");
        q.keys = {session::DeviceKeyRow{arm, 2, 1, 3}, session::DeviceKeyRow{QStringLiteral("local"), 1, 1, 0}};
        m->setQueue(q);
        QCOMPARE(stats->rowCount(), 2);  // rasp4b-64, local (builds are no device key)
        int row = -1;
        for (int r = 0; r < stats->rowCount(); ++r)
            if (stats->data(stats->index(r, models::FleetKeyStatsModel::KeyColumn)).toString() == arm) row = r;
        QVERIFY(row >= 0);
        const auto cell = [&](int column) { return stats->data(stats->index(row, column)); };
        QCOMPARE(cell(models::FleetKeyStatsModel::FreeColumn).toInt(), 1);
        QCOMPARE(cell(models::FleetKeyStatsModel::BusyColumn).toInt(), 1);
        QCOMPARE(cell(models::FleetKeyStatsModel::PendingColumn).toInt(), 3);
        QCOMPARE(cell(models::FleetKeyStatsModel::RunsColumn).toInt(), 3);
        QCOMPARE(cell(models::FleetKeyStatsModel::ErrorsColumn).toInt(), 2);
        QCOMPARE(cell(models::FleetKeyStatsModel::LostColumn).toInt(), 1);
        QCOMPARE(cell(models::FleetKeyStatsModel::PerMinuteColumn).toString(), QStringLiteral("12.0"));

        // The strip: bars in time order along x, inside their device's row; hit-testing and tooltips.
        widgets::FleetTimeline* t = panel.timeline();
        t->resize(800, 200);
        const QRectF upload = t->barRect(1, 0), run = t->barRect(1, 1), timeout = t->barRect(1, 2);
        QVERIFY(upload.isValid() && run.isValid() && timeout.isValid());
        QVERIFY(upload.left() < run.left() && run.left() < timeout.left());
        QVERIFY(run.width() > upload.width());  // 2.5 s against 0.5 s
        QVERIFY(t->rowRect(1).contains(run.center().toPoint()));
        QCOMPARE(t->barAt(run.center().toPoint()), qMakePair(1, 1));
        QCOMPARE(t->barAt(QPoint(2, t->rowRect(1).center().y())), qMakePair(-1, -1));  // the label column
        QVERIFY2(t->barText(1, 1).contains(QStringLiteral("Task 0, candidate 0 of batch 1")), qPrintable(t->barText(1, 1)));
        QVERIFY(t->barText(1, 1).contains(QStringLiteral("2.500 s")));
        QVERIFY(t->barText(1, 2).contains(QStringLiteral("Error 7")));
        QVERIFY(panel.summaryText().contains(QStringLiteral("1 device(s) lost")));
        QVERIFY(!t->grab().isNull());  // paints without a crash

        // A device that leaves the job's tracker (killed between two batches: no session broke)
        // is marked once two snapshots in a row miss it, and unmarked when it registers again;
        // another tracker's snapshot marks nothing.
        m->setJobTracker(q.tracker);
        q.servers = {session::ServerRow{b, QStringLiteral("server:rasp4b-64")}};  // a is missing
        session::DeviceQueueSnapshot other = q;
        other.tracker = QStringLiteral("10.0.0.2:9190");
        m->setQueue(other);
        m->setQueue(other);
        QVERIFY(!m->devices()[1].lost);
        m->setQueue(q);
        QVERIFY(!m->devices()[1].lost);  // once may be a re-registration
        m->setQueue(q);
        QVERIFY(m->devices()[1].lost);
        QVERIFY(m->devices()[1].lostWhy.contains(q.tracker));
        QCOMPARE(cell(models::FleetKeyStatsModel::LostColumn).toInt(), 2);
        q.servers.append(session::ServerRow{a, QStringLiteral("server:rasp4b-64")});
        m->setQueue(q);
        QVERIFY(!m->devices()[1].lost);
        QVERIFY(m->devices()[2].lost);  // b broke off mid-run: the tracker listing it again does not undo that

        m->clear();  // a new job
        QCOMPARE(m->devices().size(), 0);
        QCOMPARE(stats->rowCount(), 2);  // the tracker's keys stay
    }

    // Issue 21: the window starts device processes (two sandboxed host servers of key "local")
    // that register with the tracker it watches; stopping one from the fleet panel ends the
    // process, says so in the fleet listing and takes it off the tracker's list.
    void testFleetAddAndStopDevice() {
        session::TuningSession s;
        session::TrackerMonitor monitor;
        QTemporaryDir logs;
        monitor.setFleetPaths(QStringLiteral(TB_CLI_PATH), {}, {}, logs.path());
        widgets::MainWindow w(&s, &monitor);
        widgets::FleetPanel* panel = w.fleetPanel();
        QSignalSpy queue(&monitor, &session::TrackerMonitor::queueChanged);
        QSignalSpy fleet(&monitor, &session::TrackerMonitor::fleetChanged);
        monitor.startLocalFleet();  // the embedded default: an in-process tracker and server
        panel->addHostButton()->click();
        panel->addHostButton()->click();
        const auto servers = [&] {
            if (queue.isEmpty()) return -1;
            int n = 0;
            for (const auto& srv : queue.last()[0].value<session::DeviceQueueSnapshot>().servers)
                n += srv.key == QLatin1String("server:local") ? 1 : 0;
            return n;
        };
        QTRY_COMPARE_WITH_TIMEOUT(servers(), 3, 60000);
        QTreeWidget* list = panel->deviceList();
        QCOMPARE(list->topLevelItemCount(), 2);
        QCOMPARE(list->topLevelItem(0)->text(0), QStringLiteral("Host server 0"));
        QCOMPARE(list->topLevelItem(1)->text(1), QStringLiteral("local"));
        QVERIFY(list->topLevelItem(1)->text(2).startsWith(QStringLiteral("running (pid ")));
        QVERIFY(!panel->stopButton()->isEnabled());  // nothing selected
        list->setCurrentItem(list->topLevelItem(1));
        QVERIFY(panel->stopButton()->isEnabled());
        panel->stopButton()->click();
        QTRY_COMPARE_WITH_TIMEOUT(list->topLevelItem(1)->text(2), QStringLiteral("stopped"), 20000);
        QVERIFY(list->topLevelItem(0)->text(2).startsWith(QStringLiteral("running (pid ")));
        QVERIFY(!panel->stopButton()->isEnabled());
        QTRY_COMPARE_WITH_TIMEOUT(servers(), 2, 30000);
        // The tracker panel's server list follows too.
        QTRY_COMPARE_WITH_TIMEOUT(w.trackerPanel()->serverList()->topLevelItemCount(), 2, 5000);
        monitor.stopAll();
        QTRY_COMPARE_WITH_TIMEOUT(list->topLevelItem(0)->text(2), QStringLiteral("stopped"), 5000);
    }

    // Issue 21, heterogeneous sessions in one window: the first session tunes mlp on the tracker's
    // host server (key local), a page beside it tunes mlp for another target in the sandbox. Both run
    // at once, each fills its own task table and engine log and writes its own log under its own
    // target; the fleet timeline shows both (a builder row each, the server and the sandbox); the
    // page's Stop stops only the page.
    void testHeterogeneousSessionsSideBySide() {
        QTemporaryDir dir;
        session::TuningSession s;
        session::TrackerMonitor monitor;
        widgets::MainWindow w(&s, &monitor);
        QSignalSpy trackerUp(&monitor, &session::TrackerMonitor::localTrackerStarted);
        monitor.startLocalFleet();
        QVERIFY(waitFor(trackerUp, 1, 30000));
        session::TuningJob first = mlpJob(dir.filePath(QStringLiteral("tunebench_mlp.json")), 100000, 4);
        first.runner = QStringLiteral("rpc");
        first.trackerPort = trackerUp[0][1].toInt();
        first.deviceKey = QStringLiteral("local");
        w.setJob(first);
        session::TuningJob other = first;
        other.runner = QStringLiteral("local");
        other.target = QStringLiteral("llvm -mcpu=x86-64");
        // The same log name as the first session's: the page gets a name of its own beside it.
        widgets::SessionPage* page = w.addSession(other);
        QCOMPARE(page->job().logPath, dir.filePath(QStringLiteral("tunebench_mlp_host.json")));
        QCOMPARE(w.sessionPages().size(), 1);
        QCOMPARE(page->findChild<QLabel*>(QStringLiteral("SessionTitle"))->text(), QStringLiteral("mlp · host · llvm -mcpu=x86-64"));
        w.show();
        QSignalSpy measured1(&s, &session::TuningSession::measurementsAvailable);
        QSignalSpy measured2(page->session(), &session::TuningSession::measurementsAvailable);
        QSignalSpy finished2(page->session(), &session::TuningSession::tuningFinished);
        w.startTuning();
        page->start();
        QVERIFY(waitFor(measured1));
        QVERIFY(waitFor(measured2));
        QTRY_VERIFY(w.taskModel()->rowCount() > 0 && page->taskModel()->rowCount() == w.taskModel()->rowCount());
        QVERIFY(page->engineLog()->toPlainText().contains(QLatin1String("-mcpu=x86-64")));
        QVERIFY(!w.engineLog()->toPlainText().contains(QLatin1String("-mcpu=x86-64")));
        // One timeline for both: the first session's server and builder, the page's sandbox and builder.
        QCoreApplication::processEvents();
        QStringList devices;
        for (const auto& d : w.fleetPanel()->model()->devices()) devices.append(d.name);
        QVERIFY2(devices.contains(QStringLiteral("host")) && devices.contains(QStringLiteral("host (session 2)")), qPrintable(devices.join(u',')));
        QVERIFY2(devices.indexOf(QStringLiteral("host")) < 2 && devices.indexOf(QStringLiteral("host (session 2)")) < 2,
                 qPrintable(devices.join(u',')));  // builders on top
        QVERIFY2(devices.contains(QStringLiteral("local sandbox")), qPrintable(devices.join(u',')));
        QVERIFY2(std::any_of(devices.begin(), devices.end(), [](const QString& d) { return d.contains(u':'); }), qPrintable(devices.join(u',')));
        QVERIFY(!w.fleetPanel()->model()->keys().contains(models::FleetModel::builderKey()));
        // The page's Stop ends the page only.
        QVERIFY(page->stopButton()->isEnabled());
        page->stopButton()->click();
        QVERIFY(waitFor(finished2));
        QVERIFY(page->isIdle());
        QCOMPARE(s.state(), session::TuningSession::State::Running);
        const int before = int(measured1.size());
        QVERIFY(waitFor(measured1, before + 1));
        w.close();  // stops the first session; the window closes once it has
        QTRY_VERIFY_WITH_TIMEOUT(!w.isVisible(), 300000);
        const auto targets = [](const QString& path) {
            QSet<QString> out;
            for (const QJsonObject& r : readJsonLines(path)) out.insert(r[QLatin1String("i")].toArray()[0].toArray()[1].toString());
            return out;
        };
        const QSet<QString> t1 = targets(first.logPath), t2 = targets(page->job().logPath);
        QCOMPARE(t1.size(), 1);
        QCOMPARE(t2.size(), 1);
        QVERIFY2(t2.begin()->contains(QLatin1String("-mcpu=x86-64")) && *t1.begin() != *t2.begin(), qPrintable(*t2.begin()));
        monitor.stopAll();
    }

    // File > Add Session… asks for the job in a setup panel of its own, prefilled with the window's
    // job under a log name of its own; OK adds and starts the page.
    void testAddSessionFromMenu() {
        QTemporaryDir dir;
        session::TuningSession s;
        widgets::MainWindow w(&s, nullptr);
        w.setJob(mlpJob(dir.filePath(QStringLiteral("tunebench_mlp.json")), 8, 8));
        w.show();
        QAction* add = nullptr;
        for (QAction* a : w.menuBar()->actions().first()->menu()->actions())
            if (a->text().contains(QLatin1String("Session"))) add = a;
        QVERIFY(add);
        QString prefilledLog;
        QTimer::singleShot(0, &w, [&] {
            for (QWidget* top : QApplication::topLevelWidgets())
                if (auto* dialog = qobject_cast<QDialog*>(top); dialog && dialog->isVisible()) {
                    auto* setup = dialog->findChild<widgets::SetupWidget*>();
                    prefilledLog = setup->job().logPath;
                    session::TuningJob j = setup->job();
                    j.target = QStringLiteral("llvm -mcpu=x86-64");
                    setup->setJob(j);
                    dialog->accept();
                }
        });
        add->trigger();
        QCOMPARE(prefilledLog, dir.filePath(QStringLiteral("tunebench_mlp_host.json")));
        QCOMPARE(w.sessionPages().size(), 1);
        widgets::SessionPage* page = w.sessionPages().first();
        QCOMPARE(page->job().target, QStringLiteral("llvm -mcpu=x86-64"));
        QSignalSpy finished(page->session(), &session::TuningSession::tuningFinished);
        QVERIFY(!page->isIdle());
        QVERIFY(waitFor(finished));
        QCOMPARE(int(readJsonLines(page->job().logPath).size()), page->totalTrials());
        QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("tunebench_mlp.json"))));  // the first session did not run
    }

    void testSessionLogNames() {
        session::TuningJob job;
        job.network = QStringLiteral("mobilenet");
        job.logPath = QStringLiteral("logs/tunebench_mobilenet.json");
        QCOMPARE(widgets::distinctLogPath(job, {}), QStringLiteral("logs/tunebench_mobilenet_host.json"));
        job.runner = QStringLiteral("rpc");
        job.deviceKey = QStringLiteral("rasp4b-64");
        QCOMPARE(widgets::distinctLogPath(job, {}), QStringLiteral("logs/tunebench_mobilenet_rasp4b-64.json"));
        QCOMPARE(widgets::distinctLogPath(job, {QStringLiteral("logs/tunebench_mobilenet_rasp4b-64.json")}),
                 QStringLiteral("logs/tunebench_mobilenet_rasp4b-64_2.json"));
        job.logPath.clear();
        QCOMPARE(widgets::distinctLogPath(job, {}), QStringLiteral("tunebench_mobilenet_rasp4b-64.json"));
        job.target = QStringLiteral("llvm -mtriple=aarch64-linux-gnu");
        QCOMPARE(widgets::sessionTitle(job), QStringLiteral("mobilenet · rasp4b-64 · llvm -mtriple=aarch64-linux-gnu"));
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
        QCOMPARE(w.benchButton()->text(), QStringLiteral("编译并测速"));
        QTRY_COMPARE(w.fleetPanel()->startButton()->text(), QStringLiteral("启动设备集群"));  // on LanguageChange
        QVERIFY(findAction(w.menuBar(), QStringLiteral("退出(&Q)")));
        QAction* en = findAction(w.menuBar(), QStringLiteral("English"));
        QVERIFY(en);
        en->trigger();
        QCOMPARE(w.language(), QStringLiteral("en"));
        QCOMPARE(w.windowTitle(), QStringLiteral("TuneBench — auto-tuning workbench"));
        QCOMPARE(w.startButton()->text(), QStringLiteral("Start"));
    }

    // A target set before the language changes (tunebench --lang zh_CN --target ...: the
    // LanguageChange event arrives after setJob) survives the retranslation of the host item.
    void testLanguageSwitchKeepsTheTarget() {
        session::TuningSession s;
        widgets::MainWindow w(&s, nullptr);
        QVERIFY(w.setLanguage(QStringLiteral("zh_CN")));
        session::TuningJob j = w.job();
        j.target = QStringLiteral("llvm -mtriple=aarch64-linux-gnu -mattr=+neon");
        w.setJob(j);
        QCoreApplication::processEvents();  // the posted LanguageChange
        QCOMPARE(w.job().target, j.target);
        QVERIFY(w.setLanguage(QStringLiteral("en")));
        QCoreApplication::processEvents();
        QCOMPARE(w.job().target, j.target);
        j.target.clear();  // the host stays the host, named in the new language
        w.setJob(j);
        QVERIFY(w.setLanguage(QStringLiteral("zh_CN")));
        QCoreApplication::processEvents();
        QCOMPARE(w.job().target, QString());
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

    // Issue 18: the GPU presets, each with the host it comes with (the Mali boards' AArch64 CPU);
    // the host field is on for GPU targets only, and the engine's parser checks the pair.
    void testSetupGpuTargets() {
        widgets::SetupWidget w({QStringLiteral("mlp")}, &session::TuningSession::validateTarget);
        QLineEdit* host = w.targetHostField();
        QVERIFY(!host->isEnabled());  // the host CPU
        QVERIFY(w.selectTargetPreset(QStringLiteral("opencl -device=mali")));
        QVERIFY(host->isEnabled());
        QCOMPARE(host->text(), QStringLiteral("llvm -mtriple=aarch64-linux-gnu"));
        QVERIFY2(w.isValid(), qPrintable(w.targetError()));
        QCOMPARE(w.job().target, QStringLiteral("opencl -device=mali"));
        QCOMPARE(w.job().targetHost, QStringLiteral("llvm -mtriple=aarch64-linux-gnu"));
        // A host that is not an llvm target: the parser's sentence, and no start.
        host->setText(QStringLiteral("cuda"));
        QVERIFY(!w.isValid());
        QVERIFY2(w.targetError().contains(QStringLiteral("host")), qPrintable(w.targetError()));
        for (const char* gpu : {"cuda -arch=sm_90", "cuda -arch=sm_80", "opencl"}) {
            QVERIFY2(w.selectTargetPreset(QString::fromLatin1(gpu)), gpu);
            QVERIFY(host->isEnabled());
            QVERIFY(host->text().isEmpty());  // these presets come without a host
            QVERIFY2(w.isValid(), qPrintable(w.targetError()));
            QCOMPARE(w.job().target, QString::fromLatin1(gpu));
        }
        // A typed CUDA target keeps a typed host; a CPU target turns the field off and drops it.
        host->setText(QStringLiteral("llvm"));
        QVERIFY(w.isValid());
        QCOMPARE(w.job().targetHost, QStringLiteral("llvm"));
        QVERIFY(w.selectTargetPreset(QStringLiteral("llvm -mcpu=znver4")));
        QVERIFY(!host->isEnabled());
        QVERIFY(w.job().targetHost.isEmpty());
        QVERIFY(w.isValid());
        // A job with a host comes back unchanged.
        session::TuningJob j = w.job();
        j.target = QStringLiteral("opencl -device=mali");
        j.targetHost = QStringLiteral("llvm -mtriple=aarch64-linux-gnu -mattr=+neon");
        j.logPath = QStringLiteral("/nonexistent/mali.json");  // a name of its own (generated ones follow the network)
        w.setJob(j);
        QCOMPARE(w.job(), j);
    }

    // Issue 18: the fleet panel starts an emulated Mali board (scripts/mali-board: a GPU device
    // server on PoCL, key rk3399); the tracker panel then shows the attributes of key rk3399, as the
    // device reports them through the tracker (the same query asked here directly), and none for
    // the CPU server of key local.
    void testTrackerPanelShowsMaliBoardAttributes() {
        session::TuningSession s;
        session::TrackerMonitor monitor;
        widgets::MainWindow w(&s, &monitor);
        QSignalSpy trackerUp(&monitor, &session::TrackerMonitor::localTrackerStarted);
        monitor.startLocalFleet();  // a tracker and one in-process CPU server (key local)
        QVERIFY(waitFor(trackerUp, 1, 30000));
        const int port = trackerUp[0][1].toInt();
        w.fleetPanel()->addMaliButton()->click();
        QTreeWidget* devices = w.fleetPanel()->deviceList();
        QTRY_COMPARE_WITH_TIMEOUT(devices->topLevelItemCount(), 1, 30000);
        QCOMPARE(devices->topLevelItem(0)->text(0), QStringLiteral("Mali board 0"));
        QCOMPARE(devices->topLevelItem(0)->text(1), QStringLiteral("rk3399"));

        QTreeWidget* gpu = w.trackerPanel()->gpuDeviceList();
        QTRY_VERIFY_WITH_TIMEOUT(gpu->topLevelItemCount() >= 1, 120000);
        QCOMPARE(gpu->topLevelItemCount(), 1);  // the CPU server's key is not a GPU
        QTreeWidgetItem* key = gpu->topLevelItem(0);
        QCOMPARE(key->text(0), QStringLiteral("rk3399"));
        QMap<QString, QString> shown;
        for (int i = 0; i < key->childCount(); ++i) shown.insert(key->child(i)->text(0), key->child(i)->text(1));

        const measure::RemoteGpuDevice device = measure::queryRemoteGpuDevice("127.0.0.1", port, "rk3399", 60);
        QCOMPARE(shown.value(QStringLiteral("device_api")), QString::fromStdString(device.deviceApi));
        QCOMPARE(shown.value(QStringLiteral("device_api")), QStringLiteral("opencl"));
        QCOMPARE(shown.value(QStringLiteral("device_name")), QString::fromStdString(device.attributes.deviceName));
        QCOMPARE(shown.value(QStringLiteral("warp_size")), QString::number(device.attributes.warpSize));
        QCOMPARE(shown.value(QStringLiteral("max_threads_per_block")), QString::number(device.attributes.maxThreadsPerBlock));
        QCOMPARE(shown.value(QStringLiteral("max_shared_memory_per_block")),
                 QString::number(device.attributes.maxSharedMemoryPerBlock));
        QCOMPARE(shown.value(QStringLiteral("multi_processor_count")), QString::number(device.attributes.multiProcessorCount));
        QCOMPARE(shown.value(QStringLiteral("max_vthread_extent")),
                 QString::number(measure::hardwareParamsFromGpu(device.attributes).maxVthreadExtent));
        // scripts/mali-board's Mali-T860 limits (PoCL's own are larger): they come from the board.
        QCOMPARE(shown.value(QStringLiteral("max_threads_per_block")), QStringLiteral("256"));
        QCOMPARE(shown.value(QStringLiteral("max_shared_memory_per_block")), QStringLiteral("32768"));
        QCOMPARE(shown.value(QStringLiteral("warp_size")), QStringLiteral("1"));
        QVERIFY(shown.value(QStringLiteral("device_name")).contains(QStringLiteral("Mali")));
        monitor.stopAll();
        QTRY_COMPARE_WITH_TIMEOUT(devices->topLevelItem(0)->text(2), QStringLiteral("stopped"), 20000);
    }

    // Issue 18: for a GPU task the loop nest tab shows, beside the kernels' loop nests, the kernel
    // source the device compiles (OpenCL C with __kernel, CUDA C with __global__) and each launch's
    // grid and block; an untuned task shows its GPU default schedule. A CPU task has no such pane.
    void testDagViewShowsGpuKernelSource_data() {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("qualifier");
        QTest::addRow("opencl mali") << QStringLiteral("opencl -device=mali") << QStringLiteral("OpenCL C") << QStringLiteral("__kernel void ");
        QTest::addRow("cuda sm_90") << QStringLiteral("cuda -arch=sm_90") << QStringLiteral("CUDA C") << QStringLiteral("__global__");
    }
    void testDagViewShowsGpuKernelSource() {
        QFETCH(QString, target);
        QFETCH(QString, language);
        QFETCH(QString, qualifier);
        graph::TaskExtractionOptions eo;
        eo.target = target.toStdString();
        const auto tasks = graph::extractTasks(graph::makeNetwork("mlp"), eo);
        QVERIFY(!tasks.empty());
        session::DagSnapshot d =
            session::adapter::dagSnapshot(tasks[0].dag, State(), 1e10, codegen::Target::parse(target.toStdString()));
        d.taskId = 0;
        d.description = QString::fromStdString(tasks[0].desc);
        QVERIFY2(d.error.isEmpty(), qPrintable(d.error));

        widgets::DagView view;
        view.resize(1200, 700);
        view.setDag(d);
        view.tabs()->setCurrentIndex(widgets::DagView::LoopNestTab);
        QVERIFY(!view.kernelPane()->isHidden());
        QCOMPARE(view.tabs()->tabText(widgets::DagView::LoopNestTab), QStringLiteral("Loop nest + kernel source"));
        QVERIFY(!view.tabs()->isTabVisible(widgets::DagView::LlvmIrTab));
        const QString source = view.kernelSourceView()->toPlainText();
        QVERIFY2(source.contains(qualifier), qPrintable(source.left(500)));
        QVERIFY(!d.kernelEntries.isEmpty());
        const QString launches = view.kernelLaunchLabel()->text();
        QVERIFY2(launches.startsWith(language + QStringLiteral(" of the GPU default schedule")), qPrintable(launches));
        for (const QString& entry : d.kernelEntries) {
            QVERIFY2(source.contains(entry + QLatin1Char('(')), qPrintable(entry));
            QVERIFY2(launches.contains(entry + QStringLiteral(" grid=(")), qPrintable(launches));
            QVERIFY(view.loopNestView()->toPlainText().contains(QStringLiteral("// kernel ") + entry));
        }

        // A CPU task of the same network: no kernel pane, the LLVM tabs back.
        graph::TaskExtractionOptions cpu;
        cpu.target = "llvm";
        const auto cpuTasks = graph::extractTasks(graph::makeNetwork("mlp"), cpu);
        session::DagSnapshot c = session::adapter::dagSnapshot(cpuTasks[0].dag, State(), 1e10, codegen::Target::host());
        c.taskId = 0;
        view.setDag(c);
        QVERIFY(view.kernelPane()->isHidden());
        QVERIFY(view.tabs()->isTabVisible(widgets::DagView::LlvmIrTab));
        QCOMPARE(view.tabs()->tabText(widgets::DagView::LoopNestTab), QStringLiteral("Loop nest"));
    }

    // Every setting of a job (= every `tunebench-cli tune` option, tst_tuning_job) has a field in
    // the setup panel: a job with every field off its default comes back unchanged.
    void testSetupCarriesEveryOption() {
        widgets::SetupWidget w({QStringLiteral("mobilenet"), QStringLiteral("mlp")}, [](const QString&, const QString&) { return QString(); });
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
        j.cacheFlush = QStringLiteral("on");
        j.pipelineSlice = 8;  // no control: kept as hidden
        j.abandonFactor = 4;  // the same
        j.rejectPreempted = true;
        j.trackerRetryTimeoutS = 33;
        j.logPath = QStringLiteral("/nonexistent/r18.json");  // no file: resume is not offered
        j.latencyLogPath = QStringLiteral("/tmp/latency.tsv");
        w.setJob(j);
        QCOMPARE(w.job(), j);
        QVERIFY(w.isValid());
        j.costModel = QStringLiteral("xgb-rank");  // the third cost model of the combo box
        w.setJob(j);
        QCOMPARE(w.job(), j);
        j.costModel = QStringLiteral("xgb-tvm");  // the fourth
        w.setJob(j);
        QCOMPARE(w.job(), j);
    }

    // ---- issue 16: the window as a user meets it ------------------------------------------

    // #3: a Start that fails leaves no old tasks in the table while the detail views are empty.
    void testFailedStartLeavesNoStalePanels() {
        QTemporaryDir dir;
        session::TuningSession s;
        widgets::MainWindow w(&s, nullptr);
        w.show();
        // What an earlier job left on screen.
        Q_EMIT s.tasksAdded(fakeTasks(3));
        session::LatencyPoint p;
        p.trials = 8;
        p.partialMs = 1.5;
        p.tasksWithCost = 1;
        p.tasks = 3;
        Q_EMIT s.latencyPointAdded(p);
        QList<session::MeasureRow> rows(8);
        for (auto& r : rows) r.gflops = 10;
        Q_EMIT s.measurementsAvailable(rows);
        QCOMPARE(w.taskModel()->rowCount(), 3);
        QVERIFY(w.chart()->pointCount() > 0);

        session::TuningJob job = mlpJob(dir.filePath(QStringLiteral("fail.json")), 16);
        job.onnxPath = dir.filePath(QStringLiteral("missing.onnx"));
        w.setJob(job);
        QSignalSpy failed(&s, &session::TuningSession::tuningFailed);
        w.startTuning();
        QVERIFY(waitFor(failed, 1, 60000));
        QCOMPARE(w.taskModel()->rowCount(), 0);
        QCOMPARE(w.measurementModel()->rowCount(), 0);
        QCOMPARE(w.chart()->pointCount(), 0);
        QCOMPARE(w.selectedTask(), -1);
        QCOMPARE(w.dagView()->nodeCount(), 0);
        QVERIFY(w.statusText().contains(QStringLiteral("failed")));
        // The message does not block the window: it is up, and the window answers meanwhile.
        auto* box = w.findChild<QMessageBox*>(QStringLiteral("TuningFailedBox"));
        QVERIFY(box);
        QVERIFY(box->text().contains(QStringLiteral("missing.onnx")));
        QVERIFY(w.startButton()->isEnabled());
        box->close();
    }

    // #3: a failed Connect does not show the previous tracker's keys as the new one's.
    void testTrackerPanelAfterFailedConnect() {
        session::TuningSession s;
        session::TrackerMonitor monitor;
        widgets::MainWindow w(&s, &monitor);
        w.show();
        widgets::TrackerPanel* panel = w.trackerPanel();
        QAbstractItemModelTester tester(panel->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        session::DeviceQueueSnapshot old;
        old.tracker = QStringLiteral("10.0.0.1:9190");
        old.keys = {{QStringLiteral("rasp4b-64"), 2, 1, 0}};
        old.servers = {{QStringLiteral("10.0.0.2:9091"), QStringLiteral("server:rasp4b-64")}};
        panel->setTrackerAddress(old.tracker);
        panel->showSnapshot(old);
        QCOMPARE(panel->model()->rowCount(), 1);
        // The tracker stops answering: its last queue stays, greyed, and the panel says so.
        panel->showStatus(QStringLiteral("Tracker 10.0.0.1:9190 unreachable: connection refused"));
        QVERIFY(panel->isStale());
        QVERIFY(panel->statusText().contains(QStringLiteral("last one seen")));

        // Connect to another tracker, which is not there.
        panel->setTrackerAddress(QStringLiteral("127.0.0.1:1"));
        QPushButton* connectButton = nullptr;
        for (auto* b : panel->findChildren<QPushButton*>())
            if (b->text() == QStringLiteral("Connect")) connectButton = b;
        QVERIFY(connectButton);
        QSignalSpy status(&monitor, &session::TrackerMonitor::statusChanged);
        QTest::mouseClick(connectButton, Qt::LeftButton);
        QCOMPARE(panel->model()->rowCount(), 0);
        QCOMPARE(panel->serverList()->topLevelItemCount(), 0);
        QVERIFY(panel->statusText().contains(QStringLiteral("127.0.0.1:1")));
        QVERIFY(waitFor(status, 1, 30000));
        QCoreApplication::processEvents();
        QVERIFY(panel->statusText().contains(QStringLiteral("unreachable")));
        QCOMPARE(panel->model()->rowCount(), 0);
        // A late answer of the old tracker is not taken for the new one's.
        panel->showSnapshot(old);
        QCOMPARE(panel->model()->rowCount(), 0);
        monitor.stopAll();
    }

    // #4: resuming a log shows its history: the measurements, the curve before the resume point,
    // and trial counts that go on from the log's.
    void testResumeShowsTheHistory() {
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("resume.json"));
        const auto recordsIn = [&log] {
            QFile f(log);
            return f.open(QIODevice::ReadOnly) ? int(f.readAll().count('\n')) : -1;
        };
        session::TuningSession s;
        QSignalSpy finished(&s, &session::TuningSession::tuningFinished);
        QSignalSpy failed(&s, &session::TuningSession::tuningFailed);
        int firstRound = 0;
        {
            // The earlier run: two rounds on their own.
            session::TuningSession first;
            QSignalSpy done(&first, &session::TuningSession::tuningFinished);
            QSignalSpy measured(&first, &session::TuningSession::measurementsAvailable);
            first.start(mlpJob(log, 16));
            QVERIFY(waitFor(done));
            firstRound = int(measured[0][0].value<QList<session::MeasureRow>>().size());
        }
        const int earlier = recordsIn();
        QVERIFY(earlier >= 16);
        QVERIFY(session::loadTuningHistory(log, {}, 8).measurements.isEmpty());  // no task given: none matches

        widgets::MainWindow w(&s, nullptr);
        QAbstractItemModelTester tester(w.measurementModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        session::TuningJob job = mlpJob(log, earlier + 8);
        job.resume = true;
        w.setJob(job);
        QVERIFY(w.job().resume);
        w.startTuning();
        QTRY_VERIFY_WITH_TIMEOUT(w.measurementModel()->rowCount() >= earlier, 120000);
        if (s.state() == session::TuningSession::State::Running) {
            // The status bar counts the log's trials too, as the engine does.
            const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("(\\d+) trial")).match(w.statusText());
            QVERIFY2(m.hasMatch() && m.captured(1).toInt() >= earlier, qPrintable(w.statusText()));
        }
        QVERIFY2(waitFor(finished), qPrintable(failed.isEmpty() ? QStringLiteral("timeout") : failed[0][0].toString()));
        // The log's records read back, then this run's, numbered on from the log's.
        const int total = recordsIn();
        QVERIFY(total > earlier);
        const auto& rows = w.measurementModel()->rows();
        QCOMPARE(int(rows.size()), total);
        for (int i = 0; i < total; ++i) {
            QCOMPARE(rows[i].trial, i);
            QCOMPARE(rows[i].fromLog, i < earlier);
        }
        for (int i = 0; i < earlier; ++i) {
            QVERIFY(rows[i].elapsedS <= 0);  // before this run
            QVERIFY(rows[i].errorNo != 0 || rows[i].costMs > 0);
        }
        QVERIFY(w.engineLog()->toPlainText().contains(QStringLiteral("%1 earlier measurement(s) read back").arg(earlier)));
        // The curve: the earlier run's rounds before the resume point, this run's after it.
        w.chart()->setView(widgets::LatencyChart::View::TotalVsTrials);
        QList<double> xs;
        for (int g = 0; g < w.chart()->plot()->graphCount(); ++g)
            for (auto it = w.chart()->plot()->graph(g)->data()->constBegin(); it != w.chart()->plot()->graph(g)->data()->constEnd(); ++it)
                xs.append(it->key);
        std::sort(xs.begin(), xs.end());
        QVERIFY(!xs.isEmpty());
        QCOMPARE(xs.first(), double(firstRound));
        QVERIFY(xs.contains(double(earlier)));
        QCOMPARE(xs.last(), double(total));
    }

    // #5: the inspector says what is wrong with a file instead of "0 records" or nothing.
    void testInspectorSaysWhatIsWrong_data() {
        QTest::addColumn<QByteArray>("content");  // "<missing>" / "<dir>": no such file / a folder
        QTest::addColumn<QString>("says");
        QTest::addRow("missing") << QByteArray("<missing>") << QStringLiteral("does not exist");
        QTest::addRow("folder") << QByteArray("<dir>") << QStringLiteral("folder");
        QTest::addRow("empty") << QByteArray() << QStringLiteral("empty");
        QTest::addRow("blank lines") << QByteArray("\n\n  \n") << QStringLiteral("empty");
        QTest::addRow("other json") << QByteArray("{\"hello\":1}\n") << QStringLiteral("not a TVM tuning log");
        QTest::addRow("text") << QByteArray("hello world\nsecond line\n") << QStringLiteral("not a TVM tuning log");
        QTest::addRow("comments only") << QByteArray("# a header\n# another\n") << QStringLiteral("no records");
    }
    void testInspectorSaysWhatIsWrong() {
        QFETCH(QByteArray, content);
        QFETCH(QString, says);
        QTemporaryDir dir;
        QString path = dir.filePath(QStringLiteral("log.json"));
        if (content == "<dir>") {
            QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("log.json")));
        } else if (content != "<missing>") {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(content);
        }
        widgets::LogInspector inspector;
        QSignalSpy loaded(&inspector, &widgets::LogInspector::logLoaded);
        inspector.openLog(path);
        QVERIFY(waitFor(loaded, 1, 60000));
        QCOMPARE(inspector.leftPane()->log().format, QStringLiteral("error"));
        QVERIFY2(inspector.leftPane()->headerText().contains(says), qPrintable(inspector.leftPane()->headerText()));
        QVERIFY(inspector.statusText().contains(says));
        QVERIFY(inspector.statusText().contains(path));
        QCOMPARE(inspector.leftPane()->workloadTable()->rowCount(), 0);
    }

    // #5: `--inspect` on a missing file opens the inspector, which says so.
    void testInspectMissingFileFromWindow() {
        session::TuningSession s;
        widgets::MainWindow w(&s, nullptr);
        w.openLogInspector(QStringLiteral("/nonexistent/tuning.json"));
        auto* inspector = w.findChild<widgets::LogInspector*>();
        QVERIFY(inspector);
        QTRY_VERIFY_WITH_TIMEOUT(inspector->statusText().contains(QStringLiteral("does not exist")), 30000);
    }

    // #6: Distill offers the session's folder or the working directory, not the log's folder.
    void testDistillSuggestsAWritableFolder() {
        QTemporaryDir data, session;
        const QString src = data.filePath(QStringLiteral("tophub.log"));
        QVERIFY(QFile::copy(QStringLiteral("../shared/data/logs/autotvm/tophub_llvm_v0.04.log"), src));
        widgets::LogInspector inspector;
        QSignalSpy loaded(&inspector, &widgets::LogInspector::logLoaded);
        inspector.openLog(src);
        QVERIFY(waitFor(loaded, 1, 60000));
        QCOMPARE(inspector.suggestedDistillPath(), QDir::current().filePath(QStringLiteral("tophub.best.json")));
        inspector.setOutputFolder(session.path());
        const QString out = inspector.suggestedDistillPath();
        QCOMPARE(out, QDir(session.path()).filePath(QStringLiteral("tophub.best.json")));
        QVERIFY(!session::distillLog(src, out).startsWith(QStringLiteral("error")));
        QVERIFY(QFileInfo(out).size() > 0);
        // A session folder that is gone: the working directory again.
        inspector.setOutputFolder(session.filePath(QStringLiteral("gone")));
        QCOMPARE(QFileInfo(inspector.suggestedDistillPath()).absolutePath(), QDir::currentPath());

        // The main window points the inspector at the folder of the job's log.
        session::TuningSession s;
        widgets::MainWindow w(&s, nullptr);
        session::TuningJob job = mlpJob(session.filePath(QStringLiteral("job.json")), 16);
        w.setJob(job);
        w.openLogInspector(src);
        auto* fromWindow = w.findChild<widgets::LogInspector*>();
        QVERIFY(fromWindow);
        QSignalSpy loaded2(fromWindow, &widgets::LogInspector::logLoaded);
        QVERIFY(waitFor(loaded2, 1, 60000));
        QCOMPARE(QFileInfo(fromWindow->suggestedDistillPath()).absolutePath(), QFileInfo(session.path()).absoluteFilePath());
    }

    // #7: two logs aligned by workload (keys spelled differently still meet), best of each, the
    // speedup, and both on one axis.
    void testCompareLogsByWorkload() {
        QTemporaryDir dir;
        const QString a = QStringLiteral("../shared/data/logs/ansor/tvmsandbox_resnet-18-NHWC-B1-llvm.json");
        const QString b = dir.filePath(QStringLiteral("first300.json"));
        QVERIFY(writeFlatKeyCopy(a, b, 300));
        widgets::LogInspector inspector;
        inspector.show();
        QSignalSpy loaded(&inspector, &widgets::LogInspector::logLoaded);
        inspector.openLog(a);
        QVERIFY(waitFor(loaded, 1, 60000));
        QVERIFY(inspector.comparison()->isHidden());
        inspector.openLog(b, true);
        QVERIFY(waitFor(loaded, 2, 60000));
        widgets::LogComparison* cmp = inspector.comparison();
        QVERIFY(!cmp->isHidden());
        const session::LogSnapshot& la = inspector.leftPane()->log();
        const session::LogSnapshot& lb = inspector.rightPane()->log();
        QCOMPARE(la.workloads.size(), 24);
        QVERIFY(lb.workloads.size() >= 2);
        // Every workload of B is one of A's: one row per workload of A, none only in B.
        QCOMPARE(cmp->matches().size(), la.workloads.size());
        int both = 0;
        for (const auto& m : cmp->matches()) {
            QVERIFY(m.a >= 0);
            if (m.b < 0) continue;
            ++both;
            QVERIFY(lb.workloads[m.b].key != la.workloads[m.a].key);  // B spells the key flat
        }
        QCOMPARE(both, int(lb.workloads.size()));
        QVERIFY(cmp->summaryText().contains(QStringLiteral("%1 workloads in both logs").arg(both)));
        QVERIFY(cmp->summaryText().contains(QStringLiteral("0 only in B")));
        // The table: shapes shown, and the speedup is best A / best B (A holds B's records and more).
        QTableWidget* t = cmp->table();
        t->sortByColumn(widgets::LogComparison::WorkloadColumn, Qt::AscendingOrder);
        int checked = 0;
        for (int r = 0; r < t->rowCount(); ++r) {
            QVERIFY(t->item(r, widgets::LogComparison::WorkloadColumn)->text().contains(QStringLiteral("×")));
            const int mi = t->item(r, widgets::LogComparison::WorkloadColumn)->data(Qt::UserRole).toInt();
            const session::LogMatch& m = cmp->matches()[mi];
            if (m.b < 0 || lb.workloads[m.b].bestMs <= 0) {
                QCOMPARE(t->item(r, widgets::LogComparison::SpeedupColumn)->text(), QStringLiteral("-"));
                continue;
            }
            const double expected = la.workloads[m.a].bestMs / lb.workloads[m.b].bestMs;
            const double shown = t->item(r, widgets::LogComparison::SpeedupColumn)->data(Qt::UserRole + 1).toDouble();
            QCOMPARE(shown, expected);
            QVERIFY(shown <= 1.0 + 1e-12);
            QVERIFY(t->item(r, widgets::LogComparison::SpeedupColumn)->text().endsWith(QStringLiteral("×")));
            ++checked;
        }
        QVERIFY(checked >= 1);
        // One shared axis: the selected workload's costs from A and from B in one plot.
        for (int r = 0; r < t->rowCount(); ++r) {
            const int mi = t->item(r, 0)->data(Qt::UserRole).toInt();
            if (cmp->matches()[mi].b < 0 || lb.workloads[cmp->matches()[mi].b].valid == 0) continue;
            t->setCurrentCell(r, 0);
            break;
        }
        QCustomPlot* plot = cmp->plot();
        QCOMPARE(plot->graphCount(), 4);  // A's points and best-so-far, B's points and best-so-far
        QVERIFY(plot->graph(0)->data()->size() > 0);
        QVERIFY(plot->graph(2)->data()->size() > 0);
        QVERIFY(plot->graph(0)->data()->size() >= plot->graph(2)->data()->size());
        QCOMPARE(plot->yAxis->scaleType(), QCPAxis::stLogarithmic);
        QCOMPARE(inspector.leftPane()->headerText().left(3), QStringLiteral("A: "));
        QCOMPARE(inspector.rightPane()->headerText().left(3), QStringLiteral("B: "));

        // The engine's alignment directly: a flat and a nested key of one workload are one workload.
        const QList<session::LogMatch> ms = session::matchWorkloads(lb, la);
        QCOMPARE(ms.size(), la.workloads.size());
        for (int j = 0; j < lb.workloads.size(); ++j) QVERIFY(ms[j].a == j && ms[j].b >= 0);
    }

    // #8: predicted vs measured zooms to the scores there are and ranks the last round.
    void testPredictedVsMeasured() {
        // Spearman with ties: average ranks.
        QCOMPARE(widgets::LatencyChart::spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
        QCOMPARE(widgets::LatencyChart::spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
        QVERIFY(qFuzzyCompare(widgets::LatencyChart::spearman({1, 2, 2, 3}, {1, 2, 3, 4}), 4.5 / std::sqrt(22.5)));
        QVERIFY(std::isnan(widgets::LatencyChart::spearman({0, 0, 0}, {1, 2, 3})));
        QVERIFY(std::isnan(widgets::LatencyChart::spearman({1}, {1})));

        widgets::LatencyChart chart;
        chart.resize(800, 500);
        chart.show();
        chart.setSelectedTask(0);
        chart.setView(widgets::LatencyChart::View::PredictedVsMeasured);
        // Round one: random picks and the seed carry no score (0); the untrained model scores the
        // others all the same.
        QList<session::MeasureRow> round1(8);
        for (int i = 0; i < 8; ++i) {
            round1[i].taskId = 0;
            round1[i].trial = i;
            round1[i].gflops = 10 + i;
            round1[i].predicted = i < 2 ? 0 : 0.5;
        }
        chart.addMeasurements(round1);
        QVERIFY2(chart.statsText().contains(QStringLiteral("same score")), qPrintable(chart.statsText()));
        QVERIFY(chart.statsText().contains(QStringLiteral("2 picked without a score")));
        QCOMPARE(chart.pointCount(), 6);
        // Round two: scores within 1e-4 of 0.9999, ranked exactly as the measurements.
        QList<session::MeasureRow> round2(8);
        for (int i = 0; i < 8; ++i) {
            round2[i].taskId = 0;
            round2[i].trial = 8 + i;
            round2[i].gflops = 20 + i;
            round2[i].predicted = 0.99990 + 1e-5 * i;
        }
        round2[7].errorNo = 4;  // a failed run has no throughput to rank
        chart.addMeasurements(round2);
        QVERIFY2(chart.statsText().contains(QStringLiteral("Spearman ρ = 1.00 over 7 candidate")), qPrintable(chart.statsText()));
        // Round one ranks nothing (one score), so the mean is over round two alone: not shown.
        QVERIFY(!chart.statsText().contains(QStringLiteral("mean")));
        QCOMPARE(chart.pointCount(), 13);
        // The score axis spans the round's scores (0.9999 … 0.99996), not a fixed 0–1; throughput
        // starts at 0 and reaches the highest point of every round.
        const QCPRange x = chart.plot()->xAxis->range();
        QVERIFY2(x.lower > 0.9998 && x.upper < 1.0001, qPrintable(QStringLiteral("%1 %2").arg(x.lower).arg(x.upper)));
        QVERIFY(x.upper > 0.99996 && x.lower < 0.9999);
        QCOMPARE(chart.plot()->yAxis->range().lower, 0.0);
        QVERIFY(chart.plot()->yAxis->range().upper > 26);

        // A third round ranked backwards: its ρ = -1, the mean over the two ranked rounds 0.
        QList<session::MeasureRow> backwards = round2;
        for (int i = 0; i < 8; ++i) backwards[i].gflops = 30 - i;
        chart.addMeasurements(backwards);
        QVERIFY2(chart.statsText().contains(QStringLiteral("ρ = -1.00 over 7")), qPrintable(chart.statsText()));
        QVERIFY2(chart.statsText().contains(QStringLiteral("mean over 2 round(s): ρ = 0.00")), qPrintable(chart.statsText()));

        // A round where no candidate has a score says so.
        QList<session::MeasureRow> round3 = round1;
        for (auto& r : round3) r.predicted = 0;
        chart.addMeasurements(round3);
        QVERIFY2(chart.statsText().startsWith(QStringLiteral("Last round: no candidate has a cost model score")),
                 qPrintable(chart.statsText()));
    }

    // #10: margins around the data, whole trial numbers, no negative latency, log labels under 10.
    void testChartAxes() {
        widgets::LatencyChart chart;
        chart.resize(800, 500);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.setSelectedTask(0);
        chart.setView(widgets::LatencyChart::View::Candidates);
        QList<session::MeasureRow> rows(3);
        for (int i = 0; i < 3; ++i) {
            rows[i].taskId = 0;
            rows[i].gflops = 5 + i;
        }
        chart.addMeasurements(rows);
        QCustomPlot* plot = chart.plot();
        QVERIFY(plot->xAxis->range().lower < 1 && plot->xAxis->range().upper > 3);
        const QVector<double> xt = ticks(plot->xAxis);
        QVERIFY(!xt.isEmpty());
        for (double t : xt) QCOMPARE(t, std::round(t));
        QCOMPARE(plot->yAxis->range().lower, 0.0);
        plot->yAxis->setRange(-3, 5);  // a drag below zero stops at zero
        QCOMPARE(plot->yAxis->range().lower, 0.0);

        // Costs between 0.2 and 0.8 ms: labelled ticks inside the range, not only at powers of ten.
        widgets::LogPane pane;
        pane.resize(700, 700);
        pane.show();
        session::LogSnapshot log;
        log.path = QStringLiteral("small.json");
        log.format = QStringLiteral("auto_scheduler");
        log.records = log.valid = 7;
        session::LogWorkloadRow w;
        w.key = QStringLiteral("[\"matmul_add\", 128, 128, 128, \"float32\"]");
        w.records = w.valid = 7;
        w.bestMs = 0.2;
        log.workloads = {w};
        for (int i = 0; i < 7; ++i) log.points.append({i, 0, 0.8 - 0.1 * i, 0});
        pane.setLog(log);
        QCOMPARE(pane.plottedPoints(), 7);
        const QVector<double> yt = ticks(pane.plot()->yAxis);
        int inside = 0;
        for (double t : yt)
            if (t >= 0.2 && t <= 0.8) ++inside;
        QVERIFY2(inside >= 2, qPrintable(QString::number(yt.size())));
        QVERIFY(pane.plot()->yAxis->range().lower < 0.2 && pane.plot()->yAxis->range().upper > 0.8);
    }

    // #13: the chart's CSV leaves values that do not exist empty instead of writing -1.
    void testChartCsvLeavesMissingValuesEmpty() {
        QTemporaryDir dir;
        widgets::LatencyChart chart;
        session::LatencyPoint warm;
        warm.trials = 8;
        warm.elapsedS = 1.5;
        warm.partialMs = 2.5;
        warm.tasksWithCost = 1;
        warm.tasks = 3;
        chart.addLatencyPoint(warm);
        const QString csv = dir.filePath(QStringLiteral("total.csv"));
        QVERIFY(chart.exportCsv(csv));
        QFile f(csv);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = f.readAll().split('\n');
        QCOMPARE(lines.value(1), QByteArray("8,1.5,,2.5,1,3"));
        QVERIFY(!lines.join('\n').contains("-1"));

        chart.setSelectedTask(0);
        chart.setView(widgets::LatencyChart::View::Candidates);
        session::MeasureRow bad;
        bad.taskId = 0;
        bad.trial = 3;
        bad.errorNo = 7;
        bad.predicted = 0.25;
        chart.addMeasurements({bad});
        QVERIFY(chart.exportCsv(csv));
        QFile g(csv);
        QVERIFY(g.open(QIODevice::ReadOnly));
        QCOMPARE(g.readAll().split('\n').value(1), QByteArray("0,3,,,7,0.25"));
    }

    // #11, #12: "pausing" until the round has ended, no ▶ after Stop, tabs shown as spaces.
    void testPauseStopAndLogText() {
        QTemporaryDir dir;
        session::TuningSession s;
        widgets::MainWindow w(&s, nullptr);
        Q_EMIT s.logMessage(QStringLiteral("Estimated total latency: - ms\tTrials: 128\tUsed time : 60 s\tNext ID: 1\t"));
        QVERIFY(w.engineLog()->toPlainText().contains(QRegularExpression(QStringLiteral("Trials: 128 +Used time : 60 s +Next ID: 1"))));

        w.setJob(mlpJob(dir.filePath(QStringLiteral("pause.json")), 100000, 4));
        QSignalSpy measured(&s, &session::TuningSession::measurementsAvailable);
        QSignalSpy paused(&s, &session::TuningSession::paused);
        QSignalSpy finished(&s, &session::TuningSession::tuningFinished);
        w.startTuning();
        QVERIFY(waitFor(measured));
        QTest::mouseClick(w.pauseButton(), Qt::LeftButton);
        QCOMPARE(s.state(), session::TuningSession::State::Paused);
        if (paused.isEmpty()) QVERIFY2(w.statusText().startsWith(QStringLiteral("Pausing after this round")), qPrintable(w.statusText()));
        QVERIFY(waitFor(paused));
        QVERIFY2(w.statusText().startsWith(QStringLiteral("Paused:")), qPrintable(w.statusText()));
        QTest::qWait(1500);  // paused time, which is not tuning time
        QTest::mouseClick(w.stopButton(), Qt::LeftButton);
        QVERIFY(waitFor(finished));
        for (int r = 0; r < w.taskModel()->rowCount(); ++r)
            QVERIFY(!w.taskModel()->data(w.taskModel()->index(r, models::TaskTableModel::IdColumn)).toString().contains(QStringLiteral("▶")));
        QVERIFY2(w.statusText().contains(QStringLiteral("paused")), qPrintable(w.statusText()));
    }

    // Issue 21, "the same from the window": Compile && benchmark of the current job (mlp, local
    // runner, no log yet) runs off the GUI thread, streams the compile report and TVM's Execution
    // time summary into the engine log and ends with a one-line result in the status bar.
    void testCompileAndBenchmarkButton() {
        QTemporaryDir dir;
        qputenv("TB_CACHE_DIR", dir.filePath(QStringLiteral("cache")).toLocal8Bit());  // the measured roofs
        session::TuningSession s;
        widgets::MainWindow w(&s, nullptr);
        w.setJob(mlpJob(dir.filePath(QStringLiteral("bench.json")), 8, 8));
        QVERIFY(w.benchButton()->isEnabled());
        QSignalSpy finished(&s, &session::TuningSession::benchmarkFinished);
        QTest::mouseClick(w.benchButton(), Qt::LeftButton);
        QVERIFY(s.benchmarking());
        QVERIFY(!w.benchButton()->isEnabled());
        QVERIFY(!w.startButton()->isEnabled());
        QCOMPARE(w.statusText(), QStringLiteral("Compiling and benchmarking…"));
        QVERIFY(waitFor(finished));
        QVERIFY2(finished[0][1].toBool(), qPrintable(finished[0][0].toString()));
        const QString log = w.engineLog()->toPlainText();
        QVERIFY2(log.contains(QRegularExpression(QStringLiteral("Execution time summary:\\n mean \\(ms\\) +median \\(ms\\)"))),
                 qPrintable(log));
        QVERIFY2(log.contains(QStringLiteral("against the host interpreter")), qPrintable(log));
        QVERIFY2(w.statusText().contains(QRegularExpression(
                     QStringLiteral("^Benchmark on this machine: median [0-9.]+ ms, max error \\S+ \\(ok\\)$"))),
                 qPrintable(w.statusText()));
        QVERIFY(w.benchButton()->isEnabled());
        QVERIFY(w.startButton()->isEnabled());
        // The kernels on the roofline, brought to the front: one point per kernel with FLOPs.
        QCOMPARE(w.chartTabs()->currentWidget(), static_cast<QWidget*>(w.rooflineView()));
        const session::RooflineSnapshot& r = w.rooflineView()->roofline();
        QVERIFY(!r.kernels.isEmpty() && r.peakGflops > 0 && r.bandwidthGBs > 0);
        int drawable = 0;
        for (const auto& k : r.kernels) drawable += k.flop > 0 && k.bytes > 0 ? 1 : 0;
        QVERIFY(drawable >= 1);
        QCOMPARE(int(w.rooflineView()->kernelPoints().size()), drawable);
        QCOMPARE(int(w.rooflineView()->roofPoints().size()), 3);
        qunsetenv("TB_CACHE_DIR");
    }

    // The roofline view for given data: roofs of 200 GFLOP/s and 25 GB/s (ridge 8 FLOP/byte); a
    // compute-bound conv (131.9 FLOP/B, 192.7 GFLOP/s), a memory-bound dense (0.4985 FLOP/B,
    // 10.24 GFLOP/s) and a kernel without FLOPs (not drawn).
    void testRooflineView() {
        session::RooflineSnapshot s;
        s.peakGflops = 200;
        s.bandwidthGBs = 25;
        s.threads = 2;
        session::RooflineKernel conv{QStringLiteral("fused_nn_conv2d_add_nn_relu"), QStringLiteral("1x56x56x64"), 1, 1.2, 231211008, 1753088,
                                     231211008 / 1.2e-3 / 1e9, 231211008.0 / 1753088, QStringLiteral("compute"), 0.9634};
        session::RooflineKernel dense{QStringLiteral("fused_nn_dense_add"), QStringLiteral("1x1000"), 2, 0.1, 1024000, 2054048,
                                      10.24, 1024000.0 / 2054048, QStringLiteral("memory"), 0.8216};
        session::RooflineKernel reshape{QStringLiteral("fused_reshape"), QStringLiteral("1x1000"), 1, 0.01, 0, 4000, 0, 0, QStringLiteral("unknown"), 0};
        s.kernels = {conv, dense, reshape};
        widgets::RooflineView v;
        v.resize(900, 600);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        QVERIFY(v.kernelPoints().isEmpty());
        QVERIFY(v.summaryText().contains(QStringLiteral("Compile & benchmark a network")));
        v.setRoofline(s);
        const QList<QPointF> pts = v.kernelPoints();
        QCOMPARE(pts.size(), 2);
        QCOMPARE(pts[0], QPointF(conv.intensity, conv.gflops));
        QCOMPARE(pts[1], QPointF(dense.intensity, dense.gflops));
        // The roof: the bandwidth slope up to the ridge (8, 200), then flat at the peak, spanning
        // every point; each vertex on min(peak, intensity x bandwidth).
        const QList<QPointF> roof = v.roofPoints();
        QCOMPARE(roof.size(), 3);
        QCOMPARE(roof[1], QPointF(8, 200));
        QVERIFY(roof[0].x() < dense.intensity && roof[2].x() > conv.intensity);
        for (const QPointF& p : roof) QVERIFY(qAbs(p.y() - std::min(200.0, p.x() * 25)) < 1e-9 * p.y());
        // The key: by share of the time (1.2 ms of 1.41 ms, 2 x 0.1 ms of it).
        QCOMPARE(v.labels(), (QStringList{QStringLiteral("1  conv2d_add_relu 1x56x56x64 (85% of the time)"),
                                          QStringLiteral("2  dense_add 1x1000 (14% of the time)")}));
        QVERIFY(v.plot()->xAxis->scaleType() == QCPAxis::stLogarithmic);
        QVERIFY(v.plot()->yAxis->scaleType() == QCPAxis::stLogarithmic);
        QVERIFY(v.plot()->xAxis->range().contains(dense.intensity) && v.plot()->xAxis->range().contains(conv.intensity));
        QVERIFY(v.plot()->yAxis->range().contains(dense.gflops) && v.plot()->yAxis->range().contains(200));
        QVERIFY2(v.kernelText(0).startsWith(QStringLiteral("fused_nn_conv2d_add_nn_relu → 1x56x56x64\n")) &&
                     v.kernelText(0).contains(QStringLiteral("compute-bound at 96% of peak")),
                 qPrintable(v.kernelText(0)));
        QVERIFY2(v.kernelText(1).contains(QStringLiteral("memory-bound at 82% of bandwidth")) &&
                     v.kernelText(1).contains(QStringLiteral("20.54 GB/s")) && v.kernelText(1).contains(QStringLiteral("2 call(s)")),
                 qPrintable(v.kernelText(1)));
        QVERIFY2(v.summaryText().contains(QStringLiteral("peak 200.0 GFLOP/s, triad bandwidth 25.0 GB/s (ridge 8.00")) &&
                     v.summaryText().contains(QStringLiteral("3 kernels: 1 compute-bound, 1 memory-bound")),
                 qPrintable(v.summaryText()));
        // New data replaces the old.
        s.kernels = {dense};
        v.setRoofline(s);
        QCOMPARE(v.kernelPoints().size(), 1);
        QCOMPARE(v.labels(), QStringList{QStringLiteral("1  dense_add 1x1000 (100% of the time)")});
    }

    // Issue 16.1: choosing an ONNX model with dynamic inputs (PP-OCR rec declares x [?, 3, 48, ?])
    // prefills the input shapes with its input name and static dims; a missing or wrong binding is
    // refused with this model's example, not a generic one.
    void testSetupPrefillsOnnxInputShapes() {
        widgets::SetupWidget w({QStringLiteral("mobilenet")}, [](const QString&, const QString&) { return QString(); });
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

        widgets::SetupWidget w({QStringLiteral("mobilenet"), QStringLiteral("mlp")}, [](const QString&, const QString&) { return QString(); });
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
        widgets::SetupWidget w({QStringLiteral("mobilenet")}, [](const QString&, const QString&) { return QString(); });
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
        widgets::SetupWidget w({QStringLiteral("mobilenet")}, [](const QString&, const QString&) { return QString(); });
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
