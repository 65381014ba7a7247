// SPDX-License-Identifier: Apache-2.0
// Tuning VTA's conv2d_packed.vta with AutoTVM's tuners on the simulator (engine/autotvm/vta_tune.h);
// group_conv2d_packed.vta's task form and a short random tuning run of it at the end.
// the task's record form (TVM's VTA target string and packed args), the simulated measurement
// (cost = re-simulated time, refused configs as INSTANTIATION_ERROR), xgb and random tuning of a
// small workload's space against TVM's fallback config, dense_packed.vta measured alike, records
// that `log check` decodes back to their knobs, and a log appended by a second run that keeps the
// first run's records.
#include <QtTest>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/autotvm/log_check.h"
#include "engine/autotvm/tuner.h"
#include "engine/autotvm/vta_tune.h"
#include "engine/record/record_io.h"
#include "engine/vta/packed_ops.h"
#include "engine/vta/simulator.h"
#include "engine/vta/vta_task.h"
#include "test_util.h"

using namespace tb;
using namespace tb::vta;
using tb::test::userError;

namespace {

// A C8-like 3x3 layer at a small size: 256 configs, a few ms of simulation each.
Conv2dWorkload smallConv() {
    Conv2dWorkload wl;
    wl.batch = 1, wl.height = wl.width = 8, wl.inFilter = 32, wl.outFilter = 32;
    wl.hkernel = wl.wkernel = 3, wl.hpad = wl.wpad = 1;
    return wl;
}

// A 3x3 pad-1 grouped layer of c channels at h x h.
GroupConv2dWorkload gconv(int h, int c, int groups) {
    GroupConv2dWorkload wl;
    wl.batch = 1, wl.height = wl.width = h, wl.inFilter = wl.outFilter = c, wl.groups = groups;
    wl.hkernel = wl.wkernel = 3, wl.hpad = wl.wpad = 1;
    return wl;
}

std::string readFile(const QString& path) {
    std::ifstream in(path.toStdString());
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Tunes `task` with `tunerName` for nTrial configs, appending records to `log`; xgb refits every
// 16 measurements (plan size 16), so that it tunes with its model within the test's trials.
std::unique_ptr<autotvm::Tuner> tuneInto(const autotvm::Task& task, const std::string& tunerName, int nTrial,
                                         const autotvm::MeasureOption& measure, const QString& log,
                                         std::uint64_t seed) {
    std::unique_ptr<autotvm::Tuner> tuner = autotvm::makeVtaTuner(tunerName, task, seed, 16);
    record::RecordWriter writer(log.toStdString());
    autotvm::TuneOptions to;
    to.nTrial = nTrial;
    to.nParallel = 8;
    tuner->tune(to, measure,
                {[&](const autotvm::Tuner&, const std::vector<autotvm::ConfigEntity>& c,
                     const std::vector<measure::MeasureResult>& r) {
                    for (size_t i = 0; i < c.size(); ++i) writer.append(autotvm::makeRecord(task, c[i], r[i]));
                }});
    return tuner;
}

}  // namespace

class TestVtaTune : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void testTaskAsTvmWritesIt() {
        // resnet-18's C11 as a TVM VTA log has it (ext_dev target with the model string, packed
        // NCHW1n16c tensors, strides, 4-sided padding, dilation, layout, out dtype).
        const VtaConfig cfg = VtaConfig::forTarget("sim");
        const auto workloads = resnet18Conv2dWorkloads(cfg);
        QCOMPARE(workloads.size(), size_t(10));
        QCOMPARE(workloads.back().name, std::string("C11"));
        const autotvm::Task task = autotvm::makeVtaConv2dTask(cfg, workloads.back().wl);
        QCOMPARE(task.target, std::string("ext_dev -keys=vta,cpu -device=vta -model=sim_1x16_i8w8a32_15_15_18_17"));
        QCOMPARE(task.taskName, std::string("conv2d_packed.vta"));
        QCOMPARE(QString::fromStdString(task.args.dump()),
                 QStringLiteral(R"([["TENSOR",[1,32,7,7,1,16],"int8"],["TENSOR",[32,32,3,3,16,16],"int8"],)"
                                R"([1,1],[1,1,1,1],[1,1],"NCHW1n16c","int32"])"));
        QCOMPARE(task.flop, 2.0 * 7 * 7 * 512 * 512 * 9);
        QCOMPARE(task.space.size(), int64_t(576));
        // The args read back to the workload; malformed args name the problem.
        QCOMPARE(conv2dWorkloadFromArgs(task.args).str(), workloads.back().wl.str());
        auto bad = task.args;
        bad[4] = nlohmann::ordered_json::array({2, 2});
        QVERIFY(userError([&] { conv2dWorkloadFromArgs(bad); }).contains(QLatin1String("dilation [1, 1] only")));
        bad = task.args;
        bad[0][2] = "float32";
        QVERIFY(userError([&] { conv2dWorkloadFromArgs(bad); }).contains(QLatin1String("the data must be int8")));
        // dense_packed.vta: [data, weight, null bias, out dtype].
        const autotvm::Task dense = autotvm::makeVtaDenseTask(cfg, DenseWorkload{1, 512, 1024});
        QCOMPARE(QString::fromStdString(dense.args.dump()),
                 QStringLiteral(R"([["TENSOR",[1,32,1,16],"int8"],["TENSOR",[64,32,16,16],"int8"],null,"int32"])"));
        QCOMPARE(denseWorkloadFromArgs(dense.args).str(), (DenseWorkload{1, 512, 1024}).str());
        // The pynq model string (TVM's Environment.model = TARGET_BITSTREAM).
        QCOMPARE(vtaTargetString(VtaConfig::forTarget("pynq")),
                 std::string("ext_dev -keys=vta,cpu -device=vta -model=pynq_1x16_i8w8a32_15_15_18_17"));
    }

