// SPDX-License-Identifier: Apache-2.0
// Compiling networks with AutoTVM records (autotvm/apply_history_best.h through runtime::build):
// configs chosen as TVM's ApplyHistoryBest chooses them, fallback configs as TVM's templates
// compute them, and the compiled network computes what the reference interpreter computes.
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <map>

#include "engine/autotvm/apply_history_best.h"
#include "engine/autotvm/task_extraction.h"
#include "engine/autotvm/template.h"
#include "engine/graph/interpreter.h"
#include "engine/graph/zoo.h"
#include "engine/measure/timer.h"
#include "engine/record/autotvm_record.h"
#include "engine/runtime/build_module.h"
#include "runtime_test_util.h"

using namespace tb;
using ojson = nlohmann::ordered_json;

namespace {

record::AutoTvmRecord makeRecord(const std::string& target, const autotvm::ExtractedTask& t,
                                 const autotvm::ConfigEntity& c, double cost, int errorNo) {
    record::AutoTvmRecord r;
    r.target = target;
    r.taskName = t.taskName;
    r.args = t.args;
    r.config = c.toJson();
    r.costs = {cost};
    r.errorNo = errorNo;
    r.allCost = 0.5;
    r.timestamp = 1.7e9;
    r.tvmVersion = "0.14.0";
    return r;
}

using test::withLogits;

/// Writes `records` as a log in `dir` and builds `g` with it.
runtime::CompiledModule buildWithLog(const graph::Graph& g, const QTemporaryDir& dir,
                                     const std::vector<record::AutoTvmRecord>& records) {
    runtime::BuildOptions o;
    o.logPath = dir.filePath(QStringLiteral("autotvm.log")).toStdString();
    std::ofstream out(o.logPath);
    for (const auto& r : records) out << r.toLine() << "\n";
    out.close();
    return runtime::build(g, o);
}

}  // namespace

