// SPDX-License-Identifier: Apache-2.0
// TVM's own tuning log of resnet-18 (NHWC, batch 1, x86, written by TVM in 2021) on our tasks:
// every record replays on our compute DAG and lowers; the best record of each of the 24
// workloads compiles, runs and equals the reference interpreter.
#include <QtTest>

#include <map>
#include <random>

#include "engine/codegen/codegen_llvm.h"
#include "engine/codegen/jit.h"
#include "engine/codegen/target.h"
#include "engine/graph/task_extraction.h"
#include "engine/graph/zoo.h"
#include "engine/lower/lower_state.h"
#include "engine/record/record_io.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/te/interpreter.h"

using namespace tb;

class TestReplayTvmLog : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testResnet18Log() {
        auto log = record::readMeasureRecords("../shared/data/logs/ansor/tvmsandbox_resnet-18-NHWC-B1-llvm.json");
        QCOMPARE(int(log.records.size()), 1265);
        auto tasks = graph::extractTasks(graph::makeNetwork("resnet-18", 1, "NHWC"));
        QCOMPARE(int(tasks.size()), 24);
        std::map<std::string, size_t> taskOfKey;
        for (size_t i = 0; i < tasks.size(); ++i) taskOfKey[graph::legacyTvmWorkloadKey(tasks[i].dag)] = i;

        // 1. Every record replays and lowers on our DAG of its workload.
        std::map<size_t, size_t> best;  // task -> record index of its best valid record
        int matched = 0, lowered = 0;
        for (size_t r = 0; r < log.records.size(); ++r) {
            const auto& rec = log.records[r];
            auto it = taskOfKey.find(rec.task.workloadKey);
            QVERIFY2(it != taskOfKey.end(), rec.task.workloadKey.c_str());
            ++matched;
            const auto& dag = tasks[it->second].dag;
            State s = inferBound(replaySteps(dag, stepsFromJson(rec.steps)));
            lower::LoweredFunc f = lower::lowerState(dag, s);
            QVERIFY(f.body);
            ++lowered;
            if (rec.valid() && (!best.count(it->second) || rec.meanCost() < log.records[best[it->second]].meanCost()))
                best[it->second] = r;
        }
        QCOMPARE(matched, 1265);
        QCOMPARE(lowered, 1265);
        QCOMPARE(int(best.size()), 24);

        // 2. The best schedule of every workload computes what the interpreter computes.
        const codegen::Target host = codegen::Target::host();
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (const auto& [ti, ri] : best) {
            const auto& dag = tasks[ti].dag;
            State s = inferBound(replaySteps(dag, stepsFromJson(log.records[ri].steps)));
            lower::LoweredFunc f = lower::lowerState(dag, s);
            codegen::CompiledKernel k = codegen::compile(f, host, codegen::CompileOptions{false, false, {}});
            auto loaded = codegen::LoadedKernel::load(k.object, k.name);
            std::vector<te::Buffer> inputs;
            std::vector<std::vector<float>> args;
            for (const auto& t : dag.inputs()) {
                te::Buffer b = te::Buffer::zeros(t.shape());
                for (auto& x : b.data) x = u(rng);
                inputs.push_back(b);
                args.push_back(b.data);
            }
            std::vector<te::Buffer> expected = te::evaluate(dag, inputs);
            for (const auto& o : dag.outputs())
                args.emplace_back(size_t(o.numElements()), std::numeric_limits<float>::quiet_NaN());
            std::vector<float*> ptrs;
            for (auto& a : args) ptrs.push_back(a.data());
            QCOMPARE((*loaded).run(ptrs), 0);
            const auto& got = args.back();
            const auto& want = expected.back().data;
            double maxAbs = 0, maxErr = 0;
            for (size_t i = 0; i < want.size(); ++i) {
                maxAbs = std::max(maxAbs, double(std::fabs(want[i])));
                maxErr = std::max(maxErr, double(std::fabs(got[i] - want[i])));
            }
            QVERIFY2(maxErr <= 1e-4 * std::max(maxAbs, 1.0),
                     qPrintable(QStringLiteral("%1: max error %2 of %3").arg(QString::fromStdString(tasks[ti].desc)).arg(maxErr).arg(maxAbs)));
        }
    }
};

QTEST_APPLESS_MAIN(TestReplayTvmLog)
#include "tst_replay_tvm_log.moc"
