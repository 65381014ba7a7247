// SPDX-License-Identifier: Apache-2.0
// GPU search (issue 18): TVM's GPU sketch rules, init population (thread binding, cooperative
// fetching, unroll) and mutations, checked against TVM's own CUDA record of conv2d_layer
// (../shared/data/logs/ansor/tvm_ci_conv2d.json) and the HardwareParams limits of the target.
#include <QtTest>

#include <tuple>

#include <nlohmann/json.hpp>

#include "engine/graph/task_extraction.h"
#include "engine/graph/zoo.h"
#include "engine/record/record_io.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/search/cost_model.h"
#include "engine/search/default_schedule.h"
#include "engine/search/default_schedule_gpu.h"
#include "engine/search/gpu_limits.h"
#include "engine/search/sketch_policy.h"
#include "engine/topi/nn.h"
#include "engine/topi/nn/dense.h"
#include "engine/topi/nn/depthwise_conv2d.h"
#include "engine/topi/nn/conv2d.h"
#include "engine/topi/nn/pooling.h"
#include "engine/topi/nn/softmax.h"
#include "engine/topi/nn/winograd.h"
#include "engine/topi/reduction.h"
#include "tests/engine/test_util.h"

using namespace tb;
using namespace tb::te;
using nlohmann::json;

