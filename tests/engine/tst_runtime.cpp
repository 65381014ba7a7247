// SPDX-License-Identifier: Apache-2.0
// Whole networks compiled with their schedules (engine/runtime): the memory plan, TVM's benchmark
// summary and deploy formats, the default schedules, the zoo networks and the PP-OCR models
// compiled end to end and checked against the graph reference interpreter / ONNX Runtime, a real
// TVM tuning log applied to resnet-18, and an exported library run by tunebench-runner.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "engine/graph/fuse_ops.h"
#include "engine/graph/interpreter.h"
#include "engine/graph/onnx_import.h"
#include "engine/graph/passes/passes.h"
#include "engine/graph/task_extraction.h"
#include "engine/graph/tensor_io.h"
#include "engine/graph/zoo.h"
#include "engine/lower/lower_state.h"
#include "engine/record/record_io.h"
#include "engine/measure/timer.h"
#include "engine/runtime/benchmark.h"
#include "engine/runtime/build_module.h"
#include "engine/search/default_schedule.h"
#include "engine/runtime/graph_json.h"
#include "engine/runtime/memory_plan.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/support/error.h"
#include "engine/tuning/program_measurer.h"
#include "tests/engine/test_graph_util.h"
#include "runtime_test_util.h"

using namespace tb;
using namespace tb::runtime;

namespace {

const std::string kPpocr = "../shared/data/models/ppocr/";
const std::string kResnetLog = "../shared/data/logs/ansor/tvmsandbox_resnet-18-NHWC-B1-llvm.json";

using test::compareWithInterpreter;
using test::randomInput;
using test::withLogits;

/// A graph of one NHWC conv2d (3x3, pad 1) + bias + relu on a 1x14x14x32 input.
graph::Graph convReluGraph(int64_t cout) {
    graph::Graph g;
    const graph::NodeId x = g.addInput("data", {{1, 14, 14, 32}});
    g.addOutput(test::addConvBiasRelu(g, x, 32, cout, 3));
    return g;
}

std::vector<std::string> readKeys() {
    std::ifstream f(kPpocr + "ppocr_keys_v1.txt");
    std::vector<std::string> keys;
    std::string line;
    while (std::getline(f, line)) keys.push_back(line);
    return keys;
}

/// Greedy CTC decoding as PaddleOCR (and tst_ppocr) do it.
std::string ctcDecode(const std::vector<float>& probs, int64_t steps, int64_t classes, const std::vector<std::string>& keys) {
    std::string text;
    int64_t prev = -1;
    for (int64_t t = 0; t < steps; ++t) {
        const float* row = probs.data() + t * classes;
        const int64_t best = int64_t(std::max_element(row, row + classes) - row);
        if (best != 0 && best != prev) text += best == classes - 1 ? std::string(" ") : keys.at(size_t(best - 1));
        prev = best;
    }
    return text;
}

}  // namespace

