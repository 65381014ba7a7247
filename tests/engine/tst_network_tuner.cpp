// SPDX-License-Identifier: Apache-2.0
// The whole tuning loop on real hardware: sketch policy + cost model + task scheduler + lowering +
// LLVM build + sandboxed runs + records, on two small tasks; the best states compute what the reference
// interpreter computes; then resume from the log.
#include <QtTest>

#include "engine/lower/lower_state.h"
#include "engine/measure/builder.h"
#include "engine/measure/local_runner.h"
#include "engine/record/record_io.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/search/default_schedule.h"
#include "engine/te/interpreter.h"
#include "engine/tuning/network_tuner.h"
#include "engine/tuning/program_measurer.h"
#include "tests/engine/test_measure_util.h"
#include "tests/engine/test_util.h"

using namespace tb;
using namespace tb::te;

namespace {
std::vector<tuning::NetworkTask> tasks() {
    std::vector<tuning::NetworkTask> t(2);
    t[0].task.dag = test::matmulAdd(64, 64, 64);
    t[0].task.desc = "matmul_add";
    t[0].weight = 2;
    t[1].task.dag = test::conv2dNhwcRelu(8, 16, 16, /*bias=*/false);
    t[1].task.desc = "conv2d_relu";
    for (auto& x : t) {
        x.task.workloadKey = x.task.dag->workloadKey();
        x.task.hardware.numCores = 2;
        x.task.target = "llvm";
    }
    return t;
}

struct Collector : tuning::TuneObserver {
    std::vector<tuning::MeasuredTrial> all;
    void onTrials(const std::vector<tuning::MeasuredTrial>& t) override { all.insert(all.end(), t.begin(), t.end()); }
};
}  // namespace

class TestNetworkTuner : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testTuneAndResume() {
        QTemporaryDir dir;
        const std::string log = QString(dir.path() + QStringLiteral("/tune.json")).toStdString();
        lower::StateLowerer lowerer = [](const search::SearchTask& t, const State& s) { return lower::lowerState(*t.dag, s); };
        codegen::Target target = codegen::Target::host();
        measure::LocalBuilder builder(target);
        measure::RunnerOptions ro;
        ro.minRepeatMs = 1;
        ro.numThreads = 1;
        measure::LocalRunner runner(ro);
        tuning::TuneOptions opt;
        opt.trials = 32;
        opt.perRound = 8;
        opt.costModel = "xgb";
        opt.policy.evolutionaryPopulation = 128;
        opt.seed = 1;
        double firstBest[2];
        {
            record::RecordWriter writer(log);
            tuning::ProgramMeasurer measurer(lowerer, builder, runner, &writer, "llvm -keys=cpu");
            tuning::NetworkTuner tuner(tasks(), opt, lowerer, measurer);
            Collector col;
            tuner.addObserver(&col);
            tuner.tune();
            QCOMPARE(tuner.scheduler().totalTrials(), 32);
            QCOMPARE(int(col.all.size()), 32);
            QCOMPARE(measurer.measured(), 32);
            // Real measurements: every candidate lowered, compiled and ran.
            QCOMPARE(measurer.failed(), 0);
            for (int t = 0; t < 2; ++t) {
                QVERIFY(tuner.bestCost(t) > 0 && tuner.bestCost(t) < 1.0);
                QVERIFY(tuner.bestState(t).defined());
                firstBest[t] = tuner.bestCost(t);
            }
            // Each task's first measured state is its default schedule (seedDefaultSchedule), and the
            // best record is at least as fast as it.
            for (int t = 0; t < 2; ++t) {
                auto first = std::find_if(col.all.begin(), col.all.end(), [&](const auto& m) { return m.taskId == t; });
                QVERIFY(first != col.all.end());
                const State def = inferBound(search::defaultSchedule(*tuner.tasks()[size_t(t)].task.dag));
                QCOMPARE(first->state.toStr(), def.toStr());
                QCOMPARE(first->outcome.errorNo, 0);
                QVERIFY(tuner.bestCost(t) <= first->outcome.meanCost());
            }
            // The estimated latency is the weighted sum of the best costs.
            QCOMPARE(tuner.scheduler().currentScore(), 2 * firstBest[0] + firstBest[1]);
            // The best state of each task, replayed on a new DAG instance (records carry only steps),
            // lowered, compiled and run, computes what the reference interpreter computes.
            auto fresh = tasks();
            for (int t = 0; t < 2; ++t) {
                const auto& dag = *fresh[size_t(t)].task.dag;
                const lower::LoweredFunc f = lower::lowerState(dag, inferBound(replaySteps(dag, tuner.bestState(t).transformSteps())));
                const auto inputs = test::randomInputs(dag, 1 + unsigned(t));
                const QString err = test::compareOutputs(test::runCompiled(f, dag, inputs), te::evaluate(dag, inputs));
                QVERIFY2(err.isEmpty(), qPrintable(err + QStringLiteral("\nlowered:\n") + QString::fromStdString(f.print())));
            }
        }
        // One record per trial, each replayable on its task.
        auto read = record::readMeasureRecords(log);
        QCOMPARE(int(read.records.size()), 32);
        QVERIFY(read.badLines.empty());
        // Resume with a larger budget: counts continue, nothing re-measured.
        opt.trials = 48;
        record::RecordWriter writer(log);
        tuning::ProgramMeasurer measurer(lowerer, builder, runner, &writer, "llvm -keys=cpu");
        tuning::NetworkTuner tuner(tasks(), opt, lowerer, measurer);
        tuning::ResumeStats rs = tuner.resume(log);
        QCOMPARE(rs.records, 32);
        QCOMPARE(rs.matched, 32);
        QCOMPARE(rs.replayed, 32);
        QCOMPARE(tuner.scheduler().totalTrials(), 32);
        for (int t = 0; t < 2; ++t) QCOMPARE(tuner.bestCost(t), firstBest[t]);
        tuner.tune();
        QCOMPARE(tuner.scheduler().totalTrials(), 48);
        auto after = record::readMeasureRecords(log);
        QCOMPARE(int(after.records.size()), 48);
        std::set<std::string> seen;
        for (const auto& r : after.records) QVERIFY2(seen.insert(r.task.workloadKey + r.steps.dump()).second, "a state was measured twice");
        for (int t = 0; t < 2; ++t) QVERIFY(tuner.bestCost(t) <= firstBest[t]);
    }
};

QTEST_APPLESS_MAIN(TestNetworkTuner)
#include "tst_network_tuner.moc"
