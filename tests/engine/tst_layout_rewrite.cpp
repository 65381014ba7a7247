// SPDX-License-Identifier: Apache-2.0
// Ansor's weight layout rewrite (schedule/layout_rewrite.h): the new layout of known states equals
// what TVM's rule gives (derived by hand below, for a small conv, a dense, and a record of TVM's
// resnet-18 log), a rewritten kernel fed the transformed weight computes what the original kernel
// computes, records carry option 2 through a round trip, and a network compiled with records of
// option 2 (weights pre-transformed at compile time) equals the reference interpreter.
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "engine/codegen/codegen_llvm.h"
#include "engine/codegen/jit.h"
#include "engine/codegen/target.h"
#include "engine/graph/task_extraction.h"
#include "engine/graph/zoo.h"
#include "engine/lower/lower_state.h"
#include "engine/record/record_io.h"
#include "engine/runtime/build_module.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/layout_rewrite.h"
#include "engine/support/error.h"
#include "engine/search/cost_model.h"
#include "engine/search/sketch_policy.h"
#include "engine/topi/nn/conv2d.h"
#include "engine/topi/nn/dense.h"
#include "engine/tuning/program_measurer.h"
#include "runtime_test_util.h"
#include "test_graph_util.h"

using namespace tb;

namespace {

const char* kTvmLog = "../shared/data/logs/ansor/tvmsandbox_resnet-18-NHWC-B1-llvm.json";

// conv2d_nhwc of data [1, 8, 8, 16] with a 3x3 HWIO kernel [3, 3, 16, 32], pad 1: stages data,
// pad_temp, kernel, conv2d_nhwc (the kernel is layout-free).
te::ComputeDAG smallConv() {
    te::Tensor data = te::placeholder({1, 8, 8, 16}, "data");
    te::Tensor kernel = te::placeholder({3, 3, 16, 32}, "kernel");
    return te::ComputeDAG::fromOutputs({topi::nn::conv2dNhwc(data, kernel, {1, 1}, {1, 1}, {1, 1})});
}

// dense(A [4, 64], B [32, 64]) = T_matmul_NT[i, j] = sum_k A[i, k] * B[j, k]; B is layout-free.
te::ComputeDAG smallDense() {
    return te::ComputeDAG::fromOutputs({topi::nn::dense(te::placeholder({4, 64}, "A"), te::placeholder({32, 64}, "B"))});
}

State stateOf(const te::ComputeDAG& dag, const char* stepsJson) {
    return inferBound(replaySteps(dag, stepsFromJson(nlohmann::json::parse(stepsJson))));
}

std::vector<float> randomVector(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = u(rng);
    return v;
}

// Compiles `state` of `dag`, runs it on `inputs` (one per input tensor, in order) and returns the
// last output.
std::vector<float> runKernel(const te::ComputeDAG& dag, const State& state, std::vector<std::vector<float>> args) {
    const codegen::CompiledKernel k =
        codegen::compile(lower::lowerState(dag, state), codegen::Target::host(), codegen::CompileOptions{false, false, {}});
    auto loaded = codegen::LoadedKernel::load(k.object, k.name);
    for (const te::Tensor& o : dag.outputs())
        args.emplace_back(size_t(o.numElements()), std::numeric_limits<float>::quiet_NaN());
    std::vector<float*> ptrs;
    for (auto& a : args) ptrs.push_back(a.data());
    if (loaded->run(ptrs) != 0) return {};
    return args.back();
}

// The original kernel on random inputs, and the rewritten one on the same inputs with every
// rewritten weight transformed: max |difference| / max |original|.
double rewrittenVsOriginal(const te::ComputeDAG& dag, const State& state, const LayoutRewrite& rw, unsigned seed) {
    std::vector<std::vector<float>> inputs;
    for (const te::Tensor& t : dag.inputs()) inputs.push_back(randomVector(size_t(t.numElements()), seed++));
    const std::vector<float> want = runKernel(dag, state, inputs);
    for (const PlaceholderLayout& l : rw.layouts)
        inputs[size_t(l.tensorIndex)] = transformLayout(l, inputs[size_t(l.tensorIndex)]);
    const std::vector<float> got = runKernel(rw.dag, rw.state, inputs);
    if (got.size() != want.size() || want.empty()) return 1e30;
    return runtime::relativeMaxError(got.data(), want.data(), want.size());
}

std::vector<std::string> axes(std::initializer_list<const char*> names) { return {names.begin(), names.end()}; }

}  // namespace