namespace {

std::shared_ptr<const ComputeDAG> matmulDag(int64_t m, int64_t k, int64_t n) {
    Tensor a = placeholder({m, k}, "A"), b = placeholder({k, n}, "B");
    return std::make_shared<ComputeDAG>(ComputeDAG::fromOutputs({topi::nn::matmul(a, b)}));
}

std::shared_ptr<const ComputeDAG> depthwiseDag() {
    Tensor data = placeholder({1, 56, 56, 128}, "data"), filter = placeholder({3, 3, 128, 1}, "filter");
    Tensor dw = topi::nn::depthwiseConv2dNhwc(data, filter, {1, 1}, {1, 1});
    return std::make_shared<ComputeDAG>(ComputeDAG::fromOutputs({topi::relu(dw)}));
}

// The step list with what the search samples masked out: split extents and lengths (kept: the
// number of lengths), pragma values. Two states of one sketch have equal structures.
std::vector<std::string> structure(const std::vector<Step>& steps) {
    std::vector<std::string> out;
    for (const auto& st : steps) {
        json j;
        if (auto* sp = st.as<SplitStep>()) {
            // Sketch splits have undefined lengths, which the record encoding refuses.
            j = json::array({"SP", sp->stageId, sp->iterId, 0, std::vector<int>(sp->lengths.size(), 0), int(sp->innerToOuter)});
        } else {
            j = stepToJson(st);
        }
        if (j[0] == "PR") {
            j[3] = j[3].get<std::string>().substr(0, j[3].get<std::string>().find('$'));
        }
        out.push_back(j.dump());
    }
    return out;
}

// The record prefixes of a state's steps, space separated ("CI SP SP ...").
QString kinds(const State& s) {
    std::string out;
    for (const auto& st : s.transformSteps()) out += std::string(out.empty() ? "" : " ") + st.prefix();
    return QString::fromStdString(out);
}

bool mentions(const std::string& text, const char* what) { return text.find(what) != std::string::npos; }

std::vector<Step> recordSteps() {
    auto log = record::readMeasureRecords("../shared/data/logs/ansor/tvm_ci_conv2d.json");
    if (log.records.empty()) return {};
    return stepsFromJson(log.records.front().steps);
}

// The steps printed in TVM's record format, parsed back and replayed, give the same loop nest.
bool roundTrips(const search::SearchTask& t, const State& s) {
    const std::string text = stepsToJson(s.transformSteps()).dump();
    State back = inferBound(replaySteps(*t.dag, stepsFromJson(json::parse(text))));
    return back.toStr() == s.toStr() && stepsToJson(back.transformSteps()).dump() == text;
}

// TVM's HasCacheReadStage: a CHR step made the stage (its id followed through later steps).
bool hasCacheRead(const State& s, int stageId) {
    const auto& steps = s.transformSteps();
    for (int i = int(steps.size()) - 1; i >= 0; --i) {
        if (auto* c = steps[size_t(i)].as<CacheReadStep>(); c && c->stageId == stageId) return true;
        if (steps[size_t(i)].changesStageCount() && stageId > steps[size_t(i)].stageId()) --stageId;
    }
    return false;
}

ComputeAtKind at(const State& s, int stageId) { return s.stage(stageId).computeAt; }

// TVM's assertions on the multi-level tiling sketch of matmul_auto_scheduler_test: shared copies
// of A (stage 0) and B (2) computed inside, C's local cache stage (4) tiled and attached, C tiled.
void checkMatmulTilingSketch(const State& s) {
    QVERIFY(hasCacheRead(s, 0));
    QCOMPARE(at(s, 1), ComputeAtKind::Iter);
    QVERIFY(hasCacheRead(s, 2));
    QCOMPARE(at(s, 3), ComputeAtKind::Iter);
    QVERIFY(search::hasCacheWriteStage(s, 4));
    QVERIFY(search::isTiled(s.stage(4)));
    QCOMPARE(at(s, 4), ComputeAtKind::Iter);
    QVERIFY(search::isTiled(s.stage(5)));
}

// TVM's test workloads (python/tvm/testing/auto_scheduler.py).
std::shared_ptr<const ComputeDAG> tvmMatmul(int64_t n, int64_t m, int64_t k) {
    Tensor a = placeholder({n, k}, "A"), b = placeholder({k, m}, "B");
    auto r = reduceAxis(k, "k");
    Tensor c = compute({n, m}, {"i", "j"}, [&](const std::vector<Var>& v) { return sum(a(v[0], r.var) * b(r.var, v[1]), {r}); },
                       "C", ComputeOptions{{}, {}, {b}});
    return std::make_shared<ComputeDAG>(std::vector<Tensor>{a, b, c});
}

std::shared_ptr<const ComputeDAG> tvmDoubleMatmul(int64_t n) {
    Tensor a = placeholder({n, n}, "A"), b = placeholder({n, n}, "B"), c = placeholder({n, n}, "C");
    auto k1 = reduceAxis(n, "k");
    Tensor d = compute({n, n}, {"i", "j"}, [&](const std::vector<Var>& v) { return sum(a(v[0], k1.var) * b(k1.var, v[1]), {k1}); }, "D");
    auto k2 = reduceAxis(n, "k");
    Tensor e = compute({n, n}, {"i", "j"}, [&](const std::vector<Var>& v) { return sum(d(v[0], k2.var) * c(k2.var, v[1]), {k2}); }, "E");
    return std::make_shared<ComputeDAG>(std::vector<Tensor>{a, b, c, e});
}

std::shared_ptr<const ComputeDAG> tvmConv2dNchwBnRelu(int64_t n, int64_t h, int64_t w, int64_t ci, int64_t co, int64_t ks,
                                                      int64_t stride, int64_t pad) {
    Tensor data = placeholder({n, ci, h, w}, "Data"), kernel = placeholder({co, ci, ks, ks}, "Kernel");
    Tensor bias = placeholder({co, 1, 1}, "Bias"), scale = placeholder({co, 1, 1}, "Bn_scale"),
           offset = placeholder({co, 1, 1}, "Bn_offset");
    Tensor conv = topi::nn::conv2dNchw(data, kernel, {stride, stride}, {pad, pad});
    const std::vector<int64_t> shape = conv.shape();
    const std::vector<std::string> axes{"i", "j", "k", "l"};
    auto chan = [&](Tensor in, Tensor p, bool mul, const char* name) {
        return compute(shape, axes, [&](const std::vector<Var>& v) {
            Expr x = in(v[0], v[1], v[2], v[3]), y = p(v[1], 0, 0);
            return mul ? x * y : x + y;
        }, name);
    };
    conv = chan(conv, bias, false, "Bias_add");
    conv = chan(conv, scale, true, "Bn_mul");
    conv = chan(conv, offset, false, "Bn_add");
    return std::make_shared<ComputeDAG>(std::vector<Tensor>{data, kernel, bias, offset, scale, topi::relu(conv)});
}

search::SketchPolicyParams smallParams() {
    search::SketchPolicyParams p;
    p.evolutionaryPopulation = 128;
    p.sampleInitMinPopulation = 16;
    p.numThreads = 2;
    return p;
}

// Every state: within the limits (checked directly on the usage as well as by verifyGpuState),
// every kernel bound to threads, and the record round trip.
void checkPopulation(const search::SearchTask& t, const std::vector<State>& states) {
    const HardwareParams& hw = t.hardware;
    for (const State& s : states) {
        QVERIFY(s.defined());
        QCOMPARE(QString::fromStdString(search::verifyGpuState(s, hw)), QString());
        for (const auto& k : search::gpuKernelUsage(s)) {
            QVERIFY(k.bound);
            QVERIFY(k.threadsPerBlock <= hw.maxThreadsPerBlock);
            QVERIFY(k.sharedBytes <= hw.maxSharedMemoryPerBlock);
            QVERIFY(k.maxVthread <= hw.maxVthreadExtent);
            QVERIFY(k.maxVectorBytes <= hw.vectorUnitBytes);
        }
        QVERIFY2(roundTrips(t, s), s.toStr().c_str());
    }
}

}  // namespace

