// SPDX-License-Identifier: Apache-2.0
// The window's AutoTVM mode: the panel shows the task rows (progress bar value, Current/Best
// GFLOPS), the best-so-far chart of the selected task and its best config entity beside the loop
// nest; the setup panel carries the mode, tuner and n_trial; and the window, fed by a real
// AutoTVM run of the zoo's mlp, shows the panel in place of the auto-scheduler's table.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "app/session/tuningsession.h"
#include "tests/signalwait.h"
#include "widgets/autotvmpanel.h"
#include "widgets/qcustomplot_include.h"
#include "widgets/dagview.h"
#include "widgets/mainwindow.h"
#include "widgets/models/autotvmtaskmodel.h"
#include "widgets/setupwidget.h"

using namespace tb;
using tb::test::waitFor;
using models::AutotvmTaskModel;

namespace {

session::AutotvmTaskRow row(int id, const QString& name, int trials, int nTrial) {
    session::AutotvmTaskRow r;
    r.id = id;
    r.taskName = name;
    r.argsSummary = QStringLiteral("1×512, 1000×512");
    r.spaceSize = 40;
    r.nTrial = nTrial;
    r.trials = trials;
    r.state = trials ? QStringLiteral("tuning") : QStringLiteral("pending");
    return r;
}

}  // namespace

class TestAutotvmPanel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testPanelShowsRowsChartAndEntity() {
        widgets::AutotvmPanel p;
        QAbstractItemModelTester tester(p.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        p.show();
        QVERIFY(QTest::qWaitForWindowExposed(&p));
        QSignalSpy dagRequests(&p, &widgets::AutotvmPanel::dagRequested);
        p.setTasks({row(0, QStringLiteral("dense_pack.x86"), 0, 10), row(1, QStringLiteral("dense_nopack.x86"), 0, 8)});
        QCOMPARE(p.model()->rowCount(), 2);
        QCOMPARE(p.selectedTask(), 0);
        QCOMPARE(dagRequests.size(), 0);  // nothing measured: no program to show

        session::AutotvmTaskRow r = row(0, QStringLiteral("dense_pack.x86"), 4, 10);
        r.currentGflops = 12.5;
        r.bestGflops = 31.25;
        r.bestIndex = 17;
        r.bestTrial = 2;
        r.bestKnobs = {QStringLiteral("tile_y = [-1, 1]"), QStringLiteral("tile_x = [-1, 16]"),
                       QStringLiteral("tile_k = [-1, 4]")};
        r.bestConfig = QStringLiteral("[('tile_y', [-1, 1]), ('tile_x', [-1, 16]), ('tile_k', [-1, 4])],None,17");
        p.updateTasks({r});
        QList<session::AutotvmTrial> trials;
        const double gflops[] = {10, 20, 31.25, 12.5};
        double best = 0;
        for (int i = 0; i < 4; ++i) {
            best = std::max(best, gflops[i]);
            trials.append({0, i, 10 + i, gflops[i], best, 0, {}});
        }
        trials[1].errorNo = 4;  // a failed config is drawn apart
        trials[1].gflops = 0;
        p.addTrials(trials);

        const auto* m = p.model();
        auto cell = [&](int c) { return m->data(m->index(0, c)).toString(); };
        QCOMPARE(cell(AutotvmTaskModel::TemplateColumn), QStringLiteral("dense_pack.x86"));
        QCOMPARE(cell(AutotvmTaskModel::SpaceColumn), QStringLiteral("40"));
        QCOMPARE(cell(AutotvmTaskModel::ProgressColumn), QStringLiteral("4/10"));
        QCOMPARE(m->data(m->index(0, AutotvmTaskModel::ProgressColumn), AutotvmTaskModel::ProgressRole).toDouble(), 0.4);
        QCOMPARE(cell(AutotvmTaskModel::CurrentColumn), QStringLiteral("12.50"));
        QCOMPARE(cell(AutotvmTaskModel::BestColumn), QStringLiteral("31.25"));
        QCOMPARE(m->data(m->index(1, AutotvmTaskModel::BestColumn)).toString(), QStringLiteral("-"));
        // The chart: three measured points and one failed; the entity: knob = value lines, then TVM's str().
        QCOMPARE(p.chartPointCount(), 4);
        QCOMPARE(p.entityText(), r.bestKnobs.join(QLatin1Char('\n')) + QStringLiteral("\n\n") + r.bestConfig);
        QCOMPARE(dagRequests.size(), 1);  // a best config: its program is asked for
        QCOMPARE(dagRequests[0][0].toInt(), 0);
        p.updateTasks({r});
        QCOMPARE(dagRequests.size(), 1);  // the same best: not again

        // Its program arrives: the loop nest is shown beside the entity; another task's is not.
        session::DagSnapshot d;
        d.taskId = 1;
        d.loopNest = QStringLiteral("other");
        p.setDag(d);
        QVERIFY(p.dagView()->dag().loopNest.isEmpty());
        d.taskId = 0;
        d.loopNest = QStringLiteral("for (i, 0, 1000) {\n  compute[i] = 0f\n}");
        p.setDag(d);
        QCOMPARE(p.dagView()->tabs()->currentIndex(), int(widgets::DagView::LoopNestTab));
        auto* loops = p.dagView()->loopNestView();
        QVERIFY(loops && loops->toPlainText().contains(QStringLiteral("for (i, 0, 1000)")));

        // Selecting the other row: its (empty) curve and no entity.
        p.tableView()->selectRow(1);
        QCOMPARE(p.selectedTask(), 1);
        QCOMPARE(p.chartPointCount(), 0);
        QVERIFY(p.entityText().isEmpty());
    }

