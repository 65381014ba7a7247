// SPDX-License-Identifier: Apache-2.0
// AutoTVM's ARM CPU templates instantiated (conv2d_nchw_spatial_pack.arm_cpu,
// depthwise_conv2d_nchw.arm_cpu; TVM v0.14 python/tvm/topi/arm_cpu/): sampled configs and the
// TopHub arm_cpu configs lower, compile and compute what the reference interpreter computes on the
// same DAG; the arm_cpu task extraction lists the implementations TVM's arm_cpu strategy offers.
#include <QtTest>

#include <set>

#include <nlohmann/json.hpp>

#include "engine/autotvm/log_check.h"
#include "engine/autotvm/task.h"
#include "engine/autotvm/task_extraction.h"
#include "engine/graph/zoo.h"
#include "engine/record/autotvm_record.h"
#include "engine/record/record_io.h"
#include "autotvm_test_util.h"

using namespace tb;
using namespace tb::autotvm;
using ojson = nlohmann::ordered_json;

namespace {

const char* kArmTarget = "llvm -device=arm_cpu -mtriple=aarch64-linux-gnu -mattr=+neon";

using test::sampleIndices;

QString compareWithInterpreter(const Task& task, const ConfigEntity& cfg, unsigned seed) {
    return test::compareConfigWithInterpreter(task, cfg, seed);
}

}  // namespace

