// SPDX-License-Identifier: Apache-2.0
// The task scheduler's strategies, early stopping, resume and TVM's table text, with scripted tuners.
#include <QtTest>

#include <cmath>
#include <fstream>

#include "engine/tuning/task_scheduler.h"

using namespace tb::tuning;

namespace {
// A task whose best latency after r rounds is base * (floor + (1 - floor) / r); records calls.
class ScriptedTuner : public TaskTuner {
public:
    ScriptedTuner(double base, double floor, std::vector<int>* log, int id, bool exhausted = false)
        : m_base(base), m_floor(floor), m_log(log), m_id(id), m_exhausted(exhausted) {}
    RoundOutcome tuneOneRound(int numMeasures) override {
        m_log->push_back(m_id);
        if (m_exhausted) return {};
        ++m_rounds;
        RoundOutcome o;
        double best = m_base * (m_floor + (1 - m_floor) / m_rounds);
        for (int i = 0; i < numMeasures; ++i) o.costs.push_back(i == 0 ? best : best * 2);
        if (m_failFirst && m_rounds == 1) o.costs.assign(size_t(numMeasures), 1e10);
        return o;
    }
    bool m_failFirst = false;

private:
    double m_base, m_floor;
    std::vector<int>* m_log;
    int m_id;
    bool m_exhausted;
    int m_rounds = 0;
};

std::vector<std::unique_ptr<TaskTuner>> tuners(std::vector<int>* log, const std::vector<std::pair<double, double>>& spec) {
    std::vector<std::unique_ptr<TaskTuner>> v;
    for (size_t i = 0; i < spec.size(); ++i)
        v.push_back(std::make_unique<ScriptedTuner>(spec[i].first, spec[i].second, log, int(i)));
    return v;
}
std::vector<SchedulerTask> tasks(size_t n, std::vector<double> weights = {}) {
    std::vector<SchedulerTask> t;
    for (size_t i = 0; i < n; ++i)
        t.push_back({"key" + std::to_string(i), "vm_mod_fused_task_" + std::to_string(i), 1e9 * double(i + 1),
                     weights.empty() ? 1.0 : weights[i], ""});
    return t;
}
}  // namespace

