// SPDX-License-Identifier: Apache-2.0
// Compiling networks with AutoTVM records (autotvm/apply_history_best.h through runtime::build):
// configs chosen as TVM's ApplyHistoryBest chooses them, fallback configs as TVM's templates
// compute them, and the compiled network computes what the reference interpreter computes.
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <map>
#include <set>

#include "engine/autotvm/apply_history_best.h"
#include "engine/autotvm/task_extraction.h"
#include "engine/autotvm/template.h"
#include "engine/graph/interpreter.h"
#include "engine/graph/zoo.h"
#include "engine/measure/timer.h"
#include "engine/record/autotvm_record.h"
#include "engine/runtime/build_module.h"
#include "engine/support/error.h"
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

    // arm_cpu (TVM's arm_cpu conv2d strategy + topi/arm_cpu/conv2d_alter_op.py), built for
    // `llvm -device=arm_cpu` on this host so the network runs here: a mixed log with records for
    // two thirds of the conv workloads (spatial_pack for every one of those, winograd beside it for
    // the 3x3 stride-1 ones, faster for every other) and depthwise records. Each conv kernel uses
    // the template and config select_implementation picks (the fastest record, else spatial_pack
    // with its fallback config), with the kernel pre-packed or pre-transformed by AlterOpLayout, and
    // the network equals the interpreter.
    void testArmCpuNetworks_data() {
        QTest::addColumn<QString>("network");
        QTest::newRow("resnet-18") << QStringLiteral("resnet-18");
        QTest::newRow("mobilenet") << QStringLiteral("mobilenet");
    }
    void testArmCpuNetworks() {
        QFETCH(QString, network);
        const std::string target = "llvm -device=arm_cpu";
        const std::string recordTarget = "llvm -device=arm_cpu -mtriple=aarch64-linux-gnu -mattr=+neon";
        graph::Graph g = withLogits(graph::makeNetwork(network.toStdString(), 1, "NCHW"));
        const auto ex = autotvm::extractArmCpuTasks(g);
        // A valid config of the task near `seed` (TVM rejects unrolling a loop longer than 16).
        auto validConfig = [](const autotvm::Template* t, const ojson& args, int64_t seed) {
            const autotvm::ConfigSpace space = t->space(args);
            for (int64_t i = 0;; ++i) {
                const autotvm::ConfigEntity c = space.get((seed + i * 104729) % space.size());
                try {
                    t->instantiate(autotvm::TaskArgs(t->name(), args), c);
                    return c;
                } catch (const UserError&) {
                }
            }
        };
        std::vector<record::AutoTvmRecord> records;
        std::set<std::string> expected;  // "template #index" / "template fallback" per conv workload
        int k = 0, winograd = 0, spatial = 0, depthwise = 0, fallback = 0;
        std::map<std::string, ojson> winogradArgs;
        for (const auto& t : ex.tasks)
            if (t.taskName == "conv2d_nchw_winograd.arm_cpu") winogradArgs[t.args.dump()] = t.args;
        for (const auto& t : ex.tasks) {
            if (t.taskName != "conv2d_nchw_spatial_pack.arm_cpu" && t.taskName != "depthwise_conv2d_nchw.arm_cpu")
                continue;
            const autotvm::Template* tmpl = autotvm::findTemplate(t.taskName);
            if (k++ % 3 == 2) {
                expected.insert(t.taskName + " fallback");
                ++fallback;
                continue;
            }
            const autotvm::ConfigEntity c = validConfig(tmpl, t.args, int64_t(k) * 7919);
            records.push_back(makeRecord(recordTarget, t, c, 1e-3, 0));
            std::string chosen = t.taskName + " #" + std::to_string(c.index);
            if (winogradArgs.count(t.args.dump())) {
                const autotvm::ExtractedTask w{"conv2d_nchw_winograd.arm_cpu", t.args};
                const autotvm::ConfigEntity wc =
                    validConfig(autotvm::findTemplate(w.taskName), w.args, int64_t(k) * 15485863);
                const bool faster = k % 2 == 0;
                records.push_back(makeRecord(recordTarget, w, wc, faster ? 0.5e-3 : 2e-3, 0));
                if (faster) chosen = w.taskName + " #" + std::to_string(wc.index);
            }
            winograd += chosen.rfind("conv2d_nchw_winograd", 0) == 0;
            spatial += chosen.rfind("conv2d_nchw_spatial", 0) == 0;
            depthwise += chosen.rfind("depthwise", 0) == 0;
            expected.insert(chosen);
        }
        QVERIFY(fallback >= 2 && spatial >= 2);
        if (network == QLatin1String("resnet-18")) QVERIFY(winograd >= 2);
        if (network == QLatin1String("mobilenet")) QVERIFY(depthwise >= 4);
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        runtime::BuildOptions o;
        o.target = target;
        o.logPath = tmp.filePath(QStringLiteral("autotvm.log")).toStdString();
        {
            std::ofstream out(o.logPath);
            for (const auto& r : records) out << r.toLine() << "\n";
        }
        runtime::CompiledModule mod = runtime::build(g, o);
        const runtime::BuildReport& rep = mod.report();
        std::set<std::string> seen;
        int winogradKernels = 0;
        for (const auto& kr : rep.kernels) {
            if (kr.autotvmConfig.find(".arm_cpu") == std::string::npos) continue;
            QVERIFY2(kr.note.empty(), kr.note.c_str());
            QVERIFY2(expected.count(kr.autotvmConfig), kr.autotvmConfig.c_str());
            seen.insert(kr.autotvmConfig);
            const bool isWinograd = kr.autotvmConfig.rfind("conv2d_nchw_winograd", 0) == 0;
            winogradKernels += isWinograd;
            // The winograd kernels are TVM's winograd op, fed the pre-transformed kernel.
            QCOMPARE(kr.funcName.find("winograd_without_weight_transform") != std::string::npos, isWinograd);
        }
        if (seen != expected) {
            qInfo("%s", rep.text().c_str());
            for (const auto& e : expected) qInfo("expected %s%s", e.c_str(), seen.count(e) ? "" : "  (missing)");
        }
        QCOMPARE(seen, expected);
        QVERIFY(winogradKernels >= winograd);
        const double err = test::compareWithInterpreter(mod, g, 11);
        qInfo("%s for arm_cpu with a mixed AutoTVM log: %d spatial_pack, %d winograd, %d depthwise records chosen, "
              "%d fallback workloads; relative max error %.3g",
              qPrintable(network), spatial, winograd, depthwise, fallback, err);
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
