// SPDX-License-Identifier: Apache-2.0
// The whole tuning loop on real hardware: sketch policy + cost model + task scheduler + lowering +
// LLVM build + sandboxed runs + records, on two small tasks; then resume from the log.
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

using namespace tb;
using namespace tb::te;

namespace {
std::shared_ptr<const ComputeDAG> matmulAdd(int64_t n) {
    auto a = placeholder({n, n}, "A"), b = placeholder({n, n}, "B"), c = placeholder({n, n}, "C");
    auto k = reduceAxis(n, "k");
    auto mm = compute({n, n}, {"i", "j"}, [&](const std::vector<Var>& v) { return sum(a(v[0], k.var) * b(k.var, v[1]), {k}); },
                      "matmul", ComputeOptions{{}, {}, {b}});
    auto out = compute({n, n}, {"i", "j"}, [&](const std::vector<Var>& v) { return mm(v[0], v[1]) + c(v[0], v[1]); }, "out");
    return std::make_shared<ComputeDAG>(std::vector<Tensor>{a, b, c, out});
}
std::shared_ptr<const ComputeDAG> convRelu(int64_t h, int64_t ci, int64_t co) {
    auto p0 = placeholder({1, h, h, ci}, "p0");
    auto p1 = placeholder({3, 3, ci, co}, "p1");
    auto pad = compute({1, h + 2, h + 2, ci}, axisNames(4, "i"), [&](const std::vector<Var>& v) {
        Expr cond = logicalAnd(logicalAnd(logicalAnd(v[1] >= 1, v[1] < Expr(int(h + 1))), v[2] >= 1), v[2] < Expr(int(h + 1)));
        return ifThenElse(cond, p0(v[0], v[1] - 1, v[2] - 1, v[3]), 0.0f);
    }, "pad_temp");
    auto ry = reduceAxis(3, "ry"), rx = reduceAxis(3, "rx"), rc = reduceAxis(ci, "rc");
    auto conv = compute({1, h, h, co}, {"nn", "yy", "xx", "ff"}, [&](const std::vector<Var>& v) {
        return sum(pad(v[0], v[1] + ry.var, v[2] + rx.var, rc.var) * p1(ry.var, rx.var, rc.var, v[3]), {ry, rx, rc});
    }, "conv2d_nhwc", ComputeOptions{{}, {}, {p1}});
    auto relu = compute({1, h, h, co}, axisNames(4, "ax"), [&](const std::vector<Var>& v) { return max(conv(v[0], v[1], v[2], v[3]), 0.0f); }, "T_relu");
    return std::make_shared<ComputeDAG>(ComputeDAG::fromOutputs({relu}));
}

std::vector<tuning::NetworkTask> tasks() {
    std::vector<tuning::NetworkTask> t(2);
    t[0].task.dag = matmulAdd(64);
    t[0].task.desc = "matmul_add";
    t[0].weight = 2;
    t[1].task.dag = convRelu(8, 16, 16);
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
        cost_model::StateLowerer lowerer = [](const search::SearchTask& t, const State& s) { return lower::lowerState(*t.dag, s); };
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
            // The best state of the conv computes the right values.
            auto fresh = tasks();  // a new DAG instance: records carry only steps
            const auto& dag = *fresh[1].task.dag;
            lower::LoweredFunc f = lower::lowerState(dag, inferBound(replaySteps(dag, tuner.bestState(1).transformSteps())));
            QVERIFY(!f.print().empty());
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