class TestRuntime : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testMemoryPlanReusesDeadTensors() {
        // A chain a -> b -> c -> d with a pinned input and output: b and d may share, c may not
        // take b's storage (c reads b), and no kernel's output may live where one of its inputs does.
        std::vector<PlanTensor> t = {
            {400, -1, 0, true},   // input, read by kernel 0
            {400, 0, 1, false},   // b = k0(input)
            {400, 1, 2, false},   // c = k1(b)
            {400, 2, 3, false},   // d = k2(c)  (b is dead: reuse)
            {800, 3, 4, false},   // e = k3(d)  (bigger than any free storage: grows c's)
            {400, 4, -1, true},   // output = k4(e)
        };
        MemoryPlan p = planMemory(t);
        QCOMPARE(p.storageOf.size(), t.size());
        QCOMPARE(p.storageOf[3], p.storageOf[1]);
        QVERIFY(p.storageOf[2] != p.storageOf[1]);
        QVERIFY(p.storageOf[4] != p.storageOf[3]);
        QVERIFY(p.storageOf[5] != p.storageOf[0]);
        QCOMPARE(p.naiveBytes, int64_t(2000));
        QCOMPARE(p.plannedBytes, int64_t(1200));  // two storages: 400 and one grown to 800
        for (size_t i = 0; i < t.size(); ++i) QVERIFY(p.storageBytes[size_t(p.storageOf[i])] >= t[i].bytes);
        // Live ranges sharing a storage never overlap.
        for (size_t i = 0; i < t.size(); ++i)
            for (size_t j = i + 1; j < t.size(); ++j) {
                if (p.storageOf[i] != p.storageOf[j]) continue;
                QVERIFY(!t[i].pinned && !t[j].pinned);
                const int li = std::max(t[i].lastUse, t[i].defStep), lj = std::max(t[j].lastUse, t[j].defStep);
                QVERIFY(li < t[j].defStep || lj < t[i].defStep);
            }
        QVERIFY_THROWS_EXCEPTION(InternalError, planMemory({{0, -1, 0, false}}));
    }

    void testBenchmarkSummaryMatchesTvm() {
        // np.mean/median/max/min/std of [8.2, 8.1, 8.15, 8.13] ms, printed as TVM's BenchmarkResult.__str__.
        BenchmarkResult r = BenchmarkResult::fromResults({0.0082, 0.0081, 0.00815, 0.00813});
        QCOMPARE(QString::fromStdString(r.summary()),
                 QStringLiteral("Execution time summary:\n"
                                " mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)  \n"
                                "   8.1450       8.1400       8.2000       8.1000       0.0364                  "));
        QCOMPARE(QString::fromStdString(centered("ab", 5)), QStringLiteral(" ab  "));
    }

    void testGraphJsonAndParamsRoundTrip() {
        ExecGraph g;
        g.nodes.push_back({ExecNode::Kind::Input, "data", "", {}, {1, 4}, 0, 0});
        g.nodes.push_back({ExecNode::Kind::Param, "p0", "", {}, {4}, 1, 0});
        g.nodes.push_back({ExecNode::Kind::Op, "fused_add", "tb_fused_add_1234", {0, 1}, {1, 4}, 2, 4});
        g.nodes.push_back({ExecNode::Kind::Op, "fused_relu", "tb_fused_relu_5678", {2}, {1, 4}, 3, 0});
        g.inputs = {0};
        g.outputs = {3};
        g.storageBytes = {16, 16, 16, 16};
        const std::string json = graphToJson(g);
        QVERIFY(json.find("\"func_name\": \"tb_fused_add_1234\"") != std::string::npos);
        QVERIFY(json.find("\"storage_id\"") != std::string::npos);
        ExecGraph back = graphFromJson(json, {"p0"}, "test");
        QCOMPARE(back.nodes.size(), size_t(4));
        QVERIFY(back.nodes[1].kind == ExecNode::Kind::Param);
        QCOMPARE(back.nodes[2].inputs, (std::vector<int>{0, 1}));
        QCOMPARE(back.nodes[2].flop, 4.0);
        QCOMPARE(back.outputs, (std::vector<int>{3}));
        QCOMPARE(back.storageBytes, g.storageBytes);
        QVERIFY_THROWS_EXCEPTION(UserError, graphFromJson("{\"nodes\": 3}", {}, "bad"));

        std::map<std::string, NamedArray> params{{"p0", {{2, 2}, {1, 2, 3, 4}}}, {"p1", {{3}, {5, 6, 7}}}};
        const std::string bytes = saveParams(params);
        auto loaded = loadParams(bytes, "test");
        QCOMPARE(loaded.size(), size_t(2));
        QCOMPARE(loaded["p0"].shape, (std::vector<int64_t>{2, 2}));
        QCOMPARE(loaded["p1"].data, (std::vector<float>{5, 6, 7}));
        QVERIFY_THROWS_EXCEPTION(UserError, loadParams(bytes.substr(0, bytes.size() - 3), "truncated"));
        QVERIFY_THROWS_EXCEPTION(UserError, loadParams("not params at all", "junk"));
    }

    void testDefaultScheduleTilesConvolutions() {
        // conv2d + bias + relu (NHWC, 64 output channels): the reduction is computed at its reader's
        // vector tile (CA), rows unrolled, lanes vectorized, outer loops fused and parallel.
        graph::Graph g = convReluGraph(64);
        const auto groups = graph::fuseOps(g);
        QCOMPARE(groups.size(), size_t(1));
        graph::LoweredGroup lg = graph::lowerGroup(g, groups[0]);
        State s = search::defaultSchedule(lg.dag);
        std::set<std::string> kinds;
        for (const auto& st : s.transformSteps()) kinds.insert(st.prefix());
        QVERIFY(kinds.count("CI"));  // bias add inlined
        QVERIFY(kinds.count("CA"));  // conv at relu's tile
        QVERIFY(kinds.count("FU") && kinds.count("AN") && kinds.count("SP") && kinds.count("RE"));
        const std::string ir = lower::lowerState(lg.dag, inferBound(s)).print();
        QVERIFY2(ir.find("parallel") != std::string::npos, ir.c_str());
        QVERIFY2(ir.find("vectorized") != std::string::npos, ir.c_str());
        // The same group compiled: matches the interpreter.
        CompiledModule mod = build(g, {});
        QCOMPARE(mod.report().defaultCalls, 1);
        const double err = compareWithInterpreter(mod, g);
        QVERIFY2(err <= 1e-5, qPrintable(QString::number(err)));
        // Without register tiling and rfactor (plain parallel + vector loops) too.
        BuildOptions plain;
        plain.defaults.registerTiling = false;
        plain.defaults.rfactor = false;
        CompiledModule mod2 = build(g, plain);
        const double err2 = compareWithInterpreter(mod2, g);
        QVERIFY2(err2 <= 1e-5, qPrintable(QString::number(err2)));
    }

    void testDefaultScheduleAwkwardShapes_data() {
        QTest::addColumn<QString>("kind");
        QTest::addRow("dense 40x120 -> 6625 (PP-OCR rec's classifier)") << "dense";
        QTest::addRow("1x1 conv to 42 channels (PP-OCR det)") << "conv42";
        QTest::addRow("conv2d_transpose 2x2/2 to 1 channel (PP-OCR det's head)") << "deconv1";
        QTest::addRow("3x3 conv to 24 channels (PP-OCR det's neck)") << "conv24";
        QTest::addRow("softmax over 6625 classes") << "softmax";
    }
    void testDefaultScheduleAwkwardShapes() {
        // Shapes the vector lanes do not divide, or whose last axis has no lanes to give, from the
        // PP-OCR models, where the default schedule used to fall back to scalar loops (dense 40x6625
        // ran at 2.9 GFLOP/s, the transposed conv at 1 GFLOP/s): each is now a register tile or an
        // rfactor with vector lanes, and still computes the interpreter's result.
        QFETCH(QString, kind);
        graph::Graph g;
        graph::Attrs a;
        if (kind == QLatin1String("dense")) {
            const graph::NodeId x = g.addInput("x", {{40, 120}});
            g.addOutput(g.addOp("nn.dense", {x, g.addConstant("w", test::randomConstant({6625, 120}, 3))}));
        } else if (kind == QLatin1String("conv42") || kind == QLatin1String("conv24")) {
            // 1x1 48 -> 42 channels, or 3x3 (pad 1) 32 -> 24 channels, NHWC / HWIO.
            const bool wide = kind == QLatin1String("conv42");
            const int64_t cin = wide ? 48 : 32, cout = wide ? 42 : 24, k = wide ? 1 : 3;
            const graph::NodeId x = g.addInput("x", {{1, wide ? 10 : 16, wide ? 10 : 16, cin}});
            a.set("channels", cout);
            a.set("kernel_size", std::vector<int64_t>{k, k});
            a.set("padding", std::vector<int64_t>(4, k / 2));
            a.set("data_layout", std::string("NHWC"));
            a.set("kernel_layout", std::string("HWIO"));
            g.addOutput(g.addOp("nn.conv2d", {x, g.addConstant("w", test::randomConstant({k, k, cin, cout}, wide ? 5 : 9))}, a));
        } else if (kind == QLatin1String("deconv1")) {
            const graph::NodeId x = g.addInput("x", {{1, 8, 20, 20}});
            a.set("channels", int64_t(1));
            a.set("kernel_size", std::vector<int64_t>{2, 2});
            a.set("strides", std::vector<int64_t>{2, 2});
            a.set("data_layout", std::string("NCHW"));
            a.set("kernel_layout", std::string("IOHW"));
            g.addOutput(g.addOp("nn.conv2d_transpose", {x, g.addConstant("w", test::randomConstant({8, 1, 2, 2}, 7))}, a));
        } else {
            const graph::NodeId x = g.addInput("x", {{1, 40, 6625}});
            a.set("axis", int64_t(-1));
            g.addOutput(g.addOp("nn.softmax", {x}, a));
        }
        const auto groups = graph::fuseOps(g);
        QCOMPARE(groups.size(), size_t(1));
        graph::LoweredGroup lg = graph::lowerGroup(g, groups[0]);
        search::DefaultScheduleOptions dso;
        dso.layoutFreeContiguous = true;  // as build() asks for constant weights
        bool rewritten = false;
        State s = search::defaultSchedule(lg.dag, dso, &rewritten);
        const std::string ir = lower::lowerState(lg.dag, inferBound(s)).print();
        QVERIFY2(ir.find("vectorized") != std::string::npos, ir.c_str());
        std::set<std::string> kinds;
        for (const auto& st : s.transformSteps()) kinds.insert(st.prefix());
        QCOMPARE(rewritten, kind == QLatin1String("dense"));  // only dense reads its weight across its layout
        if (kind == QLatin1String("softmax")) {
            QVERIFY(kinds.count("RF"));  // max and sum: vector partial sums over a masked split of 6625
        } else {
            QVERIFY(kinds.count("CA"));  // a register tile computed at its reader's tile
            QVERIFY2(ir.find("unrolled") != std::string::npos, ir.c_str());  // its rows
        }
        if (kind == QLatin1String("conv24"))  // three unrolled columns of 8-lane vectors: 8 rows x 24 channels
            QVERIFY2(ir.find("unrolled (ff_c.1, 0, 3)") != std::string::npos && ir.find("vectorized (ff_c.2, 0, 8)") != std::string::npos,
                     ir.c_str());
        if (kind == QLatin1String("conv42") || kind == QLatin1String("dense"))
            QVERIFY2(ir.find("< 42") != std::string::npos || ir.find("< 6625") != std::string::npos, ir.c_str());  // masked tail
        CompiledModule mod = build(g, {});
        QCOMPARE(mod.report().defaultCalls, 1);
        // Constant weights are read rewritten into the tiles' loop order (dense's W[6625, 120] as
        // [415, 1, 120, 16]; the conv's HWIO kernel as its tile walks it); softmax has none.
        const std::string relaid = mod.report().kernels.at(0).layoutRewrite;
        QCOMPARE(relaid.empty(), kind == QLatin1String("softmax") || kind == QLatin1String("deconv1"));
        if (kind == QLatin1String("dense")) QVERIFY2(relaid.find("415j") != std::string::npos, relaid.c_str());
        const double err = compareWithInterpreter(mod, g);
        QVERIFY2(err <= 1e-5, qPrintable(QString::number(err)));
        // Without the rewrite (`--no-layout-rewrite`) dense keeps its original weight, and agrees too.
        BuildOptions plain;
        plain.layoutRewrite = false;
        CompiledModule mod2 = build(g, plain);
        QVERIFY(mod2.report().kernels.at(0).layoutRewrite.empty());
        const double err2 = compareWithInterpreter(mod2, g);
        QVERIFY2(err2 <= 1e-5, qPrintable(QString::number(err2)));
    }

    void testWinogradOrDirectPerConvFromRecords() {
        // Two 3x3 convolutions that TVM's rule rewrites to winograd (64 < CO < 512), of different
        // widths so that their tasks differ. The log: conv a has a winograd record (2 ms) and a
        // faster direct one (1 ms), conv b a winograd record only. compile keeps b winograd and
        // compiles a direct, both tuned, and the network still computes the interpreter's result.
        graph::Graph g;
        const graph::NodeId x = g.addInput("data", graph::TensorType{{1, 14, 14, 128}, te::DType::Float32});
        const graph::NodeId y = test::addConvBiasRelu(g, x, 128, 128, 5, "a");
        g.setOutputs({test::addConvBiasRelu(g, y, 128, 192, 9, "b")});
        const std::string target = hostTargetString();
        graph::TaskExtractionOptions eo;
        eo.target = target;
        const auto wtasks = graph::extractTasks(g, eo);
        eo.winograd = false;
        const auto dtasks = graph::extractTasks(g, eo);
        QCOMPARE(wtasks.size(), size_t(2));
        QCOMPARE(dtasks.size(), size_t(2));
        auto channels = [](const graph::ExtractedTask& t) { return t.dag.outputs().at(0).shape().back(); };
        auto record = [&](const graph::ExtractedTask& e, double seconds) {
            search::SearchTask t;
            t.dag = std::make_shared<const te::ComputeDAG>(e.dag);
            t.workloadKey = e.workloadKey;
            t.target = target;
            search::MeasureOutcome o;
            o.costs = {seconds};
            return tuning::makeRecord(t, target, State(*t.dag), o);
        };
        QTemporaryDir dir;
        const std::string logPath = QString(dir.path() + QStringLiteral("/log.json")).toStdString();
        {
            record::RecordWriter w(logPath, record::RecordWriter::Mode::Truncate);
            for (const auto& t : wtasks) {
                QVERIFY(t.desc.find("winograd") != std::string::npos);
                w.append(record(t, channels(t) == 128 ? 2e-3 : 1e-3));
            }
            for (const auto& t : dtasks)
                if (channels(t) == 128) w.append(record(t, 1e-3));
        }
        BuildOptions o;
        o.logPath = logPath;
        CompiledModule mod = build(g, o);
        const BuildReport& rep = mod.report();
        QCOMPARE(rep.winogradChoice, (std::vector<bool>{false, true}));
        QCOMPARE(rep.tunedCalls, 2);
        int winogradKernels = 0;
        for (const auto& k : rep.kernels) winogradKernels += k.funcName.find("winograd") != std::string::npos;
        QCOMPARE(winogradKernels, 1);
        QVERIFY2(rep.text().find("winograd: 1 of 2 convolutions kept winograd, 1 compiled direct") != std::string::npos,
                 rep.text().c_str());
        const double err = compareWithInterpreter(mod, g);
        QVERIFY2(err <= 1e-4, qPrintable(QString::number(err)));
        // A log of winograd records only: the rule stands, and the report says nothing of it.
        {
            record::RecordWriter w(logPath, record::RecordWriter::Mode::Truncate);
            for (const auto& t : wtasks) w.append(record(t, 1e-3));
        }
        CompiledModule mod2 = build(g, o);
        QVERIFY(mod2.report().winogradChoice.empty());
        QCOMPARE(mod2.report().tunedCalls, 2);
    }

    void testZooNetworks_data() {
        QTest::addColumn<QString>("network");
        QTest::addColumn<QString>("layout");
        QTest::addColumn<bool>("winograd");
        QTest::addRow("mobilenet NHWC") << "mobilenet" << "NHWC" << true;
        QTest::addRow("resnet-18 NHWC") << "resnet-18" << "NHWC" << true;
        QTest::addRow("resnet-18 NHWC --no-winograd") << "resnet-18" << "NHWC" << false;
        QTest::addRow("mobilenet NCHW (NCHWc)") << "mobilenet" << "NCHW" << true;
        QTest::addRow("squeezenet_v1.1 NCHW (concatenate)") << "squeezenet_v1.1" << "NCHW" << true;
    }
    void testZooNetworks() {
        QFETCH(QString, network);
        QFETCH(QString, layout);
        QFETCH(bool, winograd);
        graph::Graph g = withLogits(graph::makeNetwork(network.toStdString(), 1, layout.toStdString()));
        BuildOptions o;
        o.winograd = winograd;
        CompiledModule mod = build(g, o);
        const BuildReport& rep = mod.report();
        if (network == QLatin1String("resnet-18")) {
            int winogradKernels = 0;
            for (const auto& k : rep.kernels) winogradKernels += k.funcName.find("winograd") != std::string::npos;
            QCOMPARE(winogradKernels > 0, winograd);
        }
        qInfo("%s", rep.text().substr(0, 600).c_str());
        QCOMPARE(rep.tunedCalls, 0);
        QCOMPARE(rep.unscheduledCalls, 0);  // every group lowers with its default schedule
        QCOMPARE(rep.defaultCalls, rep.groups);
        QVERIFY(rep.plannedBytes < rep.naiveBytes / 2);  // liveness-based reuse
        const double err = compareWithInterpreter(mod, g);
        qInfo("%s %s: compiled vs interpreter: relative max error %.3g", qPrintable(network), qPrintable(layout), err);
        QVERIFY2(err <= 1e-4, qPrintable(QString::number(err)));
        // A second run gives bit-identical results (nothing leaks between runs through reused storages).
        te::Buffer in = randomInput(g.node(g.inputs()[0]).type.shape, 11);
        auto a = mod.run({in});
        auto b = mod.run({in});
        QCOMPARE(a[0].data, b[0].data);
    }

    void testUnscheduledLoweringAgrees() {
        // The fallback path (lowerComputeDag) on a small network gives the interpreter's results too.
        graph::Graph g = graph::makeNetwork("mlp", 1, "NHWC");
        BuildOptions o;
        o.defaultSchedules = false;
        CompiledModule mod = build(g, o);
        QCOMPARE(mod.report().defaultCalls, 0);
        QCOMPARE(mod.report().unscheduledCalls, mod.report().groups);
        const double err = compareWithInterpreter(mod, g);
        QVERIFY2(err <= 1e-5, qPrintable(QString::number(err)));
    }

    void testTvmLogOnResnet18() {
        // TVM's own resnet-18 tuning run (NHWC, batch 1, `llvm -keys=cpu`, written by a TVM older
        // than v0.8, so found under its legacy keys): the best record of every task it covers is
        // replayed on our DAGs and lowered; the network still computes what the interpreter
        // computes. The six winograd tasks are left out of the log here: their tuned kernels
        // (auto_unroll_max_step 512 over the transform matrices) take LLVM 20-90 s each today.
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::string log = tmp.filePath(QStringLiteral("resnet18_no_winograd.json")).toStdString();
        int kept = 0, dropped = 0;
        {
            std::ifstream in(kResnetLog);
            std::ofstream out(log);
            std::string line;
            while (std::getline(in, line)) {
                const bool winograd = line.find("[6, 6, ") != std::string::npos;  // kernel_pack [alpha, alpha, ci, co]
                (winograd ? dropped : kept) += 1;
                if (!winograd) out << line << "\n";
            }
        }
        QVERIFY(kept > 900 && dropped > 100);
        graph::Graph g = withLogits(graph::makeNetwork("resnet-18", 1, "NHWC"));
        BuildOptions o;
        o.logPath = log;
        CompiledModule mod = build(g, o);
        const BuildReport& rep = mod.report();
        qInfo("%s", rep.text().c_str());
        QCOMPARE(rep.logRecords, kept);
        int tunedKernels = 0, winogradDefault = 0;
        for (const auto& k : rep.kernels) {
            if (k.funcName.find("winograd") != std::string::npos) winogradDefault += k.source == ScheduleSource::Default;
            if (k.source != ScheduleSource::Tuned) continue;
            ++tunedKernels;
            QVERIFY(k.recordMs > 0 && k.hasReduce && k.steps > 0);
        }
        const double err = compareWithInterpreter(mod, g);
        qInfo("resnet-18 with TVM's log: %d tuned kernels, %d of %d calls tuned; relative max error %.3g",
              tunedKernels, rep.tunedCalls, rep.groups, err);
        QCOMPARE(tunedKernels, 17);   // 24 tasks in the log: 6 winograd ones dropped, softmax cut off
        QCOMPARE(winogradDefault, 6);  // ... which get the default schedule
        QVERIFY2(err <= 1e-4, qPrintable(QString::number(err)));
    }

    void testPpocr_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("ref");
        QTest::addColumn<QString>("layout");
        // NHWC: ConvertLayout first, as `tunebench-cli tasks/tune/compile --onnx` do by default.
        QTest::addRow("rec NHWC") << "ch_PP-OCRv4_rec_infer.onnx" << "rec" << "NHWC";
        QTest::addRow("cls NHWC") << "ch_ppocr_mobile_v2.0_cls_infer.onnx" << "cls" << "NHWC";
        QTest::addRow("cls NCHW (NCHWc)") << "ch_ppocr_mobile_v2.0_cls_infer.onnx" << "cls" << "NCHW";
        QTest::addRow("det NHWC") << "ch_PP-OCRv4_det_infer.onnx" << "det" << "NHWC";
    }
    void testPpocr() {
        // The PP-OCR models compiled end to end on real preprocessed images, against ONNX Runtime's
        // outputs; and the outputs mean what they should: the recognizer reads "TuneBench 2026",
        // the classifier says upright, the detector marks the text lines (README of the reference).
        QFETCH(QString, model);
        QFETCH(QString, ref);
        QFETCH(QString, layout);
        const std::string dir = kPpocr + "reference/" + ref.toStdString() + "/test_data_set_0/";
        graph::NamedTensor in = graph::readTensorFile(dir + "input_0.pb");
        graph::NamedTensor want = graph::readTensorFile(dir + "output_0.pb");
        graph::OnnxImportOptions io;
        io.inputShapes = graph::shapeMapFromTensors({in});
        graph::Graph g = graph::importOnnx(kPpocr + model.toStdString(), io);
        if (layout == QLatin1String("NHWC")) g = graph::convertLayout(g, "NHWC");
        CompiledModule mod = build(g, {});
        QCOMPARE(mod.report().unscheduledCalls, 0);
        auto out = mod.run({te::Buffer{in.data.type.shape, in.data.f}});
        QCOMPARE(out[0].shape, want.data.type.shape);
        const double err = relativeMaxError(out[0].data.data(), want.data.f.data(), want.data.f.size());
        qInfo("%s %s: %d kernel calls (%zu kernels), compiled vs ONNX Runtime: relative max error %.3g", qPrintable(ref),
              qPrintable(layout), mod.report().groups, mod.report().kernels.size(), err);
        QVERIFY2(err <= 1e-4, qPrintable(QString::number(err)));
        if (ref == QLatin1String("rec")) {
            const std::string text = ctcDecode(out[0].data, out[0].shape[1], out[0].shape[2], readKeys());
            QCOMPARE(QString::fromStdString(text), QStringLiteral("TuneBench 2026"));
        } else if (ref == QLatin1String("cls")) {
            QVERIFY(out[0].data[0] > 0.99f);  // upright
        } else {
            int64_t text = 0;
            for (float v : out[0].data) text += v > 0.3f;
            QVERIFY2(std::llabs(text - 6358) <= 2, qPrintable(QString::number(text)));  // README: 6358 pixels
        }
    }

    void testExportedLibraryRunsInRunner() {
        // cls exported as deploy_lib.so + graph JSON + params, run by tunebench-runner in another
        // process (no LLVM there): its output file equals the in-process output bit for bit.
        const std::string dir = kPpocr + "reference/cls/test_data_set_0/";
        graph::NamedTensor in = graph::readTensorFile(dir + "input_0.pb");
        graph::OnnxImportOptions io;
        io.inputShapes = graph::shapeMapFromTensors({in});
        graph::Graph g = graph::importOnnx(kPpocr + "ch_ppocr_mobile_v2.0_cls_infer.onnx", io);
        CompiledModule mod = build(g, {});
        auto out = mod.run({te::Buffer{in.data.type.shape, in.data.f}});
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::string exportDir = tmp.filePath(QStringLiteral("cls")).toStdString();
        mod.exportLibrary(exportDir);
        for (const char* f : {"deploy_lib.so", "deploy_graph.json", "deploy_param.params"})
            QVERIFY2(std::filesystem::exists(exportDir + "/" + f), f);
        const std::string outPath = tmp.filePath(QStringLiteral("out.pb")).toStdString();
        QProcess runner;
        runner.start(QStringLiteral(TB_RUNNER_PATH),
                     {QString::fromStdString(exportDir), QStringLiteral("--input"), QString::fromStdString(dir + "input_0.pb"),
                      QStringLiteral("--output"), QString::fromStdString(outPath)});
        QVERIFY(runner.waitForFinished(120000));
        const QByteArray log = runner.readAllStandardOutput() + runner.readAllStandardError();
        QVERIFY2(runner.exitStatus() == QProcess::NormalExit && runner.exitCode() == 0, log.constData());
        graph::NamedTensor got = graph::readTensorFile(outPath);
        QCOMPARE(got.data.type.shape, out[0].shape);
        QCOMPARE(got.data.f, out[0].data);
        // A corrupt export is refused with a message, not a crash.
        { std::ofstream(exportDir + "/deploy_param.params", std::ios::binary) << "junk"; }
        runner.start(QStringLiteral(TB_RUNNER_PATH),
                     {QString::fromStdString(exportDir), QStringLiteral("--input"), QString::fromStdString(dir + "input_0.pb")});
        QVERIFY(runner.waitForFinished(60000));
        QCOMPARE(runner.exitCode(), 2);
        QVERIFY(runner.readAllStandardError().contains("deploy_param.params: truncated param file"));
    }
};

QTEST_APPLESS_MAIN(TestRuntime)
#include "tst_runtime.moc"
