// SPDX-License-Identifier: Apache-2.0
// The Mali AutoTVM templates (issue 18, seed 001): each of conv2d_nchw_spatial_pack.mali,
// conv2d_nchw_winograd.mali, dense.mali and depthwise_conv2d_nchw.mali instantiated for configs
// spread over its space, lowered for the GPU (blockIdx / threadIdx z, y, x: 3-D launches) and run as
// OpenCL C on this machine's OpenCL device (PoCL) by the GPU measure worker, which checks the
// outputs against the reference interpreter's (a separate process: PoCL compiles with its own LLVM
// 15, which crashes beside the engine's LLVM 16 in one process);
// configs TVM rejects are INSTANTIATION_ERROR through measureConfigs (too many threads for the
// Mali-T860, a vector width TVM does not take); the mali task extraction of resnet-18 (NCHW)
// against TVM's strategy and the workloads of TVM's tophub mali log.
#include <QFile>
#include <QProcess>
#include <QtTest>

#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/autotvm/task.h"
#include "engine/autotvm/task_extraction.h"
#include "engine/codegen/codegen_gpu_source.h"
#include "engine/graph/zoo.h"
#include "engine/measure/builder.h"
#include "engine/measure/check_blob.h"
#include "engine/measure/gpu_runner.h"
#include "engine/te/interpreter.h"
#include "tests/engine/test_util.h"

using namespace tb;
using ojson = nlohmann::ordered_json;

namespace {

const char* const kMali = "opencl -keys=mali,opencl,gpu -device=mali -thread_warp_size=1";

ojson convArgs(std::vector<std::int64_t> data, std::vector<std::int64_t> kernel, std::int64_t stride, std::int64_t pad,
               std::int64_t dilation = 1) {
    return ojson::array({ojson::array({"TENSOR", data, "float32"}), ojson::array({"TENSOR", kernel, "float32"}),
                         {stride, stride}, {pad, pad, pad, pad}, {dilation, dilation}, "float32"});
}

ojson denseArgs(std::int64_t m, std::int64_t n, std::int64_t k) {
    return ojson::array({ojson::array({"TENSOR", {m, k}, "float32"}), ojson::array({"TENSOR", {n, k}, "float32"}),
                         nullptr, "float32"});
}

struct Program {
    std::shared_ptr<const te::ComputeDAG> dag;
    codegen::GpuModule module;
    std::string what;  // config, for messages
};

// Runs each program's module on PoCL through the GPU measure worker with a check: random inputs,
// the outputs compared with the interpreter's on the same inputs (WRONG_ANSWER otherwise).
std::vector<measure::MeasureResult> runChecked(const std::vector<Program>& programs, unsigned seed) {
    measure::GpuRunnerOptions ro;
    ro.timeoutS = 60;
    ro.number = 1;
    ro.minRepeatMs = 0;
    measure::GpuLocalRunner runner(ro);
    std::vector<measure::MeasureInput> inputs;
    std::vector<measure::BuildResult> builds;
    for (const Program& p : programs) {
        const auto in = test::randomInputs(*p.dag, seed);
        const auto out = te::evaluate(*p.dag, in);
        auto check = std::make_shared<measure::CheckSpec>();
        for (const auto& b : in) {
            check->inputs.push_back(b.data);
            check->expected.emplace_back();
        }
        for (const auto& b : out) {
            check->inputs.emplace_back();
            check->expected.push_back(b.data);
        }
        measure::MeasureInput mi;
        mi.gpuModule = std::make_shared<const codegen::GpuModule>(p.module);
        mi.check = check;
        mi.stateText = p.what;
        inputs.push_back(mi);
        measure::BuildResult br;
        br.gpuModule = mi.gpuModule;
        builds.push_back(br);
    }
    return runner.run(inputs, builds);
}

bool openClDevice() {
    QProcess clinfo;
    clinfo.start(QStringLiteral("clinfo"), {QStringLiteral("-l")});
    return clinfo.waitForFinished(20000) && clinfo.readAll().contains("Device");
}

}  // namespace

