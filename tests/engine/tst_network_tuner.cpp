// SPDX-License-Identifier: Apache-2.0
// The whole tuning loop on real hardware: sketch policy + cost model + task scheduler + lowering +
// LLVM build + sandboxed runs + records, on two small tasks; the best states compute what the reference
// interpreter computes; then resume from the log.
#include <QtTest>

#include <map>
#include <mutex>
#include <optional>

#include "engine/lower/lower_state.h"
#include "engine/measure/builder.h"
#include "engine/measure/local_runner.h"
#include "engine/record/record_io.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/search/default_schedule.h"
#include "engine/support/error.h"
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

/// A 64x64x64 matmul + add task whose states the measurer tests map to hand-written programs.
search::SearchTask matmulTask() {
    search::SearchTask task;
    task.dag = test::matmulAdd(64, 64, 64);
    task.workloadKey = task.dag->workloadKey();
    task.target = "llvm";
    return task;
}
// Builds nothing; records the cache-flush choice of every input it is asked to time.
struct NoBuild : measure::ProgramBuilder {
    std::vector<measure::BuildResult> build(const std::vector<measure::MeasureInput>& inputs) override {
        return std::vector<measure::BuildResult>(inputs.size());
    }
};
struct FlushRecorder : measure::ProgramRunner {
    std::vector<std::optional<bool>> seen;
    std::vector<measure::MeasureResult> run(const std::vector<measure::MeasureInput>& inputs,
                                            const std::vector<measure::BuildResult>&) override {
        for (const auto& in : inputs) seen.push_back(in.cacheFlush);
        std::vector<measure::MeasureResult> out(inputs.size());
        for (auto& r : out) r.costs = {1e-3};
        return out;
    }
};

struct Collector : tuning::TuneObserver {
    std::vector<tuning::MeasuredTrial> all;
    void onTrials(const std::vector<tuning::MeasuredTrial>& t) override { all.insert(all.end(), t.begin(), t.end()); }
};
}  // namespace