class TestAutotvmArm : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testInstantiateMatchesInterpreter_data() {
        QTest::addColumn<QString>("templateName");
        QTest::addColumn<QString>("args");
        const QString sp = QStringLiteral("conv2d_nchw_spatial_pack.arm_cpu");
        QTest::newRow("spatial_pack 3x3 pad 1") << sp << QStringLiteral(R"([["TENSOR", [1, 8, 8, 8], "float32"], ["TENSOR", [16, 8, 3, 3], "float32"], [1, 1], [1, 1, 1, 1], [1, 1], "float32"])");
        QTest::newRow("spatial_pack 3x3 stride 2") << sp << QStringLiteral(R"([["TENSOR", [1, 4, 9, 9], "float32"], ["TENSOR", [8, 4, 3, 3], "float32"], [2, 2], [1, 1, 1, 1], [1, 1], "float32"])");
        QTest::newRow("spatial_pack 1x1") << sp << QStringLiteral(R"([["TENSOR", [1, 8, 6, 6], "float32"], ["TENSOR", [12, 8, 1, 1], "float32"], [1, 1], [0, 0, 0, 0], [1, 1], "float32"])");
        QTest::newRow("spatial_pack 3x3 dilation 2") << sp << QStringLiteral(R"([["TENSOR", [1, 4, 10, 10], "float32"], ["TENSOR", [4, 4, 3, 3], "float32"], [1, 1], [2, 2, 2, 2], [2, 2], "float32"])");
        const QString wg = QStringLiteral("conv2d_nchw_winograd.arm_cpu");
        QTest::newRow("winograd 8x8 pad 1") << wg << QStringLiteral(R"([["TENSOR", [1, 8, 8, 8], "float32"], ["TENSOR", [16, 8, 3, 3], "float32"], [1, 1], [1, 1, 1, 1], [1, 1], "float32"])");
        QTest::newRow("winograd 7x7 pad 1 (partial tiles)") << wg << QStringLiteral(R"([["TENSOR", [1, 12, 7, 7], "float32"], ["TENSOR", [8, 12, 3, 3], "float32"], [1, 1], [1, 1, 1, 1], [1, 1], "float32"])");
        QTest::newRow("winograd 10x6 no pad, batch 2") << wg << QStringLiteral(R"([["TENSOR", [2, 4, 10, 6], "float32"], ["TENSOR", [6, 4, 3, 3], "float32"], [1, 1], [0, 0, 0, 0], [1, 1], "float32"])");
        const QString dw = QStringLiteral("depthwise_conv2d_nchw.arm_cpu");
        QTest::newRow("depthwise 3x3 pad 1") << dw << QStringLiteral(R"([["TENSOR", [1, 16, 8, 8], "float32"], ["TENSOR", [16, 1, 3, 3], "float32"], [1, 1], [1, 1, 1, 1], [1, 1], "float32"])");
        QTest::newRow("depthwise 3x3 stride 2") << dw << QStringLiteral(R"([["TENSOR", [1, 8, 9, 9], "float32"], ["TENSOR", [8, 1, 3, 3], "float32"], [2, 2], [1, 1, 1, 1], [1, 1], "float32"])");
    }
    void testInstantiateMatchesInterpreter() {
        QFETCH(QString, templateName);
        QFETCH(QString, args);
        const Task task = Task::create(templateName.toStdString(), ojson::parse(args.toStdString()), kArmTarget);
        QVERIFY(task.flop > 0);
        if (templateName.startsWith(QLatin1String("conv2d_nchw_winograd"))) {
            // cfg.add_flop: the direct convolution's 2 * N * K * H * W * 9 * C, not the DAG's count.
            const ojson a = ojson::parse(args.toStdString());
            const std::int64_t n = a[0][1][0], c = a[0][1][1], k = a[1][1][0];
            const std::int64_t h = std::int64_t(a[0][1][2]) + std::int64_t(a[3][0]) + std::int64_t(a[3][2]) - 2;
            const std::int64_t w = std::int64_t(a[0][1][3]) + std::int64_t(a[3][1]) + std::int64_t(a[3][3]) - 2;
            QCOMPARE(task.flop, 2.0 * double(n * k * h * w * 9 * c));
        }
        int checked = 0, invalid = 0;
        for (std::int64_t index : sampleIndices(task.space, 8, 11)) {
            const ConfigEntity cfg = task.space.get(index);
            // depthwise and winograd's ann_reduce: TVM rejects unrolling a loop longer than 16
            // (cfg.raise_error).
            bool tooLong = false;
            if (templateName.startsWith(QLatin1String("depthwise"))) {
                const auto& ann = cfg.annotate("ann").anns;
                const std::int64_t lens[3] = {cfg.split("tile_h").size.back(), cfg.split("tile_w").size.back(),
                                              cfg.split("tile_c").size.back()};
                for (int i = 0; i < 3; ++i) tooLong |= ann[size_t(i)] == "unroll" && lens[i] > 16;
            } else if (templateName.startsWith(QLatin1String("conv2d_nchw_winograd"))) {
                tooLong = cfg.annotate("ann_reduce").anns[0] == "unroll" && cfg.split("tile_c").size.back() > 16;
            }
            if (tooLong) {
                QVERIFY_THROWS_EXCEPTION(UserError, task.instantiate(cfg));
                ++invalid;
                continue;
            }
            const QString diff = compareWithInterpreter(task, cfg, unsigned(index) + 1);
            QVERIFY2(diff.isEmpty(), qPrintable(diff));
            ++checked;
        }
        QVERIFY(checked >= 6);
        qInfo("%d configs equal the interpreter, %d rejected as TVM rejects them", checked, invalid);
    }

    // TopHub's arm_cpu configs (v0.08) of the two templates whose index still decodes in today's
    // space: each instantiates, lowers and equals the interpreter (the workloads are real network
    // layers, so a few per template, the largest skipped for time).
    void testTopHubConfigs() {
        const auto log = record::readAutoTvmRecords("../shared/data/logs/autotvm/tophub_arm_cpu_v0.08.log");
        QVERIFY(!log.records.empty());
        std::map<std::string, int> checked, agree;
        for (const auto& r : log.records) {
            if (r.taskName != "conv2d_nchw_spatial_pack.arm_cpu" && r.taskName != "depthwise_conv2d_nchw.arm_cpu" &&
                r.taskName != "conv2d_nchw_winograd.arm_cpu")
                continue;
            if (r.args.at(0).at(2) != "float32" || r.args.at(1).at(2) != "float32") continue;  // int8 layers
            const RecordCheck check = checkRecord(r);
            if (check.outcome != RecordCheck::Outcome::Agree) continue;
            ++agree[r.taskName];
            const Task task = Task::create(r.taskName, r.args, r.target);
            if (task.flop > 3e8 || checked[r.taskName] >= 6) continue;
            const QString diff = compareWithInterpreter(task, *check.decoded, unsigned(checked[r.taskName]) + 3);
            QVERIFY2(diff.isEmpty(), qPrintable(QStringLiteral("%1 %2: %3")
                                                    .arg(QString::fromStdString(r.taskName),
                                                         QString::fromStdString(r.args.dump()), diff)));
            ++checked[r.taskName];
        }
        for (const auto& [name, n] : agree) qInfo("%s: %d TopHub records decode, %d checked", name.c_str(), n, checked[name]);
        QVERIFY(checked["conv2d_nchw_spatial_pack.arm_cpu"] >= 3);
        QVERIFY(checked["depthwise_conv2d_nchw.arm_cpu"] >= 3);
        QVERIFY(checked["conv2d_nchw_winograd.arm_cpu"] >= 3);
    }

    // The arm_cpu strategy's tasks for resnet-18 and mobilenet: per conv, spatial_pack before the
    // x86 conv2d_NCHWc template (conv2d_nchw.x86 is offered too) and winograd for exactly the 3x3
    // stride-1 convs; per depthwise conv, depthwise_conv2d_nchw.arm_cpu then the x86 NCHWc one;
    // without the arm_cpu-only tasks the list is the x86 one. TopHub's rk3399 log (tuned on these
    // networks) has a record for every conv's workload, so the args are TVM's.
    void testArmCpuExtraction_data() {
        QTest::addColumn<QString>("network");
        QTest::newRow("resnet-18") << QStringLiteral("resnet-18");
        QTest::newRow("mobilenet") << QStringLiteral("mobilenet");
    }
    void testArmCpuExtraction() {
        QFETCH(QString, network);
        const graph::Graph g = graph::makeNetwork(network.toStdString(), 1, "NCHW");
        const ExtractedTasks arm = extractTasks(g, kArmTarget), x86 = extractTasks(g, "llvm -keys=cpu");
        std::vector<std::string> armOnlyRemoved, x86Names;
        for (const auto& t : arm.all)
            if (t.taskName.find(".arm_cpu") == std::string::npos) armOnlyRemoved.push_back(t.taskName + t.args.dump());
        for (const auto& t : x86.all) x86Names.push_back(t.taskName + t.args.dump());
        QVERIFY(armOnlyRemoved == x86Names);
        int winograd = 0, expectedWinograd = 0;
        for (size_t i = 0; i < arm.all.size(); ++i) {
            const auto& t = arm.all[i];
            if (t.taskName == "conv2d_nchw_spatial_pack.arm_cpu" || t.taskName == "depthwise_conv2d_nchw.arm_cpu") {
                QVERIFY(i + 1 < arm.all.size());
                const auto& next = arm.all[i + 1];
                QCOMPARE(next.taskName, t.taskName[0] == 'c' ? std::string("conv2d_NCHWc.x86")
                                                             : std::string("depthwise_conv2d_NCHWc.x86"));
                QCOMPARE(next.args.at(0), t.args.at(0));
                QCOMPARE(next.args.at(1), t.args.at(1));
                const bool w3s1 = t.taskName[0] == 'c' && t.args[1][1][2] == 3 && t.args[1][1][3] == 3 &&
                                  t.args[2] == ojson::array({1, 1}) && t.args[4] == ojson::array({1, 1});
                expectedWinograd += w3s1;
                if (w3s1) {
                    QVERIFY(i + 2 < arm.all.size());
                    QCOMPARE(arm.all[i + 2].taskName, std::string("conv2d_nchw_winograd.arm_cpu"));
                    QCOMPARE(arm.all[i + 2].args, t.args);
                }
            }
            winograd += t.taskName == "conv2d_nchw_winograd.arm_cpu";
        }
        QCOMPARE(winograd, expectedWinograd);
        QCOMPARE(arm.skippedOps, 0);

        const auto log = record::readAutoTvmRecords("../shared/data/logs/autotvm/tophub_arm_cpu_v0.08.log");
        // TopHub keeps one template per workload (the faster): a 3x3 stride-1 conv may have its
        // record under winograd instead of spatial_pack. Match the args of any arm_cpu template.
        std::set<std::string> rk3399;
        for (const auto& r : log.records)
            if (r.target.find("-model=rk3399") != std::string::npos && r.taskName.find(".arm_cpu") != std::string::npos)
                rk3399.insert(r.args.dump());
        int armTemplates = 0, found = 0;
        for (const auto& t : arm.all) {
            if (t.taskName != "conv2d_nchw_spatial_pack.arm_cpu" && t.taskName != "depthwise_conv2d_nchw.arm_cpu") continue;
            ++armTemplates;
            if (rk3399.count(t.args.dump())) ++found;
            else qInfo("no rk3399 record for %s %s", t.taskName.c_str(), t.args.dump().c_str());
        }
        qInfo("%s: %zu arm_cpu tasks (%d winograd); %d of %d conv workloads in TopHub's rk3399 log",
              qPrintable(network), arm.all.size(), winograd, found, armTemplates);
        QVERIFY(armTemplates > 10);
        QCOMPARE(found, armTemplates);
    }
};

QTEST_APPLESS_MAIN(TestAutotvmArm)
#include "tst_autotvm_arm.moc"