    void testLogCheckDecodesTvmVtaRecord() {
        // A conv2d_packed.vta record as TVM's VTA tuning writes it (C11, index 241): log check
        // rebuilds the space from the args and decodes the index to the recorded knobs; a record
        // whose entity was edited disagrees.
        const std::string line =
            R"({"input": ["ext_dev -keys=vta,cpu -device=vta -model=zcu104_1x16_i8w8a32_15_15_18_17", "conv2d_packed.vta", )"
            R"([["TENSOR", [1, 32, 7, 7, 1, 16], "int8"], ["TENSOR", [32, 32, 3, 3, 16, 16], "int8"], [1, 1], [1, 1, 1, 1], )"
            R"([1, 1], "NCHW1n16c", "int32"], {}], "config": {"index": 241, "code_hash": null, "entity": [["tile_b", "sp", )"
            R"([-1, 1]], ["tile_h", "sp", [-1, 7]], ["tile_w", "sp", [-1, 1]], ["tile_ci", "sp", [-1, 1]], ["tile_co", "sp", )"
            R"([-1, 16]], ["oc_nthread", "ot", 2], ["h_nthread", "ot", 1]]}, "result": [[0.0012], 0, 1.5, 1600000000.0], )"
            R"("version": 0.2, "tvm_version": "0.8.0"})";
        std::string edited = line;
        edited.replace(edited.find("[-1, 16]"), 8, "[-1, 8]");
        const autotvm::LogCheckReport rep = autotvm::checkLog(record::parseAutoTvmRecords(line + "\n" + edited + "\n"));
        QCOMPARE(rep.records, 2);
        QCOMPARE(rep.checked, 2);
        QCOMPARE(rep.agree, 1);
        QCOMPARE(rep.disagree, 1);
        QVERIFY(rep.unknownTemplates.empty());
        QCOMPARE(rep.templates.at("conv2d_packed.vta").agree, 1);
        QVERIFY2(QString::fromStdString(rep.disagreements.at(0).reason).contains(QLatin1String("tile_co")),
                 rep.disagreements.at(0).reason.c_str());
    }

    void testTune_data() {
        QTest::addColumn<QString>("tuner");
        QTest::newRow("xgb") << QStringLiteral("xgb");
        QTest::newRow("random") << QStringLiteral("random");
    }

    void testTune() {
        QFETCH(QString, tuner);
        const VtaConfig cfg = VtaConfig::forTarget("sim");
        const Conv2dWorkload wl = smallConv();
        const autotvm::Task task = autotvm::makeVtaConv2dTask(cfg, wl);
        QCOMPARE(task.space.size(), int64_t(256));
        autotvm::MeasureOption measure;
        const std::uint32_t seed = 7;
        measure.measureFunction = autotvm::vtaSimMeasureFunction(cfg, seed);
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("vta.log"));