    void testSetupCarriesTheAutotvmMode() {
        widgets::SetupWidget w({QStringLiteral("resnet-18"), QStringLiteral("mlp")}, [](const QString&, const QString&) { return QString(); });
        QSignalSpy mode(&w, &widgets::SetupWidget::autotvmModeChanged);
        session::TuningJob j;
        j.network = QStringLiteral("resnet-18");
        j.layout = QStringLiteral("NCHW");
        j.autotvm = true;
        j.tuner = QStringLiteral("ga");
        j.nTrial = 24;
        j.earlyStopping = 12;
        j.logPath = QStringLiteral("/nonexistent/r18_autotvm.log");
        w.setJob(j);
        QCOMPARE(w.job(), j);
        QCOMPARE(mode.size(), 1);
        QCOMPARE(mode[0][0].toBool(), true);
        auto* tuner = w.findChild<QComboBox*>(QStringLiteral("AutotvmTuner"));
        QVERIFY(tuner);
        QCOMPARE(tuner->count(), int(session::TuningSession::autotvmTunerNames().size()));
        // The generated log name follows the mode: AutoTVM records do not go into the auto-scheduler's log.
        j.logPath = widgets::SetupWidget::defaultLogPath(j);
        w.setJob(j);
        QCOMPARE(w.job().logPath, QStringLiteral("tunebench_resnet-18_autotvm.log"));
        w.findChild<QComboBox*>(QStringLiteral("SearchMode"))->setCurrentIndex(0);
        QCOMPARE(w.job().autotvm, false);
        QCOMPARE(w.job().logPath, QStringLiteral("tunebench_resnet-18.json"));
    }

    // Issue 14: the VTA presets are in the target picker; picking one switches to AutoTVM mode on a
    // resnet (seed 004 quantizes it), the runner rows stay (simulator here or a VTA device of a
    // tracker) and the job carries the RPC runner; the auto-scheduler mode refuses a VTA target.
    void testSetupOffersVtaTargets() {
        widgets::SetupWidget w({QStringLiteral("mobilenet"), QStringLiteral("resnet-18")},
                               [](const QString& t, const QString& h) { return session::TuningSession::validateTarget(t, h); });
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* target = w.findChild<QComboBox*>(QStringLiteral("Target"));
        auto* mode = w.findChild<QComboBox*>(QStringLiteral("SearchMode"));
        QVERIFY(target && mode);
        const QString intelfocl = session::TuningSession::vtaTargetPresets()[1];
        const int i = target->findText(intelfocl);
        QVERIFY2(i > 0, qPrintable(intelfocl));
        target->setCurrentIndex(i);
        QCOMPARE(mode->currentData().toBool(), true);
        session::TuningJob j = w.job();
        QCOMPARE(j.target, intelfocl);
        QVERIFY(j.autotvm);
        QCOMPARE(j.network, QStringLiteral("resnet-18"));
        QCOMPARE(j.layout, QStringLiteral("NCHW"));
        QVERIFY(w.isValid());
        auto* runner = w.findChild<QComboBox*>(QStringLiteral("Runner"));
        QVERIFY(runner && runner->isVisibleTo(&w));
        runner->setCurrentIndex(runner->findData(QStringLiteral("rpc")));
        QCOMPARE(w.job().runner, QStringLiteral("rpc"));
        mode->setCurrentIndex(mode->findData(false));
        QVERIFY(!w.isValid());
        QVERIFY2(w.targetError().contains(QStringLiteral("AutoTVM")), qPrintable(w.targetError()));
    }