class TestAutotvmMali : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        if (!openClDevice()) QSKIP("no OpenCL device (install pocl-opencl-icd and clinfo)");
    }

    // Configs spread over the space (indices size * j / n and a few pseudo-random ones): each one
    // either fails instantiation with a UserError (TVM's invalid config, e.g. an unroll over 16 or
    // a vector width outside 1, 2, 4, 8, 16) or runs on PoCL with the interpreter's output.
    void testConfigsRunOnPocl_data() {
        QTest::addColumn<QString>("task");
        QTest::addColumn<QString>("args");
        QTest::addColumn<int>("minValid");
        auto row = [](const char* name, const char* task, const ojson& args, int minValid) {
            QTest::newRow(name) << QString::fromLatin1(task) << QString::fromStdString(args.dump()) << minValid;
        };
        row("spatial_pack 3x3", "conv2d_nchw_spatial_pack.mali", convArgs({1, 8, 12, 12}, {16, 8, 3, 3}, 1, 1), 6);
        row("spatial_pack 3x3 stride 2", "conv2d_nchw_spatial_pack.mali", convArgs({1, 4, 14, 14}, {8, 4, 3, 3}, 2, 1), 6);
        row("spatial_pack 1x1", "conv2d_nchw_spatial_pack.mali", convArgs({1, 16, 8, 8}, {8, 16, 1, 1}, 1, 0), 6);
        row("spatial_pack dilated", "conv2d_nchw_spatial_pack.mali", convArgs({1, 4, 12, 12}, {8, 4, 3, 3}, 1, 2, 2), 4);
        row("winograd m=4", "conv2d_nchw_winograd.mali", convArgs({1, 8, 8, 8}, {8, 8, 3, 3}, 1, 1), 6);
        row("winograd m=2", "conv2d_nchw_winograd.mali", convArgs({1, 4, 6, 6}, {4, 4, 3, 3}, 1, 1), 6);
        row("dense", "dense.mali", denseArgs(2, 24, 32), 6);
        row("depthwise 3x3", "depthwise_conv2d_nchw.mali", convArgs({1, 8, 10, 10}, {8, 1, 3, 3}, 1, 1), 4);
        row("depthwise stride 2", "depthwise_conv2d_nchw.mali", convArgs({1, 8, 9, 9}, {8, 1, 3, 3}, 2, 1), 4);
    }
    void testConfigsRunOnPocl() {
        QFETCH(QString, task);
        QFETCH(QString, args);
        QFETCH(int, minValid);
        const autotvm::Task t = autotvm::Task::create(task.toStdString(), ojson::parse(args.toStdString()), kMali);
        const std::int64_t size = t.space.size();
        std::vector<std::int64_t> indices;
        const int n = 10;
        for (int j = 0; j < n; ++j) indices.push_back(size * j / n);
        std::uint64_t x = 12345;
        for (int j = 0; j < 4; ++j) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            indices.push_back(std::int64_t((x >> 33) % std::uint64_t(size)));
        }
        int invalid = 0, threeD = 0;
        std::vector<Program> programs;
        for (std::int64_t i : indices) {
            const autotvm::ConfigEntity cfg = t.space.get(i);
            autotvm::TemplateInstance inst;
            try {
                inst = t.instantiate(cfg);
            } catch (const UserError& e) {
                ++invalid;  // TVM's cfg.raise_error / assertions: an invalid config
                qInfo("  config #%lld invalid: %s", static_cast<long long>(i), e.what());
                continue;
            }
            Program p{inst.dag, codegen::buildGpuModule(*inst.dag, inst.state, codegen::GpuLanguage::OpenCL),
                      "#" + std::to_string(i) + " " + cfg.entityJson().dump()};
            QVERIFY(!p.module.launches.empty());
            for (const auto& l : p.module.launches) threeD += l.grid[2] > 1 || l.block[2] > 1;
            programs.push_back(std::move(p));
        }
        const auto results = runChecked(programs, 17);
        int valid = 0;
        for (size_t k = 0; k < programs.size(); ++k) {
            QVERIFY2(results[k].ok(), qPrintable(QStringLiteral("config %1: %2: %3\n%4")
                                                     .arg(QString::fromStdString(programs[k].what),
                                                          QLatin1String(measure::errorName(results[k].errorNo)),
                                                          QString::fromStdString(results[k].errorMsg),
                                                          QString::fromStdString(programs[k].module.source.substr(0, 3000)))));
            ++valid;
            qInfo("  config %s: %.3f ms", programs[k].what.c_str(), results[k].costs.at(0) * 1e3);
        }
        qInfo("%s: %d of %zu configs ran equal to the interpreter, %d invalid, %d launches with a z extent > 1",
              qPrintable(task), valid, indices.size(), invalid, threeD);
        QVERIFY2(valid >= minValid, qPrintable(QStringLiteral("only %1 valid configs").arg(valid)));
        if (!task.startsWith(QLatin1String("dense")) && !task.contains(QLatin1String("winograd")))
            QVERIFY2(threeD > 0, "tile_and_bind3d gives 3-D launches");
    }

    // A spatial_pack config with real 3-D blocks: the emitted OpenCL reads get_group_id(0..2) and
    // get_local_id(0..2) and the conv launch is (CO/VC/TC, OH/VH/TH, OW/VW/TW) x (TC, TH, TW)
    // (tile_and_bind3d's z = co, y = h, x = w; OpenCL dimension 0 is x).
    void testSpatialPackLaunchIs3d() {
        const autotvm::Task t =
            autotvm::Task::create("conv2d_nchw_spatial_pack.mali", convArgs({1, 8, 12, 12}, {16, 8, 3, 3}, 1, 1), kMali);
        std::optional<autotvm::ConfigEntity> chosen;
        for (std::int64_t i = 0; i < t.space.size() && !chosen; ++i) {
            const autotvm::ConfigEntity c = t.space.get(i);
            if (c.split("tile_co").size == std::vector<std::int64_t>{-1, 4, 2} &&  // (2, 4, 2)
                c.split("tile_oh").size == std::vector<std::int64_t>{-1, 2, 2} &&  // (3, 2, 2)
                c.split("tile_ow").size == std::vector<std::int64_t>{-1, 3, 2} &&  // (2, 3, 2)
                c.annotate("ann_spatial").anns == std::vector<std::string>{"none", "none", "vec"} &&
                c.reorder("reorder_0").perm == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
                chosen = c;
        }
        QVERIFY(chosen);
        const autotvm::TemplateInstance inst = t.instantiate(*chosen);
        const codegen::GpuModule m = codegen::buildGpuModule(*inst.dag, inst.state, codegen::GpuLanguage::OpenCL);
        QCOMPARE(int(m.launches.size()), 3);  // data_vec, conv, output_unpack
        const auto& conv = m.launches[1];
        QCOMPARE(conv.grid, (std::array<std::int64_t, 3>{2, 3, 2}));  // (6/TW, 6/TH, 8/TC): conv is (CO/VC, OH/VH, OW/VW)
        QCOMPARE(conv.block, (std::array<std::int64_t, 3>{3, 2, 4}));
        const auto& out = m.launches[2];
        QCOMPARE(out.grid, (std::array<std::int64_t, 3>{4, 6, 4}));  // (12/3, 12/2, 16/4)
        QCOMPARE(out.block, (std::array<std::int64_t, 3>{3, 2, 4}));
        for (const char* s : {"get_group_id(0)", "get_group_id(1)", "get_group_id(2)", "get_local_id(0)",
                              "get_local_id(1)", "get_local_id(2)", "vstore2"})
            QVERIFY2(m.source.find(s) != std::string::npos, s);
        const auto res = runChecked({Program{inst.dag, m, "3-D"}}, 7);
        QVERIFY2(res[0].ok(), res[0].errorMsg.c_str());
    }

    // Through measureConfigs (the tuner's path) with the GPU runner on PoCL: a dense config with
    // 16 x 32 = 512 threads per block is over the Mali target's 256 (TVM's GPU verify pass in the
    // builder) and a depthwise config vectorizing a loop of 3 lanes is TVM's "Wrong size of lanes
    // in vectorization": both INSTANTIATION_ERROR with the reason; a valid config measures.
    void testInvalidConfigsAreInstantiationErrors() {
        measure::GpuRunnerOptions ro;
        ro.timeoutS = 30;
        ro.number = 1;
        ro.minRepeatMs = 0;
        measure::GpuLocalRunner runner(ro);
        measure::LocalBuilder builder(codegen::Target::parse(kMali));
        const autotvm::MeasureOption mo{&builder, &runner};

        const autotvm::Task dense = autotvm::Task::create("dense.mali", denseArgs(16, 32, 8), kMali);
        std::optional<autotvm::ConfigEntity> tooMany, fine;
        for (std::int64_t i = 0; i < dense.space.size(); ++i) {
            const autotvm::ConfigEntity c = dense.space.get(i);
            const std::int64_t threads = c.split("tile_y").size[1] * c.split("tile_x").size[1];
            if (!tooMany && threads == 512) tooMany = c;
            if (!fine && threads == 32 && c.split("tile_x").size[2] == 4) fine = c;
        }
        QVERIFY(tooMany && fine);
        auto res = autotvm::measureConfigs(dense, {*tooMany, *fine}, mo);
        QCOMPARE(res[0].errorNo, measure::MeasureErrorNo::InstantiationError);
        QVERIFY2(res[0].errorMsg.find("512 threads per block") != std::string::npos &&
                     res[0].errorMsg.find("max_threads_per_block 256") != std::string::npos,
                 res[0].errorMsg.c_str());
        QVERIFY2(res[1].ok(), res[1].errorMsg.c_str());
        QVERIFY(res[1].costs.at(0) > 0 && res[1].costs.at(0) < 1);

        const autotvm::Task dw =
            autotvm::Task::create("depthwise_conv2d_nchw.mali", convArgs({1, 8, 9, 9}, {8, 1, 3, 3}, 1, 1), kMali);
        std::optional<autotvm::ConfigEntity> badVec;
        for (std::int64_t i = 0; i < dw.space.size() && !badVec; ++i) {
            const autotvm::ConfigEntity c = dw.space.get(i);
            if (c.split("tile_x").size[2] == 3 && c.annotate("ann_spatial").anns[2] == "vec" &&
                c.annotate("ann_spatial").anns[0] == "none" && c.annotate("ann_spatial").anns[1] == "none")
                badVec = c;
        }
        QVERIFY(badVec);
        res = autotvm::measureConfigs(dw, {*badVec}, mo);
        QCOMPARE(res[0].errorNo, measure::MeasureErrorNo::InstantiationError);
        QVERIFY2(res[0].errorMsg.find("Wrong size of lanes in vectorization") != std::string::npos,
                 res[0].errorMsg.c_str());
        const auto rec = autotvm::makeRecord(dw, *badVec, res[0]);
        QCOMPARE(rec.errorNo, 1);
        QCOMPARE(rec.costs, std::vector<double>{1e9});
    }

    // resnet-18 (relay.testing, NCHW) for `opencl -device=mali`: TVM's mali strategy gives every
    // groups-1 conv a conv2d_nchw_spatial_pack.mali task and the 3x3 stride-1 ones a
    // conv2d_nchw_winograd.mali task as well (12 workloads: 12 + 4 tasks), plus dense.mali for the
    // classifier. Every conv workload is one TVM tuned for its tophub mali log (v0.06), under one of
    // the two templates.
    void testResnet18MaliTasks() {
        const graph::Graph g = graph::makeNetwork("resnet-18", 1, "NCHW");
        const autotvm::ExtractedTasks ex = autotvm::extractTasks(g, "opencl -device=mali -host=llvm");
        QCOMPARE(ex.notInstantiable.size(), size_t(0));
        QCOMPARE(ex.skippedOps, 0);
        std::map<std::string, int> count;
        for (const auto& t : ex.tasks) ++count[t.taskName];
        QCOMPARE(count["conv2d_nchw_spatial_pack.mali"], 12);
        QCOMPARE(count["conv2d_nchw_winograd.mali"], 4);
        QCOMPARE(count["dense.mali"], 1);
        QCOMPARE(int(ex.tasks.size()), 17);
        QCOMPARE(ex.tasks.front().taskName, std::string("conv2d_nchw_spatial_pack.mali"));
        QCOMPARE(ex.tasks.front().args.dump(),
                 convArgs({1, 3, 224, 224}, {64, 3, 7, 7}, 2, 3).dump());
        QCOMPARE(ex.tasks.back().args.dump(), denseArgs(1, 1000, 512).dump());
        for (const auto& t : ex.tasks) {
            if (t.taskName != "conv2d_nchw_winograd.mali") continue;
            QCOMPARE(t.args[1][1][2].get<int>(), 3);  // 3x3, stride 1
            QCOMPARE(t.args[2], ojson::array({1, 1}));
        }
        // every task's space and FLOPs build
        for (const auto& t : ex.tasks) {
            const autotvm::Task task = autotvm::Task::create(t.taskName, t.args, kMali);
            QVERIFY(task.space.size() > 1 && task.flop > 0);
        }

        QFile f(QStringLiteral("../shared/data/logs/autotvm/tophub_mali_v0.06.log"));
        if (!f.open(QIODevice::ReadOnly)) QSKIP("the tophub mali log is not in ../shared/data (checkout layout)");
        std::set<std::string> tophub;  // args of the tuned conv workloads
        for (const QByteArray& line : f.readAll().split('\n')) {
            if (!line.startsWith('{')) continue;
            const auto j = ojson::parse(line.toStdString());
            tophub.insert(j["input"][2].dump());
        }
        std::set<std::string> convWorkloads;
        for (const auto& t : ex.tasks)
            if (t.taskName != "dense.mali") convWorkloads.insert(t.args.dump());
        QCOMPARE(int(convWorkloads.size()), 12);
        for (const auto& w : convWorkloads) QVERIFY2(tophub.count(w), w.c_str());
    }
};

QTEST_GUILESS_MAIN(TestAutotvmMali)
#include "tst_autotvm_mali.moc"