        // TVM's fallback config (index 0, every tile 1), measured the same way.
        const measure::MeasureResult fallback = measure.measureFunction(task, {task.space.get(0)}).front();
        QVERIFY2(fallback.ok(), fallback.errorMsg.c_str());

        const int nTrial = 48;
        const auto t = tuneInto(task, tuner.toStdString(), nTrial, measure, log, 3);
        QCOMPARE(t->trials(), nTrial);
        QVERIFY(t->bestConfig().has_value());
        if (const auto* xgb = dynamic_cast<const autotvm::XGBTuner*>(t.get())) QVERIFY(xgb->trainCount() >= 2);
        // The best found is no slower than the fallback.
        const double bestSeconds = task.flop / t->bestFlops();
        QVERIFY2(bestSeconds <= fallback.meanCost(),
                 qPrintable(QStringLiteral("best %1 s, fallback %2 s").arg(bestSeconds).arg(fallback.meanCost())));

        // Every record: valid with a positive simulated cost equal to re-simulating its config on a
        // fresh simulator with the same operands, or INSTANTIATION_ERROR naming the refusal.
        const auto contents = record::readAutoTvmRecords(log.toStdString());
        QCOMPARE(int(contents.records.size()), nTrial);
        QVERIFY(contents.badLines.empty());
        const Conv2dOperands ops = randomConv2dOperands(cfg, wl, true, seed);
        const auto reference = conv2dPackedReference(cfg, wl, conv2dEpilogue(true), ops);
        int valid = 0, refused = 0;
        for (const record::AutoTvmRecord& r : contents.records) {
            QCOMPARE(r.target, task.target);
            QCOMPARE(r.taskName, std::string("conv2d_packed.vta"));
            QCOMPARE(r.args, task.args);
            const Conv2dSchedule s = Conv2dSchedule::fromConfig(task.space.get(r.configIndex()));
            if (r.errorNo == int(measure::MeasureErrorNo::NoError)) {
                ++valid;
                QCOMPARE(r.costs.size(), size_t(1));
                QVERIFY(r.costs[0] > 0);
                Simulator sim(cfg);
                const PackedOpResult again = runConv2dPacked(sim, wl, s, conv2dEpilogue(true), ops);
                QCOMPARE(r.costs[0], again.report.timeSeconds());
                QVERIFY(again.output == reference);
            } else {
                ++refused;
                QCOMPARE(r.errorNo, int(measure::MeasureErrorNo::InstantiationError));
                QCOMPARE(r.costs, std::vector<double>{1e9});
                // The refusal is the packed operator's own check of that config.
                const QString why = userError([&] { checkConv2dSchedule(cfg, wl, s, conv2dEpilogue(true)); });
                QVERIFY2(why.startsWith(QLatin1String("VTA conv2d_packed.vta config [")), qPrintable(why));
            }
        }
        QVERIFY(valid > 0);
        qInfo("%s: %d valid, %d refused of %d; best %.3f ms (config #%lld), fallback %.3f ms", qPrintable(tuner), valid,
              refused, nTrial, bestSeconds * 1e3, static_cast<long long>(t->bestConfig()->index),
              fallback.meanCost() * 1e3);

        // log check decodes every record's index back to its knobs.
        const autotvm::LogCheckReport rep = autotvm::checkLogFile(log.toStdString());
        QCOMPARE(rep.records, nTrial);
        QCOMPARE(rep.agree, nTrial);
        QCOMPARE(rep.templates.at("conv2d_packed.vta").checked, nTrial);

