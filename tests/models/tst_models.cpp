// SPDX-License-Identifier: Apache-2.0
// The live table models under QAbstractItemModelTester, driven by the batches the session emits.
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QtTest>

#include <limits>

#include "widgets/models/devicequeuemodel.h"
#include "widgets/models/measurementmodel.h"
#include "widgets/models/tasktablemodel.h"
#include "widgets/models/workloadtext.h"

using namespace tb;

namespace {
session::TaskRow task(int id, double bestMs = -1, int trials = 0) {
    session::TaskRow r;
    r.id = id;
    r.description = QStringLiteral("vm_mod_fused_nn_conv2d_add_nn_relu_%1").arg(id);
    r.workloadKey = QStringLiteral("[\"6d628209072e3e3dd8f49359935acea6\", [1, 56, 56, %1]]").arg(id);
    r.flop = 1e8 * (id + 1);
    r.bestMs = bestMs;
    r.gflops = bestMs > 0 ? r.flop / (bestMs * 1e-3) / 1e9 : 0;
    r.trials = trials;
    r.state = trials ? QStringLiteral("tuned") : QStringLiteral("pending");
    return r;
}
}  // namespace

class TestModels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testTaskTable() {
        models::TaskTableModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QList<session::TaskRow> rows;
        for (int i = 0; i < 22; ++i) rows.append(task(i));
        m.setTasks(rows);
        QCOMPARE(m.rowCount(), 22);
        QCOMPARE(m.data(m.index(3, models::TaskTableModel::LatencyColumn)).toString(), QStringLiteral("-"));

        // One round tuned task 3: a single-row dataChanged.
        QSignalSpy changed(&m, &QAbstractItemModel::dataChanged);
        auto t3 = task(3, 0.25, 64);
        t3.next = true;
        m.updateTasks({t3});
        QCOMPARE(changed.size(), 1);
        QCOMPARE(changed[0][0].toModelIndex().row(), 3);
        QCOMPARE(m.data(m.index(3, models::TaskTableModel::LatencyColumn)).toString(), QStringLiteral("0.250"));
        QCOMPARE(m.data(m.index(3, models::TaskTableModel::GflopsColumn)).toString(), QStringLiteral("1600.00"));
        QCOMPARE(m.data(m.index(3, models::TaskTableModel::IdColumn)).toString(), QStringLiteral("▶ 3"));
        QCOMPARE(m.data(m.index(3, 0), models::TaskTableModel::TaskIdRole).toInt(), 3);

        // Unchanged rows emit nothing; most rows changed -> one full-range signal.
        changed.clear();
        m.updateTasks({t3});
        QCOMPARE(changed.size(), 0);
        QList<session::TaskRow> all;
        for (int i = 0; i < 22; ++i) all.append(task(i, 1.0 + i, 64));
        m.updateTasks(all);
        QCOMPARE(changed.size(), 1);
        QCOMPARE(changed[0][1].toModelIndex().row(), 21);

        // Unknown ids are appended in one insert.
        QSignalSpy inserted(&m, &QAbstractItemModel::rowsInserted);
        m.updateTasks({task(22), task(23)});
        QCOMPARE(inserted.size(), 1);
        QCOMPARE(m.rowCount(), 24);
        QVERIFY(m.task(23));
        QVERIFY(!m.task(99));