class TestNetworkTuner : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // A task's measurement policy (SearchTask::cacheFlush, chosen by buildTuner) reaches every
    // candidate the measurer hands to the runner; none set leaves the runner's own setting.
    void testTaskCacheFlushReachesRunner() {
        search::SearchTask task;
        task.dag = test::matmulAdd(64, 64, 64);
        task.workloadKey = task.dag->workloadKey();
        task.target = "llvm";
        const std::vector<State> states(3, State(*task.dag));
        lower::StateLowerer lowerer = [](const search::SearchTask&, const State&) { return *test::vectorAdd(); };
        NoBuild builder;
        FlushRecorder runner;
        tuning::ProgramMeasurer measurer(lowerer, builder, runner, nullptr, "llvm -keys=cpu");
        for (const std::optional<bool> flush : {std::optional<bool>(true), std::optional<bool>(false), std::optional<bool>()}) {
            task.cacheFlush = flush;
            runner.seen.clear();
            measurer.measure(task, states);
            QCOMPARE(runner.seen, std::vector<std::optional<bool>>(3, flush));
        }
    }

    // A pipelined measurer (slices of 3 over 8 candidates: 3 + 3 + 2) gives the same per-candidate
    // outcomes, in batch order, as the unpipelined one: a crashing candidate still costs one
    // RUNTIME_DEVICE record and the next one runs; observers see one batch with batch-wide indices.
    void testPipelinedMeasurerKeepsOrderAndErrors() {
        const search::SearchTask task = matmulTask();
        const auto dag = task.dag;
        // Eight distinct states (a different split of stage 2's first or second loop each); the lowerer maps
        // each to a hand-written program whose behaviour is known.
        std::vector<State> states;
        std::map<std::string, std::shared_ptr<lower::LoweredFunc>> programOf;
        const std::vector<int> crashes = {1, 5}, oob = {6};
        for (int i = 0; i < 8; ++i) {
            State s(*dag);
            addStep(&s, SplitStep{2, i < 4 ? 0 : 1, 64, {int64_t(2) << (i % 4)}, true}, *dag);
            const bool crash = std::count(crashes.begin(), crashes.end(), i) > 0;
            const bool outOfBounds = std::count(oob.begin(), oob.end(), i) > 0;
            programOf[s.toStr()] = crash ? test::vectorAdd(test::kN, false, -(int64_t(1) << 40))
                                         : outOfBounds ? test::vectorAdd(test::kN + 1) : test::vectorAdd();
            states.push_back(s);
        }
        QCOMPARE(programOf.size(), size_t(8));
        lower::StateLowerer lowerer = [&](const search::SearchTask&, const State& s) { return *programOf.at(s.toStr()); };
        measure::LocalBuilder builder(codegen::Target::host());
        measure::RunnerOptions ro;
        ro.minRepeatMs = 0;
        ro.numThreads = 1;
        ro.timeoutS = 5;
        measure::LocalRunner runner(ro);
        std::mutex mutex;
        std::vector<measure::MeasureEvent> buildEvents, runEvents;
        builder.setEventSink([&](const measure::MeasureEvent& e) {
            std::lock_guard lock(mutex);
            buildEvents.push_back(e);
        });
        runner.setEventSink([&](const measure::MeasureEvent& e) {
            std::lock_guard lock(mutex);
            runEvents.push_back(e);
        });
        tuning::ProgramMeasurer plain(lowerer, builder, runner, nullptr, "llvm -keys=cpu");
        tuning::ProgramMeasurer piped(lowerer, builder, runner, nullptr, "llvm -keys=cpu");
        piped.setPipelineSlice(3);
        QCOMPARE(piped.pipelineSlice(), 3);
        QVERIFY_THROWS_EXCEPTION(tb::UserError, piped.setPipelineSlice(-1));
        const auto a = plain.measure(task, states);  // batch 1 of both builder and runner
        buildEvents.clear();
        runEvents.clear();
        const int workersBefore = runner.workersStarted();
        const auto b = piped.measure(task, states);   // the second batch, in three slices
        QCOMPARE(a.size(), states.size());
        QCOMPARE(b.size(), states.size());
        for (size_t i = 0; i < states.size(); ++i) {
            const bool bad = std::count(crashes.begin(), crashes.end(), int(i)) || std::count(oob.begin(), oob.end(), int(i));
            const int want = bad ? int(measure::MeasureErrorNo::RuntimeDevice) : 0;
            QVERIFY2(a[i].errorNo == want, qPrintable(QStringLiteral("plain %1: %2 %3").arg(i).arg(a[i].errorNo).arg(QString::fromStdString(a[i].errorMsg))));
            QVERIFY2(b[i].errorNo == want, qPrintable(QStringLiteral("piped %1: %2 %3").arg(i).arg(b[i].errorNo).arg(QString::fromStdString(b[i].errorMsg))));
            QCOMPARE(b[i].costs.size(), a[i].costs.size());
            QVERIFY(b[i].allCost > 0);
        }
        QCOMPARE(piped.measured(), 8);
        QCOMPARE(piped.failed(), 3);
        // One fresh worker after each bad candidate, as without the pipeline.
        QCOMPARE(runner.workersStarted() - workersBefore, 3);
        // Observers: batch 2 everywhere, every candidate 0..7 once built and once started + finished.
        std::vector<int> built(8), started(8), finished(8);
        for (const auto& e : buildEvents) {
            QCOMPARE(e.batch, 2LL);
            QVERIFY(e.candidate >= 0 && e.candidate < 8);
            ++built[size_t(e.candidate)];
        }
        for (const auto& e : runEvents) {
            QCOMPARE(e.batch, 2LL);
            QVERIFY(e.candidate >= 0 && e.candidate < 8);
            ++(e.kind == measure::MeasureEvent::Kind::Started ? started : finished)[size_t(e.candidate)];
            if (e.kind == measure::MeasureEvent::Kind::Finished) QCOMPARE(int(e.errorNo), b[size_t(e.candidate)].errorNo);
        }
        QCOMPARE(built, std::vector<int>(8, 1));
        QCOMPARE(started, std::vector<int>(8, 1));
        QCOMPARE(finished, std::vector<int>(8, 1));
        // After the sliced batch, the next (unsliced) one is batch 3 with plain indices.
        buildEvents.clear();
        runEvents.clear();
        plain.measure(task, {states[0]});
        QCOMPARE(int(runEvents.size()), 2);
        QCOMPARE(runEvents[0].batch, 3LL);
        QCOMPARE(runEvents[0].candidate, 0);
        QCOMPARE(int(buildEvents.size()), 1);
        QCOMPARE(buildEvents[0].batch, 3LL);
        QCOMPARE(buildEvents[0].candidate, 0);
    }

    // Early abandon: once a task has a best cost, a candidate whose first timed call is slower than
    // factor x that best is not measured further (one cost in its record); candidates near the best
    // are measured fully (`repeat` costs). With the factor 0 (TVM's behaviour) every candidate is.
    void testMeasurerAbandonsSlowCandidates() {
        const search::SearchTask task = matmulTask();
        const auto dag = task.dag;
        std::vector<State> states;
        std::map<std::string, std::shared_ptr<lower::LoweredFunc>> programOf;
        // ~4 us, ~4.4 us and ~4 ms of dependent multiply-adds.
        for (int64_t n : {int64_t(1000), int64_t(1100), int64_t(1000000)}) {
            State s(*dag);
            addStep(&s, SplitStep{2, 0, 64, {int64_t(2) << states.size()}, true}, *dag);
            programOf[s.toStr()] = test::dependentAdds(n);
            states.push_back(s);
        }
        lower::StateLowerer lowerer = [&](const search::SearchTask&, const State& s) { return *programOf.at(s.toStr()); };
        measure::LocalBuilder builder(codegen::Target::host());
        measure::RunnerOptions ro;
        ro.minRepeatMs = 0;
        ro.repeat = 3;
        ro.numThreads = 1;
        measure::LocalRunner runner(ro);
        tuning::ProgramMeasurer abandoning(lowerer, builder, runner, nullptr, "llvm -keys=cpu");
        tuning::ProgramMeasurer full(lowerer, builder, runner, nullptr, "llvm -keys=cpu");
        QVERIFY_THROWS_EXCEPTION(tb::UserError, abandoning.setAbandonFactor(1.0));
        abandoning.setAbandonFactor(2.5);
        full.setAbandonFactor(0);
        for (auto* m : {&abandoning, &full}) {
            const auto first = m->measure(task, {states[0]});  // no best yet: measured fully
            QCOMPARE(first[0].errorNo, 0);
            QCOMPARE(first[0].costs.size(), size_t(3));
        }
        const auto a = abandoning.measure(task, {states[1], states[2]});
        const auto f = full.measure(task, {states[1], states[2]});
        QCOMPARE(a[0].costs.size(), size_t(3));  // within 2.5x of the best: a full measurement
        QCOMPARE(a[1].errorNo, 0);
        QCOMPARE(a[1].costs.size(), size_t(1));  // ~1000x the best: one call
        QCOMPARE(f[1].costs.size(), size_t(3));
        // The one call still ranks the candidate: far slower than the best.
        QVERIFY(a[1].costs[0] > 100 * a[0].costs[0]);
    }

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