        // A second run appended to the log keeps the first run's records, line for line.
        const std::string before = readFile(log);
        tuneInto(task, tuner.toStdString(), 8, measure, log, 4);
        const std::string after = readFile(log);
        QVERIFY(after.size() > before.size());
        QCOMPARE(after.substr(0, before.size()), before);
        QCOMPARE(int(record::readAutoTvmRecords(log.toStdString()).records.size()), nTrial + 8);
        QCOMPARE(autotvm::checkLogFile(log.toStdString()).agree, nTrial + 8);
    }

    void testGroupConv2dTaskAsTvmWritesIt() {
        const VtaConfig cfg = VtaConfig::forTarget("sim");
        const auto workloads = mobilenetGroupConv2dWorkloads(cfg);
        QCOMPARE(workloads.size(), size_t(6));
        const GroupConv2dWorkload& g4 = workloads[3].wl;
        QCOMPARE(workloads[3].name, std::string("G4"));
        QCOMPARE(g4.str(), std::string("group_conv2d_packed 1x512x14x14 -> 512 groups 32, 3x3 pad 1 stride 1"));
        const autotvm::Task task = autotvm::makeVtaGroupConv2dTask(cfg, g4);
        QCOMPARE(task.target, std::string("ext_dev -keys=vta,cpu -device=vta -model=sim_1x16_i8w8a32_15_15_18_17"));
        QCOMPARE(task.taskName, std::string("group_conv2d_packed.vta"));
        QCOMPARE(QString::fromStdString(task.args.dump()),
                 QStringLiteral(R"([["TENSOR",[1,32,14,14,1,16],"int8"],["TENSOR",[32,1,3,3,16,16],"int8"],)"
                                R"([1,1],[1,1,1,1],[1,1],32,"int32"])"));
        QCOMPARE(task.flop, 2.0 * 14 * 14 * 512 * 16 * 9);
        // tile_b 1 x tile_h {1,2,7,14} x tile_w 4 x tile_ci {1} x tile_co 6 (divisors of 32) x 2 x 2.
        QCOMPARE(task.space.size(), int64_t(4 * 4 * 1 * 6 * 4));
        QCOMPARE(vtaTaskSpace(task.taskName, task.args).size(), task.space.size());
        QVERIFY(isVtaTaskName(task.taskName));
        // Round trip, and the resnext-like form.
        QCOMPARE(groupConv2dWorkloadFromArgs(task.args).str(), g4.str());
        const GroupConv2dWorkload g5 = workloads[4].wl;
        QCOMPARE(groupConv2dWorkloadFromArgs(groupConv2dTaskArgs(cfg, g5)).str(), g5.str());
        QCOMPARE(groupConv2dWorkloadFromArgs(groupConv2dTaskArgs(cfg, g5)).groups, 8);
        // Malformed args name the problem.
        auto bad = task.args;
        bad[5] = 0;
        QVERIFY(userError([&] { groupConv2dWorkloadFromArgs(bad); }).contains(QLatin1String("groups must be a positive integer")));
        bad = task.args;
        bad[5] = 16;
        QVERIFY2(userError([&] { groupConv2dWorkloadFromArgs(bad); }).contains(QLatin1String("divided into 16 groups")),
                 qPrintable(userError([&] { groupConv2dWorkloadFromArgs(bad); })));
        bad = task.args;
        bad[6] = "int8";
        QVERIFY(userError([&] { groupConv2dWorkloadFromArgs(bad); }).contains(QLatin1String("out_dtype must be \"int32\"")));
        bad = task.args;
        bad[4] = nlohmann::ordered_json::array({2, 2});
        QVERIFY(userError([&] { groupConv2dWorkloadFromArgs(bad); }).contains(QLatin1String("dilation [1, 1] only")));
        bad = task.args;
        bad.erase(bad.size() - 1);
        QVERIFY(userError([&] { groupConv2dWorkloadFromArgs(bad); }).contains(QLatin1String("args must be [data, kernel")));
        // A grouped workload that is not whole blocks per group has no task.
        QVERIFY(userError([&] { autotvm::makeVtaGroupConv2dTask(cfg, gconv(8, 64, 8)); })
                    .contains(QLatin1String("not a multiple of BLOCK_IN")));
    }

    // Random tuning of a small depthwise-like layer on the simulator: 16 trials, the best beats
    // TVM's fallback config; every record decodes in log check; a refused config is
    // INSTANTIATION_ERROR naming the template.
    void testGroupConv2dTuneRandom() {
        const VtaConfig cfg = VtaConfig::forTarget("sim");
        const GroupConv2dWorkload wl = gconv(14, 64, 4);
        const autotvm::Task task = autotvm::makeVtaGroupConv2dTask(cfg, wl);
        autotvm::MeasureOption measure;
        measure.measureFunction = autotvm::vtaSimMeasureFunction(cfg, 3);
        const measure::MeasureResult fallback = measure.measureFunction(task, {task.space.get(0)}).front();
        QVERIFY2(fallback.ok(), fallback.errorMsg.c_str());
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("gconv.log"));
        const int nTrial = 16;
        const auto t = tuneInto(task, "random", nTrial, measure, log, 5);
        QCOMPARE(t->trials(), nTrial);
        QVERIFY(t->bestConfig().has_value());
        const double bestSeconds = task.flop / t->bestFlops();
        QVERIFY2(bestSeconds < fallback.meanCost(),
                 qPrintable(QStringLiteral("best %1 s, fallback %2 s").arg(bestSeconds).arg(fallback.meanCost())));
        int valid = 0, refused = 0;
        for (const record::AutoTvmRecord& r : record::readAutoTvmRecords(log.toStdString()).records) {
            QCOMPARE(r.taskName, std::string("group_conv2d_packed.vta"));
            if (r.errorNo == int(measure::MeasureErrorNo::NoError)) {
                ++valid;
            } else {
                QCOMPARE(r.errorNo, int(measure::MeasureErrorNo::InstantiationError));
                ++refused;
            }
        }
        QCOMPARE(valid + refused, nTrial);
        qInfo("random: %d valid, %d refused; best %.4f ms [%s], fallback %.4f ms", valid, refused, bestSeconds * 1e3,
              Conv2dSchedule::fromConfig(*t->bestConfig()).str().c_str(), fallback.meanCost() * 1e3);
        const autotvm::LogCheckReport rep = autotvm::checkLogFile(log.toStdString());
        QCOMPARE(rep.records, nTrial);
        QCOMPARE(rep.agree, nTrial);
        QCOMPARE(rep.templates.at("group_conv2d_packed.vta").checked, nTrial);
    }

    void testDenseMeasured() {
        // dense_packed.vta measured the same way: every valid config's cost is its re-simulated
        // time, refused ones are INSTANTIATION_ERROR, and log check decodes the records.
        const VtaConfig cfg = VtaConfig::forTarget("sim");
        const DenseWorkload wl{1, 256, 512};
        const autotvm::Task task = autotvm::makeVtaDenseTask(cfg, wl);
        autotvm::MeasureOption measure;
        measure.measureFunction = autotvm::vtaSimMeasureFunction(cfg, 5);
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("dense.log"));
        const int nTrial = int(std::min<int64_t>(24, task.space.size()));
        tuneInto(task, "random", nTrial, measure, log, 1);
        const auto contents = record::readAutoTvmRecords(log.toStdString());
        QCOMPARE(int(contents.records.size()), nTrial);
        const DenseOperands ops = randomDenseOperands(cfg, wl, 5);
        int valid = 0;
        for (const record::AutoTvmRecord& r : contents.records) {
            const DenseSchedule s = DenseSchedule::fromConfig(task.space.get(r.configIndex()));
            if (r.errorNo == int(measure::MeasureErrorNo::NoError)) {
                ++valid;
                Simulator sim(cfg);
                QCOMPARE(r.costs.at(0), runDensePacked(sim, wl, s, clipEpilogue(8), ops).report.timeSeconds());
            } else {
                QCOMPARE(r.errorNo, int(measure::MeasureErrorNo::InstantiationError));
                QVERIFY(!userError([&] { checkDenseSchedule(cfg, wl, s, clipEpilogue(8)); }).startsWith(QLatin1Char('<')));
            }
        }
        QVERIFY(valid > 0);
        const autotvm::LogCheckReport rep = autotvm::checkLogFile(log.toStdString());
        QCOMPARE(rep.agree, nTrial);
        QCOMPARE(rep.templates.at("dense_packed.vta").checked, nTrial);
    }

    void testMeasureRefusesForeignTasks() {
        // The measure function measures VTA tasks of its own model only.
        const VtaConfig sim = VtaConfig::forTarget("sim");
        const autotvm::Task pynqTask = autotvm::makeVtaConv2dTask(VtaConfig::forTarget("pynq"), smallConv());
        const auto measure = autotvm::vtaSimMeasureFunction(sim);
        QVERIFY(userError([&] { measure(pynqTask, {pynqTask.space.get(0)}); }).contains(QLatin1String("is not the simulated VTA's")));
        // xgb tuners with TIR features are refused for VTA tasks.
        QVERIFY(userError([] { autotvm::vtaTunerName("xgb_itervar"); }).contains(QLatin1String("knob features")));
        QCOMPARE(autotvm::vtaTunerName("xgb"), std::string("xgb_knob"));
        // The task has no TIR program to instantiate.
        QVERIFY(userError([&] { pynqTask.instantiate(pynqTask.space.get(0)); }).contains(QLatin1String("no TIR template")));
    }
};

QTEST_GUILESS_MAIN(TestVtaTune)
#include "tst_vta_tune.moc"