        // The measurement policy column: what the tuner chose, and why in the tooltip; "-" where it
        // does not apply (GPU targets).
        QCOMPARE(m.headerData(models::TaskTableModel::CacheColumn, Qt::Horizontal).toString(), QStringLiteral("Cache"));
        auto flushed = task(5, 1.0, 64), warm = task(6, 1.0, 64);
        flushed.cacheFlush = QStringLiteral("flush");
        flushed.cacheFlushReason = QStringLiteral("flush: network weights 46.8 MB > LLC 33.6 MB");
        warm.cacheFlush = QStringLiteral("warm");
        m.updateTasks({flushed, warm});
        QCOMPARE(m.data(m.index(5, models::TaskTableModel::CacheColumn)).toString(), QStringLiteral("flush"));
        QCOMPARE(m.data(m.index(5, models::TaskTableModel::CacheColumn), Qt::ToolTipRole).toString(),
                 QStringLiteral("flush: network weights 46.8 MB > LLC 33.6 MB"));
        QCOMPARE(m.data(m.index(6, models::TaskTableModel::CacheColumn)).toString(), QStringLiteral("warm"));
        QCOMPARE(m.data(m.index(7, models::TaskTableModel::CacheColumn)).toString(), QStringLiteral("-"));
        QCOMPARE(m.data(m.index(5, models::TaskTableModel::CacheColumn), models::TaskTableModel::SortRole).toString(),
                 QStringLiteral("flush"));

        // A direct alternative (--winograd-or-direct) says which winograd task it stands beside, in
        // the description column, its DescriptionRole (what the delegate draws) and its tooltip.
        auto direct = task(8, 1.0, 64);
        direct.alternativeOf = 3;
        m.updateTasks({direct});
        const QString desc = m.data(m.index(8, models::TaskTableModel::DescriptionColumn)).toString();
        QVERIFY2(desc.endsWith(QStringLiteral("(direct, beside task 3)")), qPrintable(desc));
        QVERIFY(m.data(m.index(8, models::TaskTableModel::DescriptionColumn), models::TaskTableModel::DescriptionRole)
                    .toString()
                    .endsWith(QStringLiteral("(direct, beside task 3)")));
        QVERIFY(m.data(m.index(8, models::TaskTableModel::DescriptionColumn), Qt::ToolTipRole)
                    .toString()
                    .startsWith(QStringLiteral("The same convolutions as task 3 (winograd)")));
        QVERIFY(!m.data(m.index(7, models::TaskTableModel::DescriptionColumn)).toString().contains(QStringLiteral("beside")));