class TestAutotvmBuild : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testFallbackConfigs() {
        // TVM x86 _get_default_config by hand, 16 lanes (AVX-512) and 8 (AVX2).
        const autotvm::Template* t = autotvm::findTemplate("conv2d_NCHWc.x86");
        QVERIFY(t);
        graph::Attrs a3;
        a3.set("padding", std::vector<int64_t>{1, 1});
        // 3x3, 64 -> 64 on 56x56: oc_bn = 16, ic_bn = 16, reg_n = 28 (largest divisor of 56 <= 31).
        auto c = t->fallbackConfig(autotvm::TaskArgs("conv2d_NCHWc.x86",
                                                     autotvm::conv2dNCHWcTaskArgs({1, 64, 56, 56}, {64, 64, 3, 3}, a3)),
                                   16);
        QCOMPARE(c.split("tile_ic").size, (std::vector<int64_t>{4, 16}));
        QCOMPARE(c.split("tile_oc").size, (std::vector<int64_t>{4, 16}));
        QCOMPARE(c.split("tile_ow").size, (std::vector<int64_t>{2, 28}));
        QCOMPARE(c.knobValue("unroll_kw").get<bool>(), false);
        QCOMPARE(c.index, int64_t(-1));
        // 3x3, 3 -> 24 on 7x7 with 8 lanes: oc_bn = 8, ic_bn = 3 (largest divisor of 3 <= 8), reg_n = 7.
        c = t->fallbackConfig(autotvm::TaskArgs("conv2d_NCHWc.x86",
                                                autotvm::conv2dNCHWcTaskArgs({1, 3, 7, 7}, {24, 3, 3, 3}, a3)),
                              8);
        QCOMPARE(c.split("tile_ic").size, (std::vector<int64_t>{1, 3}));
        QCOMPARE(c.split("tile_oc").size, (std::vector<int64_t>{3, 8}));
        QCOMPARE(c.split("tile_ow").size, (std::vector<int64_t>{1, 7}));
        // 1x1 stride 2, 64 -> 128, 56x56 -> 28x28: ow_factor 28 first, oh_factor 1 (28 * 1 < 32).
        graph::Attrs a1;
        a1.set("strides", std::vector<int64_t>{2, 2});
        c = t->fallbackConfig(autotvm::TaskArgs("conv2d_NCHWc.x86",
                                                autotvm::conv2dNCHWcTaskArgs({1, 64, 56, 56}, {128, 64, 1, 1}, a1)),
                              16);
        QCOMPARE(c.split("tile_ow").size, (std::vector<int64_t>{1, 28}));
        QCOMPARE(c.knobValue("tile_oh").get<int64_t>(), int64_t(1));
        // 1x1 on 7x7: ow 7, then the largest oh with 7 * oh < 32 dividing 7 is 1.
        graph::Attrs none;
        c = t->fallbackConfig(autotvm::TaskArgs("conv2d_NCHWc.x86",
                                                autotvm::conv2dNCHWcTaskArgs({1, 512, 7, 7}, {512, 512, 1, 1}, none)),
                              16);
        QCOMPARE(c.split("tile_ow").size, (std::vector<int64_t>{1, 7}));
        QCOMPARE(c.knobValue("tile_oh").get<int64_t>(), int64_t(1));
    }

    void testResnet18WithRecords() {
        // resnet-18 NCHW: a log with a record for two thirds of the conv tasks (a config spread
        // over each space), a slower record and a faster failed one beside it (never chosen), and
        // a faster record for another target key (never chosen). The kernels of those tasks use
        // exactly the recorded configs, the others the fallback config; the network computes
        // what the interpreter computes.
        const std::string target = runtime::hostTargetString();
        graph::Graph g = withLogits(graph::makeNetwork("resnet-18", 1, "NCHW"));
        const auto ex = autotvm::extractX86Tasks(g);
        std::vector<record::AutoTvmRecord> records;
        std::map<std::string, int64_t> expected;  // workload key -> config index
        int withRecord = 0, withoutRecord = 0, k = 0;
        for (const auto& t : ex.tasks) {
            if (t.taskName != "conv2d_NCHWc.x86") continue;
            if (k++ % 3 == 2) {
                ++withoutRecord;
                continue;
            }
            ++withRecord;
            const autotvm::ConfigSpace space = autotvm::findTemplate(t.taskName)->space(t.args);
            const int64_t best = (int64_t(k) * 7919) % space.size(), other = (best + 1) % space.size();
            records.push_back(makeRecord(target, t, space.get(other), 2e-3, 0));
            records.push_back(makeRecord(target, t, space.get(best), 1e-3, 0));
            records.push_back(makeRecord(target, t, space.get((best + 2) % space.size()), 1e-4, 1));
            records.push_back(makeRecord("cuda -keys=cuda,gpu", t, space.get((best + 3) % space.size()), 1e-5, 0));
            expected[records.back().workloadKey()] = best;
        }
        QVERIFY(withRecord >= 7 && withoutRecord >= 3);
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        runtime::CompiledModule mod = buildWithLog(g, tmp, records);
        const runtime::BuildReport& rep = mod.report();
        qInfo("%s", rep.text().c_str());
        QCOMPARE(rep.logFormat, std::string("autotvm"));
        QCOMPARE(rep.logRecords, int(records.size()));

        // Which config each conv kernel got, by its workload (the NCHW args, recomputed here from
        // the report's workload as the graph has it).
        int tuned = 0, fallback = 0;
        const autotvm::ApplyHistoryBest dispatch(records, target, 16);
        for (const auto& kr : rep.kernels) {
            if (kr.funcName.find("nn_dense") != std::string::npos) {
                // No dense record: select_implementation takes dense_pack (plevel 10) with
                // TVM's _default_dense_pack_config.
                QCOMPARE(kr.autotvmConfig, std::string("dense_pack.x86 fallback"));
                QCOMPARE(kr.source, runtime::ScheduleSource::Default);
                continue;
            }
            if (kr.funcName.find("conv2d_NCHWc") == std::string::npos) {
                QVERIFY(kr.autotvmConfig.empty());
                continue;
            }
            QVERIFY2(kr.note.empty(), kr.note.c_str());
            if (kr.source == runtime::ScheduleSource::Tuned) {
                ++tuned;
                QVERIFY(kr.autotvmConfig.rfind("conv2d_NCHWc.x86 #", 0) == 0);
                const int64_t index = std::stoll(kr.autotvmConfig.substr(18));
                bool found = false;
                for (const auto& [key, idx] : expected) found |= idx == index;
                QVERIFY2(found, kr.autotvmConfig.c_str());
                QCOMPARE(kr.recordMs, 1.0);
            } else {
                QCOMPARE(kr.source, runtime::ScheduleSource::Default);
                QCOMPARE(kr.autotvmConfig, std::string("conv2d_NCHWc.x86 fallback"));
                ++fallback;
            }
        }
        QVERIFY(tuned >= withRecord && fallback >= withoutRecord);
        // Every recorded workload resolves to its best valid record of this target.
        for (const auto& t : ex.tasks) {
            if (t.taskName != "conv2d_NCHWc.x86") continue;
            const auto d = dispatch.query(t.taskName, t.args);
            record::AutoTvmRecord key;
            key.taskName = t.taskName;
            key.args = t.args;
            auto it = expected.find(key.workloadKey());
            QCOMPARE(d.isFallback(), it == expected.end());
            if (it != expected.end()) QCOMPARE(d.config.index, it->second);
        }

        const double err = test::compareWithInterpreter(mod, g, 7);
        qInfo("resnet-18 NCHW with AutoTVM records: %d tuned, %d fallback conv kernels; relative max error %.3g", tuned,
              fallback, err);
        QVERIFY2(err <= 1e-4, qPrintable(QString::number(err)));
    }

    void testDenseImplementationSelection() {
        // mlp's dense layers: a dense_nopack record faster than the dense_pack one -> the network's
        // dense kernels use dense_nopack with that config (select_implementation picks the fastest
        // record); the output equals the interpreter.
        const std::string target = runtime::hostTargetString();
        graph::Graph g = withLogits(graph::makeNetwork("mlp", 4, "NCHW"));
        const auto ex = autotvm::extractX86Tasks(g);
        std::vector<record::AutoTvmRecord> records;
        std::map<std::string, int64_t> nopackIndex;  // args -> chosen config index
        for (const auto& t : ex.tasks) {
            const autotvm::ConfigSpace space = autotvm::findTemplate(t.taskName)->space(t.args);
            const int64_t index = space.size() / 2;
            const bool nopack = t.taskName == "dense_nopack.x86";
            records.push_back(makeRecord(target, t, space.get(index), nopack ? 1e-3 : 2e-3, 0));
            if (nopack) nopackIndex[t.args.dump()] = index;
        }
        QVERIFY(!nopackIndex.empty());
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        runtime::CompiledModule mod = buildWithLog(g, tmp, records);
        qInfo("%s", mod.report().text().c_str());
        int dense = 0;
        for (const auto& kr : mod.report().kernels) {
            if (kr.funcName.find("nn_dense") == std::string::npos) continue;
            ++dense;
            QVERIFY2(kr.note.empty(), kr.note.c_str());
            QVERIFY2(kr.autotvmConfig.rfind("dense_nopack.x86 #", 0) == 0, kr.autotvmConfig.c_str());
            QCOMPARE(kr.source, runtime::ScheduleSource::Tuned);
            QCOMPARE(kr.recordMs, 1.0);
        }
        QCOMPARE(dense, int(nopackIndex.size()));
        const double err = test::compareWithInterpreter(mod, g, 5);
        qInfo("mlp with dense_nopack records: relative max error %.3g", err);
        QVERIFY2(err <= 1e-4, qPrintable(QString::number(err)));
    }

    void testResnet18WithTopHub() {
        // TopHub's x86 log (TVM's pre-tuned conv2d_NCHWc.x86 configs, 2019, `llvm -mcpu=skylake-avx512`:
        // the `cpu` key matches this host's target): every conv kernel of resnet-18 NCHW takes its
        // record's entity, blocking included, and the network equals the interpreter.
        graph::Graph g = withLogits(graph::makeNetwork("resnet-18", 1, "NCHW"));
        runtime::BuildOptions o;
        o.logPath = "../shared/data/logs/autotvm/tophub_llvm_v0.04.log";
        runtime::CompiledModule mod = runtime::build(g, o);
        const runtime::BuildReport& rep = mod.report();
        int convKernels = 0;
        for (const auto& kr : rep.kernels) {
            if (kr.funcName.find("conv2d_NCHWc") == std::string::npos) continue;
            ++convKernels;
            QVERIFY2(kr.note.empty(), kr.note.c_str());
            QCOMPARE(kr.source, runtime::ScheduleSource::Tuned);
            QVERIFY(kr.recordMs > 0 && kr.steps > 0);
        }
        QVERIFY(convKernels >= 12);
        const double err = test::compareWithInterpreter(mod, g, 9);
        qInfo("resnet-18 NCHW with TopHub's x86 log: %d conv kernels tuned; relative max error %.3g", convKernels, err);
        QVERIFY2(err <= 1e-4, qPrintable(QString::number(err)));
    }
};

QTEST_APPLESS_MAIN(TestAutotvmBuild)
#include "tst_autotvm_build.moc"