class TestLayoutRewrite : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // TVM's rule on a conv tiled by hand: the loops after the state's steps are
    // nn yy ff.0 rc.0 ry rx xx rc.1 ff.1 with extents 1 8 4 4 3 3 8 4 8; those over the kernel's
    // axes (ry, rx, rc, ff), in loop order, are the new shape.
    void testConvLayout() {
        const te::ComputeDAG dag = smallConv();
        QCOMPARE(dag.ops()[2]->name, std::string("kernel"));
        QCOMPARE(dag.ops()[3]->name, std::string("conv2d_nhwc"));
        QVERIFY(hasLayoutFreePlaceholders(dag));
        const State s = stateOf(dag, R"([["SP", 3, 3, 32, [8], 1], ["SP", 3, 7, 16, [4], 1],
                                          ["RE", 3, [0, 1, 3, 7, 5, 6, 2, 8, 4]]])");
        const LayoutRewrite rw = rewriteLayout(dag, s, LayoutRewriteOption::RewriteForPreTransformed);
        QCOMPARE(int(rw.layouts.size()), 1);
        const PlaceholderLayout& l = rw.layouts[0];
        QCOMPARE(l.placeholder, std::string("kernel"));
        QCOMPARE(l.tensorIndex, 1);  // tensors: data, kernel, conv2d_nhwc
        QCOMPARE(l.origLayout(), std::string("3ry3rx16rc32ff"));
        QCOMPARE(l.newShape, (std::vector<int64_t>{4, 4, 3, 3, 4, 8}));
        QCOMPARE(l.newAxes, axes({"ff", "rc", "ry", "rx", "rc", "ff"}));
        QCOMPARE(l.newLayout(), std::string("4ff4rc3ry3rx4rc8ff"));
        // The kernel's argument has the new shape; the DAG keeps its stages.
        QCOMPARE(rw.dag.tensors()[1].shape(), l.newShape);
        QCOMPARE(rw.dag.ops().size(), dag.ops().size());
        QVERIFY(!hasLayoutFreePlaceholders(rw.dag));

        // W'[a, b, c, d, e, f] = W[ry = c, rx = d, rc = 4b + e, ff = 8a + f] (the mixed-radix digits).
        const std::vector<float> w = randomVector(3 * 3 * 16 * 32, 3);
        const std::vector<float> t = transformLayout(l, w);
        QCOMPARE(t.size(), w.size());
        size_t flat = 0;
        for (int a = 0; a < 4; ++a)
            for (int b = 0; b < 4; ++b)
                for (int c = 0; c < 3; ++c)
                    for (int d = 0; d < 3; ++d)
                        for (int e = 0; e < 4; ++e)
                            for (int f = 0; f < 8; ++f, ++flat)
                                QCOMPARE(t[flat], w[size_t(((c * 3 + d) * 16 + 4 * b + e) * 32 + 8 * a + f)]);

        QVERIFY(rewrittenVsOriginal(dag, s, rw, 11) < 1e-5);
        // The rewritten kernel really reads another order: fed the untransformed weight, it is wrong.
        std::vector<std::vector<float>> in{randomVector(8 * 8 * 16, 12), w};
        const std::vector<float> want = runKernel(dag, s, in), got = runKernel(rw.dag, rw.state, in);
        QVERIFY(runtime::relativeMaxError(got.data(), want.data(), want.size()) > 1e-2);
    }

    // Dense: loops j.0 k.0 i j.1 k.1 j.2 (extents 4 4 4 4 16 2); the weight B[j, k].
    void testDenseLayout() {
        const te::ComputeDAG dag = smallDense();
        QCOMPARE(dag.ops()[2]->name, std::string("T_matmul_NT"));
        const State s = stateOf(dag, R"([["SP", 2, 1, 32, [4, 2], 1], ["SP", 2, 4, 64, [16], 1],
                                          ["RE", 2, [1, 4, 0, 2, 5, 3]]])");
        const LayoutRewrite rw = rewriteLayout(dag, s, LayoutRewriteOption::RewriteForPreTransformed);
        QCOMPARE(int(rw.layouts.size()), 1);
        const PlaceholderLayout& l = rw.layouts[0];
        QCOMPARE(l.placeholder, std::string("B"));
        QCOMPARE(l.origLayout(), std::string("32j64k"));
        QCOMPARE(l.newLayout(), std::string("4j4k4j16k2j"));
        QVERIFY(rewrittenVsOriginal(dag, s, rw, 21) < 1e-5);
        // NoRewrite leaves the DAG and the state as they are.
        const LayoutRewrite none = rewriteLayout(dag, s, LayoutRewriteOption::NoRewrite);
        QVERIFY(!none.rewritten());
        QCOMPARE(none.dag.tensors()[1].shape(), (std::vector<int64_t>{32, 64}));
    }

    // A split that does not divide: k (64) by 24 gives loops k.0 = 3, k.1 = 24, so the new layout
    // has 72 k positions; the ones past 64 hold 0 and are never read (the kernel's guard).
    void testNonDividingSplit() {
        const te::ComputeDAG dag = smallDense();
        const State s = stateOf(dag, R"([["SP", 2, 1, 32, [4, 2], 1], ["SP", 2, 4, 64, [24], 1],
                                          ["RE", 2, [1, 4, 0, 2, 5, 3]]])");
        const LayoutRewrite rw = rewriteLayout(dag, s, LayoutRewriteOption::RewriteForPreTransformed);
        QCOMPARE(rw.layouts.at(0).newLayout(), std::string("4j3k4j24k2j"));
        const std::vector<float> w = randomVector(32 * 64, 5);
        const std::vector<float> t = transformLayout(rw.layouts[0], w);
        QCOMPARE(t.size(), size_t(4 * 3 * 4 * 24 * 2));
        // B'[a, b, c, d, e] = B[j = 8a + 2c + e, k = 24b + d], 0 for k >= 64.
        size_t flat = 0, zeros = 0;
        for (int a = 0; a < 4; ++a)
            for (int b = 0; b < 3; ++b)
                for (int c = 0; c < 4; ++c)
                    for (int d = 0; d < 24; ++d)
                        for (int e = 0; e < 2; ++e, ++flat) {
                            const int j = 8 * a + 2 * c + e, k = 24 * b + d;
                            if (k >= 64) {
                                QCOMPARE(t[flat], 0.0f);
                                ++zeros;
                            } else {
                                QCOMPARE(t[flat], w[size_t(j * 64 + k)]);
                            }
                        }
        QCOMPARE(zeros, size_t(32 * 8));
        QVERIFY(rewrittenVsOriginal(dag, s, rw, 31) < 1e-5);
    }

    void testErrors() {
        const te::ComputeDAG dag = smallDense();
        const State s = stateOf(dag, R"([["SP", 2, 1, 32, [4, 2], 1]])");
        try {
            rewriteLayout(dag, s, LayoutRewriteOption::InsertTransformStage);
            QFAIL("no error for option 1");
        } catch (const UserError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("InsertTransformStage")), e.what());
        }
        PlaceholderLayout l = rewriteLayout(dag, s, LayoutRewriteOption::RewriteForPreTransformed).layouts.at(0);
        try {
            transformLayout(l, std::vector<float>(10));
            QFAIL("no error for a wrong size");
        } catch (const UserError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("B")), e.what());
        }
    }

    // The first record of TVM's resnet-18 log (conv 3x3 512->512 at 7x7 + residual add; stages
    // p0, pad_temp, p1, conv2d_nhwc, p2, T_add). By hand, from its steps: conv loops after RE are
    // nn.0 yy.0 xx.0 ff.0 nn.1 yy.1 xx.1 ff.1 ry.0 rx.0 rc.0 nn.2 yy.2 xx.2 ff.2 ry.1 rx.1 rc.1
    // nn.3 yy.3 xx.3 ff.3; ff splits [1, 128, 2], ry [3], rx [1], rc [2]. T_add follows with
    // [l0, rest] (ax3: 2, 1, 256; ax1: 7, 1, 1), is reordered to ax*.0 ax*.1 ax*.2, its first six
    // loops fused, and the conv is computed at ax3.1. The attach prefix is
    // ax0.0 ax1.0 ax2.0 ax3.0 ax0.1 ax1.1 (the fused loop's parts) ax2.1 ax3.1, named like the
    // conv's first eight loops (nn yy xx ff nn yy xx ff): its ff loops have extents 2 and 1. Under
    // the attach point the conv computes 1 x 1 x 7 x 256 outputs, so ff.0 = ff.1 = 1, ff.2 = 128,
    // ff.3 = 2, ry.0 = 1, rx.0 = 3, rc.0 = 256, ry.1 = 3, rx.1 = 1, rc.1 = 2.
    void testTvmLogRecord() {
        auto log = record::readMeasureRecords(kTvmLog);
        QVERIFY(log.records.size() > 0);
        const auto& rec = log.records[0];
        QCOMPARE(rec.task.layoutRewriteOption, 2);
        auto tasks = graph::extractTasks(graph::makeNetwork("resnet-18", 1, "NHWC"));
        const graph::ExtractedTask* task = nullptr;
        for (const auto& t : tasks)
            if (graph::legacyTvmWorkloadKey(t.dag) == rec.task.workloadKey) task = &t;
        QVERIFY(task);
        const State s = inferBound(replaySteps(task->dag, stepsFromJson(rec.steps)));
        const LayoutRewrite rw = rewriteLayout(task->dag, s, LayoutRewriteOption::RewriteForPreTransformed);
        QCOMPARE(int(rw.layouts.size()), 1);
        const PlaceholderLayout& l = rw.layouts[0];
        QCOMPARE(l.origLayout(), std::string("3ry3rx512rc512ff"));
        QCOMPARE(l.newShape, (std::vector<int64_t>{2, 1, 1, 1, 1, 3, 256, 128, 3, 1, 2, 2}));
        QCOMPARE(l.newAxes, axes({"ff", "ff", "ff", "ff", "ry", "rx", "rc", "ff", "ry", "rx", "rc", "ff"}));
        QVERIFY(rewrittenVsOriginal(task->dag, s, rw, 41) < 1e-5);
    }

    // The best record of a winograd workload (bgemm reads the pre-transformed kernel_pack) and of
    // the dense workload of the log: the rewritten kernels compute what the original ones do.
    void testTvmLogWinogradAndDense() {
        auto log = record::readMeasureRecords(kTvmLog);
        auto tasks = graph::extractTasks(graph::makeNetwork("resnet-18", 1, "NHWC"));
        for (const char* prefix : {"[\"c10a2b5ba4a928ac115e28a3732e62a4\"", "[\"7d44c6e3c81cd80f61ff2265b2bae89a\""}) {
            const record::MeasureRecord* best = nullptr;
            for (const auto& r : log.records)
                if (r.valid() && r.task.workloadKey.rfind(prefix, 0) == 0 && (!best || r.meanCost() < best->meanCost()))
                    best = &r;
            QVERIFY2(best, prefix);
            const graph::ExtractedTask* task = nullptr;
            for (const auto& t : tasks)
                if (graph::legacyTvmWorkloadKey(t.dag) == best->task.workloadKey) task = &t;
            QVERIFY2(task, prefix);
            const State s = inferBound(replaySteps(task->dag, stepsFromJson(best->steps)));
            const LayoutRewrite rw = rewriteLayout(task->dag, s, LayoutRewriteOption::RewriteForPreTransformed);
            QCOMPARE(int(rw.layouts.size()), 1);
            int64_t n = 1;
            for (int64_t e : rw.layouts[0].newShape) n *= e;
            QVERIFY(n >= rw.dag.tensors()[size_t(rw.layouts[0].tensorIndex)].numElements());
            QVERIFY2(rewrittenVsOriginal(task->dag, s, rw, 51) < 1e-5, prefix);
        }
    }

    // A measured state of a task tuned with option 2 gives a record that says 2, through a log line.
    void testRecordRoundTrip() {
        search::SearchTask task;
        task.dag = std::make_shared<const te::ComputeDAG>(smallDense());
        task.workloadKey = task.dag->workloadKey();
        task.hardware = HardwareParams{2, 64, 64, 0, 0, 0, 0, 0};
        task.layoutRewrite = LayoutRewriteOption::RewriteForPreTransformed;
        search::MeasureOutcome o;
        o.costs = {1.5e-5};
        const State s = stateOf(*task.dag, R"([["SP", 2, 1, 32, [4, 2], 1]])");
        const record::MeasureRecord r = tuning::makeRecord(task, "llvm -keys=cpu", s, o);
        const std::string line = r.toLine();
        QVERIFY2(line.find("\"\", 2, []]") != std::string::npos, line.c_str());
        const record::MeasureRecord back = record::MeasureRecord::fromLine(line);
        QCOMPARE(back.task.layoutRewriteOption, 2);
        QCOMPARE(back.toLine(), line);
        task.layoutRewrite = LayoutRewriteOption::NoRewrite;
        QCOMPARE(record::MeasureRecord::fromLine(tuning::makeRecord(task, "llvm -keys=cpu", s, o).toLine())
                     .task.layoutRewriteOption,
                 0);
    }

    // Networks compiled with a short log of option-2 records (one random sketch-policy state per
    // task): the tuned kernels read pre-transformed weights and the outputs equal the reference
    // interpreter's, as they do without the rewrite.
    void testCompiledNetwork_data() {
        QTest::addColumn<QString>("network");
        QTest::addRow("mlp") << QStringLiteral("mlp");
        QTest::addRow("two convs") << QStringLiteral("convs");
        QTest::addRow("resnet-18 with TVM's log") << QStringLiteral("resnet-18");
    }
    void testCompiledNetwork() {
        QFETCH(QString, network);
        graph::Graph g;
        if (network == QStringLiteral("mlp")) {
            g = test::withLogits(graph::makeNetwork("mlp", 1, "NHWC"));
        } else {
            const graph::NodeId x = g.addInput("data", graph::TensorType{{1, 14, 14, 16}, te::DType::Float32});
            const graph::NodeId y = test::addConvBiasRelu(g, x, 16, 32, 5, "1");
            g.setOutputs({test::addConvBiasRelu(g, y, 32, 32, 9, "2")});
        }
        if (network == QStringLiteral("resnet-18")) {
            // TVM's records (all layout_rewrite_option 2): every tuned conv and the dense read
            // pre-transformed weights; the logits equal the interpreter's.
            g = test::withLogits(graph::makeNetwork("resnet-18", 1, "NHWC"));
            runtime::BuildOptions bo;
            bo.logPath = kTvmLog;
            runtime::CompiledModule mod = runtime::build(g, bo);
            int rewritten = 0;
            for (const auto& k : mod.report().kernels) rewritten += !k.layoutRewrite.empty();
            QCOMPARE(rewritten, 21);  // 24 tasks less the max pool, global average pool and softmax ones
            const double err = test::compareWithInterpreter(mod, g);
            QVERIFY2(err < 1e-4, qPrintable(QString::number(err)));
            return;
        }
        const std::string target = runtime::hostTargetString();
        graph::TaskExtractionOptions eo;
        eo.target = target;
        const auto extracted = graph::extractTasks(g, eo);
        QVERIFY(!extracted.empty());
        QTemporaryDir dir;
        const std::string logPath = QString(dir.path() + QStringLiteral("/log.json")).toStdString();
        {
            record::RecordWriter w(logPath, record::RecordWriter::Mode::Truncate);
            search::SketchPolicyParams params;
            params.sampleInitMinPopulation = 8;
            params.numThreads = 1;
            for (const auto& e : extracted) {
                search::SearchTask t;
                t.dag = std::make_shared<const te::ComputeDAG>(e.dag);
                t.workloadKey = e.workloadKey;
                t.target = target;
                t.hardware = HardwareParams{2, 64, 64, 0, 0, 0, 0, 0};
                t.layoutRewrite = LayoutRewriteOption::RewriteForPreTransformed;
                search::SketchPolicy policy(t, std::make_shared<cost_model::RandomModel>(3), params, 17);
                const auto pop = policy.sampleInitPopulation();
                QVERIFY(!pop.empty());
                search::MeasureOutcome o;
                o.costs = {1e-4};
                w.append(tuning::makeRecord(t, target, pop.front(), o));
            }
        }
        runtime::BuildOptions bo;
        bo.logPath = logPath;
        runtime::CompiledModule mod = runtime::build(g, bo);
        int rewritten = 0;
        for (const auto& k : mod.report().kernels) rewritten += !k.layoutRewrite.empty();
        QVERIFY2(rewritten > 0, mod.report().text().c_str());
        QCOMPARE(mod.report().tunedCalls + mod.report().defaultCalls + mod.report().unscheduledCalls, mod.report().groups);
        const double err = test::compareWithInterpreter(mod, g);
        QVERIFY2(err < 1e-4, qPrintable(QString::number(err)));

        bo.layoutRewrite = false;
        runtime::CompiledModule plain = runtime::build(g, bo);
        for (const auto& k : plain.report().kernels) QVERIFY(k.layoutRewrite.empty());
        QCOMPARE(plain.params().size(), mod.params().size());  // the originals were replaced, not kept
        QVERIFY(test::compareWithInterpreter(plain, g) < 1e-4);
    }
};

QTEST_APPLESS_MAIN(TestLayoutRewrite)
#include "tst_layout_rewrite.moc"