        // Sorting through a proxy uses SortRole: "-" latencies sort last.
        QCOMPARE(m.data(m.index(22, models::TaskTableModel::LatencyColumn), models::TaskTableModel::SortRole).toDouble(), 1e300);
        m.clear();
        QCOMPARE(m.rowCount(), 0);
    }

    void testMeasurementRing() {
        models::MeasurementModel m(nullptr, 100);
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        int trial = 0;
        for (int batch = 0; batch < 5; ++batch) {
            QList<session::MeasureRow> rows;
            for (int i = 0; i < 64; ++i) {
                session::MeasureRow r;
                r.taskId = batch;
                r.trial = trial++;
                r.errorNo = (i % 16 == 0) ? 4 : 0;
                r.costMs = r.errorNo ? -1 : 0.5 + i * 0.01;
                rows.append(r);
            }
            m.append(rows);
            QVERIFY(m.rowCount() <= 100);
        }
        QCOMPARE(m.rowCount(), 100);
        QCOMPARE(m.rows().first().trial, 320 - 100);  // oldest dropped first
        QCOMPARE(m.rows().last().trial, 319);
        QCOMPARE(models::MeasurementModel::errorName(4), QStringLiteral("RUNTIME_DEVICE"));
        QCOMPARE(models::MeasurementModel::errorName(7), QStringLiteral("RUN_TIMEOUT"));
        int errRow = -1;
        for (int r = 0; r < m.rowCount(); ++r)
            if (m.rows()[r].errorNo) errRow = r;
        QVERIFY(errRow >= 0);
        QCOMPARE(m.data(m.index(errRow, models::MeasurementModel::ErrorColumn)).toString(), QStringLiteral("RUNTIME_DEVICE"));
        // A batch larger than the capacity keeps its newest rows.
        QList<session::MeasureRow> big(150);
        for (int i = 0; i < 150; ++i) big[i].trial = 1000 + i;
        m.append(big);
        QCOMPARE(m.rowCount(), 100);
        QCOMPARE(m.rows().first().trial, 1050);
    }

    void testDeviceQueueMerge() {
        models::DeviceQueueModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        session::DeviceQueueSnapshot s;
        s.keys = {{QStringLiteral("rasp4b-64"), 2, 2, 0}, {QStringLiteral("local"), 1, 1, 0}};
        m.setSnapshot(s);
        QCOMPARE(m.rowCount(), 2);
        QCOMPARE(m.data(m.index(0, 0)).toString(), QStringLiteral("local"));  // sorted by key
        QSignalSpy removed(&m, &QAbstractItemModel::rowsRemoved);
        QSignalSpy inserted(&m, &QAbstractItemModel::rowsInserted);
        QSignalSpy changed(&m, &QAbstractItemModel::dataChanged);
        s.keys = {{QStringLiteral("rasp4b-64"), 2, 0, 3}, {QStringLiteral("android"), 1, 1, 0}};
        m.setSnapshot(s);
        QCOMPARE(removed.size(), 1);
        QCOMPARE(inserted.size(), 1);
        QCOMPARE(changed.size(), 1);
        QCOMPARE(m.rowCount(), 2);
        QCOMPARE(m.data(m.index(1, models::DeviceQueueModel::PendingColumn)).toInt(), 3);
        s.keys.clear();
        m.setSnapshot(s);
        QCOMPARE(m.rowCount(), 0);
    }

    // The batches of one tuning round as the session sends them: a "tuning" mark before the round,
    // every row after it; sorting through the proxy follows SortRole, not the display text.
    void testTaskTableThroughSortingProxy() {
        models::TaskTableModel m;
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&m);
        proxy.setSortRole(models::TaskTableModel::SortRole);
        QAbstractItemModelTester t1(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QList<session::TaskRow> rows;
        for (int i = 0; i < 12; ++i) rows.append(task(i));
        m.setTasks(rows);
        proxy.sort(models::TaskTableModel::LatencyColumn, Qt::AscendingOrder);
        for (int round = 0; round < 12; ++round) {
            QList<session::TaskRow> before = rows;
            before[round].state = QStringLiteral("tuning");
            before[round].next = true;
            m.updateTasks(before);
            QCOMPARE(m.data(m.index(round, models::TaskTableModel::StateColumn)).toString(), QStringLiteral("tuning"));
            // Latencies against the ids: 12 ms for task 0 down to 1 ms for task 11.
            rows[round] = task(round, 12.0 - round, 8);
            m.updateTasks(rows);
        }
        QCOMPARE(proxy.rowCount(), 12);
        // Ascending latency by value ("12.000" would sort before "2.000" as text).
        QCOMPARE(proxy.data(proxy.index(0, 0), models::TaskTableModel::TaskIdRole).toInt(), 11);
        QCOMPARE(proxy.data(proxy.index(1, 0), models::TaskTableModel::TaskIdRole).toInt(), 10);
        QCOMPARE(proxy.data(proxy.index(2, 0), models::TaskTableModel::TaskIdRole).toInt(), 9);
        QCOMPARE(proxy.data(proxy.index(11, 0), models::TaskTableModel::TaskIdRole).toInt(), 0);
        // FLOPs sort by value although they are displayed as "1.200 G".
        proxy.sort(models::TaskTableModel::FlopColumn, Qt::DescendingOrder);
        QCOMPARE(proxy.data(proxy.index(0, 0), models::TaskTableModel::TaskIdRole).toInt(), 11);
    }

    void testTaskStatesAndRoles_data() {
        QTest::addColumn<QString>("state");
        QTest::addColumn<bool>("gray");
        QTest::addRow("pending") << QStringLiteral("pending") << false;
        QTest::addRow("tuning") << QStringLiteral("tuning") << false;
        QTest::addRow("tuned") << QStringLiteral("tuned") << false;
        QTest::addRow("dead") << QStringLiteral("dead") << true;
    }
    void testTaskStatesAndRoles() {
        QFETCH(QString, state);
        QFETCH(bool, gray);
        models::TaskTableModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto r = task(0, 0.5, 64);
        r.state = state;
        m.setTasks({r});
        QCOMPARE(m.data(m.index(0, models::TaskTableModel::StateColumn)).toString(),
                 models::TaskTableModel::stateName(state));
        QCOMPARE(m.data(m.index(0, 0), Qt::ForegroundRole).isValid(), gray);
        QCOMPARE(m.data(m.index(0, 1), models::TaskTableModel::WorkloadKeyRole).toString(), r.workloadKey);
        QCOMPARE(m.data(m.index(0, 1), Qt::ToolTipRole).toString(), r.workloadKey);
    }

    void testRetranslateSignals() {
        models::TaskTableModel tasks;
        models::MeasurementModel measures;
        models::DeviceQueueModel queue;
        QAbstractItemModelTester t1(&tasks, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(&measures, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t3(&queue, QAbstractItemModelTester::FailureReportingMode::QtTest);
        tasks.setTasks({task(0), task(1)});
        QSignalSpy headers(&tasks, &QAbstractItemModel::headerDataChanged);
        QSignalSpy cells(&tasks, &QAbstractItemModel::dataChanged);
        tasks.retranslate();
        QCOMPARE(headers.size(), 1);
        QCOMPARE(headers[0][2].toInt(), models::TaskTableModel::ColumnCount - 1);
        QCOMPARE(cells.size(), 1);
        // Empty models announce the headers only.
        QSignalSpy mh(&measures, &QAbstractItemModel::headerDataChanged);
        QSignalSpy mc(&measures, &QAbstractItemModel::dataChanged);
        measures.retranslate();
        queue.retranslate();
        QCOMPARE(mh.size(), 1);
        QCOMPARE(mc.size(), 0);
        for (int c = 0; c < models::TaskTableModel::ColumnCount; ++c)
            QVERIFY(!tasks.headerData(c, Qt::Horizontal).toString().isEmpty());
        for (int c = 0; c < models::MeasurementModel::ColumnCount; ++c)
            QVERIFY(!measures.headerData(c, Qt::Horizontal).toString().isEmpty());
    }

    void testMeasurementErrorsShown() {
        models::MeasurementModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        session::MeasureRow ok;
        ok.trial = 0;
        ok.costMs = 0.125;
        ok.gflops = 42.5;
        session::MeasureRow bad;
        bad.trial = 1;
        bad.errorNo = 7;
        bad.errorMessage = QStringLiteral("run exceeded 10 s; worker killed");
        m.append({ok, bad});
        QCOMPARE(m.data(m.index(0, models::MeasurementModel::LatencyColumn)).toString(), QStringLiteral("0.1250"));
        QCOMPARE(m.data(m.index(0, models::MeasurementModel::GflopsColumn)).toString(), QStringLiteral("42.50"));
        QCOMPARE(m.data(m.index(1, models::MeasurementModel::LatencyColumn)).toString(), QStringLiteral("-"));
        QCOMPARE(m.data(m.index(1, models::MeasurementModel::ErrorColumn)).toString(), QStringLiteral("RUN_TIMEOUT"));
        QCOMPARE(m.data(m.index(1, 0), Qt::ToolTipRole).toString(), bad.errorMessage);
        QVERIFY(m.data(m.index(1, 0), Qt::ForegroundRole).isValid());
        QVERIFY(!m.data(m.index(0, 0), Qt::ToolTipRole).isValid());
        QCOMPARE(models::MeasurementModel::errorName(42), QStringLiteral("ERROR_42"));
        m.clear();
        QCOMPARE(m.rowCount(), 0);
    }

    // Issue 16 #9: the shapes of the workload key tell the 18 "vm_mod_fused_nn_conv2d_add_nn_relu" apart.
    void testWorkloadText_data() {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("args");
        QTest::addColumn<QString>("name");
        QTest::addRow("auto_scheduler io shapes")
            << QStringLiteral("[\"9b12f4c414bcd00df80666ee94c7a2fe\", [1, 7, 7, 512], [3, 3, 512, 512], [1, 1, 1, 512], [1, 7, 7, 512]]")
            << QStringLiteral("1×7×7×512, 3×3×512×512, 512 → 1×7×7×512") << QStringLiteral("9b12f4c4…");
        QTest::addRow("dense") << QStringLiteral("[\"0123456789abcdef0123456789abcdef\", [1, 1024], [1000, 1024], [1, 1000]]")
                               << QStringLiteral("1×1024, 1000×1024 → 1×1000") << QStringLiteral("01234567…");
        QTest::addRow("registered function, flat") << QStringLiteral("[\"matmul_add\", 1024, 1024, 1024, \"float32\"]")
                                                   << QStringLiteral("1024, 1024, 1024, float32") << QStringLiteral("matmul_add");
        QTest::addRow("autotvm") << QStringLiteral("[\"conv2d_nchw_spatial_pack.arm_cpu\", [\"TENSOR\", [1, 3, 224, 224], \"float32\"], "
                                                   "[\"TENSOR\", [64, 3, 7, 7], \"float32\"], [2, 2], [3, 3, 3, 3], [1, 1], \"float32\"]")
                                 << QStringLiteral("1×3×224×224, 64×3×7×7, (2, 2), (3, 3, 3, 3), (1, 1), float32")
                                 << QStringLiteral("conv2d_nchw_spatial_pack.arm_cpu");
        QTest::addRow("not a list") << QStringLiteral("mystery") << QString() << QStringLiteral("mystery");
    }
    void testWorkloadText() {
        QFETCH(QString, key);
        QFETCH(QString, args);
        QFETCH(QString, name);
        QCOMPARE(models::workloadArgsText(key), args);
        QCOMPARE(models::workloadNameText(key), name);
        QCOMPARE(models::workloadLabel(QStringLiteral("desc"), key), args.isEmpty() ? QStringLiteral("desc") : QStringLiteral("desc  ") + args);
    }

    void testTasksWithOneDescriptionDiffer() {
        models::TaskTableModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto a = task(0), b = task(1);
        a.description = b.description = QStringLiteral("vm_mod_fused_nn_conv2d_add_nn_relu");
        a.workloadKey = QStringLiteral("[\"6d628209072e3e3dd8f49359935acea6\", [1, 56, 56, 64], [1, 1, 64, 128], [1, 1, 1, 128], [1, 56, 56, 128]]");
        b.workloadKey = QStringLiteral("[\"0b4ff7ec0e53bcb2d2b5ad4cb3ce8f8e\", [1, 56, 56, 128], [3, 3, 128, 1], [1, 1, 1, 128], [1, 56, 56, 128]]");
        m.setTasks({a, b});
        const QString ta = m.data(m.index(0, models::TaskTableModel::DescriptionColumn)).toString();
        const QString tb = m.data(m.index(1, models::TaskTableModel::DescriptionColumn)).toString();
        QVERIFY(ta != tb);
        QCOMPARE(ta, QStringLiteral("vm_mod_fused_nn_conv2d_add_nn_relu  1×56×56×64, 1×1×64×128, 128 → 1×56×56×128"));
        QCOMPARE(m.data(m.index(1, 1), models::TaskTableModel::DescriptionRole).toString(), b.description);
        QCOMPARE(m.data(m.index(1, 1), models::TaskTableModel::ShapesRole).toString(),
                 QStringLiteral("1×56×56×128, 3×3×128×1, 128 → 1×56×56×128"));
        // Sorting by description puts tasks of one description in the order of their shapes.
        QVERIFY(m.data(m.index(0, 1), models::TaskTableModel::SortRole).toString() !=
                m.data(m.index(1, 1), models::TaskTableModel::SortRole).toString());
    }

    // Issue 16 #11: after Stop nothing is the scheduler's next pick.
    void testClearNext() {
        models::TaskTableModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto t = task(2, 0.5, 8);
        t.next = true;
        m.setTasks({task(0), task(1), t});
        QCOMPARE(m.data(m.index(2, models::TaskTableModel::IdColumn)).toString(), QStringLiteral("▶ 2"));
        QSignalSpy changed(&m, &QAbstractItemModel::dataChanged);
        m.clearNext();
        QCOMPARE(changed.size(), 1);
        QCOMPARE(changed[0][0].toModelIndex().row(), 2);
        QCOMPARE(m.data(m.index(2, models::TaskTableModel::IdColumn)).toString(), QStringLiteral("2"));
        QVERIFY(!m.task(2)->next);
        m.clearNext();
        QCOMPARE(changed.size(), 1);
    }

    // Issue 16 #4: a resumed job's history goes before the rows that arrived already.
    void testMeasurementPrependHistory() {
        models::MeasurementModel m(nullptr, 10);
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QList<session::MeasureRow> live(3), history(9);
        for (int i = 0; i < 3; ++i) live[i].trial = 9 + i;
        for (int i = 0; i < 9; ++i) {
            history[i].trial = i;
            history[i].fromLog = true;
        }
        m.append(live);
        QSignalSpy inserted(&m, &QAbstractItemModel::rowsInserted);
        m.prepend(history);
        QCOMPARE(inserted.size(), 1);
        // Capacity 10: the oldest history rows give way, live rows stay.
        QCOMPARE(m.rowCount(), 10);
        QCOMPARE(m.rows().first().trial, 2);
        QCOMPARE(m.rows().last().trial, 11);
        QVERIFY(m.rows().first().fromLog);
        QVERIFY(m.data(m.index(0, 0), Qt::ToolTipRole).toString().contains(QStringLiteral("earlier run")));
        QVERIFY(!m.rows().last().fromLog);
    }

    // Issue 16 #13: the trials of one round no longer share one timestamp.
    void testSpreadRoundTimes() {
        QList<session::MeasureRow> round(4);
        for (int i = 0; i < 4; ++i) {
            round[i].elapsedS = 20;
            round[i].allCostS = 0.5 + i;  // 0.5, 1.5, 2.5, 3.5 s
        }
        models::MeasurementModel::spreadRoundTimes(round, 10);
        // Sequential runs: each ended the later trials' times before the round's end.
        QCOMPARE(round[3].elapsedS, 20.0);
        QCOMPARE(round[2].elapsedS, 16.5);
        QCOMPARE(round[1].elapsedS, 14.0);
        QCOMPARE(round[0].elapsedS, 12.5);
        // Overlapping builds make the sum longer than the round: squeezed in after the last round.
        QList<session::MeasureRow> tight(3);
        for (auto& r : tight) {
            r.elapsedS = 11;
            r.allCostS = 2;
        }
        models::MeasurementModel::spreadRoundTimes(tight, 10);
        QCOMPARE(tight[2].elapsedS, 11.0);
        QCOMPARE(tight[1].elapsedS, 10.5);
        QCOMPARE(tight[0].elapsedS, 10.0);
        // A log read back: whole seconds, one per round, rounds one after the other.
        QList<session::MeasureRow> log(5);
        const double stamps[] = {-9, -9, -9, -4, -4};
        for (int i = 0; i < 5; ++i) {
            log[i].elapsedS = stamps[i];
            log[i].allCostS = 1;
        }
        models::MeasurementModel::spreadRoundTimes(log, -std::numeric_limits<double>::infinity());
        QCOMPARE(log[0].elapsedS, -11.0);
        QCOMPARE(log[1].elapsedS, -10.0);
        QCOMPARE(log[2].elapsedS, -9.0);
        QCOMPARE(log[3].elapsedS, -5.0);
        QCOMPARE(log[4].elapsedS, -4.0);
        // Times that differ already are left alone.
        QList<session::MeasureRow> distinct(2);
        distinct[0].elapsedS = 1;
        distinct[1].elapsedS = 2;
        distinct[1].allCostS = 5;
        models::MeasurementModel::spreadRoundTimes(distinct, 0);
        QCOMPARE(distinct[0].elapsedS, 1.0);
    }
};

QTEST_MAIN(TestModels)
#include "tst_models.moc"