class TestGpuSearch : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testTaskKinds() {
        auto dag = matmulDag(64, 64, 64);
        QVERIFY(search::isGpuTask(test::gpuSearchTask(dag)));
        QVERIFY(!search::isMaliTask(test::gpuSearchTask(dag)));
        QVERIFY(search::isGpuTask(test::gpuSearchTask(dag, "opencl -device=mali", HardwareParams::mali())));
        QVERIFY(search::isMaliTask(test::gpuSearchTask(dag, "opencl -keys=mali,opencl,gpu -device=mali", HardwareParams::mali())));
        QVERIFY(!search::isGpuTask(test::gpuSearchTask(dag, "llvm -mcpu=znver4", HardwareParams::cpu(8, 64))));
    }

    // The sketch of conv2d_layer on CUDA has the structure of TVM's own record: inline the bias add,
    // SSSRRSRS tiling of the conv, relu tiled at the thread level with the conv computed there,
    // shared-memory copies of kernel and pad_temp at the outer reduce tile, pad_temp inlined.
    void testConv2dSketchMatchesTvmRecord() {
        const std::vector<Step> rec = recordSteps();
        QCOMPARE(int(rec.size()), 37);
        auto t = test::gpuSearchTask(test::conv2dLayer(1, 7, 7, 512, 512, 3, 3, 1, 1));
        const auto sketches = search::generateSketches(t);
        QCOMPARE(int(sketches.size()), 1);  // every GPU rule that applies here skips the rest
        const auto& steps = sketches[0].transformSteps();
        QCOMPARE(int(steps.size()), 20);  // up to CI pad_temp; the rest is the init population's
        const std::vector<Step> prefix(rec.begin(), rec.begin() + 20);
        QCOMPARE(structure(steps), structure(prefix));
        QCOMPARE(kinds(sketches[0]), QStringLiteral("CI SP SP SP SP SP SP SP RE FSP FSP FSP FSP RE CA CHR CA CHR CA CI"));
        // The tiling splits cover the loops the record split (extents n 1, co 512, h 7, w 7, rc 512, ry 3, rx 3).
        for (size_t i = 1; i <= 7; ++i) QCOMPARE(steps[i].as<SplitStep>()->extent, rec[i].as<SplitStep>()->extent);
        QCOMPARE(QString::fromStdString(sketches[0].stage(5).op->name), QStringLiteral("conv2d_nchw"));
        QCOMPARE(QString::fromStdString(sketches[0].stage(2).op->name), QStringLiteral("pad_temp.shared"));
        QCOMPARE(QString::fromStdString(sketches[0].stage(4).op->name), QStringLiteral("kernel.shared"));
    }

    // TVM's record replays here and uses what TVM's kernel uses: 64 threads (ff.2), no vthread,
    // shared memory for a 128 x 8 x 1 x 3 kernel tile and a 1 x 8 x 1 x 9 input tile.
    void testTvmRecordWithinLimits() {
        auto t = test::gpuSearchTask(test::conv2dLayer(1, 7, 7, 512, 512, 3, 3, 1, 1));
        State s = inferBound(replaySteps(*t.dag, recordSteps()));
        QCOMPARE(QString::fromStdString(search::verifyGpuState(s, t.hardware)), QString());
        const auto usage = search::gpuKernelUsage(s);
        QCOMPARE(int(usage.size()), 1);
        QCOMPARE(QString::fromStdString(s.stage(usage[0].rootStage).op->name), QStringLiteral("T_relu"));
        QCOMPARE(usage[0].threadsPerBlock, int64_t(64));
        QCOMPARE(usage[0].maxVthread, int64_t(1));
        QCOMPARE(usage[0].sharedBytes, int64_t((128 * 8 * 1 * 3 + 1 * 8 * 1 * 9) * 4));
        QCOMPARE(usage[0].maxVectorBytes, int64_t(16));  // pad_temp.shared fetches 4 floats at once
        const auto threads = search::gpuThreadExtents(s);
        QCOMPARE(threads[8].blockX, int64_t(28));  // n.0 ff.0 yy.0 xx.0 = 1 x 4 x 7 x 1
        QCOMPARE(threads[8].threadX, int64_t(64));
        QCOMPARE(threads[2].threadX, int64_t(64));  // the cooperative fetch uses the block's threads
        // Tighter devices reject it, naming the limit.
        HardwareParams small = t.hardware;
        small.maxSharedMemoryPerBlock = 8192;
        QVERIFY(mentions(search::verifyGpuState(s, small), "max_shared_memory_per_block"));
        small = t.hardware;
        small.maxThreadsPerBlock = 32;
        QVERIFY(mentions(search::verifyGpuState(s, small), "max_threads_per_block"));
        small = t.hardware;
        small.vectorUnitBytes = 8;
        QVERIFY(mentions(search::verifyGpuState(s, small), "vector_unit_bytes"));
    }

    // The init population: every state has the record's full step structure (thread binding FU/AN,
    // cooperative fetching FU SP AN FFSP AN, PR auto_unroll), respects the limits and round-trips.
    void testConv2dInitPopulation() {
        auto t = test::gpuSearchTask(test::conv2dLayer(1, 7, 7, 512, 512, 3, 3, 1, 1));
        search::SketchPolicy policy(t, std::make_shared<cost_model::RandomModel>(1), smallParams(), 7);
        const auto pop = policy.sampleInitPopulation();
        QVERIFY(pop.size() >= 16);
        checkPopulation(t, pop);
        const auto want = structure(recordSteps());
        for (const auto& s : pop) QCOMPARE(structure(s.transformSteps()), want);
        // Unroll values come from the GPU table.
        std::set<std::string> unroll;
        for (const auto& s : pop)
            for (const auto& st : s.transformSteps())
                if (auto* p = st.as<PragmaStep>()) unroll.insert(p->pragmaType.substr(p->pragmaType.find('$') + 1));
        for (const auto& v : unroll) QVERIFY(v == "0" || v == "16" || v == "64" || v == "512" || v == "1024");
    }

    // Mutations (tile size, auto unroll) keep the states within the limits: evolution's output is
    // pruned like the init population.
    void testConv2dEvolution() {
        auto t = test::gpuSearchTask(test::conv2dLayer(1, 7, 7, 512, 512, 3, 3, 1, 1));
        search::SketchPolicy policy(t, std::make_shared<cost_model::RandomModel>(2), smallParams(), 11);
        const auto pop = policy.sampleInitPopulation();
        const auto best = policy.evolutionarySearch(pop, 32);
        QVERIFY(!best.empty());
        checkPopulation(t, best);
        std::mt19937_64 rng(5);
        int mutated = 0;
        for (int i = 0; i < 64; ++i) {
            State m = policy.mutate(pop[size_t(i) % pop.size()], rng);
            if (!m.defined()) continue;
            ++mutated;
            // Only split lengths and pragma values change.
            QCOMPARE(structure(m.transformSteps()), structure(pop[0].transformSteps()));
        }
        QVERIFY(mutated > 0);
    }

    // A plain matmul: cache write local, shared copies of both inputs, 16x16 threads at most.
    void testMatmulSketch() {
        auto t = test::gpuSearchTask(matmulDag(512, 512, 512));
        const auto sketches = search::generateSketches(t);
        QCOMPARE(int(sketches.size()), 1);
        QCOMPARE(kinds(sketches[0]), QStringLiteral("CHW SP SP SP RE FSP FSP RE CA CHR CA CHR CA"));
        search::SketchPolicy policy(t, std::make_shared<cost_model::RandomModel>(3), smallParams(), 5);
        const auto pop = policy.sampleInitPopulation();
        QVERIFY(pop.size() >= 16);
        checkPopulation(t, pop);
    }

    void testDepthwiseSketch() {
        auto t = test::gpuSearchTask(depthwiseDag());
        const auto sketches = search::generateSketches(t);
        QVERIFY(!sketches.empty());
        for (const auto& sk : sketches) {
            bool sharedRead = false;
            for (const auto& st : sk.transformSteps())
                if (auto* c = st.as<CacheReadStep>()) sharedRead |= c->scopeName == "shared";
            QVERIFY(sharedRead);
        }
        search::SketchPolicy policy(t, std::make_shared<cost_model::RandomModel>(4), smallParams(), 9);
        const auto pop = policy.sampleInitPopulation();
        QVERIFY(pop.size() >= 16);
        checkPopulation(t, pop);
    }

    // A row sum with little spatial work: cross-thread reduction (reduce loop split by the warp
    // size, the inner part on threadIdx.x, the rows on blockIdx.x), no rfactor stage.
    void testCrossThreadReduction() {
        Tensor a = placeholder({16, 4096}, "A");
        auto t = test::gpuSearchTask(std::make_shared<ComputeDAG>(ComputeDAG::fromOutputs({topi::sum(a, std::vector<int>{1})})));
        // CrossThreadReduction applies without skipping the rest (TVM kApply): the cross-thread
        // sketch, and the plain one SkipStage leaves.
        const auto sketches = search::generateSketches(t);
        QCOMPARE(int(sketches.size()), 2);
        const State& ctr = sketches[0].transformSteps().empty() ? sketches[1] : sketches[0];
        const State& plain = sketches[0].transformSteps().empty() ? sketches[0] : sketches[1];
        QVERIFY(plain.transformSteps().empty());
        const auto& steps = ctr.transformSteps();
        QCOMPARE(kinds(ctr), QStringLiteral("SP AN"));
        QCOMPARE(steps[0].as<SplitStep>()->lengths, std::vector<int64_t>{32});
        QCOMPARE(steps[1].as<AnnotationStep>()->annotation, IteratorAnnotation::ThreadX);
        search::SketchPolicy policy(t, std::make_shared<cost_model::RandomModel>(5), smallParams(), 13);
        std::mt19937_64 rng(1);
        State s = inferBound(policy.randomAnnotate(ctr, rng));
        QVERIFY(search::hasCrossThreadReduction(s, 1));
        auto threads = search::gpuThreadExtents(s);
        QCOMPARE(threads[1].blockX, int64_t(16));
        QCOMPARE(threads[1].threadX, int64_t(32));
        QCOMPARE(QString::fromStdString(search::verifyGpuState(s, t.hardware)), QString());
        // The plain sketch: 16 rows fit in a warp, one thread per row.
        s = inferBound(policy.randomAnnotate(plain, rng));
        threads = search::gpuThreadExtents(s);
        QCOMPARE(threads[1].blockX, int64_t(1));
        QCOMPARE(threads[1].threadX, int64_t(16));
        QCOMPARE(QString::fromStdString(search::verifyGpuState(s, t.hardware)), QString());
    }

    // TVM's own GPU sketch tests (tests/python/auto_scheduler/test_auto_scheduler_sketch_generation.py
    // test_cuda_*), same workloads, same assertions.
    void testTvmCudaMatmulSketch() {
        auto sk = search::generateSketches(test::gpuSearchTask(tvmMatmul(512, 512, 512)));
        QCOMPARE(int(sk.size()), 1);
        checkMatmulTilingSketch(sk[0]);

        // 1 cross-thread reduction sketch + 1 multi-level tiling sketch.
        sk = search::generateSketches(test::gpuSearchTask(tvmMatmul(8, 8, 1024)));
        QCOMPARE(int(sk.size()), 2);
        QVERIFY(search::hasCrossThreadReduction(sk[0], 2));
        checkMatmulTilingSketch(sk[1]);

        // Multi-level tiling for one matmul only: 1 sketch.
        sk = search::generateSketches(test::gpuSearchTask(tvmDoubleMatmul(512)));
        QCOMPARE(int(sk.size()), 1);
        QCOMPARE(at(sk[0], 5), ComputeAtKind::Root);
        QCOMPARE(at(sk[0], 6), ComputeAtKind::Iter);
    }

    void testTvmCudaConv2dBnReluSketch() {
        auto sk = search::generateSketches(test::gpuSearchTask(tvmConv2dNchwBnRelu(1, 56, 56, 512, 512, 3, 1, 1)));
        QCOMPARE(int(sk.size()), 1);
        QVERIFY(hasCacheRead(sk[0], 1));
        QCOMPARE(at(sk[0], 1), ComputeAtKind::Inlined);
        QCOMPARE(at(sk[0], 2), ComputeAtKind::Iter);
        QVERIFY(hasCacheRead(sk[0], 3));
        QCOMPARE(at(sk[0], 4), ComputeAtKind::Iter);
        QVERIFY(search::isTiled(sk[0].stage(5)));
        QCOMPARE(at(sk[0], 5), ComputeAtKind::Iter);
        QCOMPARE(at(sk[0], 7), ComputeAtKind::Inlined);
        QCOMPARE(at(sk[0], 9), ComputeAtKind::Inlined);
        QCOMPARE(at(sk[0], 11), ComputeAtKind::Inlined);
        QVERIFY(search::isTiled(sk[0].stage(12)));
    }

    void testTvmCudaPoolMinSoftmaxZeroRankSketches() {
        Tensor data = placeholder({1, 512, 56, 56}, "Data");
        auto pool = std::make_shared<ComputeDAG>(std::vector<Tensor>{
            data, topi::nn::pool2d(data, {2, 2}, {1, 1}, {1, 1}, {0, 0, 0, 0}, topi::nn::PoolType::Max)});
        auto sk = search::generateSketches(test::gpuSearchTask(pool));
        QCOMPARE(int(sk.size()), 1);  // the default sketch
        QVERIFY(sk[0].transformSteps().empty());

        Tensor a = placeholder({10, 1024}, "A");
        sk = search::generateSketches(test::gpuSearchTask(std::make_shared<ComputeDAG>(std::vector<Tensor>{a, topi::min(a, std::vector<int>{-1})})));
        QCOMPARE(int(sk.size()), 2);  // cross-thread reduction + default
        QVERIFY(search::hasCrossThreadReduction(sk[0], 1));
        QVERIFY(sk[1].transformSteps().empty());

        // (cross-thread + default) x (cross-thread + default), for both softmax shapes.
        for (const std::vector<int64_t>& shape : {std::vector<int64_t>{2, 1024}, std::vector<int64_t>{1, 12, 128, 128}}) {
            Tensor x = placeholder(shape, "A");
            sk = search::generateSketches(test::gpuSearchTask(std::make_shared<ComputeDAG>(std::vector<Tensor>{x, topi::nn::softmax(x, -1)})));
            QCOMPARE(int(sk.size()), 4);
            QVERIFY(search::hasCrossThreadReduction(sk[0], 1));
            QVERIFY(search::hasCrossThreadReduction(sk[0], 3));
            QVERIFY(search::hasCrossThreadReduction(sk[1], 3));
            QVERIFY(search::hasCrossThreadReduction(sk[2], 1));
            QCOMPARE(at(sk[3], 2), ComputeAtKind::Inlined);
        }

        // A zero-rank reduction: cross-thread + multi-level tiling.
        Tensor v = placeholder({128}, "A");
        auto k = reduceAxis(128, "k");
        Tensor b = compute({}, std::vector<std::string>{}, [&](const std::vector<Var>&) { return sum(v(k.var), {k}); }, "B");
        sk = search::generateSketches(test::gpuSearchTask(std::make_shared<ComputeDAG>(std::vector<Tensor>{v, b})));
        QCOMPARE(int(sk.size()), 2);
    }

    void testTvmCudaWinogradSketch() {
        Tensor inputs = placeholder({1, 28, 28, 128}, "inputs"), weight = placeholder({6, 6, 128, 128}, "weight");
        Tensor out = topi::nn::conv2dWinogradNhwc(inputs, weight, {1, 1}, /*preComputed=*/true);
        auto sk = search::generateSketches(test::gpuSearchTask(std::make_shared<ComputeDAG>(std::vector<Tensor>{inputs, weight, out})));
        QCOMPARE(int(sk.size()), 1);
        QCOMPARE(at(sk[0], 1), ComputeAtKind::Inlined);
        QCOMPARE(at(sk[0], 2), ComputeAtKind::Iter);
        QCOMPARE(at(sk[0], 3), ComputeAtKind::Inlined);
        QVERIFY(search::isTiled(sk[0].stage(4)));
        QVERIFY(hasCacheRead(sk[0], 4));
        QCOMPARE(at(sk[0], 5), ComputeAtKind::Iter);
        QVERIFY(hasCacheRead(sk[0], 6));
        QCOMPARE(at(sk[0], 7), ComputeAtKind::Iter);
        QVERIFY(search::isTiled(sk[0].stage(8)));
        QCOMPARE(at(sk[0], 8), ComputeAtKind::Iter);
        QVERIFY(search::hasCacheWriteStage(sk[0], 8));
        QCOMPARE(at(sk[0], 9), ComputeAtKind::Root);
        QVERIFY(search::isTiled(sk[0].stage(11)));
        QVERIFY(!search::isTiled(sk[0].stage(12)));
    }

    // Softmax: both reductions reduce across threads, computed inside their consumers (fusible:
    // simple consumers with common outer loops) or at the root.
    void testSoftmax() {
        Tensor a = placeholder({4, 1000}, "A");
        auto t = test::gpuSearchTask(std::make_shared<ComputeDAG>(ComputeDAG::fromOutputs({topi::nn::softmax(a)})));
        const auto sketches = search::generateSketches(t);
        QVERIFY(!sketches.empty());
        bool fusedCrossThread = false;
        for (const auto& sk : sketches) {
            const QString k = kinds(sk);
            fusedCrossThread |= k.contains(QStringLiteral("FSP AN CA"));
        }
        QVERIFY(fusedCrossThread);
        search::SketchPolicy policy(t, std::make_shared<cost_model::RandomModel>(8), smallParams(), 21);
        const auto pop = policy.sampleInitPopulation();
        QVERIFY(!pop.empty());
        checkPopulation(t, pop);
    }

    // Every task of resnet-18 and mobilenet (x86 task extraction, winograd included: const-tensor
    // stages) gets GPU sketches and a valid init population, on CUDA and on Mali (seed 003's target).
    void testNetworkTasks_data() {
        QTest::addColumn<QString>("network");
        QTest::addColumn<bool>("mali");
        QTest::newRow("resnet-18 cuda") << QStringLiteral("resnet-18") << false;
        QTest::newRow("mobilenet cuda") << QStringLiteral("mobilenet") << false;
        QTest::newRow("mobilenet mali") << QStringLiteral("mobilenet") << true;
    }
    void testNetworkTasks() {
        QFETCH(QString, network);
        QFETCH(bool, mali);
        auto tasks = graph::extractTasks(graph::makeNetwork(network.toStdString(), 1, "NHWC"));
        QVERIFY(!tasks.empty());
        for (const auto& et : tasks) {
            auto dag = std::make_shared<ComputeDAG>(et.dag);
            auto t = mali ? test::gpuSearchTask(dag, "opencl -keys=mali,opencl,gpu -device=mali", HardwareParams::mali()) : test::gpuSearchTask(dag);
            QVERIFY2(!search::generateSketches(t).empty(), et.desc.c_str());
            search::SketchPolicyParams p = smallParams();
            p.evolutionaryPopulation = 64;
            p.sampleInitMinPopulation = 4;
            search::SketchPolicy policy(t, std::make_shared<cost_model::RandomModel>(9), p, 23);
            const auto pop = policy.sampleInitPopulation();
            QVERIFY2(!pop.empty(), et.desc.c_str());
            checkPopulation(t, pop);
            // The GPU default schedule (untuned groups) binds every kernel within the limits.
            checkPopulation(t, {inferBound(search::defaultGpuSchedule(*dag, t.hardware))});
        }
    }

    // The GPU default schedule (default_schedule_gpu.h): everything inlinable inlined; a reduction
    // read only by the element-wise output is cache-written "local" and computed at the output's
    // threadIdx.x loop (one kernel, the accumulator in a register); 256-thread blocks.
    void testDefaultGpuSchedule() {
        auto t = test::gpuSearchTask(test::conv2dLayer(1, 7, 7, 512, 512, 3, 3, 1, 1));
        State s = inferBound(search::defaultGpuSchedule(*t.dag, t.hardware));
        // pad_temp and T_add inlined, the conv's local stage computed at T_relu's threadIdx.x.
        QCOMPARE(kinds(s), QStringLiteral("CI CI CHW CI FU SP AN AN CA"));
        const auto kernels = search::gpuKernelUsage(s);
        QCOMPARE(int(kernels.size()), 1);
        QCOMPARE(kernels[0].threadsPerBlock, int64_t(256));
        const auto threads = search::gpuThreadExtents(s);
        QCOMPARE(threads[size_t(kernels[0].rootStage)].blockX, int64_t(98));  // 512 x 7 x 7 / 256
        QCOMPARE(threads[size_t(kernels[0].rootStage)].threadX, int64_t(256));
        checkPopulation(t, {s});

        // A reduction to a scalar has no spatial axis: its (fused) reduce loops are split by the
        // threads per block (by their own extent when smaller) and the inner part bound to
        // threadIdx.x, a cross-thread reduction in one block (TVM topi's all-reduce schedule).
        for (auto [shape, kindsWant, threadsWant] : {std::tuple<std::vector<int64_t>, const char*, int64_t>{{1000}, "SP AN", 256},
                                                     {{10, 30}, "FU SP AN", 256},
                                                     {{100}, "SP AN", 100}}) {
            Tensor v = placeholder(shape, "A");
            t = test::gpuSearchTask(std::make_shared<ComputeDAG>(std::vector<Tensor>{v, topi::sum(v)}));
            s = inferBound(search::defaultGpuSchedule(*t.dag, t.hardware));
            QCOMPARE(kinds(s), QString::fromLatin1(kindsWant));
            QVERIFY(search::hasCrossThreadReduction(s, 1));
            QCOMPARE(search::gpuThreadExtents(s)[1].threadX, threadsWant);
            QCOMPARE(search::gpuThreadExtents(s)[1].blockX, int64_t(1));
            checkPopulation(t, {s});
        }

        // A scalar without reduction has no loop to bind at all: a clear error.
        Tensor v = placeholder({4}, "A");
        Tensor b = compute({}, std::vector<std::string>{}, [&](const std::vector<Var>&) { return v(intImm(2)) * floatImm(2.0); }, "B");
        t = test::gpuSearchTask(std::make_shared<ComputeDAG>(std::vector<Tensor>{v, b}));
        try {
            search::defaultGpuSchedule(*t.dag, t.hardware);
            QFAIL("a scalar got a GPU default schedule");
        } catch (const UserError& e) {
            QVERIFY2(std::string(e.what()).find("has no axis to bind to GPU threads") != std::string::npos, e.what());
        }
    }

    // Mali: TVM's CPU rule list (no shared-memory copies) with the GPU tiling structure and GPU init
    // rules plus vectorization, within Mali's limits (256 threads, no vthread).
    void testMali() {
        auto t = test::gpuSearchTask(matmulDag(256, 256, 256), "opencl -keys=mali,opencl,gpu -device=mali", HardwareParams::mali());
        const auto sketches = search::generateSketches(t);
        QVERIFY(!sketches.empty());
        for (const auto& sk : sketches)
            for (const auto& st : sk.transformSteps()) QVERIFY(!st.is<CacheReadStep>());
        search::SketchPolicy policy(t, std::make_shared<cost_model::RandomModel>(6), smallParams(), 17);
        const auto pop = policy.sampleInitPopulation();
        QVERIFY(pop.size() >= 16);
        checkPopulation(t, pop);
        for (const auto& s : pop)
            for (const auto& k : search::gpuKernelUsage(s)) QVERIFY(k.threadsPerBlock <= 256 && k.maxVthread == 1);
    }
};

QTEST_GUILESS_MAIN(TestGpuSearch)
#include "tst_gpu_search.moc"
