// SPDX-License-Identifier: Apache-2.0
// The GPU search's states lower and run: every state of the init population and of the
// evolutionary search of a GPU task lowers (lower::lowerStateGpu) to a GpuModule in OpenCL C and in
// CUDA C whose launches respect the HardwareParams the search pruned with (threads per block,
// shared memory); a few states per workload run on the OpenCL device (PoCL) and compute what the
// reference interpreter computes.
#include <QtTest>

#include "engine/codegen/codegen_gpu_source.h"
#include "engine/schedule/infer_bound.h"
#include "engine/search/cost_model.h"
#include "engine/search/default_schedule_gpu.h"
#include "engine/search/sketch_policy.h"
#include "engine/te/interpreter.h"
#include "engine/topi/nn.h"
#include "engine/topi/nn/dense.h"
#include "engine/topi/nn/depthwise_conv2d.h"
#include "engine/topi/reduction.h"
#include "tests/engine/test_opencl_util.h"
#include "tests/engine/test_util.h"

using namespace tb;
using namespace tb::te;

namespace {

// The init population and the best states of a short evolutionary search (random model).
std::vector<State> searchedStates(const search::SearchTask& t, uint64_t seed) {
    search::SketchPolicyParams p;
    p.evolutionaryPopulation = 128;
    p.sampleInitMinPopulation = 16;
    p.numThreads = 2;
    search::SketchPolicy policy(t, std::make_shared<cost_model::RandomModel>(seed), p, seed);
    std::vector<State> states = policy.sampleInitPopulation();
    const auto best = policy.evolutionarySearch(states, 16);
    states.insert(states.end(), best.begin(), best.end());
    return states;
}

// Lowers every state to a GpuModule in both languages and checks that the launches stay within
// the limits the search pruned with. Every searched state must lower (TVM builds them all: a
// blockIdx loop of extent 1 is a launch of one block). Sets `error` to the first failure (with the
// state) and returns the states checked so far.
std::vector<State> checkLowers(const search::SearchTask& t, const std::vector<State>& states, QString& error) {
    std::vector<State> lowered;
    for (const State& s : states) {
        codegen::GpuModule m;
        try {
            m = codegen::buildGpuModule(*t.dag, s, codegen::GpuLanguage::OpenCL);
            codegen::buildGpuModule(*t.dag, s, codegen::GpuLanguage::CUDA);
        } catch (const std::exception& e) {
            error = QString::fromStdString(std::string(e.what()) + "\n" + s.toStr());
            return lowered;
        }
        for (const auto& l : m.launches) {
            if (l.block[0] * l.block[1] * l.block[2] > t.hardware.maxThreadsPerBlock ||
                l.sharedBytes > t.hardware.maxSharedMemoryPerBlock) {
                error = QString::fromStdString("launch over the limits:\n" + s.toStr());
                return lowered;
            }
        }
        if (m.launches.empty()) {
            error = QString::fromStdString("no launch:\n" + s.toStr());
            return lowered;
        }
        lowered.push_back(s);
    }
    return lowered;
}

// Runs the OpenCL module of `s` on random inputs and compares the outputs with the interpreter's.
// Empty when equal; else the mismatch, or the error of lowering, emitting or running.
QString runsCorrectly(const search::SearchTask& t, const State& s, unsigned seed) {
    codegen::GpuModule m;
    try {
        m = codegen::buildGpuModule(*t.dag, s, codegen::GpuLanguage::OpenCL);
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    return test::runAndCompare(*t.dag, m, seed);
}

void checkRuns(const search::SearchTask& t, const std::vector<State>& states, size_t count) {
    if (!test::openClAvailable()) QSKIP("no OpenCL device (install pocl-opencl-icd: scripts/setup)");
    for (size_t i = 0; i < std::min(count, states.size()); ++i) {
        const State& s = states[i * states.size() / std::min(count, states.size())];
        QCOMPARE(runsCorrectly(t, s, unsigned(i + 1)), QString());
    }
}

std::shared_ptr<const ComputeDAG> matmulDag(int64_t m, int64_t k, int64_t n) {
    Tensor a = placeholder({m, k}, "A"), b = placeholder({k, n}, "B");
    return std::make_shared<ComputeDAG>(ComputeDAG::fromOutputs({topi::nn::matmul(a, b)}));
}

std::shared_ptr<const ComputeDAG> depthwiseDag(int64_t h, int64_t c) {
    Tensor data = placeholder({1, h, h, c}, "data"), filter = placeholder({3, 3, c, 1}, "filter");
    return std::make_shared<ComputeDAG>(
        ComputeDAG::fromOutputs({topi::relu(topi::nn::depthwiseConv2dNhwc(data, filter, {1, 1}, {1, 1}))}));
}

}  // namespace

class TestGpuSearchLower : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // TVM's conv2d_layer (the CUDA record's workload): every searched state lowers.
    void testConv2dLayerLowers() {
        auto t = test::gpuSearchTask(test::conv2dLayer(1, 7, 7, 512, 512, 3, 3, 1, 1));
        const auto states = searchedStates(t, 1);
        QVERIFY(!states.empty());
        QString error;
        QCOMPARE(checkLowers(t, states, error).size(), states.size());
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }

    // Smaller workloads (PoCL runs them in a moment): lower and compute the right values. Mali: the
    // CPU rule list with the GPU init rules and vectorization, 256 threads at most.
    void testRuns_data() {
        QTest::addColumn<QString>("workload");
        QTest::newRow("conv2d_layer") << QStringLiteral("conv2d_layer");
        QTest::newRow("matmul") << QStringLiteral("matmul");
        QTest::newRow("depthwise") << QStringLiteral("depthwise");
        QTest::newRow("matmul mali") << QStringLiteral("matmul mali");
    }
    void testRuns() {
        QFETCH(QString, workload);
        search::SearchTask t;
        if (workload == QStringLiteral("conv2d_layer"))
            t = test::gpuSearchTask(test::conv2dLayer(1, 7, 7, 32, 16, 3, 3, 1, 1));
        else if (workload == QStringLiteral("matmul"))
            t = test::gpuSearchTask(matmulDag(64, 64, 64));
        else if (workload == QStringLiteral("depthwise"))
            t = test::gpuSearchTask(depthwiseDag(14, 32));
        else
            t = test::gpuSearchTask(matmulDag(64, 64, 64), "opencl -keys=mali,opencl,gpu -device=mali", HardwareParams::mali());
        const auto states = searchedStates(t, 2);
        QVERIFY(!states.empty());
        QString error;
        const auto lowered = checkLowers(t, states, error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(lowered.size(), states.size());
        checkRuns(t, lowered, 3);
    }

    // Reductions with little spatial work: the search's cross-thread reduction (the threadIdx.x-bound
    // reduce loop lowers to an allreduce across the block) and the plain sketch. A row sum (the
    // reduction is its own kernel), and a row sum divided by the row length (the reduction computed
    // inside its elementwise consumer's block loop, its result in shared memory); every state of a
    // short search lowers, a few run.
    void testCrossThreadReductionRuns_data() {
        QTest::addColumn<bool>("withConsumer");
        QTest::newRow("row sum") << false;
        QTest::newRow("row mean (fused consumer)") << true;
    }
    void testCrossThreadReductionRuns() {
        QFETCH(bool, withConsumer);
        if (!test::openClAvailable()) QSKIP("no OpenCL device (install pocl-opencl-icd: scripts/setup)");
        Tensor a = placeholder({16, 256}, "A");
        const Tensor sum = topi::sum(a, std::vector<int>{1});
        const Tensor out = withConsumer ? compute(sum.shape(), {"i"}, [&](const std::vector<Var>& v) {
            return sum(v[0]) / floatImm(256.0);
        }, "mean") : sum;
        auto t = test::gpuSearchTask(std::make_shared<ComputeDAG>(ComputeDAG::fromOutputs({out})));
        const auto sketches = search::generateSketches(t);
        QCOMPARE(int(sketches.size()), 2);
        search::SketchPolicy policy(t, std::make_shared<cost_model::RandomModel>(1), search::SketchPolicyParams{}, 1);
        std::mt19937_64 rng(1);
        const State crossThread = inferBound(policy.randomAnnotate(sketches[0], rng));
        const State plain = inferBound(policy.randomAnnotate(sketches[1], rng));
        QVERIFY(search::hasCrossThreadReduction(crossThread, withConsumer ? 2 : 1));
        if (withConsumer) QCOMPARE(crossThread.stage(1).computeAt, ComputeAtKind::Iter);
        QCOMPARE(runsCorrectly(t, plain, 1), QString());
        QCOMPARE(runsCorrectly(t, crossThread, 1), QString());

        const auto states = searchedStates(t, 3);
        QString error;
        QCOMPARE(checkLowers(t, states, error).size(), states.size());
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const bool anyCross = std::any_of(states.begin(), states.end(), [&](const State& s) {
            return search::hasCrossThreadReduction(s, withConsumer ? 2 : 1);
        });
        QVERIFY(anyCross);
        checkRuns(t, states, 4);
    }


    // The GPU default schedule of a reduction to a scalar (its reduce loops across the threads of
    // one block) runs on PoCL equal to the interpreter: 1000 elements over 256 threads (a guarded
    // split), 100 over 100 (not a power of two), a 10 x 30 sum (fused reduce loops).
    void testDefaultScheduleScalarReductionRuns() {
        if (!test::openClAvailable()) QSKIP("no OpenCL device (install pocl-opencl-icd: scripts/setup)");
        for (const std::vector<int64_t>& shape : {std::vector<int64_t>{1000}, {100}, {10, 30}}) {
            Tensor a = placeholder(shape, "A");
            auto t = test::gpuSearchTask(std::make_shared<ComputeDAG>(std::vector<Tensor>{a, topi::sum(a)}));
            const State s = inferBound(search::defaultGpuSchedule(*t.dag, t.hardware));
            QCOMPARE(runsCorrectly(t, s, 5), QString());
        }
    }
};

QTEST_GUILESS_MAIN(TestGpuSearchLower)
#include "tst_gpu_search_lower.moc"