class TestTaskScheduler : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testRoundRobin() {
        std::vector<int> log;
        TaskSchedulerOptions o;
        o.strategy = TaskSchedulerOptions::Strategy::RoundRobin;
        o.numMeasureTrials = 3 * 8 * 4;  // 4 rounds each at 8 per round
        o.numMeasuresPerRound = 8;
        TaskScheduler ts(tasks(3), tuners(&log, {{1e-3, 0.5}, {2e-3, 0.5}, {3e-3, 0.5}}), o);
        ts.tune();
        QCOMPARE(log, (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}));
        QCOMPARE(ts.totalTrials(), 96);
        QVERIFY(ts.finished());
        // best after 4 rounds: base * (0.5 + 0.5/4)
        QCOMPARE(ts.bestCosts()[1], 2e-3 * (0.5 + 0.125));
        QCOMPARE(ts.currentScore(), (1e-3 + 2e-3 + 3e-3) * 0.625);
    }

    void testPerRoundCappedByBudget() {
        std::vector<int> log;
        TaskSchedulerOptions o;
        o.numMeasureTrials = 40;  // 4 tasks -> 10 per round, not 64
        TaskScheduler ts(tasks(4), tuners(&log, {{1, 0}, {1, 0}, {1, 0}, {1, 0}}), o);
        QCOMPARE(ts.numMeasuresPerRound(), 10);
    }

    // The gradient strategy spends the budget where the weighted latency falls fastest: a heavy,
    // slow, still-improving task gets most rounds; a light one that has converged gets few.
    void testGradientPrefersImprovableHeavyTask() {
        std::vector<int> log;
        TaskSchedulerOptions o;
        o.numMeasureTrials = 30 * 16;
        o.numMeasuresPerRound = 16;
        o.seed = 1;
        // task 0: 10 ms, weight 5, converges to 10% of it; task 1: 1 ms, weight 1, flat (floor 1.0).
        TaskScheduler ts(tasks(2, {5, 1}), tuners(&log, {{10e-3, 0.1}, {1e-3, 1.0}}), o);
        ts.tune();
        int n0 = int(std::count(log.begin(), log.end(), 0)), n1 = int(std::count(log.begin(), log.end(), 1));
        QCOMPARE(n0 + n1, 30);
        QVERIFY2(n0 >= 25, qPrintable(QStringLiteral("task 0 got %1 rounds, task 1 %2").arg(n0).arg(n1)));
        QVERIFY(ts.lastGradients()[0] < ts.lastGradients()[1]);
        QVERIFY(ts.lastGradients()[0] <= 0 && ts.lastGradients()[1] <= 0);
    }

    // A direct conv2d task beside its winograd task (SchedulerTask::alternativeOf): the network runs
    // the faster, so the pair counts once, at its minimum, and a member far behind draws no rounds
    // after warm-up, while one within a few percent keeps drawing some (it may overtake).
    void testAlternativesCountOnceAtTheFaster() {
        for (const double directBase : {8e-3, 4.1e-3}) {
            std::vector<int> log;
            TaskSchedulerOptions o;
            o.numMeasureTrials = 40 * 16;
            o.numMeasuresPerRound = 16;
            o.seed = 3;
            auto t = tasks(3, {1, 3, 3});
            t[2].alternativeOf = 1;  // task 2 is the direct alternative of winograd task 1
            // task 0: 2 ms, task 1: 4 ms, task 2: directBase; all halve with tuning (floor 0.5).
            TaskScheduler ts(std::move(t), tuners(&log, {{2e-3, 0.5}, {4e-3, 0.5}, {directBase, 0.5}}), o);
            ts.tune();
            const auto& c = ts.bestCosts();
            QCOMPARE(ts.currentScore(), 1 * c[0] + 3 * std::min(c[1], c[2]));
            const int n1 = int(std::count(log.begin(), log.end(), 1)), n2 = int(std::count(log.begin(), log.end(), 2));
            if (directBase > 5e-3) {
                // 2x slower at every round count: the warm-up round only (one more at most).
                QVERIFY2(n2 <= 2, qPrintable(QStringLiteral("the slow alternative got %1 rounds").arg(n2)));
                QVERIFY(n1 >= 10);
            } else {
                // 2.5% slower: it shares the pair's rounds.
                QVERIFY2(n2 >= 4, qPrintable(QStringLiteral("the close alternative got %1 rounds").arg(n2)));
            }
        }
        // As ordinary tasks, the same slow task would take rounds for its own weight.
        std::vector<int> log;
        TaskSchedulerOptions o;
        o.numMeasureTrials = 40 * 16;
        o.numMeasuresPerRound = 16;
        o.seed = 3;
        TaskScheduler plain(tasks(3, {1, 3, 3}), tuners(&log, {{2e-3, 0.5}, {4e-3, 0.5}, {8e-3, 0.5}}), o);
        plain.tune();
        QVERIFY(std::count(log.begin(), log.end(), 2) >= 10);
        // An alternative of an alternative is refused.
        auto chain = tasks(3);
        chain[1].alternativeOf = 0;
        chain[2].alternativeOf = 1;
        std::vector<int> unused;
        bool threw = false;
        try {
            TaskScheduler bad(std::move(chain), tuners(&unused, {{1, 1}, {1, 1}, {1, 1}}), o);
        } catch (const std::exception&) {
            threw = true;
        }
        QVERIFY(threw);
    }

    void testPerTaskEarlyStoppingAndExhaustion() {
        std::vector<int> log;
        TaskSchedulerOptions o;
        o.numMeasureTrials = 1000;
        o.numMeasuresPerRound = 10;
        o.perTaskEarlyStopping = 25;  // > 2 rounds without improvement kills a task
        std::vector<std::unique_ptr<TaskTuner>> v;
        v.push_back(std::make_unique<ScriptedTuner>(1e-3, 1.0, &log, 0));        // never improves after round 1
        v.push_back(std::make_unique<ScriptedTuner>(1e-3, 1.0, &log, 1, true));  // exhausted at once
        TaskScheduler ts(tasks(2), std::move(v), o);
        ts.tune();
        QVERIFY(ts.isDead(0));
        QVERIFY(ts.isDead(1));
        QVERIFY(ts.totalTrials() < 1000);
        QCOMPARE(ts.taskRounds()[1], 1);
    }

    void testGlobalEarlyStopping() {
        std::vector<int> log;
        TaskSchedulerOptions o;
        o.numMeasureTrials = 10000;
        o.numMeasuresPerRound = 10;
        o.earlyStopping = 50;
        TaskScheduler ts(tasks(2), tuners(&log, {{1e-3, 1.0}, {1e-3, 1.0}}), o);
        ts.tune();
        // After warm-up nothing improves: stops once 50 trials passed without a better score.
        QCOMPARE(ts.totalTrials(), 20 + 50);
    }

    void testRestoreSkipsWarmup() {
        std::vector<int> log;
        TaskSchedulerOptions o;
        o.strategy = TaskSchedulerOptions::Strategy::RoundRobin;
        o.numMeasureTrials = 3 * 64 + 64;
        TaskScheduler ts(tasks(3), tuners(&log, {{1e-3, 0.5}, {1e-3, 0.5}, {1e-3, 0.5}}), o);
        ts.restore(0, 64, 0.5e-3);
        ts.restore(1, 100, 0.7e-3);  // int(100/64 + 0.5) = 2 rounds
        QCOMPARE(ts.taskRounds()[1], 2);
        QCOMPARE(ts.totalTrials(), 164);
        QVERIFY(ts.step());  // warm-up only for task 2
        QCOMPARE(log, std::vector<int>{2});
        QCOMPARE(ts.bestCosts()[0], 0.5e-3);
    }

    void testTableText() {
        std::vector<int> log;
        TaskSchedulerOptions o;
        o.numMeasureTrials = 128;
        TaskScheduler ts(tasks(2), tuners(&log, {{1.5e-3, 0.5}, {2e-3, 0.5}}), o);
        std::string before = PrintTableInfo::tableText(ts, 0);
        QVERIFY(before.find("|    0 |                                           vm_mod_fused_task_0 |            - |              - |      0 |\n") != std::string::npos);
        QVERIFY(before.find("Estimated total latency: - ms\tTrials: 0\t") != std::string::npos);
        ts.step();
        ts.step();
        std::string t = PrintTableInfo::tableText(ts, 1);
        QStringList lines = QString::fromStdString(t).split(QLatin1Char('\n'));
        QCOMPARE(lines[0], QString(70, QLatin1Char('-')));
        QCOMPARE(lines[1], QString(30, QLatin1Char('-')) + QStringLiteral("  [ Task Scheduler ]"));
        QCOMPARE(lines[3].size(), 113);  // header
        QCOMPARE(lines[4], QString(113, QLatin1Char('-')));
        QCOMPARE(lines[5].size(), 113);
        // 1.5 ms best -> "1.500", 1e9 flop / 1.5e-3 s = 666.67 GFLOPS, 64 trials
        QCOMPARE(lines[5], QStringLiteral("|    0 |                                           vm_mod_fused_task_0 |        1.500 |         666.67 |     64 |"));
        QVERIFY(lines[8].startsWith(QStringLiteral("Estimated total latency: 3.500 ms\tTrials: 128\tUsed time : ")));
        QVERIFY(lines[8].endsWith(QStringLiteral("\tNext ID: 1\t")));
    }

    void testLogEstimatedLatency() {
        QTemporaryDir dir;
        std::string path = QString(dir.path() + QStringLiteral("/total_latency.tsv")).toStdString();
        { std::ofstream(path) << "stale\n"; }
        std::vector<int> log;
        TaskSchedulerOptions o;
        o.numMeasureTrials = 64;
        TaskScheduler ts(tasks(2), tuners(&log, {{1e-3, 0.5}, {2e-3, 0.5}}), o);
        LogEstimatedLatency cb(path);
        ts.addCallback(&cb);
        ts.tune();
        std::ifstream in(path);
        std::string l1, l2, l3;
        std::getline(in, l1);
        std::getline(in, l2);
        QVERIFY(!std::getline(in, l3));
        QVERIFY(QString::fromStdString(l1).contains(QStringLiteral("EstimatedLatency(ms)\tN/A\tTrials\t32")));
        QVERIFY(QString::fromStdString(l2).contains(QStringLiteral("EstimatedLatency(ms)\t3.000\tTrials\t64")));
        QVERIFY(l1.rfind("ElapsedTime(s)\t", 0) == 0);
    }
};

QTEST_APPLESS_MAIN(TestTaskScheduler)
#include "tst_task_scheduler.moc"