    // A VTA task's chart: simulated GOPS, and each trial's tooltip carries its simulator counters.
    void testVtaTrialsShowSimulatorCounters() {
        widgets::AutotvmPanel p;
        session::AutotvmTaskRow r = row(0, QStringLiteral("conv2d_packed.vta"), 2, 4);
        r.simulated = true;
        r.bestIndex = 7;
        r.bestTrial = 1;
        r.bestGflops = 40.5;
        r.bestKnobs = {QStringLiteral("tile_h = [-1, 14]")};
        r.bestConfig = QStringLiteral("[('tile_h', [-1, 14])],None,7");
        r.bestCounters = {{QStringLiteral("gemm_counter"), 451584}, {QStringLiteral("alu_counter"), 50176}};
        p.setTasks({r});
        session::AutotvmTrial a{0, 0, 3, 9.5, 9.5, 0, {{QStringLiteral("gemm_counter"), 451584}, {QStringLiteral("inp_load_nbytes"), 1204224}}};
        session::AutotvmTrial b{0, 1, 7, 40.5, 40.5, 0, r.bestCounters};
        p.addTrials({a, b});
        QCOMPARE(p.plot()->yAxis->label(), QStringLiteral("GOPS (simulated)"));
        const QString first = p.trialDescription(0, 0);
        QVERIFY2(first.startsWith(QStringLiteral("Trial 1: config #3, 9.50 GOPS (simulated)")), qPrintable(first));
        QVERIFY2(first.contains(QStringLiteral("inp_load_nbytes = 1204224")), qPrintable(first));
        QVERIFY(p.trialDescription(0, 5).isEmpty());
        QVERIFY2(p.entityText().contains(QStringLiteral("gemm_counter")), qPrintable(p.entityText()));
    }

    void testWindowRunsAutotvmMode() {
        QTemporaryDir dir;
        session::TuningSession s;
        widgets::MainWindow w(&s, nullptr);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        session::TuningJob job;
        job.network = QStringLiteral("mlp");
        job.autotvm = true;
        job.tuner = QStringLiteral("random");
        job.nTrial = 2;
        job.number = 2;
        job.minRepeatMs = 1;
        job.logPath = dir.filePath(QStringLiteral("mlp_autotvm.log"));
        w.setJob(job);
        QVERIFY(w.autotvmPanel()->isVisible());
        QVERIFY(!w.taskView()->isVisible());
        QSignalSpy finished(&s, &session::TuningSession::tuningFinished);
        QSignalSpy failed(&s, &session::TuningSession::tuningFailed);
        QTest::mouseClick(w.startButton(), Qt::LeftButton);
        QVERIFY2(waitFor(finished), qPrintable(failed.isEmpty() ? QStringLiteral("timeout") : failed[0][0].toString()));

        widgets::AutotvmPanel* p = w.autotvmPanel();
        const auto* m = p->model();
        QCOMPARE(m->rowCount(), 6);  // mlp's three dense layers, packed and not
        for (int r = 0; r < m->rowCount(); ++r) {
            QCOMPARE(m->data(m->index(r, AutotvmTaskModel::ProgressColumn), AutotvmTaskModel::ProgressRole).toDouble(), 1.0);
            QVERIFY(m->data(m->index(r, AutotvmTaskModel::BestColumn)).toString() != QStringLiteral("-"));
            QCOMPARE(m->data(m->index(r, AutotvmTaskModel::StateColumn)).toString(), QStringLiteral("tuned"));
        }
        QCOMPARE(p->selectedTask(), 0);
        QCOMPARE(p->chartPointCount(), 2);
        QVERIFY2(p->entityText().contains(QStringLiteral(" = [-1, ")), qPrintable(p->entityText()));
        QVERIFY2(p->entityText().contains(QStringLiteral("],None,")), qPrintable(p->entityText()));
        QTRY_VERIFY_WITH_TIMEOUT(p->dagView()->dag().loopNest.contains(QStringLiteral("for ")), 60000);
        QVERIFY(w.statusText().contains(QStringLiteral("AutoTVM tuning finished: 12 trials")));

        p->tableView()->selectRow(3);
        QCOMPARE(p->selectedTask(), 3);
        QTRY_COMPARE_WITH_TIMEOUT(p->dagView()->dag().taskId, 3, 60000);
    }
};

QTEST_MAIN(TestAutotvmPanel)
#include "tst_autotvm_panel.moc"
